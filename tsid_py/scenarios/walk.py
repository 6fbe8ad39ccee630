"""Walk: a biped walks straight ahead on a footstep plan with a LIPM CoM plan of its own.

The plan (tsid_py.planning): ``steps`` swings alternating right and left, each footprint
``step_length`` ahead of the previous one, the last swing closing the feet side by side; the
ZMP reference sits on the stance sole in single support and moves between the soles in double
support; Kajita's ZMP preview control turns it into a CoM trajectory at the robot's own CoM
height. The controller follows the CoM plan, swings the feet on minimum-jerk trajectories and
switches the contacts with unloading/loading ramps; a low-weight CoP task follows the planned
ZMP. The robot falls if a QP fails, the CoM leaves the hull of the feet or the ZMP leaves the
support polygon.

With ``terrain`` (stairs, a slope, stones or a TOML file: :mod:`tsid_py.planning.terrain`) the
robot walks across it instead: the footholds, swings and CoM height of
:func:`~tsid_py.planning.terrain_walk.plan_walk_on`, on a MuJoCo plant with the terrain's blocks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from tsid_py.controllers.biped import BipedController, BipedParams
from tsid_py.controllers.strategies.push_recovery import RecoveryParams
from tsid_py.controllers.strategies.walk_recovery import MAX_WAIT, WalkRecovery
from tsid_py.errors import InvalidParameterError
from tsid_py.planning.footsteps import FootstepPlan, plan_straight_walk
from tsid_py.planning.lipm import plan_com_from_zmp
from tsid_py.planning.support import sole_center
from tsid_py.planning.terrain import TERRAINS, Terrain, load_terrain
from tsid_py.planning.terrain_walk import TerrainComPlan, plan_walk_on
from tsid_py.robot_specs import SpecRobot
from tsid_py.scenarios.parameters import ScenarioParams, param, robot_spec
from tsid_py.scenarios.runner import RunResult
from tsid_py.scenarios.scenario import RunOptions, Scenario
from tsid_py.scenarios.stepping import run_footsteps, stepping_controller
from tsid_py.tasks.task_cop_equality import TaskCopEquality
from tsid_py.trajectories import TrajectorySample

UNLOAD = LOAD = 0.2  # [s] the contacts' unloading before a lift-off and loading after a touch-down
WALK_RECOVERIES = ("none", "step")
SETTLE = 1.0  # [s] the plan's standing after the last double support
W_COP = 1e-5  # weight of the CoP task (rows in m N)
MAX_STEP_LENGTH = 0.2  # [m] the longest default step (Talos's, in TSID's walking exercise)
MAX_SWING_HEIGHT = 0.05  # [m] the highest default swing (TSID's walking exercise)
SWING_PER_LEG = 0.07  # a shorter leg lifts its foot this fraction of its length


def default_step(robot: SpecRobot) -> tuple[float, float]:
    """A robot's step length and swing height [m]: its spec's ``[walk]`` entries, else from its
    geometry: a step as long as its sole (at most MAX_STEP_LENGTH) and a swing of SWING_PER_LEG of
    its leg's length (at most MAX_SWING_HEIGHT)."""
    walk, sole = robot.spec.walk, robot.spec.sole
    length = walk.get(
        "step_length", min(MAX_STEP_LENGTH, sole.lxp + sole.lxn) if sole else MAX_STEP_LENGTH / 2
    )
    height = walk.get("swing_height", min(MAX_SWING_HEIGHT, SWING_PER_LEG * robot.leg_length()))
    return length, height


@dataclass(frozen=True)
class WalkParams(ScenarioParams):
    """Walk ``steps`` swings of ``step_length`` (the plan sets the length)."""

    robot: str = robot_spec("talos")
    steps: int = param(8, "number of swings, >= 2")
    step_length: float | None = param(
        None,
        "footprint spacing",
        unit="m",
        shown="the spec's [walk] step_length, else the sole's length, at most 0.2",
    )
    single_support: float = param(0.8, "swing duration", unit="s")
    double_support: float = param(0.3, "double-support duration", unit="s")
    swing_height: float | None = param(
        None,
        "foot lift at mid-swing",
        unit="m",
        shown="the spec's [walk] swing_height, else 7% of the leg's length, at most 0.05",
    )
    terrain: str = param(
        "flat",
        lambda: (
            f"the ground: {', '.join(TERRAINS)} or a terrain TOML file (not flat: walk across it, "
            "the plan's steps from the terrain; MuJoCo's plant)"
        ),
        sweep=False,
    )
    max_rise: float = param(
        0.12, "the highest a swing may step up or down, on terrain", unit="m", sweep=False
    )
    recovery: str = param(
        "none",
        "none: the plan as it is; step: its landings moved where the measured capture point needs "
        "them, the CoM on DCM feedback (flat ground)",
        choices=WALK_RECOVERIES,
    )
    params: BipedParams | None = param(
        None, "the biped's parameters (default: for stepping)", python_only=True
    )
    recovery_params: RecoveryParams | None = param(None, "the recovery's parameters", python_only=True)


