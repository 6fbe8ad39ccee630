"""Quadruped demo: Solo12 stands on four point feet and sways its CoM sideways.

The scenario lives in tsid_py/scenarios/quadruped.py and the controller in
tsid_py/controllers/quadruped.py (TSID's quadruped demo: four ContactPoints, CoM and posture
tasks, torque bounds); read them top to bottom.

    python demos/quadruped.py                              # 4 s, readable summary
    python demos/quadruped.py --amplitude 0.03 --json      # larger sway, JSON summary
    python demos/quadruped.py --viewer meshcat             # watch it live (127.0.0.1)
    python demos/quadruped.py --html solo.html --plot plots/
"""

import sys

from tsid_py.scenarios import quadruped

if __name__ == "__main__":
    sys.exit(quadruped.main())
