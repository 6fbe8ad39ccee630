"""Closed-loop runs of a biped following a footstep plan: the shared loop of ``step`` and ``walk``.

At every control step the scenario sets the CoM reference from a CoM trajectory, and the plan is
carried out by a strategy of the controller (:class:`~tsid_py.controllers.strategies.Footsteps`):
``unload_duration`` before a lift-off the foot's contact starts unloading, the foot then follows
its swing trajectory, and at touch-down the contact comes back with a loading ramp of
``load_duration`` (:class:`~tsid_py.controllers.feet.FootSchedule`). Every solution goes through
the physics checks.

Measured at every step, besides the balance quantities: the ZMP of the contact forces and its
margin inside the support polygon of the contacts, the CoM's margin inside its support region,
the largest change of a contact's net force between consecutive steps (a contact out of the
problem has zero force), the touch-down error of every swing and the swing height.
"""

from __future__ import annotations

from collections.abc import Callable, MutableSequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from tsid_py.controllers.biped import BipedController, BipedParams
from tsid_py.controllers.strategies.footsteps import Footsteps
from tsid_py.errors import InvalidParameterError
from tsid_py.geometry import GRAVITY, HullTracker, center_of_pressure
from tsid_py.loop.control_loop import LoopOutcome, Observer, StepHooks, control_steps
from tsid_py.loop.controller import ControlOutput
from tsid_py.loop.log import RunLog
from tsid_py.loop.measured import MeasuredState
from tsid_py.planning.footsteps import SIDES, FootstepPlan
from tsid_py.planning.support import sole_polygon
from tsid_py.robot_specs import SpecRobot, load_robot
from tsid_py.scenarios.runner import LoopSetup, RunResult, summary_header
from tsid_py.solvers import make_solver
from tsid_py.tasks.task_cop_equality import TaskCopEquality
from tsid_py.trajectories import TrajectorySample
from tsid_py.validation import as_scalar

EVENT_TOLERANCE = 1e-9  # [s] an event at time t_e fires at the first control step with t >= t_e - this


def stepping_params(robot: SpecRobot, **overrides: float) -> BipedParams:
    """The robot's biped parameters for stepping (:meth:`BipedParams.for_stepping`)."""
    return BipedParams.for_stepping(robot, **overrides)


def stepping_controller(robot: str, params: BipedParams | None, backend: str) -> BipedController:
    """The biped of a stepping scenario: ``params``, else :func:`stepping_params`, and the QP backend."""
    model = load_robot(robot)
    return BipedController(model, params or stepping_params(model), solver=make_solver(backend))


@dataclass
class SteppingLog(RunLog):
    """:class:`RunLog` plus the locomotion series.

    Attributes:
        zmp: ZMP of the contact forces, x-y [m] (NaN at a step with no foot in contact: none).
        zmp_ref: Planned ZMP (of the CoM reference: c - h / g ddc), x-y [m].
        feet: Measured world position of each foot frame, by side [m].
        feet_ref: Where each foot is held, by side [m]: its contact's reference while it is a
            contact, else its swing task's reference.
        in_contact: Whether each foot is a contact of the problem, by side.
        footsteps: (side, planned touch-down position [m]) of every swing (not per step).
    """

    zmp: MutableSequence[np.ndarray] = field(default_factory=list)
    zmp_ref: MutableSequence[np.ndarray] = field(default_factory=list)
    feet: dict[str, MutableSequence[np.ndarray]] = field(default_factory=dict)
    feet_ref: dict[str, MutableSequence[np.ndarray]] = field(default_factory=dict)
    in_contact: dict[str, MutableSequence[bool]] = field(default_factory=dict)
    footsteps: list[tuple[str, np.ndarray]] = field(default_factory=list)

    PER_RUN: ClassVar[tuple[str, ...]] = ("footsteps",)

    def arrays(self) -> dict[str, np.ndarray]:
        """Every series as an array (``feet/<side>``, ``in_contact/<side>``, ``footsteps`` as x-y-z rows)."""
        out = super().arrays()
        out["footsteps"] = np.array([position for _, position in self.footsteps])
        return out


