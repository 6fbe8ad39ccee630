"""Centre-of-mass tracking task."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.constraints import ConstraintEquality
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.tasks.task_base import TaskMotionTracking
from tsid_py.trajectories import TrajectorySample, as_sample


class TaskComEquality(TaskMotionTracking):
    """Track a CoM reference c_ref(t).

    Error e = c - c_ref [m], de = dc - dc_ref [m/s]. Desired acceleration
    a* = ddc_ref - Kp e - Kd de. Constraint: J_com dv = a* - dJ_com v, rows selected by the mask
    (x, y, z in the world frame).
    """

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        super().__init__(name, robot, 3)
        self._reference = TrajectorySample(np.zeros(3))

    @property
    def reference(self) -> TrajectorySample:
        return self._reference

    def set_reference(self, sample: TrajectorySample) -> None:
        """Set the CoM reference (pos, vel, acc), each a 3-vector in the world frame."""
        self._reference = as_sample(f"reference of task {self.name!r}", sample, 3)

    def compute(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> ConstraintEquality:
        """J_com dv = ddc_ref - Kp e - Kd de - dJ_com v on the masked rows (fresh error arrays each call)."""
        robot, ref = self.robot, self._reference
        self._drift = drift = robot.com_acc(data)
        self.position_error = position_error = robot.com(data) - ref.pos
        self.velocity_error = velocity_error = robot.com_vel(data) - ref.vel
        desired = ref.acc - self._kp * position_error
        desired -= self._kd * velocity_error
        self.desired_acceleration = desired
        return self._fill(robot.com_jacobian(data), desired, drift)
