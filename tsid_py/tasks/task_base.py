"""Task base classes: a task turns (t, q, v, data) into one affine constraint.

Three families, by the variable the constraint is linear in (TSID's TaskMotion,
TaskContactForce, TaskActuation): motion tasks constrain the accelerations dv (size nv),
force tasks the contact forces f, actuation tasks the joint torques tau (size na).

How a task computes -- the one rule, for whoever writes a task:

    A task implements ``dim`` (its number of rows) and ``fill(t, q, v, data, out)``. ``out`` is a
    constraint of the task's ``kind`` with ``dim`` rows and ``cols`` columns, owned by the caller
    (the formulation hands a view of its own buffers, refilled every control step; ``compute``
    hands a fresh one). ``fill`` writes every entry of ``out.matrix`` and of ``out.vector`` (an
    equality) or ``out.lower_bound`` and ``out.upper_bound`` (an inequality or bound), reading the
    robot through ``data``, and keeps no reference to ``out``. Entries that have not changed since
    the task last filled this same ``out`` may be left as they are (``self.refilling(out)``).

Everything else -- gains, masks, buffers, shape checks, mapping onto x = [dv; f] -- is the
library's. For a motion task that tracks an error, :class:`TaskMotionTracking` asks only for the
error, its Jacobian and its drift. :func:`tsid_py.testing.assert_task_derivatives` checks them
against finite differences.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np

from tsid_py.constraints import ConstraintBase, ConstraintBound, ConstraintEquality, new_constraint
from tsid_py.errors import DimensionError, TsidError
from tsid_py.sealed import Sealed
from tsid_py.validation import as_gain, as_mask, as_vector, mask_rows, read_only

if TYPE_CHECKING:
    import pinocchio as pin

    from tsid_py.robot_wrapper import RobotWrapper


class TaskBase(Sealed):
    """A named task on a robot. Subclasses set ``family`` and ``kind`` and implement ``dim`` and
    :meth:`fill` (see the module docstring).

    Attributes:
        family: ``"motion"`` (the constraint acts on dv), ``"force"`` (on contact forces) or
            ``"actuation"`` (on tau).
        kind: ``"equality"`` (A y = b), ``"inequality"`` (lb <= A y <= ub) or ``"bound"``
            (lb <= y <= ub).
    """

    family: ClassVar[str] = ""
    kind: ClassVar[str] = "equality"

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        self.name = name
        self.robot = robot
        self._last = SimpleNamespace(out=None)  # what the last computation left: where fill wrote, ...

    @property
    def dim(self) -> int:
        """Number of rows of the constraint."""
        raise NotImplementedError(f"{type(self).__name__} must define dim")

    @property
    def cols(self) -> int:
        """Size of the variable the constraint acts on (nv, na, or the contact forces)."""
        raise NotImplementedError

    def fill(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data, out: Any) -> None:
        """Write the constraint at time t [s], state (q, v) and ``data`` into ``out`` (module docstring).

        ``out`` is a constraint of the task's ``kind``: each task annotates it with its class."""
        raise NotImplementedError(f"{type(self).__name__} must implement fill")

    def refilling(self, out: ConstraintBase) -> bool:
        """Whether ``out`` is the constraint this task filled last (the formulation hands the same
        one at every step of a layout, and nothing else writes it: the problem and the QP it hands
        out are read-only): a matrix that did not change since need not be written again."""
        return out is self._last.out

    def compute_into(
        self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data, out: ConstraintBase
    ) -> None:
        """:meth:`fill` ``out`` and remember it as the task's last constraint (see :attr:`constraint`).

        ``out`` is the caller's, and only this task writes it between two calls with the same
        ``out`` (see :meth:`refilling`). A shape mismatch between what the task wrote and ``out``
        raises :class:`DimensionError` naming the task.
        """
        try:
            self.fill(t, q, v, data, out)
        except TsidError:
            raise
        except (ValueError, TypeError) as error:
            if out.rows != self.dim:
                raise DimensionError(
                    f"task {self.name!r}: its constraint has {self.dim} rows, the problem has {out.rows} "
                    "for it (was its mask changed during the step?)"
                ) from error
            raise DimensionError(
                f"task {self.name!r} wrote arrays of the wrong shape into its {out.rows} x {out.cols} "
                f"constraint: {error}"
            ) from error
        self._last.out = out

    def compute(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> ConstraintBase:
        """The constraint at time t [s] from the state (q, v) and ``data``: a new one, the caller's.
        (q, v are checked and read as float vectors: lists, columns and ``np.matrix`` work.)"""
        if q is not None and v is not None:  # tasks on forces or torques may be given no state
            q, v = self.robot.check_state(q, v)
        out = new_constraint(self.kind, self.name, self.dim, self.cols)
        self.compute_into(t, q, v, data, out)
        return out.copy()

    @property
    def constraint(self) -> ConstraintBase:
        """A copy of the constraint as last computed (zeros before the first computation).

        The library remembers where :meth:`fill` wrote last (the formulation's rows, or the
        constraint of :meth:`compute`) and copies it out here, as a constraint of the task's kind.
        """
        last = self._last.out
        if last is None or last.rows != self.dim:
            return new_constraint(self.kind, self.name, self.dim, self.cols)
        if self.kind == "bound":  # the formulation holds it as rows of an inequality
            copy = cast(ConstraintBound, new_constraint("bound", self.name, self.dim, self.dim))
            copy.lower_bound, copy.upper_bound = last.lower_bound.copy(), last.upper_bound.copy()
            return copy
        copy = last.copy()
        copy.name = self.name
        return copy

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class TaskMotion(TaskBase):
    """A task on accelerations dv: J dv = a* - drift (an equality), or bounds on J dv or on dv."""

    family = "motion"

    @property
    def cols(self) -> int:
        return self.robot.nv


class TaskActuation(TaskBase):
    """A task on joint torques tau (size na).

    ``selected_joints`` (a slice or indices) says the constraint matrix is the rows of the
    identity for those joints, so the formulation can copy rows of its torque map instead of
    multiplying by the matrix; None (the default) means a general matrix.
    """

    family = "actuation"
    selected_joints: slice | np.ndarray | None = None

    @property
    def cols(self) -> int:
        return self.robot.na


class TaskContactForce(TaskBase):
    """A task on contact forces: on every force variable, or on those of ``contact_name`` if set.

    The formulation gives the task its contacts with the offsets of their force variables in f
    (:meth:`set_contacts`) whenever they change, before it fills the task.
    """

    family = "force"
    contact_name: str | None = None

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        super().__init__(name, robot)
        self._contacts: list[tuple[Any, int]] = []  # (ContactBase, offset): tasks do not import contacts

    def set_contacts(self, contacts: list[tuple[Any, int]]) -> None:
        """The active contacts with the offsets of their force variables in f (TSID's
        ``setContactList``); a task on one contact's forces uses only that contact's."""
        self._contacts = list(contacts)

    @property
    def cols(self) -> int:
        return sum(contact.n_force for contact, _ in self._contacts)


class PdGains:
    """Proportional-derivative gains ``kp``, ``kd`` of a fixed size.

    ``kd`` defaults to critical damping, 2 sqrt(kp), until it is set.
    """

    def __init__(self, size: int, kp: float = 0.0) -> None:
        self._gain_size = size
        self._kp = np.full(size, kp)
        self._kd_set = False
        self._kd = 2.0 * np.sqrt(self._kp)

    @property
    def kp(self) -> np.ndarray:
        """Proportional gains [1/s^2] (a read-only copy: set them with ``task.kp = ...``)."""
        return read_only(self._kp.copy())

    @kp.setter
    def kp(self, value: object) -> None:
        self._kp = as_gain("kp", value, self._gain_size)
        if not self._kd_set:
            self._kd = 2.0 * np.sqrt(self._kp)

    @property
    def kd(self) -> np.ndarray:
        """Derivative gains [1/s] (a read-only copy); 2 sqrt(kp) when never set."""
        return read_only(self._kd.copy())

    @kd.setter
    def kd(self, value: object) -> None:
        self._kd = as_gain("kd", value, self._gain_size)
        self._kd_set = True


class Masked:
    """A 0/1 ``mask`` over a task's rows or joints, read as floats and stored as booleans.

    Setting it validates the values and keeps the selected entries as ``_rows`` (a slice when
    they are contiguous; ``_all_rows`` says whether every entry is kept), then calls
    ``_apply_mask`` so the task can rebuild what depends on it; ``_mask_size`` says how many
    entries the mask has and what they mean. ``dim`` is the number of entries kept.
    """

    _last: SimpleNamespace  # the task's
    _mask: np.ndarray
    _rows: slice | np.ndarray
    _all_rows: bool
    _dim: int

    @property
    def mask(self) -> np.ndarray:
        """The mask, one 0/1 float per entry (see the task's ``_mask_size``; read-only: set it
        with ``task.mask = ...``)."""
        return read_only(self._mask.astype(float))

    @mask.setter
    def mask(self, value: object) -> None:
        self._mask = as_mask("mask", value, self._mask_size())
        self._rows = mask_rows(self._mask)
        self._all_rows = bool(self._mask.all())
        self._dim = int(self._mask.sum())
        self._last.out = None  # what the task filled with the old mask is not its constraint any more
        self._apply_mask()

    @property
    def dim(self) -> int:
        """Number of rows: the entries the mask keeps."""
        return self._dim

    def _mask_size(self) -> int:
        raise NotImplementedError

    def _apply_mask(self) -> None:
        """Rebuild what depends on the mask (nothing by default)."""


class MaskedActuatedJoints(Masked):
    """A mask over the actuated joints (0/1 per joint) for a task on tau whose rows are those of
    the joints it keeps: ``_selection`` is S_mask (kept joints x na) and ``selected_joints`` tells
    the formulation to take those rows of its torque map."""

    robot: RobotWrapper  # the task's
    selected_joints: slice | np.ndarray | None
    _selection: np.ndarray

    def _mask_size(self) -> int:
        """mask: which actuated joints are bounded (0/1 per joint)."""
        return self.robot.na

    def _apply_mask(self) -> None:
        axes = np.flatnonzero(self._mask)
        self._selection = np.zeros((axes.size, self.robot.na))
        self._selection[np.arange(axes.size), axes] = 1.0
        self.selected_joints = self._rows


class GainVector:
    """A gain attribute (e.g. ``kp``) validated on assignment: a scalar or a vector of the owner's
    ``gain_size``, every entry >= 0, stored as a vector and read as a copy. The docstring given
    states its unit."""

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self._name, self._attribute = name, f"_{name}"

    def __get__(self, task: object, owner: type | None = None) -> np.ndarray:
        if task is None:
            return self  # type: ignore[return-value]
        return read_only(getattr(task, self._attribute).copy())

    def __set__(self, task: object, value: object) -> None:
        setattr(task, self._attribute, as_gain(self._name, value, task.gain_size))  # type: ignore[attr-defined]


class TrackingErrors:
    """The last ``position_error``, ``velocity_error`` and ``desired_acceleration`` of a PD task,
    every component, read as copies (the task keeps them in ``self._last``)."""

    _last: SimpleNamespace

    @property
    def position_error(self) -> np.ndarray:
        """e at the last computation, every component (a copy)."""
        return self._last.position_error.copy()

    @property
    def velocity_error(self) -> np.ndarray:
        """de at the last computation, every component (a copy)."""
        return self._last.velocity_error.copy()

    @property
    def desired_acceleration(self) -> np.ndarray:
        """a* at the last computation, every component (a copy)."""
        return self._last.desired_acceleration.copy()


class PdMotionTask(Masked, TaskMotion, PdGains, TrackingErrors):
    """A masked motion task with PD gains J dv = a* - drift, whose last errors are kept: the common
    part of :class:`TaskMotionTracking` and of the tasks that write their :meth:`fill` themselves
    (the SE3 and two-frame tasks, whose errors follow TSID's conventions).

    Subclasses keep the last ``position_error``, ``velocity_error``, ``desired_acceleration`` and
    ``drift`` (every component) in ``self._last`` when they fill, and write the rows with :meth:`_write`.
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
        """out: J dv = desired - drift on the masked rows (every component given)."""
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

    def get_acceleration(self, dv: object) -> np.ndarray:
        """The task-space acceleration J dv + drift implied by dv, on the masked rows."""
        dv = as_vector("dv", dv, self.robot.nv, copy=False)
        return self.constraint.matrix.dot(dv) + self._last.drift[self._rows]


class TaskMotionTracking(PdMotionTask):
    """A motion task that drives a task-space error e to zero with PD gains: write your own on it.

    A subclass gives the error e = x(q) - x_ref(t) (``size`` components), its Jacobian J = de/dq
    (size x nv, in the tangent space of q, so that de/dt = J v - dx_ref/dt) and its drift dJ/dt v
    (the task-space acceleration at dv = 0, size ``size``), by implementing
    :meth:`compute_error`, :meth:`compute_jacobian` and :meth:`compute_drift`; a moving reference
    also overrides :meth:`reference_derivatives`. The library does the rest: with gains ``kp`` and
    ``kd`` (``kd`` = 2 sqrt(kp) unless set),

        a* = ddx_ref - Kp e - Kd (J v - dx_ref),      constraint  J dv = a* - drift

    on the rows the 0/1 ``mask`` keeps; shapes are checked (:class:`DimensionError` naming the
    task). The last ``position_error``, ``velocity_error``, ``desired_acceleration`` and ``drift``
    are kept, every component, in the units of the task. Check a new task with
    :func:`tsid_py.testing.assert_task_derivatives`. The library's CoM task is written this way.

    Args:
        name: The task's name.
        robot: The robot.
        size: Number of error components.
    """

    def __init__(self, name: str, robot: RobotWrapper, size: int) -> None:
        super().__init__(name, robot, size)
        self._zero = np.zeros(size)
        self._zero.flags.writeable = False

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
        self._write(out, jacobian, desired, drift)
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
