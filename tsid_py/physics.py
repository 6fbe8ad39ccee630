"""Physical checks of a solution, computed independently of the formulation's own matrices.

The dynamics residual uses Pinocchio's RNEA with the contact wrenches as external forces, so it
does not reuse the mass matrix, nonlinear effects or contact Jacobians of the formulation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from tsid_py.contacts.contact_base import ContactBase
from tsid_py.robot_wrapper import RobotWrapper

FRICTION_RATIO_MIN_NORMAL_FORCE = 1e-3  # [N]


@dataclass
class SolutionCheck:
    """How well one solution satisfies physics.

    Attributes:
        dynamics_residual: max |M dv + h - S^T tau - J^T f| divided by max(1, |h|_inf) (relative).
        min_normal_force: smallest total normal force over the contacts [N] (inf without contacts).
        max_friction_ratio: largest |f_t| / (mu f_n) over contact points carrying more than
            1e-3 N (the pyramid allows sqrt(2); the pyramid violation is the check).
        max_pyramid_violation: largest excess of a point force outside its pyramid [N].
        max_normal_bound_violation: largest excess of a total normal force outside [f_min, f_max] [N].
        max_torque_ratio: largest |tau_i| / tau_max_i over the joints with a finite limit (0 if none).
    """

    dynamics_residual: float
    min_normal_force: float
    max_friction_ratio: float
    max_pyramid_violation: float
    max_normal_bound_violation: float
    max_torque_ratio: float


def contact_external_forces(
    robot: RobotWrapper, data: pin.Data, contacts: dict[str, tuple[ContactBase, np.ndarray]]
):
    """Per-joint external forces (Pinocchio ``StdVec_Force``, local joint frames) of the contact
    wrenches, from the joint placements in ``data`` (a new container; see
    :meth:`SolutionChecker.external_forces`)."""
    return SolutionChecker(robot, data=data).external_forces(contacts)


def dynamics_residual(
    robot: RobotWrapper,
    q: np.ndarray,
    v: np.ndarray,
    dv: np.ndarray,
    tau: np.ndarray,
    contacts: dict[str, tuple[ContactBase, np.ndarray]],
    data: pin.Data | None = None,
    external: np.ndarray | None = None,
) -> float:
    """The relative equation-of-motion error of a solution (:meth:`SolutionChecker.residual`).

    ``data`` is a scratch Pinocchio Data (a new one when None; creating one costs milliseconds for a
    humanoid, so closed loops pass their own, distinct from the formulation's).
    """
    return SolutionChecker(robot, data=data).residual(q, v, dv, tau, contacts, external)


def normal_forces_and_friction_ratio(contact: ContactBase, forces: np.ndarray) -> tuple[np.ndarray, float]:
    """Normal force of each contact point [N] and the largest |f_t| / (mu f_n) over the loaded points."""
    n = contact.contact_normal
    points = contact.point_forces(forces)
    f_n = points.dot(n)
    tangential = points - f_n[:, None] * n
    f_t = np.sqrt((tangential * tangential).sum(axis=1))
    loaded = f_n > FRICTION_RATIO_MIN_NORMAL_FORCE  # an unloaded point's ratio is rounding noise
    if not loaded.any():
        return f_n, 0.0
    return f_n, float((f_t[loaded] / (contact.mu * f_n[loaded])).max())


def check_solution(
    robot: RobotWrapper,
    q: np.ndarray,
    v: np.ndarray,
    dv: np.ndarray,
    tau: np.ndarray,
    contacts: dict[str, tuple[ContactBase, np.ndarray]],
    tau_max: np.ndarray | None = None,
    data: pin.Data | None = None,
    external: np.ndarray | None = None,
) -> SolutionCheck:
    """Check one solution. ``contacts`` maps a name to (contact, its force variables); ``data`` and
    ``external`` (known external wrenches) as in :func:`dynamics_residual`. A closed loop that
    checks every step keeps one :class:`SolutionChecker` instead."""
    return SolutionChecker(robot, tau_max, data).check(q, v, dv, tau, contacts, external)


class SolutionChecker:
    """The physics checks of one robot's solutions, step after step (:func:`check_solution`).

    What does not change from one step to the next is kept: a scratch Pinocchio Data, the
    container of joint forces, each contact frame's parent joint and the matrix that moves a
    wrench to it, each contact's friction-pyramid rows (taken again when its ``force_version``
    moves), the torque limits.

    Args:
        robot: The robot.
        tau_max: Torque limits of the actuated joints [N m] (inf: unlimited; None: no torque check).
        data: A scratch Pinocchio Data (a new one when None), distinct from the formulation's.
    """

    def __init__(self, robot: RobotWrapper, tau_max: np.ndarray | None = None, data: pin.Data | None = None):
        self.robot = robot
        self.data = robot.create_data() if data is None else data
        self._fext = robot.zero_external_forces()
        self._touched: set[int] = set()  # the joints of _fext with a force
        self._frames: dict[int, tuple[int, np.ndarray]] = {}  # frame id -> (parent joint, 6x6 to it)
        self._pyramids: dict[ContactBase, tuple[int, np.ndarray]] = {}  # contact -> (force_version, rows)
        self._actuated = np.zeros(robot.nv)
        self._difference = np.zeros(robot.nv)
        self._limits: tuple[np.ndarray, np.ndarray] | None = None
        if tau_max is not None:
            limited = np.isfinite(tau_max)
            self._limits = limited, np.asarray(tau_max, dtype=float)[limited]

    def external_forces(
        self, contacts: dict[str, tuple[ContactBase, np.ndarray]], q: np.ndarray | None = None
    ) -> pin.StdVec_Force:
        """Per-joint external forces of the contact wrenches (the checker's container, valid until
        its next call; local joint frames).

        A wrench in the contact frame moves to the parent joint by the dual action matrix of the
        frame's placement; a 3-D force acts at its frame's origin, in the contact frame or in world
        axes (rotated with the frame's placement at q, or in ``data`` as it is when q is None); a
        contact that holds two frames together applies +f to the first and -f to the second.
        """
        robot, fext, data = self.robot, self._fext, self.data
        placed = q is None
        wrenches: dict[int, np.ndarray] = {}  # joint -> the wrench on it, in its frame
        for contact, forces in contacts.values():
            wrench = contact.wrench(forces)
            if wrench.shape[0] == 6:  # a wrench in the contact frame
                ends = [(contact.frame_id, wrench)]
            else:  # a force at the frame's origin, as a wrench in the frame (rotated from world axes)
                if not placed:
                    robot.forward_kinematics(data, q)
                    placed = True
                world = contact.force_rotation(data) @ wrench
                ends = [(contact.frame_id, world)]
                if not contact.unilateral:
                    ends.append((contact.frame_id2, -world))  # type: ignore[attr-defined]  # a bilateral contact: two frames
                ends = [
                    (
                        frame_id,
                        np.concatenate(
                            [robot.frame_placement(data, frame_id).rotation.T @ force, np.zeros(3)]
                        ),
                    )
                    for frame_id, force in ends
                ]
            for frame_id, local in ends:  # on the parent joint, in its frame
                joint, action = self._frame(frame_id)
                moved = action @ local
                wrenches[joint] = moved if joint not in wrenches else wrenches[joint] + moved
        for joint in self._touched - wrenches.keys():
            fext[joint] = pin.Force.Zero()
        for joint, wrench in wrenches.items():
            fext[joint] = pin.Force(wrench)
        self._touched = set(wrenches)
        return fext

    def _frame(self, frame_id: int) -> tuple[int, np.ndarray]:
        """A frame's parent joint and the 6x6 matrix that moves a wrench (force, moment) from the
        frame to that joint's frame (Pinocchio's ``placement.act`` of a force, as a matrix)."""
        known = self._frames.get(frame_id)
        if known is None:
            frame = self.robot.model.frames[frame_id]
            known = self._frames[frame_id] = (frame.parentJoint, frame.placement.toDualActionMatrix())
        return known

    def residual(
        self,
        q: np.ndarray,
        v: np.ndarray,
        dv: np.ndarray,
        tau: np.ndarray,
        contacts: dict[str, tuple[ContactBase, np.ndarray]],
        external: np.ndarray | None = None,
    ) -> float:
        """max |RNEA(q, v, dv, f_ext) - S^T tau - external| / max(1, |h|_inf): the relative
        equation-of-motion error; ``external`` is the generalized force of known external wrenches,
        sum J^T w of the measured or prescribed ones (size nv)."""
        robot, data, actuated, difference = self.robot, self.data, self._actuated, self._difference
        fext = self.external_forces(contacts, q)
        actuated[:] = 0.0
        actuated[robot.nv - robot.na :] = tau
        if external is not None:
            actuated += external
        np.subtract(pin.rnea(robot.model, data, q, v, dv, fext), actuated, out=difference)
        error = float(np.abs(difference, out=difference).max())
        scale = max(1.0, float(np.abs(pin.nonLinearEffects(robot.model, data, q, v)).max()))
        return error / scale

    def check(
        self,
        q: np.ndarray,
        v: np.ndarray,
        dv: np.ndarray,
        tau: np.ndarray,
        contacts: dict[str, tuple[ContactBase, np.ndarray]],
        external: np.ndarray | None = None,
    ) -> SolutionCheck:
        """Check one solution (see :class:`SolutionCheck`); ``contacts`` maps a name to (contact,
        its force variables), ``external`` as in :meth:`residual`."""
        normal_forces, friction, pyramid, bounds = [np.inf], [0.0], [0.0], [0.0]
        for contact, forces in contacts.values():
            if not contact.unilateral:  # two frames held together: no normal, no friction
                continue
            f_n, ratio = normal_forces_and_friction_ratio(contact, forces)
            friction.append(ratio)
            pyramid.append(max(float(self._pyramid(contact).dot(forces).max(initial=0.0)), 0.0))
            total = float(f_n.sum())
            normal_forces.append(total)
            bounds.append(max(contact.min_normal_force - total, total - contact.max_normal_force, 0.0))
        torque_ratio = 0.0
        if self._limits is not None:
            limited, tau_max = self._limits
            torque_ratio = float(np.max(np.abs(tau[limited]) / tau_max, initial=0.0))
        return SolutionCheck(
            dynamics_residual=self.residual(q, v, dv, tau, contacts, external),
            min_normal_force=min(normal_forces),
            max_friction_ratio=max(friction),
            max_pyramid_violation=max(pyramid),
            max_normal_bound_violation=max(bounds),
            max_torque_ratio=torque_ratio,
        )

    def _pyramid(self, contact: ContactBase) -> np.ndarray:
        """The friction-pyramid rows of a contact's force constraint (its last row, the bounds on
        the total normal force, left out), taken again when its ``force_version`` moved."""
        known = self._pyramids.get(contact)
        if known is None or known[0] != contact.force_version:
            known = self._pyramids[contact] = (contact.force_version, contact.force_constraint.matrix[:-1])
        return known[1]


class WorstChecks:
    """The worst of each check over a run, kept as the checks come (constant memory, however long
    the run), under the summary keys of the scenarios (NaN before the first check)."""

    _WORST = {  # summary key: (SolutionCheck field, worst is the min or the max)
        "min_normal_force_n": ("min_normal_force", min),
        "max_friction_ratio": ("max_friction_ratio", max),
        "max_torque_ratio": ("max_torque_ratio", max),
        "dynamics_residual_max": ("dynamics_residual", max),
        "max_pyramid_violation_n": ("max_pyramid_violation", max),
        "max_normal_bound_violation_n": ("max_normal_bound_violation", max),
    }

    def __init__(self) -> None:
        self.count = 0
        self._worst = {key: float("nan") for key in self._WORST}

    def add(self, check: SolutionCheck) -> None:
        for key, (name, worst) in self._WORST.items():
            value = getattr(check, name)
            self._worst[key] = value if self.count == 0 else worst(self._worst[key], value)
        self.count += 1

    def summary(self) -> dict[str, float]:
        return dict(self._worst)
