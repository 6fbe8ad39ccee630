"""Motor velocity-torque envelope: the torque a motor can give falls with its speed."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.constraints import ConstraintInequality, Kind
from tsid_py.errors import InvalidParameterError
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.tasks.task_base import TaskActuation
from tsid_py.tasks.task_parts import Mask
from tsid_py.validation import Copied, as_vector


class TaskMotorEnvelope(TaskActuation):
    """|tau_i| <= tau_max_i (1 - |v_i| / v_max_i) for every (masked) actuated joint [N m].

    The linear torque-speed curve of a DC motor at its voltage limit: the stall torque tau_max at
    rest, no torque left at the no-load speed v_max (Hughes and Drury, "Electric Motors and Drives",
    2013, ch. 3). It is recomputed from the measured v at every control step. The envelope is
    clipped at zero torque when |v| >= v_max.

    With ``braking=True``, a torque that opposes the motion (tau_i v_i < 0: the motor brakes) may
    use the full tau_max, as a DC motor's voltage limit allows. Then
    tau in [-tau_max, tau_max (1 - v / v_max)] for v >= 0, and its mirror for v < 0. The default is
    the symmetric envelope. An infinite tau_max leaves a joint unbounded; an infinite v_max gives
    it the box |tau| <= tau_max.

    Args:
        name: The task's name.
        robot: The robot.
        tau_max: Stall torque per actuated joint (size na, or a scalar) [N m]; the robot spec's
            ``[motors] tau_max`` or the URDF effort limits when None.
        v_max: No-load speed per actuated joint (size na, or a scalar) [rad/s or m/s]; the spec's
            ``[motors] v_max`` or the URDF velocity limits when None. A URDF limit of 0 means "not
            given": that joint has no bound (tau_max 0) or no speed derating (v_max 0).
        braking: Whether a braking torque may use the full tau_max.
    """

    kind = Kind.INEQUALITY
    tau_max = Copied("Stall torque per actuated joint [N m].")
    v_max = Copied("No-load speed per actuated joint [rad/s or m/s].")
    mask = Mask("Which actuated joints are bounded (0/1 per joint; read-only copy).")

    def __init__(
        self,
        name: str,
        robot: RobotWrapper,
        tau_max: object = None,
        v_max: object = None,
        braking: bool = False,
    ) -> None:
        super().__init__(name, robot)
        spec_tau, spec_v = _spec_limits(robot)
        self.set_limits(spec_tau if tau_max is None else tau_max, spec_v if v_max is None else v_max)
        self.braking = bool(braking)
        self.mask = np.ones(robot.na)

    def set_limits(self, tau_max: object, v_max: object) -> None:
        """Set the stall torques and no-load speeds.

        Args:
            tau_max: Stall torques [N m], size na or a scalar, > 0 (inf: no bound).
            v_max: No-load speeds [rad/s or m/s], size na or a scalar, > 0 (inf: no derating).

        Raises:
            InvalidParameterError: A value <= 0 or NaN.
        """
        na = self.robot.na
        limits = []
        for what, value in (("tau_max", tau_max), ("v_max", v_max)):
            scalar = np.ndim(value) == 0  # type: ignore[arg-type]  # a number or an array-like
            array = np.broadcast_to(np.asarray(value, dtype=float), (na,)) if scalar else value
            array = as_vector(f"{what} of task {self.name!r}", array, na, finite=False)
            if np.any(np.isnan(array)) or np.any(array <= 0):
                raise InvalidParameterError(
                    f"{what} of task {self.name!r} must be > 0 (inf for no limit), got {array.tolist()}"
                )
            limits.append(array)
        self._tau_max, self._v_max = limits

    def envelope(self, v: object) -> tuple[np.ndarray, np.ndarray]:
        """The torque bounds of every actuated joint at the velocity v.

        Args:
            v: The robot's velocity, size nv.

        Returns:
            lower: The lower bounds, size na [N m].
            upper: The upper bounds, size na [N m].
        """
        v = as_vector("v", v, self.robot.nv, copy=False)
        return self._bounds(v[self.robot.nv - self.robot.na :])

    def _bounds(self, v_a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with np.errstate(invalid="ignore"):  # inf tau_max times a zero derating stays inf
            scale = np.clip(1.0 - np.abs(v_a) / self._v_max, 0.0, 1.0)
            derated = np.where(np.isinf(self._tau_max), np.inf, self._tau_max * scale)
        upper, lower = derated.copy(), -derated
        if self.braking:
            upper = np.where(v_a < 0, self._tau_max, upper)
            lower = np.where(v_a > 0, -self._tau_max, lower)
        return lower, upper

    def fill(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data, out: ConstraintInequality) -> None:
        if not self.refilling(out):  # the selection changes only with the mask
            out.matrix[...] = self._selection
        lower, upper = self._bounds(v[self.robot.nv - self.robot.na :])
        if self._all_rows:
            out.lower_bound[...] = lower
            out.upper_bound[...] = upper
        else:
            out.lower_bound[...] = lower[self._rows]
            out.upper_bound[...] = upper[self._rows]


def _spec_limits(robot: RobotWrapper) -> tuple[np.ndarray, np.ndarray]:
    """(tau_max, v_max) from the spec's ``[motors]`` table, else the URDF; 0 (not given) -> inf."""
    motors = getattr(getattr(robot, "spec", None), "motors", None) or {}
    limits = []
    for key, urdf in (("tau_max", robot.effort_limit()), ("v_max", robot.velocity_limit())):
        value = motors.get(key, urdf)
        if np.ndim(value) == 0:
            value = np.full(robot.na, float(value))
        array = as_vector(f"[motors] {key} of the robot spec", value, robot.na, finite=False)
        limits.append(np.where(array > 0, array, np.inf))
    return limits[0], limits[1]
