"""Joint torque bounds."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.constraints import ConstraintInequality, Kind, check_bounds
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.tasks.task_base import TaskActuation
from tsid_py.tasks.task_parts import Mask
from tsid_py.validation import Copied, as_vector


class TaskActuationBounds(TaskActuation):
    """tau_min <= S_mask tau <= tau_max on the actuated joints [N m]; a hard limit at priority 0."""

    kind = Kind.INEQUALITY
    lower_bound = Copied("tau_min of every actuated joint [N m].")
    upper_bound = Copied("tau_max of every actuated joint [N m].")
    mask = Mask("Which actuated joints are bounded (0/1 per joint; read-only copy).")

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        super().__init__(name, robot)
        self._lower_bound = np.full(robot.na, -np.inf)
        self._upper_bound = np.full(robot.na, np.inf)
        self.mask = np.ones(robot.na)

    def set_bounds(self, lower: object, upper: object) -> None:
        """Set the torque bounds.

        Args:
            lower: tau_min, size na [N m] (-inf: no bound).
            upper: tau_max, size na [N m] (inf: no bound).

        Raises:
            InvalidParameterError: lower > upper at some joint.
        """
        lower = as_vector("lower torque bounds", lower, self.robot.na, finite=False)
        upper = as_vector("upper torque bounds", upper, self.robot.na, finite=False)
        check_bounds(self.name, lower, upper)
        self._lower_bound, self._upper_bound = lower, upper

    def fill(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data, out: ConstraintInequality) -> None:
        if not self.refilling(out):  # the selection changes only with the mask
            out.matrix[...] = self._selection
        lower, upper = self._lower_bound, self._upper_bound
        if self._all_rows:
            out.lower_bound[...] = lower
            out.upper_bound[...] = upper
        else:
            out.lower_bound[...] = lower[self._rows]
            out.upper_bound[...] = upper[self._rows]
