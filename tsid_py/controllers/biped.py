"""BipedController: the standard TSID whole-body controller of a biped on its two feet.

Owns the formulation, two Contact6d feet (hard), a CoM task, a posture task, an angular
momentum task (all level 1) and torque bounds (level 0), like TSID's ``TsidBiped`` helper
(exercizes/tsid_biped.py). Defaults are the published Talos parameters; a robot spec may
override them in its ``[biped]`` table.

A foot can leave the ground and come back (:meth:`BipedController.remove_contact`,
:meth:`BipedController.add_contact`, or a step asked of its :class:`FootSchedule`): while it is
off the ground an SE3 task (level 1) tracks its reference, as TsidBiped's foot tasks.

Pushed, the controller can recover (``recovery="ankle"`` or ``"step"``: capture point feedback,
and a step when it must, :mod:`tsid_py.controllers.strategies.push_recovery`, a strategy the
controller adds); ``"none"`` keeps TSID's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin

from tsid_py.contacts.contact_6d import Contact6d
from tsid_py.controllers.legged import LeggedController
from tsid_py.controllers.strategies.push_recovery import RECOVERIES, PushRecovery, RecoveryParams
from tsid_py.errors import InvalidParameterError, RobotSpecError
from tsid_py.robot_specs import RobotSpec, SpecRobot, max_normal_force, min_normal_force
from tsid_py.solvers.solver_base import Solver
from tsid_py.tasks.task_am_equality import TaskAMEquality
from tsid_py.tasks.task_se3_equality import TaskSE3Equality
from tsid_py.trajectories import TrajectorySample
from tsid_py.validation import lookup


@dataclass(frozen=True)
class BipedParams:
    """Gains [1/s^2], weights, friction and force limits [N] of the biped controller."""

    mu: float = 0.3
    f_min: float | None = None  # None: the robot's (min_normal_force); TSID's Talos and Romeo: 5 N
    f_max: float | None = None  # None: the robot's (max_normal_force); TSID's Talos and Romeo: 1000 N
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
    def for_robot(cls, robot: SpecRobot) -> BipedParams:
        """Defaults overridden by the spec's ``[biped]`` table."""
        return robot.controller_params(cls(), "biped")

    @classmethod
    def for_stepping(cls, robot: SpecRobot, **overrides: float) -> BipedParams:
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
        robot: SpecRobot,
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
        if params.f_min is None:  # from the robot's weight, never another robot's number
            params = replace(params, f_min=min_normal_force(robot.total_mass))
        if params.f_max is None:
            params = replace(params, f_max=max_normal_force(robot.total_mass))
        self.params = params
        form = self.formulation
        self._contacts: dict[str, Contact6d] = {}
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
        self._add_torque_bounds(params.tau_max_scaling * robot.effort_limit())  # inf where none given
        self.set_static_force_references()
        self._schedule_feet(params.w_force_reg, params.w_foot)
        self.recovery: PushRecovery | None = None
        if recovery != "none":
            feet = {side: self.foot_placement(side) for side in ("right", "left")}
            self.recovery = PushRecovery(robot, feet, recovery, recovery_params)
            self.add_strategy(self.recovery)

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

    def in_contact(self, side: str) -> bool:
        """Whether the ``right`` or ``left`` foot is a contact of the problem (also while unloading)."""
        return self.formulation.check_contact(lookup("foot", side, self._contacts).name)

    def remove_contact(
        self, side: str, transition_duration: float = 0.0, placement: pin.SE3 | None = None
    ) -> None:
        """Lift a foot: its contact is unloaded over ``transition_duration`` [s], then removed
        (:meth:`InverseDynamicsFormulation.remove_rigid_contact`); its SE3 task starts holding
        ``placement`` (where the foot is: the last computed one when None) until
        :meth:`set_foot_reference` moves it (:meth:`FootSchedule.lift`)."""
        lookup("foot", side, self._contacts)
        self.feet.lift(
            side, transition_duration, self.foot_placement(side) if placement is None else placement
        )

    def add_contact(
        self, side: str, transition_duration: float = 0.0, placement: pin.SE3 | None = None
    ) -> None:
        """Put a foot down where it is: the contact holds ``placement`` (the last computed one when
        None), the foot task leaves, and with ``transition_duration`` > 0 [s] the contact's normal
        force is allowed to grow linearly from f_min to f_max over it (no force jump at touch-down;
        :meth:`FootSchedule.put_down`)."""
        lookup("foot", side, self._contacts)
        self.feet.put_down(
            side, transition_duration, self.foot_placement(side) if placement is None else placement
        )

    def set_foot_reference(self, side: str, sample: TrajectorySample | pin.SE3) -> None:
        """Reference of a lifted foot's SE3 task: a placement or an SE3 sample (world frame)."""
        self.feet.set_reference(side, sample)
