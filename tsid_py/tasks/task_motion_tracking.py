"""Motion tasks that track an error with PD gains: :class:`TaskMotionTracking`, the base a task of
one's own is written on (docs/guides/custom-task.md), and :class:`PdMotionTask`, its common part
with the tasks that write their rows themselves."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tsid_py.constraints import ConstraintEquality
from tsid_py.errors import DimensionError
from tsid_py.tasks.task_base import TaskMotion, equality_as_computed
from tsid_py.tasks.task_parts import Masked, PdGains, TrackingErrors
from tsid_py.validation import as_vector

if TYPE_CHECKING:
    import pinocchio as pin

    from tsid_py.robot_wrapper import RobotWrapper


class PdMotionTask(Masked, TaskMotion, PdGains, TrackingErrors):
    """A masked motion task with PD gains, J dv = a* - drift, that keeps its last errors.

    The common part of :class:`TaskMotionTracking` and of the tasks that write their :meth:`fill`
    themselves: the SE3 and two-frame tasks, whose errors follow TSID's conventions. A subclass
    keeps the last ``position_error``, ``velocity_error``, ``desired_acceleration`` and ``drift``
    (every component) in ``self._last`` when it fills, and writes the rows with :meth:`_write`.
    """

    def __init__(self, name: str, robot: RobotWrapper, size: int) -> None:
        TaskMotion.__init__(self, name, robot)
        PdGains.__init__(self, size)
        self._size = size
        self._last.position_error = np.zeros(size)
        self._last.velocity_error = np.zeros(size)
        self._last.desired_acceleration = np.zeros(size)
        self._last.drift = np.zeros(size)
        self.mask = np.ones(size)

    @property
    def size(self) -> int:
        """Number of error components (before the mask)."""
        return self._size

    def _mask_size(self) -> int:
        return self._size

    def _write(
        self, out: ConstraintEquality, jacobian: np.ndarray, desired: np.ndarray, drift: np.ndarray
    ) -> None:
        """out: J dv = desired - drift on the masked rows (every component given). The task keeps
        J for :attr:`constraint` (an array of its own, or a copy)."""
        self._last.jacobian = jacobian
        if self._all_rows:
            out.matrix[...] = jacobian
            np.subtract(desired, drift, out=out.vector)
        else:
            rows = self._rows
            out.matrix[...] = jacobian[rows]
            np.subtract(desired[rows], drift[rows], out=out.vector)

    @property
    def drift(self) -> np.ndarray:
        """dJ v at the last computation, every component (a copy)."""
        return self._last.drift.copy()

    def _last_constraint(self) -> ConstraintEquality:
        """J dv = a* - drift on the masked rows, from the last J, a* and drift."""
        last, rows = self._last, self._rows
        return equality_as_computed(
            self.name, last.jacobian[rows], (last.desired_acceleration - last.drift)[rows]
        )

    def get_acceleration(self, dv: object) -> np.ndarray:
        """The task-space acceleration J dv + drift that dv gives, on the masked rows.

        Args:
            dv: Accelerations, size nv.
        """
        dv = as_vector("dv", dv, self.robot.nv, copy=False)
        return self.constraint.matrix.dot(dv) + self._last.drift[self._rows]


class TaskMotionTracking(PdMotionTask):
    """A motion task that drives a task-space error e to zero with PD gains: write your own on it.

    A subclass implements three methods:

    - :meth:`compute_error`: e = x(q) - x_ref(t), ``size`` components;
    - :meth:`compute_jacobian`: J = de/dq, size x nv, in the tangent space of q (so de/dt =
      J v - dx_ref/dt);
    - :meth:`compute_drift`: dJ/dt v, the task-space acceleration at dv = 0.

    A moving reference also overrides :meth:`reference_derivatives`. The library does the rest.
    With gains ``kp`` and ``kd`` (2 sqrt(kp) unless set), on the rows the 0/1 ``mask`` keeps:

        a* = ddx_ref - Kp e - Kd (J v - dx_ref),      constraint  J dv = a* - drift

    Shapes are checked: a wrong one raises :class:`DimensionError` naming the task. The last
    ``position_error``, ``velocity_error``, ``desired_acceleration`` and ``drift`` are kept, every
    component, in the task's units. Check a new task with
    :func:`tsid_py.testing.assert_task_derivatives`. The library's CoM, joint-coupling and posture
    tasks are written this way (the posture and CoM tasks also write :meth:`fill` out for speed,
    tested equal to this one).

    Args:
        name: The task's name.
        robot: The robot.
        size: Number of error components.
    """

    def __init__(self, name: str, robot: RobotWrapper, size: int) -> None:
        super().__init__(name, robot, size)
        self._zero = np.zeros(size)
        self._zero.flags.writeable = False
        self._kept_jacobian = np.zeros((size, robot.nv))  # J of the last fill, copied from the subclass's

    def _terms_are(self, owner: type) -> bool:
        """Whether the error, Jacobian, drift and reference derivatives are ``owner``'s: no
        subclass changed them, so a :meth:`fill` written out for ``owner`` computes them."""
        cls = type(self)
        return all(
            getattr(cls, name) is getattr(owner, name)
            for name in ("compute_error", "compute_jacobian", "compute_drift", "reference_derivatives")
        )

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
        """(dx_ref/dt, d^2x_ref/dt^2) at time t; zeros (a fixed reference) by default."""
        return self._zero, self._zero

    def fill(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data, out: ConstraintEquality) -> None:
        size, nv = self._size, self.robot.nv
        error = self.compute_error(t, q, v, data)
        jacobian = self.compute_jacobian(t, q, v, data)
        drift = self.compute_drift(t, q, v, data)
        if not (
            type(error) is type(jacobian) is type(drift) is np.ndarray  # the common case, checked at once
            and error.shape == drift.shape == (size,)
            and jacobian.shape == (size, nv)
            and error.dtype == jacobian.dtype == drift.dtype == np.float64
        ):
            error = self._checked("error", error, (size,))
            jacobian = self._checked("Jacobian", jacobian, (size, nv))
            drift = self._checked("drift", drift, (size,))
        velocity_ref, acceleration_ref = self.reference_derivatives(t)
        if not (
            type(velocity_ref) is type(acceleration_ref) is np.ndarray
            and velocity_ref.shape == acceleration_ref.shape == (size,)
        ):
            velocity_ref = self._checked("reference velocity", velocity_ref, (size,))
            acceleration_ref = self._checked("reference acceleration", acceleration_ref, (size,))
        velocity_error = jacobian.dot(v) - velocity_ref
        desired = acceleration_ref - self._kp * error
        desired -= self._kd * velocity_error
        self._kept_jacobian[...] = jacobian  # the subclass's array: it may reuse it
        self._write(out, self._kept_jacobian, desired, drift)
        self._last.position_error[...] = error  # copies: the subclass may return arrays it reuses
        self._last.drift[...] = drift
        self._last.velocity_error, self._last.desired_acceleration = velocity_error, desired

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
