"""Walking demo: Talos (or --robot romeo) walks straight ahead on a LIPM plan made by tsid_py.

The scenario lives in tsid_py/scenarios/walk.py (so that `tsid-py walk` runs the same code from an
installed package); the planning (footsteps, ZMP preview control, swing-foot trajectories) is in
tsid_py/planning/. `--plot DIR` draws, among others, the top view: support polygons, CoM, the
planned ZMP, the centre of pressure of the contact forces and the footsteps.

    python demos/walk.py                              # Talos, 8 steps of 0.2 m
    python demos/walk.py --robot romeo --steps 8 --step-length 0.1 --json
    python demos/walk.py --plot plots/ --html walk.html
"""

import sys

from tsid_py.scenarios import walk

if __name__ == "__main__":
    sys.exit(walk.main())
