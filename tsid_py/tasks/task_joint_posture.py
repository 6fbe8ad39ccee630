"""Joint posture task on the actuated joints."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.tasks.task_motion_tracking import TaskMotionTracking
from tsid_py.trajectories import TrajectorySample, as_sample


class TaskJointPosture(TaskMotionTracking):
    """Track a reference posture q_ref of the actuated joints.

    e = q_a (-) q_ref [rad], size na: Pinocchio's ``difference``. When every actuated joint has as
    many coordinates as velocities, it is q_a - q_ref, and the code computes that. J = S, the rows
    of the identity for the actuated joints' velocities; no drift. The constraint is
    S dv = ddq_ref - Kp e - Kd (v_a - dq_ref) on the joints the mask keeps. The reference's pos
    has nq_actuated entries; its vel and acc have na.
    """

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        super().__init__(name, robot, robot.na)
        self._q_start, self._v_start = robot.nq - robot.nq_actuated, robot.nv - robot.na
        self._q_ref_full = robot.neutral_configuration()
        self._q_ref_actuated = self._q_ref_full[self._q_start :]  # a view: set_reference writes it
        self._reference = TrajectorySample(self._q_ref_actuated, tangent_size=robot.na)
        self._derivatives = self._derivatives_of(self._reference)
        self._vector_space = robot.nq_actuated == robot.na
        self._jacobian = np.eye(robot.na, robot.nv, self._v_start)  # S, every actuated joint
        self._jacobian.flags.writeable = False  # a constant: its rows are written once per layout

    @property
    def reference(self) -> TrajectorySample:
        """q_ref (size nq_actuated), dq_ref and ddq_ref (size na): a copy."""
        return self._reference.copy()

    def set_reference(self, sample: TrajectorySample) -> None:
        """Set q_ref (size nq_actuated), dq_ref and ddq_ref (size na)."""
        robot = self.robot
        self._reference = as_sample(f"reference of task {self.name!r}", sample, robot.nq_actuated, robot.na)
        self._q_ref_actuated[...] = self._reference.pos
        self._derivatives = self._derivatives_of(self._reference)

    def compute_error(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> np.ndarray:
        """e = q_a (-) q_ref [rad] (size na)."""
        if self._vector_space:  # every actuated joint is a vector space: q_a - q_ref
            return q[self._q_start :] - self._q_ref_actuated
        return pin.difference(self.robot.model, self._q_ref_full, q)[self._v_start :]

    def compute_jacobian(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> np.ndarray:
        """S (na x nv): a constant, read-only (so written into the rows once per layout)."""
        return self._jacobian

    def compute_drift(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> np.ndarray:
        """Zero: S does not change."""
        return self._zero

    def reference_derivatives(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        return self._derivatives  # the sample's read-only arrays, or zeros at rest
