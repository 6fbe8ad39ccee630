"""Quadruped: a robot on point feet (Solo12 by default) sways its CoM along a sinusoid.

TSID's quadruped demo (demo/demo_quadruped.py) on the ODRI Solo12: four hard ContactPoints
(FL, FR, HL, HR feet, forces in world axes, mu 0.3, 1 N <= f_n <= 100 N), a CoM task and a posture
task. The CoM reference is c(t) = c_0 + a sin(2 pi f t) along y (a = 0.02 m, f = 1 Hz by default)
with its exact derivatives. The summary is the legged one: CoM error, foot drift, contact forces,
friction, torque ratio (against Solo12's 2.7 N m actuators) and the equation-of-motion residual.
"""

from __future__ import annotations

from tsid_py.controllers.quadruped import QuadrupedController
from tsid_py.scenarios.cli_support import scenario_main
from tsid_py.scenarios.sway import SwayScenario

SCENARIO = SwayScenario(
    "quadruped", QuadrupedController, robot="solo12", duration=4.0, amplitude=0.02, frequency=1.0
)
run, add_arguments, run_from_args = SCENARIO.run, SCENARIO.add_arguments, SCENARIO.run_from_args
CONTROLLER = SCENARIO.controller  # what it runs (a sweep checks its robots with check_spec)


def main(argv: list[str] | None = None) -> int:
    return scenario_main("quadruped", add_arguments, run_from_args, __doc__.splitlines()[0], argv)
