"""CoM sinusoid: a biped on both feet sways its CoM sideways.

The reference is c(t) = c_0 + a sin(2 pi f t) along y (a = 0.05 m, f = 0.5 Hz by default),
around the initial CoM c_0, with its exact velocity and acceleration. The reported CoM error is
the distance between the CoM and this reference at every step.
"""

from __future__ import annotations

from tsid_py.controllers.biped import BipedController
from tsid_py.scenarios.cli_support import scenario_main
from tsid_py.scenarios.sway import SwayScenario

SCENARIO = SwayScenario(
    "com-sinusoid", BipedController, robot="talos", duration=10.0, amplitude=0.05, frequency=0.5
)
run, add_arguments, run_from_args = SCENARIO.run, SCENARIO.add_arguments, SCENARIO.run_from_args
CONTROLLER = SCENARIO.controller  # what it runs (a sweep checks its robots with check_spec)


def main(argv: list[str] | None = None) -> int:
    return scenario_main("com-sinusoid", add_arguments, run_from_args, __doc__.splitlines()[0], argv)
