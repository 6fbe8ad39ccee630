"""Reach demo: a UR5 arm moves its end effector to a target (or along a circle).

The scenario lives in tsid_py/scenarios/reach.py and the controller in
tsid_py/controllers/arm.py (TSID's manipulator set-up: end-effector position task at kp 100,
posture task, torque and joint-velocity bounds at level 0); read them top to bottom.

    python demos/reach.py                                  # reach 0.1 m ahead, readable summary
    python demos/reach.py --motion sinusoid --duration 4     # track a circle at kp 5
    python demos/reach.py --viewer meshcat                 # watch it live (127.0.0.1)
    python demos/reach.py --html reach.html --plot plots/  # replay file and PNG plots
"""

import sys

from tsid_py.scenarios import reach

if __name__ == "__main__":
    sys.exit(reach.main())
