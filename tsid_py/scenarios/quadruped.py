"""Quadruped: Solo12 on four point feet sways its CoM along a sinusoid.

TSID's quadruped demo (demo/demo_quadruped.py) on the ODRI Solo12: four hard ContactPoints
(FL, FR, HL, HR feet, forces in world axes, mu 0.3, 1 N <= f_n <= 100 N), a CoM task and a posture
task. The CoM reference is c(t) = c_0 + a sin(2 pi f t) along y (a = 0.02 m, f = 1 Hz by default)
with its exact derivatives. The summary is the legged one: CoM error, foot drift, contact forces,
friction, torque ratio (against Solo12's 2.7 N m actuators) and the equation-of-motion residual.
"""

from __future__ import annotations

import argparse

from tsid_py.controllers.quadruped import QuadrupedController
from tsid_py.loop.control_loop import Observer
from tsid_py.robot_specs import load_robot
from tsid_py.scenarios.cli_support import add_common_arguments, add_sway_arguments, scenario_main
from tsid_py.scenarios.runner import RunResult, run_sway
from tsid_py.solvers import make_solver


def run(
    robot: str = "solo12",
    duration: float = 4.0,
    dt: float = 0.002,
    amplitude: float = 0.02,
    frequency: float = 1.0,
    backend: str = "quadprog",
    progress: bool = False,
    observer: Observer | None = None,
) -> RunResult:
    """Sway the CoM for ``duration`` seconds; amplitude [m] and frequency [Hz] along y."""
    controller = QuadrupedController(load_robot(robot), solver=make_solver(backend))
    return run_sway(controller, duration, dt, amplitude, frequency, "quadruped", progress, observer)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(parser, robot="solo12", duration=4.0)
    add_sway_arguments(parser, amplitude=0.02, frequency=1.0)


def run_from_args(args: argparse.Namespace, observer: Observer | None = None) -> RunResult:
    return run(
        args.robot,
        args.duration,
        args.dt,
        args.amplitude,
        args.frequency,
        args.backend,
        not args.json,
        observer,
    )


def main(argv: list[str] | None = None) -> int:
    return scenario_main(add_arguments, run_from_args, __doc__.splitlines()[0], argv)
