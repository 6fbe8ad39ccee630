"""Frame placement (SE3) tracking task."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.constraints import ConstraintEquality
from tsid_py.robot_wrapper import Frame, RobotWrapper
from tsid_py.tasks.task_base import TaskMotionTracking
from tsid_py.trajectories import TrajectorySample, as_sample, vector_to_se3


def se3_error(placement: pin.SE3, reference: pin.SE3) -> np.ndarray:
    """Placement error in the local frame, 6-vector (linear [m], angular [rad]).

    With M_err = M^-1 M_ref: linear = translation of M_err (= R^T (p_ref - p)), angular =
    log3(rotation of M_err). This is TSID's ``errorInSE3`` (src/math/utils.cpp): translation and
    rotation are decoupled, so the frame origin converges along a straight line.
    """
    error = placement.actInv(reference)
    return np.concatenate([error.translation, pin.log3(error.rotation)])


class TaskSE3Equality(TaskMotionTracking):
    """Track a reference placement of a frame.

    In the local frame (default): e = se3_error(M, M_ref) points from the frame to the reference,
    de = M^-1 v_ref - v (rotation only), and the constraint is
    J_local dv = Kp e + Kd de + R^T a_ref - a_drift, with a_drift the classical acceleration of the
    frame at dv = 0. With ``use_local_frame(False)``, errors, Jacobian and drift are rotated to
    world axes (LOCAL_WORLD_ALIGNED) and a_ref is used as is. Rows are selected by the 6-D mask
    (linear x, y, z, angular x, y, z).
    """

    def __init__(self, name: str, robot: RobotWrapper, frame: Frame) -> None:
        super().__init__(name, robot, 6)
        self.frame_id = robot.frame_id(frame)
        self.frame_name = robot.frame_name(frame)
        self.local_frame = True
        self._reference_placement = pin.SE3.Identity()
        self._reference = TrajectorySample.from_se3(self._reference_placement)
        self._reference_moves = False

    def use_local_frame(self, local_frame: bool) -> None:
        """Express the task in the local frame (True, default) or in world-aligned axes (False)."""
        self.local_frame = bool(local_frame)

    @property
    def reference(self) -> TrajectorySample:
        return self._reference

    def set_reference(self, reference: TrajectorySample | pin.SE3) -> None:
        """Set the reference placement, as an ``SE3`` or an SE3 sample (12-vector pos, 6-vector vel/acc)."""
        if isinstance(reference, pin.SE3):
            reference = TrajectorySample.from_se3(reference)
        self._reference = as_sample(f"reference of task {self.name!r}", reference, 12, 6)
        self._reference_placement = vector_to_se3(self._reference.pos)
        self._reference_moves = bool(np.any(self._reference.vel) or np.any(self._reference.acc))

    def compute(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> ConstraintEquality:
        robot, frame = self.robot, self.frame_id
        placement = data.oMf[frame]
        rotation = placement.rotation
        error = se3_error(placement, self._reference_placement)
        ref_vel, ref_acc = self._reference.vel, self._reference.acc
        if self.local_frame:
            velocity = robot.frame_velocity(data, frame).vector
            drift = robot.frame_classic_acceleration(data, frame).vector
            jacobian = robot.frame_jacobian_local(data, frame)
            self.position_error = error
            if self._reference_moves:
                ref_vel, ref_acc = rotate_motion(rotation.T, ref_vel), rotate_motion(rotation.T, ref_acc)
            self.velocity_error = ref_vel - velocity
        else:
            velocity = robot.frame_velocity_world_oriented(data, frame).vector
            drift = robot.frame_classic_acceleration_world_oriented(data, frame).vector
            jacobian = robot.frame_jacobian_world_oriented(data, frame)
            self.position_error = rotate_motion(rotation, error)
            self.velocity_error = ref_vel - velocity
        self._drift = drift
        self.desired_acceleration = self.kp * self.position_error + self.kd * self.velocity_error + ref_acc
        rows = self._rows
        self._constraint.matrix[:] = jacobian[rows]
        self._constraint.vector[:] = (self.desired_acceleration - drift)[rows]
        return self._constraint


def rotate_motion(rotation: np.ndarray, motion: np.ndarray) -> np.ndarray:
    """R applied to both 3-D halves (linear, angular) of a 6-vector: a change of axes, no transport."""
    return (motion.reshape(2, 3) @ rotation.T).reshape(6)
