"""Balance: a biped stands on both feet and holds its initial CoM.

The classic first TSID exercise. The controller keeps both feet as hard contacts, tracks a
constant CoM reference and the reference posture, and respects the torque bounds. Standing
still, the CoM must not move, the feet must not slide, and the contact forces must carry the
weight m g.
"""

from __future__ import annotations

import argparse

from tsid_py.controllers.biped import BipedController
from tsid_py.controllers.recovery import RECOVERIES, RecoveryParams
from tsid_py.loop.control_loop import Observer
from tsid_py.loop.plant import Push
from tsid_py.robot_specs import load_robot
from tsid_py.scenarios.cli_support import (
    add_common_arguments,
    add_plant_arguments,
    loop_setup,
    scenario_main,
)
from tsid_py.scenarios.runner import LoopSetup, RunResult, run_biped
from tsid_py.solvers import make_solver
from tsid_py.trajectories import TrajectoryEuclidianConstant

CONTROLLER = BipedController  # what it runs (a sweep checks its robots with check_spec)


def run(
    robot: str = "talos",
    duration: float = 2.0,
    dt: float = 0.002,
    backend: str = "quadprog",
    progress: bool = False,
    observer: Observer | None = None,
    plant: str = "integrator",
    mode: str = "torque",
    push: Push | None = None,
    check_every: int = 1,
    recovery: str = "none",
    recovery_params: RecoveryParams | None = None,
) -> RunResult:
    """Stand still for ``duration`` seconds on ``plant`` with ``mode`` commands, optionally pushed,
    the solutions checked against the physics every ``check_every`` steps (0 never), with TSID's
    balance controller (``recovery="none"``) or one that recovers from pushes (``"ankle"``,
    ``"step"``: :mod:`tsid_py.controllers.recovery`, its ``recovery_params``); returns the summary
    and the per-step log."""
    setup = LoopSetup(plant, mode, () if push is None else (push,), check_every=check_every)
    return _run(robot, duration, dt, backend, progress, observer, setup, recovery, recovery_params)


def _run(
    robot, duration, dt, backend, progress, observer, setup: LoopSetup, recovery="none", recovery_params=None
) -> RunResult:
    controller = BipedController(
        load_robot(robot), solver=make_solver(backend), recovery=recovery, recovery_params=recovery_params
    )

    com_reference = TrajectoryEuclidianConstant("com", controller.com_initial)
    return run_biped(controller, duration, dt, com_reference.sample, "balance", progress, observer, setup)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(parser, robot="talos", duration=2.0)
    add_plant_arguments(parser)
    parser.add_argument(
        "--recovery",
        choices=RECOVERIES,
        default="none",
        help="none: TSID's balance controller; ankle: capture point feedback at the ankles; step: and a "
        "step when the capture point leaves the feet (default: none)",
    )


def run_from_args(args: argparse.Namespace, observer: Observer | None = None) -> RunResult:
    return _run(
        args.robot,
        args.duration,
        args.dt,
        args.backend,
        not args.json,
        observer,
        loop_setup(args),
        args.recovery,
    )


def main(argv: list[str] | None = None) -> int:
    return scenario_main("balance", add_arguments, run_from_args, __doc__.splitlines()[0], argv)
