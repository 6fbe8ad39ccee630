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
    """Per-joint external forces (Pinocchio ``StdVec_Force``, local joint frames) of the contact wrenches.

    A 3-D force acts at its frame's origin, in the contact frame or in world axes; a contact that
    holds two frames together applies +f to the first and -f to the second.
    """
    model, fext = robot.model, robot.zero_external_forces()
    for contact, forces in contacts.values():
        wrench = contact.wrench(forces)
        if wrench.shape[0] == 6:  # a wrench in the contact frame
            ends = [(contact.frame_id, wrench)]
        else:  # a force at the frame's origin, as a wrench in the frame (rotated from world axes)
            world = contact.force_rotation(data) @ wrench
            ends = [(contact.frame_id, world)]
            if not contact.unilateral:
                ends.append((contact.frame_id2, -world))  # type: ignore[attr-defined]  # a bilateral contact: two frames
            ends = [
                (
                    frame_id,
                    np.concatenate([robot.frame_placement(data, frame_id).rotation.T @ force, np.zeros(3)]),
                )
                for frame_id, force in ends
            ]
        for frame_id, local in ends:  # on the parent joint, in its frame
            frame = model.frames[frame_id]
            fext[frame.parentJoint] += frame.placement.act(pin.Force(local))
    return fext


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
    """max |RNEA(q, v, dv, f_ext) - S^T tau - external| / max(1, |h|_inf): the relative
    equation-of-motion error; ``external`` is the generalized force of known external wrenches,
    sum J^T w of the measured or prescribed ones (size nv).

    ``data`` is a scratch Pinocchio Data (a new one when None; creating one costs milliseconds for a
    humanoid, so closed loops pass their own, distinct from the formulation's).
    """
    data = robot.create_data() if data is None else data
    robot.forward_kinematics(data, q)
    fext = contact_external_forces(robot, data, contacts)
    generalized = pin.rnea(robot.model, data, q, v, dv, fext)
    actuated = np.zeros(robot.nv)
    actuated[robot.nv - robot.na :] = tau
    if external is not None:
        actuated += external
    scale = max(1.0, float(np.max(np.abs(pin.nonLinearEffects(robot.model, data, q, v)))))
    return float(np.max(np.abs(generalized - actuated)) / scale)


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
    ``external`` (known external wrenches) as in :func:`dynamics_residual`."""
    normal_forces, friction, pyramid, bounds = [np.inf], [0.0], [0.0], [0.0]
    for contact, forces in contacts.values():
        if not contact.unilateral:  # two frames held together: no normal, no friction
            continue
        f_n, ratio = normal_forces_and_friction_ratio(contact, forces)
        friction.append(ratio)
        pyramid_rows = contact.force_constraint.matrix[:-1]  # the last row bounds f_n
        pyramid.append(max(float(pyramid_rows.dot(forces).max(initial=0.0)), 0.0))
        total = float(f_n.sum())
        normal_forces.append(total)
        bounds.append(max(contact.min_normal_force - total, total - contact.max_normal_force, 0.0))
    torque_ratio = 0.0
    if tau_max is not None:
        limited = np.isfinite(tau_max)
        torque_ratio = float(np.max(np.abs(tau[limited]) / tau_max[limited], initial=0.0))
    return SolutionCheck(
        dynamics_residual=dynamics_residual(robot, q, v, dv, tau, contacts, data, external),
        min_normal_force=min(normal_forces),
        max_friction_ratio=max(friction),
        max_pyramid_violation=max(pyramid),
        max_normal_bound_violation=max(bounds),
        max_torque_ratio=torque_ratio,
    )


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
