"""Relative placement of two frames (e.g. to close a kinematic chain or bring two hands together)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.errors import InvalidParameterError
from tsid_py.robot_wrapper import Frame, RobotWrapper
from tsid_py.tasks.task_motion_tracking import TaskMotionTracking, Terms
from tsid_py.tasks.task_se3_equality import rotate_motion, se3_error


class TaskTwoFramesEquality(TaskMotionTracking):
    """Drive frame 1 onto frame 2, all quantities in world-aligned axes (TSID's TaskTwoFramesEquality).

    e = R_1 se3_error(M_1, M_2) points from frame 1 to frame 2: its linear part is p_2 - p_1 [m],
    then comes its angular part [rad]. de = v_2 - v_1, with LOCAL_WORLD_ALIGNED velocities
    [m/s, rad/s]. a* = Kp e + Kd de. The constraint is (J_1 - J_2) dv = a* - (a_1 - a_2), with J_k
    the LOCAL_WORLD_ALIGNED Jacobians and a_k the classical acceleration drifts. The 6-D mask
    selects the rows (linear x, y, z, angular x, y, z).
    """

    error_points_to_reference = True

    def __init__(self, name: str, robot: RobotWrapper, frame1: Frame, frame2: Frame) -> None:
        super().__init__(name, robot, 6)
        self.frame_id1, self.frame_id2 = robot.frame_id(frame1), robot.frame_id(frame2)
        self.frame_name1, self.frame_name2 = robot.frame_name(frame1), robot.frame_name(frame2)
        if self.frame_id1 == self.frame_id2:
            raise InvalidParameterError(
                f"{name!r} relates two frames, got {self.frame_name1!r} twice: give two different frames"
            )
        self.local_frame = False  # forces and rows in world-aligned axes

    def compute_terms(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> Terms:
        """(e, J_1 - J_2, a_1 - a_2, 0, 0): then de = -(J_1 - J_2) v = v_2 - v_1."""
        robot, f1, f2 = self.robot, self.frame_id1, self.frame_id2
        placement1 = robot.frame_placement(data, f1)
        error = rotate_motion(placement1.rotation, se3_error(placement1, robot.frame_placement(data, f2)))
        drift = (
            robot.frame_classic_acceleration_world_oriented(data, f1).vector
            - robot.frame_classic_acceleration_world_oriented(data, f2).vector
        )
        jacobian = robot.frame_jacobian_world_oriented(data, f1) - robot.frame_jacobian_world_oriented(
            data, f2
        )
        return error, jacobian, drift, self._zero, self._zero
