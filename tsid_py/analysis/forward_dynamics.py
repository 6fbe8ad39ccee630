"""Forward dynamics: free (ABA, optional external wrenches) and with rigid contacts (KKT).

Free: a = M^-1 (S^T tau + sum_c J_c^T w_c - h), by Pinocchio's articulated-body algorithm.

Rigid contacts hold each contact frame fixed: its LOCAL spatial acceleration J_c a + gamma_c
vanishes (gamma_c = dJ_c v, the frame's acceleration at a = 0). A point contact holds only the
frame origin: the three linear rows, with the origin's classical acceleration as drift. With the
contact wrenches w as unknowns, the Karush-Kuhn-Tucker system

    [ M   J^T ] [  a ]   [ S^T tau - h ]
    [ J    0  ] [ -w ] = [   -gamma    ]

gives a and the wrenches the ground applies (LOCAL frames, N and N m), the same convention as
:func:`tsid_py.analysis.contact_wrenches.multi_contact_inverse_dynamics`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from tsid_py.analysis.contact_geometry import (
    contact_frame_ids,
    point_contact_mask,
    set_external_forces,
    wrench_components,
    zero_external_forces,
)
from tsid_py.errors import DimensionError, InvalidParameterError, UnsupportedProblemError
from tsid_py.robot_wrapper import Frame, RobotWrapper
from tsid_py.validation import as_vector


@dataclass(frozen=True)
class ContactForwardDynamicsResult:
    """Accelerations and contact wrenches under rigid contacts.

    Attributes:
        accelerations: a, size nv [m/s^2, rad/s^2].
        contact_frames: Names of the contact frames.
        contact_wrenches: (n, 6) wrenches on the robot, LOCAL contact frames (force [N], moment [N m]).
    """

    accelerations: np.ndarray
    contact_frames: tuple[str, ...]
    contact_wrenches: np.ndarray


def generalized_torques(robot: RobotWrapper, tau: object) -> np.ndarray:
    """S^T tau: joint torques of size na padded with zero root rows, or size-nv generalized forces as is."""
    tau = as_vector("tau", tau)
    if tau.shape[0] == robot.nv:
        return tau
    if tau.shape[0] != robot.na:
        raise DimensionError(f"tau must have size na = {robot.na} (or nv = {robot.nv}), got {tau.shape[0]}")
    full = np.zeros(robot.nv)
    full[robot.nv - robot.na :] = tau
    return full


def forward_dynamics(
    robot: RobotWrapper,
    q: object,
    v: object,
    tau: object,
    external_wrenches: Mapping[Frame, object] | None = None,
) -> np.ndarray:
    """Accelerations from torques by ABA, a = M^-1 (S^T tau + sum J^T w - h), size nv.

    Args:
        tau: Joint torques (size na) or generalized forces (size nv, root rows included) [N m].
        external_wrenches: Wrenches applied on the robot, per frame (name or index): 6-vectors
            (force [N], moment [N m]) in that frame's LOCAL axes, about its origin.
    """
    q, v = robot.check_state(q, v)
    tau = generalized_torques(robot, tau)
    data = robot.create_data()
    if not external_wrenches:
        return _finite_accelerations(robot, pin.aba(robot.model, data, q, v, tau))
    if not isinstance(external_wrenches, Mapping):
        raise InvalidParameterError(
            f"external_wrenches must map frames to 6-vectors, got {type(external_wrenches).__name__}"
        )
    frame_ids = [robot.frame_id(frame) for frame in external_wrenches]
    wrenches = np.array([as_vector(f"external wrench at {f!r}", w, 6) for f, w in external_wrenches.items()])
    fext = set_external_forces(robot, zero_external_forces(robot), frame_ids, wrenches)
    return _finite_accelerations(robot, pin.aba(robot.model, data, q, v, tau, fext))


def _finite_accelerations(robot: RobotWrapper, accelerations: np.ndarray) -> np.ndarray:
    """ABA's output, or an error when a massless subtree made the mass matrix singular."""
    if not np.all(np.isfinite(accelerations)):
        raise UnsupportedProblemError(
            f"forward dynamics of {robot.name} is undefined: its mass matrix is singular "
            "(a joint moves a subtree without mass or inertia)"
        )
    return np.array(accelerations)


def contact_forward_dynamics(
    robot: RobotWrapper,
    q: object,
    v: object,
    tau: object,
    contact_frames: Sequence[Frame],
    *,
    point_contacts: bool | Sequence[Frame] = False,
) -> ContactForwardDynamicsResult:
    """Accelerations and wrenches with the given frames held by rigid contacts (KKT solve).

    Args:
        tau: Joint torques (size na) or generalized forces (size nv) [N m].
        contact_frames: Frames held fixed; their constrained rows must be independent.
        point_contacts: Which contacts are points (only the frame origin is held, by a 3-D force):
            ``True`` for all, or a list of frames; the others are 6-D (the whole frame is held).
    """
    q, v = robot.check_state(q, v)
    tau = generalized_torques(robot, tau)
    frame_ids = contact_frame_ids(robot, contact_frames)
    is_point = point_contact_mask(robot, frame_ids, point_contacts)
    M, h, J, gamma = contact_dynamics_terms(robot, q, v, frame_ids, is_point)
    k = J.shape[0]
    kkt = np.block([[M, J.T], [J, np.zeros((k, k))]])
    solution = np.linalg.solve(kkt, np.concatenate([tau - h, -gamma]))
    wrenches = np.zeros(6 * len(frame_ids))
    wrenches[wrench_components(is_point)] = -solution[robot.nv :]
    return ContactForwardDynamicsResult(
        accelerations=solution[: robot.nv],
        contact_frames=tuple(robot.model.frames[i].name for i in frame_ids),
        contact_wrenches=wrenches.reshape(-1, 6),
    )


def contact_dynamics_terms(
    robot: RobotWrapper, q: np.ndarray, v: np.ndarray, frame_ids: Sequence[int], is_point: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """M, h, the constrained rows J (k x nv) of the LOCAL contact Jacobians and their drifts gamma (k).

    The rows are those of :func:`~tsid_py.analysis.contact_geometry.wrench_components`. A 6-D
    contact holds its frame: the drift is the spatial acceleration at a = 0. A point contact holds
    its origin: the drift is the origin's classical acceleration at a = 0 (no v x w term), as in
    Pinocchio's CONTACT_3D constraint. Raises if the rows of J are dependent (redundant contacts).
    """
    model, data = robot.model, robot.create_data()
    pin.forwardKinematics(model, data, q, v, np.zeros(robot.nv))
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    M = pin.crba(model, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    h = np.array(pin.nonLinearEffects(model, data, q, v))
    J = np.vstack([pin.getFrameJacobian(model, data, i, pin.LOCAL) for i in frame_ids])
    gamma = np.concatenate([pin.getFrameAcceleration(model, data, i, pin.LOCAL).vector for i in frame_ids])
    for k, i in enumerate(frame_ids):
        if is_point[k]:
            gamma[6 * k : 6 * k + 3] = pin.getFrameClassicalAcceleration(model, data, i, pin.LOCAL).linear
    rows = wrench_components(is_point)
    J = J[rows]
    singular_values = np.linalg.svd(J, compute_uv=False)
    if J.shape[0] > robot.nv or singular_values[-1] <= 1e-10 * singular_values[0]:
        raise UnsupportedProblemError(
            f"the {J.shape[0]} contact constraints are redundant (their Jacobian rows are dependent, "
            f"e.g. more 6-D contacts than the robot can hold at once); use point contacts or fewer contacts"
        )
    return M, h, J, gamma[rows]
