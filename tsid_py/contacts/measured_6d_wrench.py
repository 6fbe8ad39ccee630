"""A measured external wrench (e.g. from a force/torque sensor) added to the dynamics."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.robot_wrapper import Frame, RobotWrapper
from tsid_py.validation import as_vector


class Measured6dWrench:
    """A known wrench w applied to the robot at a frame (TSID's Measured6Dwrench).

    It enters the equation of motion as M dv + h = S^T tau + J_c^T f + J^T w, i.e. the formulation
    uses h - J^T w in place of h. w = (force [N], torque [N m]) at the frame origin, expressed in
    the frame (default) or in world-aligned axes after ``use_local_frame(False)``; J is the frame
    Jacobian in the same axes.
    """

    def __init__(self, name: str, robot: RobotWrapper, frame: Frame) -> None:
        self.name = name
        self.robot = robot
        self.frame_id = robot.frame_id(frame)
        self.frame_name = robot.frame_name(frame)
        self.local_frame = True
        self._wrench = np.zeros(6)

    @property
    def measured_wrench(self) -> np.ndarray:
        """The wrench w, 6-vector [N, N m]."""
        return self._wrench

    def set_measured_contact_force(self, wrench: object) -> None:
        """Set the measured wrench w (force, torque) [N, N m]."""
        self._wrench = as_vector(f"measured wrench of {self.name!r}", wrench, 6).copy()

    def use_local_frame(self, local_frame: bool) -> None:
        """Express w in the frame (True, default) or in world-aligned axes (False)."""
        self.local_frame = bool(local_frame)

    def compute_joint_torques(self, data: pin.Data) -> np.ndarray:
        """J^T w, size nv: the generalized force the wrench applies [N, N m]."""
        if self.local_frame:
            jacobian = self.robot.frame_jacobian_local(data, self.frame_id)
        else:
            jacobian = self.robot.frame_jacobian_world_oriented(data, self.frame_id)
        return jacobian.T @ self._wrench

    def __repr__(self) -> str:
        return f"Measured6dWrench({self.name!r}, frame={self.frame_name!r})"
