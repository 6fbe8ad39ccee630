"""Joint coupling: q_i = ratio q_j + offset (gears, mimic joints, the coupled fingers of a gripper)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.errors import InvalidParameterError
from tsid_py.robot_wrapper import Frame, RobotWrapper
from tsid_py.tasks.task_motion_tracking import TaskMotionTracking
from tsid_py.validation import as_scalar


class TaskJointCoupling(TaskMotionTracking):
    """Keep joint i at ``ratio`` times joint j plus ``offset`` (one row, at acceleration level).

    e = q_i - ratio q_j - offset [rad or m]. J = u_i - ratio u_j, with u_k the unit row of joint
    k's velocity index. The drift is 0: e is linear in q. The library's PD law then gives
    ddq_i - ratio ddq_j = -Kp e - Kd de.

    At priority 0 the coupling is hard: every solution satisfies it. A coupling that holds stays
    held, and an initial error decays as the PD law says. At priority >= 1 it is a weighted cost.
    URDF mimic joints (``<mimic joint= multiplier= offset=>``) are this relation. Both joints must
    have one coordinate and one velocity (revolute or prismatic). Kp and kd default to 0: set kp
    to correct an initial error.

    Args:
        name: The task's name.
        robot: The robot.
        joint_i: The driven joint (a name or a joint index).
        joint_j: The joint it follows.
        ratio: q_i / q_j (the mimic multiplier, a gear ratio; may be negative).
        offset: q_i at q_j = 0 [rad or m].
    """

    def __init__(
        self,
        name: str,
        robot: RobotWrapper,
        joint_i: Frame,
        joint_j: Frame,
        ratio: float,
        offset: float = 0.0,
    ) -> None:
        super().__init__(name, robot, 1)
        self.joint_i, self.joint_j = (_one_dof_joint(robot, joint) for joint in (joint_i, joint_j))
        if self.joint_i == self.joint_j:
            raise InvalidParameterError(f"task {name!r}: joint_i and joint_j are the same joint")
        model = robot.model
        self._iq = [model.joints[j].idx_q for j in (self.joint_i, self.joint_j)]
        self._iv = [model.joints[j].idx_v for j in (self.joint_i, self.joint_j)]
        self._jacobian = np.zeros((1, robot.nv))
        self._drift = np.zeros(1)
        self.ratio = ratio
        self.offset = offset

    @property
    def ratio(self) -> float:
        """q_i / q_j."""
        return self._ratio

    @ratio.setter
    def ratio(self, value: float) -> None:
        self._ratio = as_scalar("ratio", value)
        self._jacobian[0, self._iv[0]] = 1.0
        self._jacobian[0, self._iv[1]] = -self._ratio

    @property
    def offset(self) -> float:
        """q_i at q_j = 0 [rad or m]."""
        return self._offset

    @offset.setter
    def offset(self, value: float) -> None:
        self._offset = as_scalar("offset", value)

    def compute_error(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> np.ndarray:
        i, j = self._iq
        return np.array([q[i] - self._ratio * q[j] - self._offset])

    def compute_jacobian(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> np.ndarray:
        return self._jacobian

    def compute_drift(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> np.ndarray:
        return self._drift

    def coupling_error(self, q: object) -> float:
        """e = q_i - ratio q_j - offset at the configuration q (size nq) [rad or m]."""
        q = np.asarray(q, dtype=float)
        i, j = self._iq
        return float(q[i] - self._ratio * q[j] - self._offset)


def _one_dof_joint(robot: RobotWrapper, joint: Frame) -> int:
    index = robot.joint_id(joint)
    model_joint = robot.model.joints[index]
    if index == 0 or model_joint.nq != 1 or model_joint.nv != 1:
        raise InvalidParameterError(
            f"joint {robot.model.names[index]!r} has nq = {model_joint.nq}, nv = {model_joint.nv}: a "
            "coupling needs joints of one coordinate (revolute or prismatic)"
        )
    return index