def run_footsteps(
    controller: BipedController,
    plan: FootstepPlan,
    com_reference: Callable[[float], TrajectorySample],
    scenario: str,
    dt: float = 0.002,
    swing_height: float = 0.1,
    unload_duration: float = 0.2,
    load_duration: float = 0.2,
    com_support: str = "contacts",
    cop_task: TaskCopEquality | None = None,
    progress: bool = False,
    observer: Observer | None = None,
    setup: LoopSetup | None = None,
    footsteps: Footsteps | None = None,
) -> RunResult:
    """Run the plan in closed loop until ``plan.t_end``.

    Args:
        controller: A biped standing on both feet at ``controller.q0`` (its formulation is changed).
        plan: The footsteps; both feet stand in its ``initial`` placements at t = 0.
        com_reference: CoM reference as a function of time (world) [m, m/s, m/s^2].
        scenario: Name reported in the summary.
        dt: Control period [s].
        swing_height: Height of the swing trajectories above the straight line [m].
        unload_duration: Contact unloading ramp before each lift-off [s].
        load_duration: Contact loading ramp after each touch-down [s].
        com_support: ``"contacts"``: the CoM must stay above the support polygon of the contacts
            (quasi-static motions such as a single step); ``"feet"``: above the convex hull of
            both feet, wherever they are (walking, where the CoM passes between the feet).
        cop_task: A CoP task in the controller's formulation; its reference follows the planned ZMP.
        progress: Show a progress bar on stderr.
        observer: Called with (controller, log) after every logged step (e.g. a live viewer).
        setup: The plant, command mode and pushes (the integrator in torque mode by default).
        footsteps: The strategy that carries out the plan (a :class:`Footsteps` of it, or one
            built on it, e.g. :class:`~tsid_py.controllers.strategies.walk_recovery.WalkRecovery`);
            by default ``Footsteps(plan, swing_height, unload_duration, load_duration)``.

    Raises:
        InvalidParameterError: a negative duration or height, or a double support shorter than
            ``unload_duration`` (the next foot would start unloading before the other has landed).

    The ground is the plane z = 0 (where :class:`BipedController` puts the soles); the planned ZMP
    is that of the CoM reference, c - (c_z / g) ddc.
    """
    dt = as_scalar("dt", dt, minimum=0.0, strict=True)
    if com_support not in ("contacts", "feet"):
        raise InvalidParameterError(f"com_support must be 'contacts' or 'feet', got {com_support!r}")
    if not isinstance(plan, FootstepPlan) or not callable(com_reference):
        raise InvalidParameterError("run_footsteps needs a FootstepPlan and a CoM reference function of t")
    if footsteps is None:
        footsteps = Footsteps(plan, swing_height, unload_duration, load_duration)
    elif not isinstance(footsteps, Footsteps):
        raise InvalidParameterError(f"footsteps must be a Footsteps strategy, got {type(footsteps).__name__}")
    setup = setup or LoopSetup()
    log = setup.new_log(
        SteppingLog,
        forces={c.name: [] for c in controller.contacts.values()},
        feet={side: [] for side in SIDES},
        feet_ref={side: [] for side in SIDES},
        in_contact={side: [] for side in SIDES},
        footsteps=[(s.side, s.target.translation) for s in plan.steps],
    )
    steps = control_steps(plan.t_end, dt)
    controller.add_strategy(footsteps)
    hooks = _Stepping(controller, plan, com_reference, log, footsteps)
    hooks.com_support, hooks.cop_task = com_support, cop_task
    outcome = setup.loop(controller, dt, log).run(steps, hooks, progress, scenario, observer)
    return RunResult({**hooks.summary(scenario, dt, outcome), **setup.summary()}, log, controller)


