"""Walk: a biped walks straight ahead on a footstep plan with a LIPM CoM plan of its own.

The plan (tsid_py.planning): ``steps`` swings alternating right and left, each footprint
``step_length`` ahead of the previous one, the last swing closing the feet side by side; the
ZMP reference sits on the stance sole in single support and moves between the soles in double
support; Kajita's ZMP preview control turns it into a CoM trajectory at the robot's own CoM
height. The controller follows the CoM plan, swings the feet on minimum-jerk trajectories and
switches the contacts with unloading/loading ramps; a low-weight CoP task follows the planned
ZMP. The robot falls if a QP fails, the CoM leaves the hull of the feet or the ZMP leaves the
support polygon.
"""

from __future__ import annotations

import argparse

from tsid_py.command import METRES, SECONDS
from tsid_py.controllers.biped import BipedController, BipedParams
from tsid_py.errors import InvalidParameterError
from tsid_py.loop.control_loop import Observer
from tsid_py.loop.plant import Push
from tsid_py.planning.footsteps import plan_straight_walk
from tsid_py.planning.lipm import plan_com_from_zmp
from tsid_py.robot_specs import Robot
from tsid_py.scenarios.cli_support import (
    add_common_arguments,
    add_plant_arguments,
    loop_setup,
    scenario_main,
)
from tsid_py.scenarios.runner import LoopSetup, RunResult
from tsid_py.scenarios.stepping import run_footsteps, stepping_controller
from tsid_py.tasks.task_cop_equality import TaskCopEquality

W_COP = 1e-5  # weight of the CoP task (rows in m N)
CONTROLLER = BipedController  # what it runs (a sweep checks its robots with check_spec)
MAX_STEP_LENGTH = 0.2  # [m] the longest default step (Talos's, in TSID's walking exercise)
MAX_SWING_HEIGHT = 0.05  # [m] the highest default swing (TSID's walking exercise)
SWING_PER_LEG = 0.07  # a shorter leg lifts its foot this fraction of its length


def default_step(robot: Robot) -> tuple[float, float]:
    """A robot's step length and swing height [m]: its spec's ``[walk]`` entries, else from its
    geometry: a step as long as its sole (at most MAX_STEP_LENGTH) and a swing of SWING_PER_LEG of
    its leg's length (at most MAX_SWING_HEIGHT)."""
    walk, sole = robot.spec.walk, robot.spec.sole
    length = walk.get(
        "step_length", min(MAX_STEP_LENGTH, sole.lxp + sole.lxn) if sole else MAX_STEP_LENGTH / 2
    )
    height = walk.get("swing_height", min(MAX_SWING_HEIGHT, SWING_PER_LEG * robot.leg_length()))
    return length, height


def run(
    robot: str = "talos",
    steps: int = 8,
    step_length: float | None = None,
    single_support: float = 0.8,
    double_support: float = 0.3,
    swing_height: float | None = None,
    dt: float = 0.002,
    params: BipedParams | None = None,
    backend: str = "quadprog",
    progress: bool = False,
    observer: Observer | None = None,
    plant: str = "integrator",
    mode: str = "torque",
    push: Push | None = None,
    setup: LoopSetup | None = None,
) -> RunResult:
    """Walk ``steps`` swings of ``step_length`` [m].

    Args:
        step_length: Footprint spacing [m]; by default the robot's (:func:`default_step`: 0.2 m
            for Talos, 0.1 m for Romeo).
        single_support: Swing duration [s].
        double_support: Duration of each double support [s].
        swing_height: Foot lift at mid-swing [m]; by default the robot's (0.05 m for Talos).
        plant, mode, push: What the controller drives (:data:`~tsid_py.loop.plants.PLANTS`), how,
            and a push on the base.
        setup: The whole loop set-up (:class:`LoopSetup`: plant, mode, pushes and where the log
            goes), instead of ``plant``, ``mode`` and ``push``.
    """
    if setup is not None and (plant, mode, push) != ("integrator", "torque", None):
        raise InvalidParameterError("walk.run takes plant, mode and push, or a setup, not both")
    controller = stepping_controller(robot, params, backend)
    robot_model = controller.robot
    default_length, default_height = default_step(robot_model)
    step_length = default_length if step_length is None else step_length
    swing_height = default_height if swing_height is None else swing_height
    plan = plan_straight_walk(
        robot_model.spec.sole,
        controller.foot_placement("right"),
        controller.foot_placement("left"),
        controller.com_initial[:2],
        steps,
        step_length,
        single_support,
        double_support,
    )
    com_plan = plan_com_from_zmp(plan.zmp_reference, plan.t_end, controller.com_initial)
    cop_task = TaskCopEquality("task-cop", robot_model)
    controller.formulation.add_force_task(cop_task, weight=W_COP, priority=1)
    return run_footsteps(
        controller,
        plan,
        com_plan.sample,
        "walk",
        dt,
        swing_height=swing_height,
        unload_duration=0.2,
        load_duration=0.2,
        com_support="feet",
        cop_task=cop_task,
        progress=progress,
        observer=observer,
        setup=setup or LoopSetup(plant, mode, () if push is None else (push,)),
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(
        parser, robot="talos", duration=None, plan="choose --steps, --single-support and --double-support"
    )
    parser.add_argument("--steps", type=int, default=8, help="number of swings, >= 2 (default: 8)")
    parser.add_argument(
        "--step-length",
        type=METRES,
        default=None,
        help="footprint spacing [m] (default: the spec's [walk] step_length, else the sole's length, "
        "at most 0.2)",
    )
    parser.add_argument(
        "--swing-height",
        type=METRES,
        default=None,
        help="foot lift at mid-swing [m] (default: the spec's [walk] swing_height, else 7%% of the leg's "
        "length, at most 0.05)",
    )
    parser.add_argument(
        "--single-support", type=SECONDS, default=0.8, help="swing duration [s] (default: 0.8)"
    )
    parser.add_argument(
        "--double-support", type=SECONDS, default=0.3, help="double-support duration [s] (default: 0.3)"
    )
    add_plant_arguments(parser)


def run_from_args(args: argparse.Namespace, observer: Observer | None = None) -> RunResult:
    return run(
        args.robot,
        args.steps,
        args.step_length,
        args.single_support,
        args.double_support,
        args.swing_height,
        dt=args.dt,
        backend=args.backend,
        progress=not args.json,
        observer=observer,
        setup=_at_most_one_push(loop_setup(args)),
    )


def _at_most_one_push(setup: LoopSetup) -> LoopSetup:
    """``setup``, checked to hold one push at the most (walk's Python API takes one)."""
    if len(setup.pushes) > 1:
        raise InvalidParameterError("walk takes one --push")
    return setup


def main(argv: list[str] | None = None) -> int:
    return scenario_main("walk", add_arguments, run_from_args, __doc__.splitlines()[0], argv)
