"""BipedController: the standard TSID whole-body controller of a biped on its two feet.

Owns the formulation, two Contact6d feet (hard), a CoM task, a posture task, an angular
momentum task (all level 1) and torque bounds (level 0), like TSID's ``TsidBiped`` helper
(exercizes/tsid_biped.py). Defaults are the published Talos parameters; a robot spec may
override them in its ``[biped]`` table.

A foot can leave the ground and come back (:meth:`BipedController.remove_contact`,
:meth:`BipedController.add_contact`): while it is off the ground an SE3 task (level 1) tracks
its reference (:meth:`BipedController.set_foot_reference`), as TsidBiped's foot tasks.

Pushed, the controller can recover (``recovery="ankle"`` or ``"step"``: capture point feedback,
and a step when it must, :mod:`tsid_py.controllers.recovery`); ``"none"`` keeps TSID's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin

from tsid_py.contacts.contact_6d import Contact6d
from tsid_py.controllers.legged import CONTACT_RAMP, LeggedController
from tsid_py.controllers.recovery import RECOVERIES, PushRecovery, RecoveryParams
from tsid_py.errors import InvalidParameterError, RobotSpecError
from tsid_py.loop.controller import ControlOutput
from tsid_py.loop.plant import PlantState
from tsid_py.robot_specs import Robot, RobotSpec
from tsid_py.solvers.solver_base import Solver
from tsid_py.tasks.task_am_equality import TaskAMEquality
from tsid_py.tasks.task_se3_equality import TaskSE3Equality
from tsid_py.trajectories import TrajectorySample
from tsid_py.validation import as_scalar, lookup


@dataclass(frozen=True)
class BipedParams:
    """Gains [1/s^2], weights, friction and force limits [N] of the biped controller."""

    mu: float = 0.3
    f_min: float = 5.0
    f_max: float = 1000.0
    kp_contact: float = 10.0
    kp_com: float = 10.0
    kp_am: float = 10.0
    am_mask: tuple[float, float, float] = (1.0, 1.0, 0.0)
    kp_posture_scale: float = 1.0  # times the per-joint gains of the robot spec
    w_com: float = 1.0
    w_am: float = 1e-3
    w_posture: float = 0.1
    w_force_reg: float = 1e-5
    kp_foot: float = 10.0  # swing-foot SE3 task
    w_foot: float = 1.0
    tau_max_scaling: float = 1.0  # torque bounds = scaling x URDF effort limits, the limits a plant applies

    @classmethod
    def for_robot(cls, robot: Robot) -> BipedParams:
        """Defaults overridden by the spec's ``[biped]`` table."""
        return robot.controller_params(cls(), "biped")

    @classmethod
    def for_stepping(cls, robot: Robot, **overrides: float) -> BipedParams:
        """The robot's parameters for stepping: stiffer swing feet and a lighter posture task.

        kp_foot = 100 (instead of TsidBiped's 10) and w_posture <= 1e-3 (TSID's walking exercise
        uses 1e-4) let the swing foot track its trajectory to a fraction of a millimetre at
        touch-down; with the balance defaults the posture task holds the leg back (Talos lifts
        4 cm of 10).
        """
        base = cls.for_robot(robot)
        defaults = {"kp_foot": 100.0, "w_posture": min(base.w_posture, 1e-3)}
        return replace(base, **{**defaults, **overrides})


