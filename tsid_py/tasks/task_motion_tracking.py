"""The motion task that drives a task-space error to zero with PD gains: the base of the library's
tracking tasks (CoM, posture, joint coupling, SE3, two frames, a line contact's hold) and of a task
of one's own (docs/guides/custom-task.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from tsid_py.constraints import ConstraintEquality
from tsid_py.errors import DimensionError
from tsid_py.tasks.task_base import TaskMotion, TaskState
from tsid_py.tasks.task_parts import Gain, Mask
from tsid_py.validation import as_vector

if TYPE_CHECKING:
    import pinocchio as pin

    from tsid_py.robot_wrapper import RobotWrapper
    from tsid_py.trajectories import TrajectorySample

FLOAT = np.dtype(np.float64)  # numpy's builtin dtypes are singletons: compared by identity
Terms = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # e, J, drift, dx_ref, ddx_ref


@dataclass(slots=True, kw_only=True)
class TrackingState(TaskState):
    """What a tracking task's last computation left, every component (before the mask).

    Attributes:
        position_error: e.
        velocity_error: de.
        desired_acceleration: a*.
        drift: dJ v, the task-space acceleration at dv = 0.
        constant_jacobian: The read-only Jacobian last written, when the task returns one (its
            rows are then written once per layout, not at every step).
    """

    position_error: np.ndarray
    velocity_error: np.ndarray
    desired_acceleration: np.ndarray
    drift: np.ndarray
    constant_jacobian: np.ndarray | None = None


class TaskMotionTracking(TaskMotion):
    """A motion task that drives a task-space error e to zero with PD gains: write your own on it.

    A subclass implements three methods:

    - :meth:`compute_error`: e = x(q) - x_ref(t), ``size`` components;
    - :meth:`compute_jacobian`: J = de/dq, size x nv, in the tangent space of q (so de/dt =
      J v - dx_ref/dt);
    - :meth:`compute_drift`: dJ/dt v, the task-space acceleration at dv = 0.

    A moving reference also overrides :meth:`reference_derivatives`. A task that computes these
    terms together overrides :meth:`compute_terms` instead. The library does the rest. With gains
    ``kp`` and ``kd`` (2 sqrt(kp) unless set), on the rows the 0/1 ``mask`` keeps:

        de = J v - dx_ref,   a* = ddx_ref - Kp e - Kd de,      constraint  J dv = a* - drift

    A task whose error points to the reference (TSID's SE3 and two-frame tasks: e = x_ref (-) x)
    sets ``error_points_to_reference``: then de = dx_ref - J v and a* = ddx_ref + Kp e + Kd de,
    the same a*.

    Shapes are checked: a wrong one raises :class:`DimensionError` naming the task. The last
    ``position_error``, ``velocity_error``, ``desired_acceleration`` and ``drift`` are kept, every
    component, in the task's units. A Jacobian returned read-only, the same array at every step
    (a constant one), is written into the rows once per layout. Check a new task with
    :func:`tsid_py.testing.assert_task_derivatives`.

    Args:
        name: The task's name.
        robot: The robot.
        size: Number of error components.
    """

    kp = Gain("Proportional gains [1/s^2], one per error component.", damps="kd")
    kd = Gain("Derivative gains [1/s], one per error component; 2 sqrt(kp) until set.")
    mask = Mask("Which error components are rows of the constraint (0/1 each; read-only copy).")
    error_points_to_reference: ClassVar[bool] = False
    _kp: np.ndarray
    _kd: np.ndarray
    _state: TrackingState

    def __init__(self, name: str, robot: RobotWrapper, size: int) -> None:
        super().__init__(name, robot)
        self._size = size
        self._state = TrackingState(
            position_error=np.zeros(size),
            velocity_error=np.zeros(size),
            desired_acceleration=np.zeros(size),
            drift=np.zeros(size),
        )
        self._zero = np.zeros(size)
        self._zero.flags.writeable = False
        self._shapes = (size,), (size, robot.nv)  # of e, drift, dx_ref, ddx_ref; of J
        self.kp = 0.0
        self.mask = np.ones(size)

    @property
    def size(self) -> int:
        """Number of error components (before the mask)."""
        return self._size

    @property
    def gain_size(self) -> int:
        """Number of gains: one per error component."""
        return self._size

    def _mask_size(self) -> int:
        return self._size

    # ---------------------------------------------------------------- what a subclass writes
    def compute_error(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> np.ndarray:
        """e = x(q) - x_ref(t), size ``size``."""
        raise NotImplementedError(f"{type(self).__name__} must implement compute_error")

    def compute_jacobian(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> np.ndarray:
        """J = de/dq, size x nv (q moves as q (+) dq, Pinocchio's integrate)."""
        raise NotImplementedError(f"{type(self).__name__} must implement compute_jacobian")

    def compute_drift(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> np.ndarray:
        """dJ/dt v: the acceleration of x at dv = 0, size ``size``."""
        raise NotImplementedError(f"{type(self).__name__} must implement compute_drift")

    def reference_derivatives(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """(dx_ref/dt, d^2x_ref/dt^2) at time t; by default ``self._zero`` twice, a fixed reference
        (which the fill then need not add)."""
        return self._zero, self._zero

    def compute_terms(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> Terms:
        """(e, J, drift, dx_ref, ddx_ref) at (t, q, v): by default from the four methods above,
        their shapes checked. A task that computes them together overrides this one."""
        error = self.compute_error(t, q, v, data)
        jacobian = self.compute_jacobian(t, q, v, data)
        drift = self.compute_drift(t, q, v, data)
        velocity_ref, acceleration_ref = self.reference_derivatives(t)
        vector, matrix = self._shapes
        if not (
            type(error)
            is type(jacobian)
            is type(drift)
            is type(velocity_ref)
            is type(acceleration_ref)
            is np.ndarray
            and error.shape == vector  # the common case, checked at once
            and drift.shape == vector
            and velocity_ref.shape == vector
            and acceleration_ref.shape == vector
            and jacobian.shape == matrix
            and error.dtype is jacobian.dtype is drift.dtype is FLOAT
        ):
            error = self._checked("error", error, vector)
            jacobian = self._checked("Jacobian", jacobian, matrix)
            drift = self._checked("drift", drift, vector)
            velocity_ref = self._checked("reference velocity", velocity_ref, vector)
            acceleration_ref = self._checked("reference acceleration", acceleration_ref, vector)
        return error, jacobian, drift, velocity_ref, acceleration_ref

    def _derivatives_of(self, reference: TrajectorySample) -> tuple[np.ndarray, np.ndarray]:
        """A reference sample's (vel, acc), or ``self._zero`` twice when both are zero (a reference
        at rest: the fill then adds nothing), for :meth:`reference_derivatives`."""
        if np.count_nonzero(reference.vel) or np.count_nonzero(reference.acc):
            return reference.vel, reference.acc
        return self._zero, self._zero

    # ------------------------------------------------------------------------ the rows
    def fill(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data, out: ConstraintEquality) -> None:
        """J dv = a* - drift on the masked rows (class docstring), from :meth:`compute_terms`."""
        error, jacobian, drift, velocity_ref, acceleration_ref = self.compute_terms(t, q, v, data)
        state, fixed = self._state, velocity_ref is acceleration_ref is self._zero  # a fixed reference
        velocity = jacobian.dot(v)
        if self.error_points_to_reference:  # de = dx_ref - J v, a* = ddx_ref + Kp e + Kd de
            velocity_error = np.negative(velocity, out=velocity) if fixed else velocity_ref - velocity
            desired = self._kp * error
            desired += self._kd * velocity_error
            if not fixed:
                desired += acceleration_ref
        elif fixed:  # de = J v, a* = -(Kp e + Kd de)
            velocity_error = velocity
            desired = self._kp * error
            desired += self._kd * velocity_error
            np.negative(desired, out=desired)
        else:  # de = J v - dx_ref, a* = ddx_ref - Kp e - Kd de
            velocity_error = np.subtract(velocity, velocity_ref, out=velocity)
            desired = acceleration_ref - self._kp * error
            desired -= self._kd * velocity_error
        state.position_error[...] = error  # copies: a task may return arrays it reuses
        state.drift[...] = drift
        state.velocity_error, state.desired_acceleration = velocity_error, desired
        constant = not jacobian.flags.writeable
        if not (constant and jacobian is state.constant_jacobian and state.rows is out):  # refilling(out)
            out.matrix[...] = jacobian if self._all_rows else jacobian[self._rows]
        state.constant_jacobian = jacobian if constant else None
        if self._all_rows:
            np.subtract(desired, drift, out=out.vector)
        else:
            np.subtract(desired[self._rows], drift[self._rows], out=out.vector)

    def _checked(self, what: str, value: object, shape: tuple[int, ...]) -> np.ndarray:
        """``value`` as a float array of ``shape``, else a DimensionError naming the task."""
        if type(value) is np.ndarray and value.shape == shape and value.dtype == np.float64:
            return value
        if np.iscomplexobj(value):  # type: ignore[arg-type]  # any value: numpy tells
            raise DimensionError(f"task {self.name!r}: its {what} must be real numbers, got complex ones")
        try:
            array = np.asarray(value, dtype=float)
        except (TypeError, ValueError) as error:
            raise DimensionError(f"task {self.name!r}: its {what} must be numbers, got {value!r}") from error
        if array.shape != shape:
            raise DimensionError(f"task {self.name!r}: its {what} must have shape {shape}, got {array.shape}")
        return array

    # ------------------------------------------------------------------------ read-outs
    @property
    def position_error(self) -> np.ndarray:
        """e at the last computation, every component (a copy)."""
        return self._state.position_error.copy()

    @property
    def velocity_error(self) -> np.ndarray:
        """de at the last computation, every component (a copy)."""
        return self._state.velocity_error.copy()

    @property
    def desired_acceleration(self) -> np.ndarray:
        """a* at the last computation, every component (a copy)."""
        return self._state.desired_acceleration.copy()

    @property
    def drift(self) -> np.ndarray:
        """dJ v at the last computation, every component (a copy)."""
        return self._state.drift.copy()

    def get_acceleration(self, dv: object) -> np.ndarray:
        """The task-space acceleration J dv + drift that dv gives, on the masked rows.

        Args:
            dv: Accelerations, size nv.
        """
        dv = as_vector("dv", dv, self.robot.nv, copy=False)
        return self.constraint.matrix.dot(dv) + self._state.drift[self._rows]
