"""Joint position, velocity, viability and acceleration bounds, as acceleration bounds of one step."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.constraints import ConstraintInequality, Kind, check_bounds
from tsid_py.errors import InvalidParameterError
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.tasks.task_base import TaskMotion
from tsid_py.tasks.task_parts import Mask, Scalar, joint_selection
from tsid_py.validation import Copied, as_vector


class TaskJointPosVelAccBounds(TaskMotion):
    """Bounds on the actuated accelerations that keep q, v inside their limits in discrete time.

    From Del Prete, "Joint Position and Velocity Bounds in Discrete-Time Acceleration/Torque
    Control of Robot Manipulators", RA-L 2018 (TSID's TaskJointPosVelAccBounds). With the
    integration q+ = q + dt v + dt^2/2 a, v+ = v + dt a, per actuated joint:

    - position: q+ stays in [q_min, q_max] until the joint has stopped (the bound
      a <= 2 (q_max - q - dt v) / dt^2, or the braking bound -v^2 / (2 (q_max - q)) once the
      velocity can no longer be zeroed in one step);
    - viability: the next state can still brake to rest before the limit with |a| <= a_max,
      v+^2 <= 2 a_max (q_max - q+) (the root of a quadratic in a);
    - velocity: |v+| <= v_max;  acceleration: |a| <= a_max.

    The tightest bound of each side is kept. If they cross, the position bound wins. Units: q in
    [rad] (or [m]), v in [rad/s], a in [rad/s^2]. The task needs one configuration entry per
    actuated velocity (revolute or prismatic joints). Unlike TSID's, a mask also selects the rows.
    """

    kind = Kind.INEQUALITY
    q_min = Copied("Lower position bounds of the actuated joints [rad].")
    q_max = Copied("Upper position bounds of the actuated joints [rad].")
    v_max = Copied("Velocity bounds |v| <= v_max of the actuated joints [rad/s].")
    a_max = Copied("Acceleration bounds |a| <= a_max of the actuated joints [rad/s^2].")
    mask = Mask("Which actuated joints are bounded (0/1 per joint; read-only copy).")

    @property
    def lower_bounds(self) -> dict[str, np.ndarray]:
        """The lower acceleration bound of each family (position, viability, velocity, acceleration)
        at the last computation [rad/s^2] (copies)."""
        return {kind: bound.copy() for kind, bound in self._lower_bounds.items()}

    @property
    def upper_bounds(self) -> dict[str, np.ndarray]:
        """The upper acceleration bound of each family at the last computation [rad/s^2] (copies)."""
        return {kind: bound.copy() for kind, bound in self._upper_bounds.items()}

    dt = Scalar("The control period [s] (> 0).", minimum=0.0, strict=True)
    _dt: float

    def __init__(self, name: str, robot: RobotWrapper, dt: float) -> None:
        super().__init__(name, robot)
        if robot.nq_actuated != robot.na:
            raise InvalidParameterError(
                f"{name!r}: joint position bounds need one configuration entry per actuated joint "
                f"(nq_actuated = {robot.nq_actuated}, na = {robot.na})"
            )
        self.dt = dt
        na = robot.na
        self._q_min, self._q_max = np.full(na, -np.inf), np.full(na, np.inf)
        self._v_max, self._a_max = np.full(na, np.inf), np.full(na, np.inf)
        self.impose_position = self.impose_velocity = self.impose_viability = self.impose_acceleration = False
        self._lower_bounds = {
            kind: np.full(na, -np.inf) for kind in ("position", "viability", "velocity", "acceleration")
        }
        self._upper_bounds = {kind: np.full(na, np.inf) for kind in self._lower_bounds}
        self.mask = np.ones(na)

    def _mask_size(self) -> int:
        """mask: which actuated joints are bounded (0/1 per joint)."""
        return self.robot.na

    def _apply_mask(self) -> None:
        robot = self.robot
        self._selection = joint_selection(self._mask, robot.nv, robot.nv - robot.na)

    def set_time_step(self, dt: float) -> None:
        """The control period [s] (as ``task.dt = dt``)."""
        self.dt = dt

    def set_position_bounds(self, lower: object, upper: object) -> None:
        """Set q_min and q_max of the actuated joints, size na [rad].

        It turns the position and viability bounds on.
        """
        lower = as_vector("lower position bounds", lower, self.robot.na)
        upper = as_vector("upper position bounds", upper, self.robot.na)
        check_bounds(self.name, lower, upper)
        self._q_min, self._q_max = lower, upper
        self.impose_position = self.impose_viability = True

    def set_velocity_bounds(self, upper: object) -> None:
        """Set v_max > 0 (|v| <= v_max), size na [rad/s]; turns the velocity bounds on."""
        self._v_max = self._absolute("velocity", upper)
        self.impose_velocity = True

    def set_acceleration_bounds(self, upper: object) -> None:
        """Set a_max > 0 (|a| <= a_max), size na [rad/s^2]; turns the acceleration bounds on.

        The viability bounds brake with a_max.
        """
        self._a_max = self._absolute("acceleration", upper)
        self.impose_acceleration = True

    def set_impose_bounds(self, position: bool, velocity: bool, viability: bool, acceleration: bool) -> None:
        """Turn each family of bounds on or off."""
        self.impose_position, self.impose_velocity = bool(position), bool(velocity)
        self.impose_viability, self.impose_acceleration = bool(viability), bool(acceleration)

    def _absolute(self, kind: str, upper: object) -> np.ndarray:
        upper = as_vector(f"{kind} bounds", upper, self.robot.na)
        if np.any(upper <= 0.0):
            raise InvalidParameterError(f"{kind} bounds of {self.name!r} must be > 0, got {upper.tolist()}")
        return upper

    def fill(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data, out: ConstraintInequality) -> None:
        na = self.robot.na
        lower, upper = self.acceleration_bounds(q[self.robot.nq - na :], v[self.robot.nv - na :])
        if not self.refilling(out):  # the selection changes only with the mask
            out.matrix[...] = self._selection
        out.lower_bound[...] = lower[self._mask]
        out.upper_bound[...] = upper[self._mask]

    def acceleration_bounds(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The acceleration bounds of every actuated joint, the tightest of the families turned on.

        Args:
            q: Positions of the actuated joints, size na.
            v: Velocities of the actuated joints, size na.

        Returns:
            a_lb: The lower bounds, size na [rad/s^2].
            a_ub: The upper bounds, size na [rad/s^2].
        """
        na = self.robot.na
        q = as_vector("actuated joint positions", q, na)
        v = as_vector("actuated joint velocities", v, na)
        for kind in self._lower_bounds:
            self._lower_bounds[kind], self._upper_bounds[kind] = np.full(na, -np.inf), np.full(na, np.inf)
        if self.impose_position:
            self._lower_bounds["position"], self._upper_bounds["position"] = self._position_bounds(q, v)
        if self.impose_viability and np.all(np.isfinite(self._a_max)):
            self._lower_bounds["viability"], self._upper_bounds["viability"] = self._viability_bounds(q, v)
        if self.impose_velocity:
            self._lower_bounds["velocity"] = (-self._v_max - v) / self._dt
            self._upper_bounds["velocity"] = (self._v_max - v) / self._dt
        if self.impose_acceleration:
            self._lower_bounds["acceleration"], self._upper_bounds["acceleration"] = (
                -self._a_max,
                self._a_max.copy(),
            )
        lower = np.max(np.array(list(self._lower_bounds.values())), axis=0)
        upper = np.min(np.array(list(self._upper_bounds.values())), axis=0)
        crossed = upper < lower
        position_wins = crossed & (upper == self._upper_bounds["position"])
        lower = np.where(position_wins, upper, lower)
        upper = np.where(crossed & ~position_wins, lower, upper)
        return lower, upper

    def _position_bounds(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        dt = self._dt
        reach_max = 2.0 / dt**2 * (self._q_max - q - dt * v)  # a that lands exactly on q_max
        reach_min = 2.0 / dt**2 * (self._q_min - q - dt * v)
        stop = -v / dt  # a that zeroes v in one step
        with np.errstate(divide="ignore", invalid="ignore"):
            brake_min = np.where(q != self._q_min, v**2 / (2.0 * (q - self._q_min)), 0.0)
            brake_max = np.where(q != self._q_max, -(v**2) / (2.0 * (self._q_max - q)), 0.0)
        moving_down = v <= 0.0
        lower = np.where(
            moving_down,
            np.where(
                reach_min < stop, reach_min, np.where(q != self._q_min, np.maximum(brake_min, stop), 0.0)
            ),
            reach_min,
        )
        upper = np.where(
            moving_down,
            reach_max,
            np.where(
                reach_max > stop, reach_max, np.where(q != self._q_max, np.minimum(brake_max, stop), 0.0)
            ),
        )
        return lower, upper

    def _viability_bounds(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Largest a with (v + dt a)^2 <= 2 a_max (q_max - q - dt v - dt^2/2 a), and its mirror."""
        dt, a_max = self._dt, self._a_max
        a = dt**2
        stop = -v / dt
        b_up = 2 * dt * v + a_max * dt**2
        c_up = v**2 - 2 * a_max * (self._q_max - q - dt * v)
        b_down = 2 * dt * v - a_max * dt**2
        c_down = v**2 - 2 * a_max * (q + dt * v - self._q_min)
        delta_up, delta_down = b_up**2 - 4 * a * c_up, b_down**2 - 4 * a * c_down
        upper = np.where(delta_up >= 0, (-b_up + np.sqrt(np.maximum(delta_up, 0.0))) / (2 * a), stop)
        lower = np.where(delta_down >= 0, (-b_down - np.sqrt(np.maximum(delta_down, 0.0))) / (2 * a), stop)
        return np.minimum(lower, stop), np.maximum(upper, stop)
