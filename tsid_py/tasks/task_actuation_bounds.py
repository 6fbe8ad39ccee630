"""Joint torque bounds."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.constraints import ConstraintInequality, check_bounds
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.tasks.task_base import Masked, TaskActuation
from tsid_py.validation import as_vector


class TaskActuationBounds(Masked, TaskActuation):
    """tau_min <= S_mask tau <= tau_max on the actuated joints [N m].

    Added at priority 0 this is a hard limit; the formulation maps tau to x = [dv; f] through
    the actuated rows of the dynamics, tau = M_a dv + h_a - J_a^T f.
    """

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        super().__init__(name, robot)
        self._lower = np.full(robot.na, -np.inf)
        self._upper = np.full(robot.na, np.inf)
        self.mask = np.ones(robot.na)

    def _mask_size(self) -> int:
        """mask: which actuated joints are bounded (0/1 per joint)."""
        return self.robot.na

    def _apply_mask(self) -> None:
        rows = int(self._mask.sum())
        self._constraint = ConstraintInequality(self.name, rows, self.robot.na)
        self._constraint.matrix[np.arange(rows), np.flatnonzero(self._mask)] = 1.0
        self.selected_joints = self._rows
        self._constraint.lower_bound[:] = self._lower[self._mask]  # the bounds set stay set
        self._constraint.upper_bound[:] = self._upper[self._mask]

    def set_bounds(self, lower: object, upper: object) -> None:
        """Set tau_min and tau_max, each of size na [N m]."""
        lower = as_vector("lower torque bounds", lower, self.robot.na, finite=False)
        upper = as_vector("upper torque bounds", upper, self.robot.na, finite=False)
        check_bounds(self.name, lower, upper)
        self._lower, self._upper = lower, upper
        self._constraint.lower_bound[:] = lower[self._mask]
        self._constraint.upper_bound[:] = upper[self._mask]

    @property
    def lower_bound(self) -> np.ndarray:
        return self._lower

    @property
    def upper_bound(self) -> np.ndarray:
        return self._upper

    def compute(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> ConstraintInequality:
        return self._constraint
