"""Step demo: Talos (or --robot romeo) shifts its CoM over the left foot, unloads and lifts the
right foot 0.1 m, puts it back down and shifts back.

The scenario lives in tsid_py/scenarios/step.py (so that `tsid-py step` runs the same code from an
installed package); the contact switching and measurements are in tsid_py/scenarios/stepping.py.

    python demos/step.py                    # readable summary
    python demos/step.py --robot romeo --height 0.05 --json
"""

import sys

from tsid_py.scenarios import step

if __name__ == "__main__":
    sys.exit(step.main())
