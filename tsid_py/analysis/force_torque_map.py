"""The affine map from a chosen set of joint torques to the contact reaction wrench.

For a robot held by rigid contacts, the constrained dynamics (see
:mod:`tsid_py.analysis.forward_dynamics`) give the contact wrench in closed form,

    w = -Lambda (gamma + J M^-1 (S^T tau - h)),     Lambda = (J M^-1 J^T)^-1,

which is affine in tau. Splitting tau into the selected torques tau_sel and the others (held at
given values) gives w = k0 + D tau_sel with D = -Lambda J M^-1 S_sel^T: how much each selected
joint torque pushes on the ground (e.g. a leg's hip and knee torques to its foot force). This is
what the articulated-body derivation for a leg produces, here computed for any tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tsid_py.analysis.contact_geometry import contact_frame_ids, point_contact_mask, wrench_components
from tsid_py.analysis.forward_dynamics import contact_dynamics_terms
from tsid_py.errors import DuplicateNameError, InvalidParameterError, UnknownFrameError
from tsid_py.robot_wrapper import Frame, RobotWrapper
from tsid_py.validation import as_vector, unknown_name_message


@dataclass(frozen=True)
class ForceTorqueMap:
    """w = offset + matrix @ tau_sel for the contact wrenches (stacked, LOCAL frames, N and N m).

    Attributes:
        contact_frames: Names of the contact frames; the wrenches are stacked in this order.
        selected_joints: Names of the joints whose torques are the map's input.
        offset: k0, the wrenches (6n) when the selected torques are zero [N, N m].
        matrix: D, (6n, len(selected_joints)): wrench per unit selected torque [N / (N m), N m / (N m)].
    """

    contact_frames: tuple[str, ...]
    selected_joints: tuple[str, ...]
    offset: np.ndarray
    matrix: np.ndarray

    def wrenches(self, selected_torques: object) -> np.ndarray:
        """The contact wrenches (n, 6) for these selected torques [N m]."""
        tau = as_vector("selected_torques", selected_torques, len(self.selected_joints))
        return (self.offset + self.matrix @ tau).reshape(-1, 6)


def actuated_index(robot: RobotWrapper, joint: str | int) -> int:
    """Index in the actuated torque vector (size na) of a one-degree-of-freedom joint (name or index)."""
    if isinstance(joint, (int, np.integer)):
        if not 0 <= joint < robot.na:
            raise InvalidParameterError(f"actuated joint index {joint} out of range [0, {robot.na})")
        return int(joint)
    model = robot.model
    if not model.existJointName(joint):
        raise UnknownFrameError(unknown_name_message("joint", joint, list(model.names)))
    joint_model = model.joints[model.getJointId(joint)]
    index = joint_model.idx_v - (robot.nv - robot.na)
    if joint_model.nv != 1 or index < 0:
        raise InvalidParameterError(f"joint {joint!r} is not a one-degree-of-freedom actuated joint")
    return index


def force_torque_map(
    robot: RobotWrapper,
    q: object,
    v: object,
    contact_frames: Sequence[Frame] | Frame,
    selected_joints: Sequence[str | int],
    other_torques: object = None,
    *,
    point_contacts: bool | Sequence[Frame] = False,
) -> ForceTorqueMap:
    """The affine map from the selected joint torques to the rigid-contact wrenches at (q, v).

    Args:
        contact_frames: The frames held by rigid contacts.
        selected_joints: Actuated joints (names or indices into tau) whose torques are the input.
        other_torques: Torques (size na) of the other joints, held fixed; zeros by default. Its
            entries at the selected joints are ignored.
        point_contacts: Which contacts are points (3-D force, zero moment rows in the map): ``True``
            for all, or a list of frames.
    """
    q, v = robot.check_state(q, v)
    frame_ids = contact_frame_ids(robot, contact_frames)
    is_point = point_contact_mask(robot, frame_ids, point_contacts)
    selected = [actuated_index(robot, joint) for joint in selected_joints]
    if len(set(selected)) != len(selected):
        raise DuplicateNameError(f"selected_joints lists a joint twice: {list(selected_joints)}")
    tau = np.zeros(robot.na) if other_torques is None else as_vector("other_torques", other_torques, robot.na)
    tau[selected] = 0.0
    M, h, J, gamma = contact_dynamics_terms(robot, q, v, frame_ids, is_point)
    root = robot.nv - robot.na
    tau_full = np.concatenate([np.zeros(root), tau])
    selection = np.zeros((robot.nv, len(selected)))
    selection[[root + i for i in selected], np.arange(len(selected))] = 1.0
    M_inv_rhs = np.linalg.solve(M, np.column_stack([J.T, tau_full - h, selection]))
    k = J.shape[0]
    Lambda_inv = J @ M_inv_rhs[:, :k]
    solution = -np.linalg.solve(
        Lambda_inv, np.column_stack([gamma + J @ M_inv_rhs[:, k], J @ M_inv_rhs[:, k + 1 :]])
    )
    offset, matrix = np.zeros(6 * len(frame_ids)), np.zeros((6 * len(frame_ids), len(selected)))
    rows = wrench_components(is_point)
    offset[rows], matrix[rows] = solution[:, 0], solution[:, 1:]
    return ForceTorqueMap(
        contact_frames=tuple(robot.model.frames[i].name for i in frame_ids),
        selected_joints=tuple(_joint_name(robot, i) for i in selected),
        offset=offset,
        matrix=matrix,
    )


def _joint_name(robot: RobotWrapper, actuated: int) -> str:
    """Name of the one-degree-of-freedom joint at actuated index ``actuated``."""
    index_v = actuated + robot.nv - robot.na
    model = robot.model
    return next(name for joint, name in zip(model.joints, model.names, strict=True) if joint.idx_v == index_v)