class _Stepping(StepHooks):
    """Before each step: the CoM reference (and the CoP task's). After: the ZMP and CoM margins in
    their supports, the feet's slip (how far a foot moved, as measured, since it became a contact)
    and height, the force jumps."""

    def __init__(
        self,
        controller: BipedController,
        plan: FootstepPlan,
        com_reference: Callable[[float], TrajectorySample],
        log: SteppingLog,
        footsteps: Footsteps,
    ) -> None:
        self.controller, self.plan, self.com_reference, self.log = controller, plan, com_reference, log
        self.footsteps = footsteps
        self.force_sizes = {c.name: c.n_force for c in controller.contacts.values()}
        self.com_support = "contacts"
        self.cop_task: TaskCopEquality | None = None
        self.lift_height, self.foot_drift, self.force_jump = 0.0, 0.0, 0.0
        self.hulls = {"active": HullTracker(), "feet": HullTracker()}  # of the supports, step to step
        self.contact_origin: dict[str, np.ndarray] = {}  # where each foot was when it became a contact
        self.zmp_margin, self.com_margin = np.inf, np.inf
        self.previous_forces: dict[str, np.ndarray] = {}
        self.reference: TrajectorySample | None = None
        self.zmp_ref = np.zeros(2)
        self.com_error_max, self.com_error_squares, self.zmp_error_max, self.steps = 0.0, 0.0, 0.0, 0

    def before_step(self, state: MeasuredState) -> None:
        self.reference = reference = self.com_reference(state.t)
        self.controller.set_com_reference(reference)
        self.zmp_ref = reference.pos[:2] - reference.pos[2] / GRAVITY * reference.acc[:2]
        if self.cop_task is not None:
            self.cop_task.set_reference(np.append(self.zmp_ref, 0.0))

    def after_step(self, state: MeasuredState, out: ControlOutput) -> None:
        controller, log, sole, t = self.controller, self.log, self.plan.sole, state.t
        data, in_problem = controller.data, controller.formulation.contacts
        by_side = controller.contacts
        feet = {side: state.feet[side].placement for side in SIDES}
        active = [side for side in SIDES if controller.in_contact(side)]
        # each contact's point forces in world axes, once: the ZMP and the feet's net forces read them
        world = {name: in_problem[name].world_forces(data, f) for name, f in out.forces.items()}
        zmp = np.full(2, np.nan)  # (no foot in contact: there is no ZMP)
        if world:  # (none when every foot left the ground: the loop measures the fall)
            points = np.vstack([in_problem[name].world_points(data).T for name in world])
            zmp = center_of_pressure(points, np.vstack(list(world.values())))[:2]
            support = np.vstack([sole_polygon(sole, feet[side]) for side in active])
            hulls = self.hulls["active"]  # (their margins: of points the library computed, finite)
            self.zmp_margin = min(self.zmp_margin, hulls.margin(zmp, support))
        com = state.com
        if self.com_support == "feet":
            support = np.vstack([sole_polygon(sole, feet[side]) for side in SIDES])
            hulls = self.hulls["feet"]
        if world or self.com_support == "feet":  # (no contact: no support of the contacts)
            self.com_margin = min(self.com_margin, hulls.margin(com, support))
        for side in SIDES:  # slip: how far a foot moved since it became a contact (as measured)
            if side not in active:
                self.contact_origin.pop(side, None)
                continue
            origin = self.contact_origin.setdefault(side, feet[side].translation)
            self.foot_drift = max(self.foot_drift, float(np.linalg.norm(feet[side].translation - origin)))
        for step in self.plan.steps:
            if step.t_lift <= t <= step.t_land:
                rise = float(feet[step.side].translation[2] - step.start.translation[2])
                self.lift_height = max(self.lift_height, rise)
        net_forces = {  # of each foot [N] (zero for a foot out of the problem)
            side: world[c.name].sum(axis=0) if c.name in world else np.zeros(3) for side, c in by_side.items()
        }
        if self.previous_forces:
            jumps = [np.linalg.norm(net_forces[s] - self.previous_forces[s]) for s in net_forces]
            self.force_jump = max(self.force_jump, float(max(jumps)))
        self.previous_forces = net_forces

        com_error = float(np.linalg.norm(com - self.reference.pos))  # kept as the run goes: the log
        self.com_error_max = max(self.com_error_max, com_error)  # may keep only its last steps
        self.com_error_squares += com_error * com_error
        if world:
            self.zmp_error_max = max(self.zmp_error_max, float(np.linalg.norm(zmp - self.zmp_ref)))
        self.steps += 1

        log.com.append(com)
        log.com_ref.append(self.reference.pos)
        log.record_forces(out.forces, self.force_sizes)
        log.zmp.append(zmp)
        log.zmp_ref.append(self.zmp_ref)
        for side in SIDES:
            log.feet[side].append(feet[side].translation)
            held = (
                by_side[side].reference if side in active else controller.foot_tasks[side].reference_placement
            )
            log.feet_ref[side].append(held.translation)
            log.in_contact[side].append(side in active)

    def summary(self, scenario: str, dt: float, outcome: LoopOutcome) -> dict[str, object]:
        plan, errors = self.plan, self.footsteps.touchdown_errors
        touchdown = {side: max(errors[side]) if side in errors else None for side in SIDES}  # None: never
        robot = self.controller.robot
        weight = robot.total_mass * GRAVITY
        return {
            **summary_header(self.controller, scenario, dt, round(plan.t_end, 9)),
            "footsteps": len(plan.steps),
            "footsteps_landed": self.footsteps.landed,
            "com_error_max_m": self.com_error_max,
            "com_error_rms_m": float(np.sqrt(self.com_error_squares / max(self.steps, 1))),
            "foot_drift_max_m": self.foot_drift,
            "touchdown_error_right_m": touchdown["right"],
            "touchdown_error_left_m": touchdown["left"],
            "touchdown_error_max_m": max((e for e in touchdown.values() if e is not None), default=None),
            "swing_height_max_m": self.lift_height,
            "zmp_margin_min_m": self.zmp_margin,
            "zmp_error_max_m": self.zmp_error_max,
            "com_margin_min_m": self.com_margin,
            "max_force_jump_n": self.force_jump,
            "max_force_jump_over_weight": self.force_jump / weight,
            **outcome.summary(),
        }
