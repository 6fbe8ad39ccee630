"""Keep the capture point inside the support limits (TSID's TaskCapturePointInequality)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from tsid_py.constraints import ConstraintInequality, Kind
from tsid_py.errors import InvalidParameterError
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.tasks.task_base import TaskMotion, TaskState
from tsid_py.tasks.task_parts import Scalar
from tsid_py.validation import Copied, as_scalar


@dataclass(slots=True, kw_only=True)
class CapturePointState(TaskState):
    """The last w = sqrt(g / c_z) [1/s], capture point (x, y) [m] and CoM drift (x, y) [m/s^2]."""

    omega: float = 0.0
    capture_point: np.ndarray
    drift: np.ndarray


class TaskCapturePointInequality(TaskMotion):
    """Bounds on the horizontal CoM acceleration that keep the next capture point inside limits.

    The capture point is xi = c + dc / w (x and y), with w = sqrt(g / c_z). After one step dt,
    c+ = c + dt dc + dt^2/2 a and dc+ = dc + dt a. So the next capture point is affine in the CoM
    acceleration a: xi+ = c + (dt + 1/w) dc + (dt^2/2 + dt/w) a. With k_a = 1 / (dt^2/2 + dt/w)
    and a = J_com,xy dv + drift_xy, requiring r_min + m <= xi+ <= r_max - m (m the margin) gives

        k_a (r_min + m - c - (dt + 1/w) dc) - drift <= J_com,xy dv
        J_com,xy dv <= k_a (r_max - m - c - (dt + 1/w) dc) - drift.

    Limits r in the world frame [m]; margin m [m]; dt [s].
    """

    kind = Kind.INEQUALITY
    support_min = Copied("Lower support limits along world x and y [m].")
    support_max = Copied("Upper support limits along world x and y [m].")
    safety_margin = Copied("Distances kept from the support limits along x and y [m].")

    dt = Scalar("The control period [s] (> 0).", minimum=0.0, strict=True)
    _dt: float
    _dim = 2
    _state: CapturePointState

    def __init__(self, name: str, robot: RobotWrapper, dt: float) -> None:
        super().__init__(name, robot)
        self.dt = dt
        self._support_min = np.full(2, -np.inf)
        self._support_max = np.full(2, np.inf)
        self._safety_margin = np.zeros(2)
        self.gravity = float(np.linalg.norm(robot.model.gravity.linear))  # [m/s^2]
        if self.gravity <= 0.0:
            raise InvalidParameterError(f"{name!r}: the capture point needs gravity, the model has none")
        self._state = CapturePointState(capture_point=np.zeros(2), drift=np.zeros(2))

    @property
    def capture_point(self) -> np.ndarray:
        """The capture point xi = c + dc / w (x, y) at the last computation [m] (a copy)."""
        return self._state.capture_point.copy()

    @property
    def omega(self) -> float:
        """w = sqrt(g / c_z) at the last computation [1/s]."""
        return self._state.omega

    def set_support_limits_x_axis(self, x_min: float, x_max: float) -> None:
        """Support limits along world x [m]."""
        self._set_limits(0, "x", x_min, x_max)

    def set_support_limits_y_axis(self, y_min: float, y_max: float) -> None:
        """Support limits along world y [m]."""
        self._set_limits(1, "y", y_min, y_max)

    def _set_limits(self, axis: int, label: str, low: float, high: float) -> None:
        low, high = as_scalar(f"{label}_min", low), as_scalar(f"{label}_max", high)
        self._check_room(label, low, high, self._safety_margin[axis])
        self._support_min[axis], self._support_max[axis] = low, high

    def set_safety_margin(self, x_margin: float, y_margin: float) -> None:
        """Distances (>= 0) kept from the support limits along x and y [m]."""
        margin = np.array(
            [as_scalar("x_margin", x_margin, minimum=0.0), as_scalar("y_margin", y_margin, minimum=0.0)]
        )
        for axis, label in enumerate("xy"):
            self._check_room(label, self._support_min[axis], self._support_max[axis], margin[axis])
        self._safety_margin = margin

    def _check_room(self, label: str, low: float, high: float, margin: float) -> None:
        """The limits must leave an interval once the margin is taken off both sides."""
        if low + margin > high - margin:
            raise InvalidParameterError(
                f"{self.name!r}: support limits along {label} [{low}, {high}] m with a safety margin of "
                f"{margin} m leave no room: need {label}_min + margin <= {label}_max - margin"
            )

    def fill(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data, out: ConstraintInequality) -> None:
        robot, dt = self.robot, self._dt
        com, com_vel = robot.com(data), robot.com_vel(data)
        if com[2] <= 0.0:
            raise InvalidParameterError(
                f"{self.name!r}: the CoM height must be > 0 for a capture point, got {com[2]} m"
            )
        state = self._state
        state.drift = drift = robot.com_acc(data)[:2]
        state.omega = w = float(np.sqrt(self.gravity / com[2]))
        state.capture_point = com[:2] + com_vel[:2] / w
        k_a = 2.0 * w / ((w * dt + 2.0) * dt)
        coasting = com[:2] + com_vel[:2] * (dt + 1.0 / w)
        lower = self._support_min + self._safety_margin
        upper = self._support_max - self._safety_margin
        out.matrix[...] = robot.com_jacobian(data)[:2]
        out.lower_bound[...] = k_a * (lower - coasting) - drift
        out.upper_bound[...] = k_a * (upper - coasting) - drift

    def get_acceleration(self, dv: np.ndarray) -> np.ndarray:
        """The horizontal CoM acceleration J_com,xy dv + drift_xy that dv (size nv) gives [m/s^2]."""
        return self.constraint.matrix.dot(dv) + self._state.drift
