"""CoM sinusoid demo: the biped sways its CoM 0.05 m along y at 0.5 Hz.

Same code as `tsid-py com-sinusoid`; the scenario is in tsid_py/scenarios/com_sinusoid.py.

    python demos/com_sinusoid.py --robot talos --duration 10
    python demos/com_sinusoid.py --robot romeo --json
"""

import sys

from tsid_py.scenarios import com_sinusoid

if __name__ == "__main__":
    sys.exit(com_sinusoid.main())
