"""Balance demo: Talos (or --robot romeo) stands on both feet and holds its CoM.

The scenario itself lives in tsid_py/scenarios/balance.py (so that `tsid-py balance` runs the
same code from an installed package); read it for the controller set-up, step by step.

    python demos/balance.py                 # readable summary
    python demos/balance.py --robot romeo --duration 5 --json
"""

import sys

from tsid_py.scenarios import balance

if __name__ == "__main__":
    sys.exit(balance.main())
