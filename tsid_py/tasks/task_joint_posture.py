"""Joint posture task on the actuated joints."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.constraints import ConstraintEquality
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.tasks.task_base import TaskMotion
from tsid_py.tasks.task_parts import Masked, PdGains, TrackingErrors
from tsid_py.trajectories import TrajectorySample, as_sample


class TaskJointPosture(Masked, TaskMotion, PdGains, TrackingErrors):
    """Track a reference posture q_ref of the actuated joints.

    e = q_a (-) q_ref [rad], size na: Pinocchio's ``difference``. When every actuated joint has as
    many coordinates as velocities, it is q_a - q_ref, and the code computes that.
    de = v_a - dq_ref. The constraint is S dv = ddq_ref - Kp e - Kd de, with S selecting the masked
    actuated joints. The reference's pos has nq_actuated entries; its vel and acc have na.
    """

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        TaskMotion.__init__(self, name, robot)
        PdGains.__init__(self, robot.na)
        self._q_ref_full = robot.neutral_configuration()
        self._reference = TrajectorySample(
            self._q_ref_full[robot.nq - robot.nq_actuated :], tangent_size=robot.na
        )
        self._last.position_error = np.zeros(robot.na)
        self._last.velocity_error = np.zeros(robot.na)
        self._last.desired_acceleration = np.zeros(robot.na)
        # read by fill at every step: where the actuated joints start in q and v, and q_ref's view
        self._q_start, self._v_start = robot.nq - robot.nq_actuated, robot.nv - robot.na
        self._vector_space = robot.nq_actuated == robot.na
        self._q_ref_actuated = self._q_ref_full[self._q_start :]
        self.mask = np.ones(robot.na)

    def _mask_size(self) -> int:
        """mask: which actuated joints are controlled (0/1 per joint)."""
        return self.robot.na

    def _apply_mask(self) -> None:
        robot = self.robot
        columns = robot.nv - robot.na + np.flatnonzero(self._mask)
        self._selection = np.zeros((columns.size, robot.nv))
        self._selection[np.arange(columns.size), columns] = 1.0

    @property
    def reference(self) -> TrajectorySample:
        """q_ref (size nq_actuated), dq_ref and ddq_ref (size na): a copy."""
        return self._reference.copy()

    def set_reference(self, sample: TrajectorySample) -> None:
        """Set q_ref (size nq_actuated), dq_ref and ddq_ref (size na)."""
        robot = self.robot
        self._reference = as_sample(f"reference of task {self.name!r}", sample, robot.nq_actuated, robot.na)
        self._q_ref_full[robot.nq - robot.nq_actuated :] = self._reference.pos

    def fill(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data, out: ConstraintEquality) -> None:
        reference, last = self._reference, self._last
        if self._vector_space:  # every actuated joint is a vector space: q_a - q_ref
            position_error = q[self._q_start :] - self._q_ref_actuated
        else:
            position_error = pin.difference(self.robot.model, self._q_ref_full, q)[self._v_start :]
        velocity_error = v[self._v_start :] - reference._vel
        desired = reference._acc - self._kp * position_error
        desired -= self._kd * velocity_error
        last.position_error, last.velocity_error = position_error, velocity_error
        last.desired_acceleration = desired
        if out is not last.out:  # not refilling: the selection changes only with the mask
            out.matrix[...] = self._selection
        out.vector[...] = desired if self._all_rows else desired[self._rows]
