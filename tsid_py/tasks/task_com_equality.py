"""Centre-of-mass tracking task."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.tasks.task_motion_tracking import TaskMotionTracking
from tsid_py.trajectories import TrajectorySample, as_sample


class TaskComEquality(TaskMotionTracking):
    """Track a CoM reference c_ref(t) (x, y, z in the world frame, rows selected by the mask).

    Error e = c - c_ref [m], Jacobian J_com, drift dJ_com v; with the reference's velocity and
    acceleration, a* = ddc_ref - Kp e - Kd (J_com v - dc_ref) and J_com dv = a* - dJ_com v
    (TSID's TaskComEquality). Written on :class:`TaskMotionTracking`, as a task of one's own is.
    """

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        super().__init__(name, robot, 3)
        self._reference = TrajectorySample(np.zeros(3))
        self._jacobian = np.zeros((3, robot.nv))  # J_com, filled by the robot at each step

    @property
    def reference(self) -> TrajectorySample:
        """The CoM reference (a copy)."""
        return self._reference.copy()

    def set_reference(self, sample: TrajectorySample) -> None:
        """Set the CoM reference (pos [m], vel [m/s], acc [m/s^2]), each a 3-vector in the world frame."""
        self._reference = as_sample(f"reference of task {self.name!r}", sample, 3)

    def compute_error(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> np.ndarray:
        return self.robot.com(data) - self._reference.pos

    def compute_jacobian(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> np.ndarray:
        return self.robot.com_jacobian(data, out=self._jacobian)

    def compute_drift(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> np.ndarray:
        return self.robot.com_acc(data)

    def reference_derivatives(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        return self._reference.vel, self._reference.acc  # read-only arrays of the task's own sample
