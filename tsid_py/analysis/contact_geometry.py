"""How contact wrenches enter the dynamics: the root rows, the per-joint external forces, the world frame.

A contact wrench w = (f, m) is expressed in the contact frame (Pinocchio's LOCAL): f [N] and the
moment m [N m] about the frame origin, both along the frame's axes. In the equation of motion it
enters as J_c^T w with J_c the LOCAL frame Jacobian. For a free-flyer root, the first six columns
of J_c are the adjoint of the base-to-contact placement, so the root rows of J_c^T w are
X_c w with X_c = (bMc)^* the dual action of the contact placement in the base frame: the wrench
moved to the base origin and expressed in the base axes.

A point contact (e.g. Solo12's feet, TSID's ContactPoint) exerts a force at the frame origin and
no moment: its wrench is (f, 0), so only its first three components are unknowns.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin

from tsid_py.errors import DuplicateNameError, InvalidParameterError, UnsupportedProblemError
from tsid_py.robot_wrapper import Frame, RobotWrapper

ROOT_JOINT = 1  # the free flyer is Pinocchio's joint 1 (joint 0 is the universe)


def contact_frame_ids(robot: RobotWrapper, contact_frames: Sequence[Frame] | Frame) -> list[int]:
    """Frame indices of a non-empty list of distinct contact frames (a single frame is accepted)."""
    if isinstance(contact_frames, (str, int, np.integer)):
        contact_frames = [contact_frames]
    ids = [robot.frame_id(frame) for frame in contact_frames]
    if not ids:
        raise InvalidParameterError("contact_frames must name at least one frame")
    if len(set(ids)) != len(ids):
        names = [robot.model.frames[i].name for i in ids]
        raise DuplicateNameError(f"contact_frames lists a frame twice: {names}")
    return ids


def point_contact_mask(
    robot: RobotWrapper, frame_ids: Sequence[int], point_contacts: bool | Sequence[Frame] | Frame
) -> np.ndarray:
    """(n,) booleans, which contacts are points: all (``True``), none (``False``) or the listed frames."""
    if isinstance(point_contacts, (bool, np.bool_)):
        return np.full(len(frame_ids), bool(point_contacts))
    if isinstance(point_contacts, (str, int, np.integer)):
        point_contacts = [point_contacts]
    points = {robot.frame_id(frame) for frame in point_contacts}
    strangers = points - set(frame_ids)
    if strangers:
        names = sorted(robot.model.frames[i].name for i in strangers)
        raise InvalidParameterError(f"point_contacts names frames that are not contact frames: {names}")
    return np.array([i in points for i in frame_ids], dtype=bool)


def wrench_components(is_point: np.ndarray) -> np.ndarray:
    """Indices into the stacked wrenches (6n) that are unknowns: all six of a 6-D contact, a point's force."""
    return np.concatenate([6 * k + np.arange(3 if point else 6) for k, point in enumerate(is_point)])


def require_floating_base(robot: RobotWrapper, what: str) -> None:
    """Contact wrenches are found from the root rows, which only a floating base has."""
    if robot.is_fixed_base:
        raise UnsupportedProblemError(
            f"{what} needs a floating-base robot: {robot.name} is fixed to the world, so its dynamics "
            "have no root rows to determine contact wrenches"
        )


def root_wrench_matrix(robot: RobotWrapper, data: pin.Data, frame_ids: Sequence[int]) -> np.ndarray:
    """[X_1 ... X_n], 6 x 6n: contact wrenches (LOCAL) -> the root rows of sum_c J_c^T w_c.

    ``data.oMi`` must hold the joint placements of the current configuration (forward kinematics).
    """
    world_to_base = robot.joint_placement(data, ROOT_JOINT).inverse()
    return np.hstack(
        [(world_to_base * robot.frame_placement(data, i)).toDualActionMatrix() for i in frame_ids]
    )


def base_wrench_in_world(placement: np.ndarray, wrenches: np.ndarray) -> np.ndarray:
    """Wrenches (T, 6) in the base frame about its origin -> world frame about the world origin.

    ``placement`` holds the base placements oMb as (T, 7) free-flyer configurations (x, y, z, quaternion
    x, y, z, w), as in q[:, :7]: force R f, moment R m + p x R f.
    """
    quaternion = placement[:, 3:7] / np.linalg.norm(placement[:, 3:7], axis=1, keepdims=True)
    x, y, z, w = quaternion.T
    R = np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], axis=-1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], axis=-1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=-1),
        ],
        axis=1,
    )
    force = np.einsum("tij,tj->ti", R, wrenches[:, :3])
    moment = np.einsum("tij,tj->ti", R, wrenches[:, 3:]) + np.cross(placement[:, :3], force)
    return np.hstack([force, moment])


def zero_external_forces(robot: RobotWrapper) -> pin.StdVec_Force:
    """One zero force per joint, the container of Pinocchio's ``rnea(..., fext)`` (a new one)."""
    return robot.zero_external_forces()


def set_external_forces(
    robot: RobotWrapper, fext: pin.StdVec_Force, frame_ids: Sequence[int], wrenches: np.ndarray
) -> pin.StdVec_Force:
    """Write the contact wrenches (n x 6, LOCAL) into ``fext`` as forces on their parent joints.

    The entries of the contacts' parent joints are overwritten (several contacts on one joint add up).
    """
    model = robot.model
    for frame_id in frame_ids:
        fext[model.frames[frame_id].parentJoint] = pin.Force.Zero()
    for frame_id, wrench in zip(frame_ids, wrenches, strict=True):
        frame = model.frames[frame_id]
        fext[frame.parentJoint] += frame.placement.act(pin.Force(wrench))
    return fext