def simulate(p: WalkParams, options: RunOptions) -> RunResult:
    """Walk the plan of ``p``; a step length or swing height of None is the robot's
    (:func:`default_step`: 0.2 m and 0.05 m for Talos, 0.1 m steps for Romeo)."""
    controller = stepping_controller(p.robot, p.params, p.backend)
    robot_model = controller.robot
    default_length, default_height = default_step(robot_model)
    step_length = default_length if p.step_length is None else p.step_length
    swing_height = default_height if p.swing_height is None else p.swing_height
    terrain = load_terrain(p.terrain)
    if p.recovery == "step" and not terrain.flat:
        raise InvalidParameterError(
            "--recovery step walks on flat ground: its moved landings are not checked against a terrain"
        )
    setup = options.setup
    if terrain.flat:
        plan = plan_straight_walk(
            robot_model.spec.sole,
            controller.foot_placement("right"),
            controller.foot_placement("left"),
            controller.com_initial[:2],
            p.steps,
            step_length,
            p.single_support,
            p.double_support,
            t_settle=SETTLE + (MAX_WAIT if p.recovery == "step" else 0.0),  # (time for the waits)
        )
        com_reference = plan_com_from_zmp(plan.zmp_reference, plan.t_end, controller.com_initial).sample
    else:
        plan, com_reference = _plan_across(controller, terrain, p, step_length, swing_height)
        setup = replace(setup, terrain=terrain)
    recovery = None
    cop_task = None  # (with the recovery the CoM's feedback moves the ZMP off the plan's)
    if p.recovery == "step":
        recovery = WalkRecovery(
            plan, swing_height, UNLOAD, LOAD, com_reference, robot_model, p.recovery_params
        )
    else:
        cop_task = TaskCopEquality("task-cop", robot_model)
        controller.formulation.add_force_task(cop_task, weight=W_COP, priority=1)
    result = run_footsteps(
        controller,
        plan,
        com_reference,
        "walk",
        p.dt,
        swing_height=swing_height,
        unload_duration=UNLOAD,
        load_duration=LOAD,
        com_support="feet",
        cop_task=cop_task,
        progress=options.progress,
        observer=options.observer,
        setup=setup,
        footsteps=recovery,
    )
    if recovery is not None:
        result.summary.update(recovery.summary())
    if not terrain.flat:
        named = p.terrain in TERRAINS  # a file's whole path: the side view reads it from anywhere
        result.summary["terrain"] = p.terrain if named else str(Path(p.terrain).resolve())
    return result


def _plan_across(
    controller: BipedController, terrain: Terrain, p: WalkParams, step_length: float, swing_height: float
) -> tuple[FootstepPlan, Callable[[float], TrajectorySample]]:
    """The footsteps across ``terrain`` to 0.4 m past its end
    (:func:`~tsid_py.planning.terrain_walk.plan_walk_on`) and the CoM reference that follows it."""
    sole = controller.robot.spec.sole
    right, left = controller.foot_placement("right"), controller.foot_placement("left")
    start = max(sole_center(sole, right)[0], sole_center(sole, left)[0])
    if terrain.end + 0.4 <= start:
        raise InvalidParameterError(
            f"terrain {terrain.name} ends at x = {terrain.end:.2f} m, behind the robot's feet"
        )
    plan, knots = plan_walk_on(
        terrain,
        sole,
        right,
        left,
        controller.com_initial[:2],
        terrain.end + 0.4 - start,
        step_length,
        p.single_support,
        p.double_support,
        max_rise=p.max_rise,
        swing=swing_height,
    )
    lipm = plan_com_from_zmp(plan.zmp_reference, plan.t_end, controller.com_initial)
    return plan, TerrainComPlan(lipm, knots).sample


SCENARIO = Scenario(
    "walk",
    WalkParams,
    simulate,
    BipedController,
    __doc__,
    plan="choose --steps, --single-support and --double-support",
    push=True,
    positional=6,
)
run, main = SCENARIO.run, SCENARIO.main
