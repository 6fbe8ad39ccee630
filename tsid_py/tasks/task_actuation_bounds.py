"""Joint torque bounds."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.constraints import ConstraintInequality, Kind, check_bounds
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.tasks.task_base import TaskActuation, inequality_as_computed
from tsid_py.tasks.task_parts import MaskedActuatedJoints
from tsid_py.validation import Copied, as_vector


class TaskActuationBounds(MaskedActuatedJoints, TaskActuation):
    """tau_min <= S_mask tau <= tau_max on the actuated joints [N m]; a hard limit at priority 0."""

    kind = Kind.INEQUALITY
    lower_bound = Copied("tau_min of every actuated joint [N m].")
    upper_bound = Copied("tau_max of every actuated joint [N m].")

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        super().__init__(name, robot)
        self._lower_bound = np.full(robot.na, -np.inf)
        self._upper_bound = np.full(robot.na, np.inf)
        self._bounds = (self._lower_bound, self._upper_bound)  # the pair a fill keeps, made when set
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
        self._bounds = (lower, upper)

    def fill(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data, out: ConstraintInequality) -> None:
        last = self._last
        filled = last.out  # refilling(out), inline: this runs every control step
        if filled is None or filled() is not out:  # the selection changes only with the mask
            out.matrix[...] = self._selection
        last.bounds = lower, upper = self._bounds  # set_bounds replaces them
        if self._all_rows:
            out.lower_bound[...] = lower
            out.upper_bound[...] = upper
        else:
            out.lower_bound[...] = lower[self._rows]
            out.upper_bound[...] = upper[self._rows]

    def _last_constraint(self) -> ConstraintInequality:
        """The selection and the bounds of the last computation, on the masked joints."""
        lower, upper = self._last.bounds
        return inequality_as_computed(self.name, self._selection, lower[self._rows], upper[self._rows])
