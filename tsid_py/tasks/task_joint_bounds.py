"""Joint velocity and acceleration bounds, enforced through the acceleration of one time step."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.constraints import ConstraintBound, Kind, check_bounds
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.tasks.task_base import TaskMotion
from tsid_py.tasks.task_parts import Scalar
from tsid_py.validation import as_vector


class TaskJointBounds(TaskMotion):
    """Bounds on the actuated accelerations so that after one step dt the velocity stays in bounds.

    For actuated joint i: max(a_min, (v_min - v) / dt) <= dv_i <= min(a_max, (v_max - v) / dt),
    with v in [rad/s] and a in [rad/s^2]. Base accelerations are free. As TSID's TaskJointBounds.
    """

    dt = Scalar("The control period [s] (> 0).", minimum=0.0, strict=True)
    _dt: float

    def __init__(self, name: str, robot: RobotWrapper, dt: float) -> None:
        super().__init__(name, robot)
        self.dt = dt
        na = robot.na
        self._v_lb, self._v_ub = np.full(na, -np.inf), np.full(na, np.inf)
        self._a_lb, self._a_ub = np.full(na, -np.inf), np.full(na, np.inf)

    kind = Kind.BOUND

    @property
    def dim(self) -> int:
        return self.robot.nv

    def set_time_step(self, dt: float) -> None:
        """The control period [s] (as ``task.dt = dt``)."""
        self.dt = dt

    def set_velocity_bounds(self, lower: object, upper: object) -> None:
        """Velocity bounds of the actuated joints, size na [rad/s]."""
        self._v_lb, self._v_ub = self._bounds("velocity", lower, upper)

    def set_acceleration_bounds(self, lower: object, upper: object) -> None:
        """Acceleration bounds of the actuated joints, size na [rad/s^2]."""
        self._a_lb, self._a_ub = self._bounds("acceleration", lower, upper)

    def _bounds(self, kind: str, lower: object, upper: object) -> tuple[np.ndarray, np.ndarray]:
        lower = as_vector(f"lower {kind} bounds", lower, self.robot.na, finite=False)
        upper = as_vector(f"upper {kind} bounds", upper, self.robot.na, finite=False)
        check_bounds(self.name, lower, upper)
        return lower, upper

    def fill(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data, out: ConstraintBound) -> None:
        """Bounds on dv (the matrix of a bound is the identity); base accelerations are free."""
        start = self.robot.nv - self.robot.na
        v_a = v[start:]
        lower = np.maximum((self._v_lb - v_a) / self._dt, self._a_lb)
        upper = np.minimum((self._v_ub - v_a) / self._dt, self._a_ub)
        out.lower_bound[:start], out.upper_bound[:start] = -np.inf, np.inf
        out.lower_bound[start:], out.upper_bound[start:] = lower, upper
