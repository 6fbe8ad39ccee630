"""Centre-of-mass tracking task."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.constraints import ConstraintEquality
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.tasks.task_motion_tracking import TaskMotionTracking
from tsid_py.trajectories import TrajectorySample, as_sample


class TaskComEquality(TaskMotionTracking):
    """Track a CoM reference c_ref(t) (x, y, z in the world frame, rows selected by the mask).

    Error e = c - c_ref [m], Jacobian J_com, drift dJ_com v; with the reference's velocity and
    acceleration, a* = ddc_ref - Kp e - Kd (J_com v - dc_ref) and J_com dv = a* - dJ_com v
    (TSID's TaskComEquality). Written on :class:`TaskMotionTracking`, as a task of one's own is, with
    :meth:`fill` written out for speed.
    """

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        super().__init__(name, robot, 3)
        self._reference = TrajectorySample(np.zeros(3))
        self._jacobian = np.zeros((3, robot.nv))  # J_com of the last fill
        self._written_out = self._terms_are(TaskComEquality)  # else a subclass's terms: the base's fill

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
        return self.robot.com_jacobian(data)

    def compute_drift(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> np.ndarray:
        return self.robot.com_acc(data)

    def reference_derivatives(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        return self._reference.vel, self._reference.acc  # read-only arrays of the task's own sample

    def fill(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data, out: ConstraintEquality) -> None:
        """:meth:`TaskMotionTracking.fill` written out: the terms are the robot's own arrays, so
        nothing is checked and the kept errors need no copy. The same rows and errors
        (``tests/test_tasks.py``). A subclass that computes its own terms gets the base's fill."""
        if not self._written_out:
            TaskMotionTracking.fill(self, t, q, v, data, out)
            return
        robot, reference, last = self.robot, self._reference, self._last
        jacobian = robot.com_jacobian(data, out=self._jacobian)
        position_error = robot.com(data) - reference.pos
        velocity_error = jacobian.dot(v) - reference.vel
        desired = reference.acc - self._kp * position_error
        desired -= self._kd * velocity_error
        drift = robot.com_acc(data, out=last.drift)
        self._write(out, jacobian, desired, drift)
        last.position_error, last.velocity_error, last.desired_acceleration = (
            position_error,
            velocity_error,
            desired,
        )
