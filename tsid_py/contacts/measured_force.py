"""Measured external forces (force/torque sensors, pushes) added to the dynamics.

A measured force w, applied at a frame, enters the equation of motion as

    M dv + h = S^T tau + J_c^T f + J^T w

so the formulation uses h - J^T w in place of h (TSID's MeasuredForceBase). w and J are
expressed in the frame (default), or in world-aligned axes at the frame origin after
``use_local_frame(False)``.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.robot_wrapper import Frame, RobotWrapper
from tsid_py.sealed import Sealed
from tsid_py.validation import as_vector


class MeasuredForceBase(Sealed):
    """A known force of ``size`` components (the first rows of the frame Jacobian) at a frame."""

    size: int = 6
    kind: str = ""

    def __init__(self, name: str, robot: RobotWrapper, frame: Frame) -> None:
        self.name = name
        self.robot = robot
        self.frame_id = robot.frame_id(frame)
        self.frame_name = robot.frame_name(frame)
        self.local_frame = True
        self._force = np.zeros(self.size)

    @property
    def measured_force(self) -> np.ndarray:
        """The measured w [N, N m] (a copy)."""
        return self._force.copy()

    def set_measured_contact_force(self, force: object) -> None:
        """Set the measured w (TSID's ``setMeasuredContactForce``)."""
        self._force = as_vector(f"measured {self.kind} of {self.name!r}", force, self.size)

    def use_local_frame(self, local_frame: bool) -> None:
        """Express w in the frame (True, default) or in world-aligned axes (False)."""
        self.local_frame = bool(local_frame)

    def advance(self, t: float) -> None:
        """Take the value at time t [s] (the formulation calls it at every problem): a measured
        force keeps the value last set; a scheduled one (:class:`PrescribedWrench`) follows its
        schedule."""

    def compute_joint_torques(self, data: pin.Data) -> np.ndarray:
        """J^T w, size nv: the generalized force w applies [N, N m]."""
        if self.local_frame:
            jacobian = self.robot.frame_jacobian_local(data, self.frame_id)
        else:
            jacobian = self.robot.frame_jacobian_world_oriented(data, self.frame_id)
        return jacobian[: self.size].T.dot(self._force)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, frame={self.frame_name!r})"


class Measured6dWrench(MeasuredForceBase):
    """A measured wrench w = (force [N], torque [N m]) at the frame origin (TSID's Measured6Dwrench)."""

    size = 6
    kind = "wrench"

    @property
    def measured_wrench(self) -> np.ndarray:
        """The wrench w, 6-vector [N, N m] (a copy)."""
        return self._force.copy()


class Measured3dForce(MeasuredForceBase):
    """A measured pure force f [N] at the frame origin (TSID's Measured3Dforce): J is the linear
    part of the frame Jacobian, so f exerts no torque about the origin."""

    size = 3
    kind = "force"
