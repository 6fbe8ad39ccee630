"""CoM sinusoid: a biped on both feet sways its CoM sideways.

The reference is c(t) = c_0 + a sin(2 pi f t) along y (a = 0.05 m, f = 0.5 Hz by default),
around the initial CoM c_0, with its exact velocity and acceleration. The reported CoM error is
the distance between the CoM and this reference at every step.
"""

from __future__ import annotations

import argparse

from tsid_py.controllers.biped import BipedController
from tsid_py.loop.control_loop import Observer
from tsid_py.robot_specs import load_robot
from tsid_py.scenarios.cli_support import add_common_arguments, add_sway_arguments, scenario_main
from tsid_py.scenarios.runner import RunResult, run_sway
from tsid_py.solvers import make_solver


def run(
    robot: str = "talos",
    duration: float = 10.0,
    dt: float = 0.002,
    amplitude: float = 0.05,
    frequency: float = 0.5,
    backend: str = "quadprog",
    progress: bool = False,
    observer: Observer | None = None,
) -> RunResult:
    """Track the sinusoid for ``duration`` seconds; amplitude [m] and frequency [Hz] along y."""
    controller = BipedController(load_robot(robot), solver=make_solver(backend))
    return run_sway(controller, duration, dt, amplitude, frequency, "com-sinusoid", progress, observer)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(parser, robot="talos", duration=10.0)
    add_sway_arguments(parser, amplitude=0.05, frequency=0.5)


def run_from_args(args: argparse.Namespace, observer: Observer | None = None) -> RunResult:
    return run(
        args.robot,
        args.duration,
        args.dt,
        args.amplitude,
        args.frequency,
        backend=args.backend,
        progress=not args.json,
        observer=observer,
    )


def main(argv: list[str] | None = None) -> int:
    return scenario_main(add_arguments, run_from_args, __doc__.splitlines()[0], argv)