class BipedController(LeggedController):
    """Balance controller of a biped standing on both feet.

    Args:
        robot: A robot loaded from a spec with ``[feet] right``/``left`` and a ``[sole]``.
        params: Gains and weights; ``BipedParams.for_robot(robot)`` when omitted
            (``BipedParams.for_stepping(robot)`` with a recovery).
        q0: Initial configuration; the spec's reference posture, lowered so the soles touch z = 0.
        solver: QP backend (quadprog by default).
        recovery: "none" (TSID's controller), "ankle" or "step" (:class:`PushRecovery`).
        recovery_params: Its gains and times (:class:`RecoveryParams`).
    """

    @staticmethod
    def check_spec(spec: RobotSpec) -> None:
        """RobotSpecError unless ``spec`` is a biped's: [feet] right and left, and a [sole]."""
        if "right" not in spec.feet or "left" not in spec.feet or spec.sole is None:
            raise RobotSpecError(f"{spec.name} is not a biped spec: it needs [feet] right/left and [sole]")

    def __init__(
        self,
        robot: Robot,
        params: BipedParams | None = None,
        q0: np.ndarray | None = None,
        solver: Solver | None = None,
        recovery: str = "none",
        recovery_params: RecoveryParams | None = None,
    ) -> None:
        if recovery not in RECOVERIES:
            raise InvalidParameterError(f"recovery must be one of {', '.join(RECOVERIES)}, got {recovery!r}")
        spec = robot.spec
        self.check_spec(spec)
        super().__init__(robot, "biped", solver, q0)
        if params is None:
            params = BipedParams.for_robot(robot) if recovery == "none" else BipedParams.for_stepping(robot)
        self.params = params
        form = self.formulation
        self._contacts: dict[str, Contact6d] = {}
        self.foot_tasks: dict[str, TaskSE3Equality] = {}
        for side in ("right", "left"):
            contact = Contact6d(
                f"contact_{side[0]}foot",
                robot,
                spec.feet[side],
                spec.sole.corners(),
                [0.0, 0.0, 1.0],
                params.mu,
                params.f_min,
                params.f_max,
            )
            contact.kp = params.kp_contact
            contact.set_reference(robot.frame_placement(self.data, spec.feet[side]))
            form.add_rigid_contact(contact, force_reg_weight=params.w_force_reg)
            self._contacts[side] = contact
            self.foot_tasks[side] = TaskSE3Equality(f"task-{side}-foot", robot, spec.feet[side])
            self.foot_tasks[side].kp = params.kp_foot

        self._add_com_and_posture(
            params.kp_com, params.w_com, params.kp_posture_scale * robot.posture_gains(), params.w_posture
        )
        self.am_task = TaskAMEquality("task-am", robot)
        self.am_task.kp = params.kp_am * np.asarray(params.am_mask)
        if params.w_am > 0:
            form.add_motion_task(self.am_task, weight=params.w_am, priority=1)
        # A URDF effort limit of 0 means "not given" (Romeo's fingers): those joints stay unbounded.
        effort = robot.effort_limit()
        self._add_torque_bounds(np.where(effort > 0, params.tau_max_scaling * effort, np.inf))
        self.set_static_force_references()
        self.recovery = None if recovery == "none" else PushRecovery(self, recovery, recovery_params)

    def set_com_reference(self, sample: TrajectorySample) -> None:
        """CoM reference (pos [m], vel [m/s], acc [m/s^2]) in the world frame; with a recovery, the
        nominal one it rests the CoM over (moved with the feet when they step)."""
        if self.recovery is None:
            super().set_com_reference(sample)
        else:
            self.recovery.set_nominal(sample)

    def compute(self, t: float, q: np.ndarray, v: np.ndarray) -> ControlOutput:
        if self.recovery is not None:
            measured = self.measured  # observed at this step, else measured here
            if measured is None or measured.t != t:
                measured = self.measurer.measure(PlantState(t, q, v))
            self.recovery.update(measured)
        return super().compute(t, q, v)

    def set_static_force_references(self) -> None:
        """Centre each foot's force regularization on its share of the robot's weight.

        At the current state (after ``compute_all_terms``), find the foot wrenches w_k that hold the
        robot at rest, sum_k J_k,base^T w_k = h_base, with the least regularization cost
        sum_k |W w_k|^2 (W the contacts' weights), and use them as force references. TSID's
        TsidBiped regularizes toward zero wrenches instead, which biases the solution away from
        rest: standing still, Talos' CoM then settles about 1 mm off its reference.
        """
        robot, data = self.robot, self.data
        nu = robot.nv - robot.na
        blocks, inverse_weights = [], []
        active = [c for c in self.contacts.values() if self.formulation.check_contact(c.name)]
        for contact in active:
            blocks.append(robot.frame_jacobian_local(data, contact.frame_id)[:, :nu].T)
            inverse_weights.append(1.0 / contact.regularization_weights**2)
        A = np.hstack(blocks)
        D = np.concatenate(inverse_weights)
        wrenches = D * (A.T @ np.linalg.solve((A * D) @ A.T, robot.nonlinear_effects(data)[:nu]))
        for k, contact in enumerate(active):
            contact.set_force_reference(wrenches[6 * k : 6 * k + 6])

    def lifted(self) -> set[str]:
        """The feet whose swing task is in the problem: lifted, or being unloaded to lift."""
        return {side for side, task in self.foot_tasks.items() if self.formulation.check_task(task.name)}

    @property
    def stepping(self) -> bool:
        """Whether a planned step is under way: a foot lifted on purpose (by the caller, or by the
        recovery to put a foot a push lifted back down), not one contact feedback released nor one
        the recovery chose to step with. A chosen step answers a lost balance, so the verdict goes
        on judging the capture point through it (it dates the loss)."""
        recovering = None if self.recovery is None else self.recovery.stepping_side
        return bool(self.lifted() - self.released - {recovering})

    def in_contact(self, side: str) -> bool:
        """Whether the ``right`` or ``left`` foot is a contact of the problem (also while unloading)."""
        return self.formulation.check_contact(lookup("foot", side, self._contacts).name)

    def remove_contact(
        self, side: str, transition_duration: float = 0.0, placement: pin.SE3 | None = None
    ) -> None:
        """Lift a foot: its contact is unloaded over ``transition_duration`` [s], then removed
        (:meth:`InverseDynamicsFormulation.remove_rigid_contact`); its SE3 task starts holding
        ``placement`` (where the foot is: the last computed one when None) until
        :meth:`set_foot_reference` moves it."""
        contact, task = lookup("foot", side, self.contacts), self.foot_tasks[side]
        if side in self.released:  # contact feedback lifted it already: the plan takes the foot over
            self.released.discard(side)
            return
        if self.formulation.check_task(task.name):
            raise InvalidParameterError(f"the {side} foot is already lifted (or being unloaded)")
        transition_duration = as_scalar("transition_duration", transition_duration, minimum=0.0)
        task.set_reference(self.foot_placement(side) if placement is None else placement)
        self.formulation.add_motion_task(task, weight=self.params.w_foot, priority=1)
        planned = self.planned_normal_force(contact.name)  # None before the first step: from f_max
        self.formulation.remove_rigid_contact(
            contact.name, transition_duration, contact.max_normal_force if planned is None else planned
        )

    def add_contact(
        self, side: str, transition_duration: float = 0.0, placement: pin.SE3 | None = None
    ) -> None:
        """Put a foot down where it is: the contact holds ``placement`` (the last computed one when
        None), the foot task leaves, and with ``transition_duration`` > 0 [s] the contact's normal
        force is allowed to grow linearly from f_min to f_max over it (no force jump at touch-down)."""
        contact = lookup("foot", side, self.contacts)
        if self.formulation.check_contact(contact.name):
            raise InvalidParameterError(
                f"the {side} foot is in contact (or its contact is still being unloaded): nothing to add"
            )
        self.released.discard(side)
        self._landed.pop(side, None)  # contact feedback waits for the touch-down

        transition_duration = as_scalar("transition_duration", transition_duration, minimum=0.0)
        contact.set_reference(self.foot_placement(side) if placement is None else placement)
        self.formulation.remove_task(self.foot_tasks[side].name)
        self.formulation.add_rigid_contact(
            contact, force_reg_weight=self.params.w_force_reg, transition_duration=transition_duration
        )

    def contact_lost(self, key: str, placement: pin.SE3) -> None:
        """Release a foot that stopped touching unplanned: its contact is unloaded over
        CONTACT_RAMP and its foot task holds it where it is (a push must not be answered by
        pulling on the ground). The last foot in contact is never released: without a contact
        the robot is falling, which the loop measures."""
        others = [side for side in self._contacts if side != key and self.in_contact(side)]
        if others and not self.formulation.check_task(self.foot_tasks[key].name):  # the last one stays
            self.remove_contact(key, CONTACT_RAMP, placement)
            self.released.add(key)

    def contact_regained(self, key: str, placement: pin.SE3) -> None:
        """Put a released foot back as a contact where it landed, loaded over CONTACT_RAMP."""
        self.add_contact(key, CONTACT_RAMP, placement)

    def set_foot_reference(self, side: str, sample: TrajectorySample | pin.SE3) -> None:
        """Reference of a lifted foot's SE3 task: a placement or an SE3 sample (world frame)."""
        lookup("foot", side, self.foot_tasks).set_reference(sample)
