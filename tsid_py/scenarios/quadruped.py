"""Quadruped: a robot on point feet (Solo12 by default) sways its CoM along a sinusoid.

TSID's quadruped demo (demo/demo_quadruped.py) on the ODRI Solo12: four hard ContactPoints
(FL, FR, HL, HR feet, forces in world axes, mu 0.3, 1 N <= f_n <= 100 N), a CoM task and a posture
task. The CoM reference is c(t) = c_0 + a sin(2 pi f t) along y (a = 0.02 m, f = 1 Hz by default)
with its exact derivatives. The summary is the legged one: CoM error, foot drift, contact forces,
friction, torque ratio (against Solo12's 2.7 N m actuators) and the equation-of-motion residual.
"""

from __future__ import annotations

from tsid_py.controllers.quadruped import QuadrupedController
from tsid_py.scenarios.sway import sway_scenario

SCENARIO = sway_scenario(
    "quadruped", QuadrupedController, __doc__, robot="solo12", duration=4.0, amplitude=0.02, frequency=1.0
)
run, main = SCENARIO.run, SCENARIO.main
