"""Task base classes: a task turns (t, q, v, data) into one affine constraint.

Three families, by the variable the constraint is linear in (TSID's TaskMotion,
TaskContactForce, TaskActuation): motion tasks constrain the accelerations dv (size nv),
force tasks the contact forces f, actuation tasks the joint torques tau (size na).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tsid_py.constraints import ConstraintBase, ConstraintEquality
from tsid_py.validation import as_gain, as_mask, mask_rows

if TYPE_CHECKING:
    import pinocchio as pin

    from tsid_py.contacts.contact_base import ContactBase
    from tsid_py.robot_wrapper import RobotWrapper


class TaskBase:
    """A named task on a robot. Subclasses set ``family`` and implement :meth:`compute`."""

    family: str = ""

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        self.name = name
        self.robot = robot

    @property
    def constraint(self) -> ConstraintBase:
        """The constraint, as last computed."""
        return self._constraint

    def compute(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> ConstraintBase:
        """Fill and return the task's constraint at time t [s] from the state (q, v) and ``data``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class TaskMotion(TaskBase):
    """A task on accelerations: its constraint is J dv = a* - drift (or bounds on dv).

    A formulation computes it with :meth:`compute_into`: the rows go straight into the
    formulation's own rows, and the task's constraint is refreshed from them when it is next read.
    A task computed on its own (:meth:`compute`) writes only its own constraint, so it never
    changes a problem already built. Subclasses write through :meth:`_target` to take part.
    """

    family = "motion"
    _out: ConstraintEquality | None = None  # where compute writes, during compute_into
    _stale_from: ConstraintEquality | None = None  # rows newer than the task's own constraint

    @property
    def constraint(self) -> ConstraintBase:
        """The constraint, as last computed."""
        stale = self._stale_from
        if stale is not None:
            self._stale_from = None
            self._constraint.matrix[...] = stale.matrix
            self._constraint.vector[...] = stale.vector
        return self._constraint

    def compute_into(
        self,
        t: float,
        q: np.ndarray,
        v: np.ndarray,
        data: pin.Data,
        out: ConstraintEquality,
        source: ConstraintBase,
    ) -> ConstraintEquality | None:
        """:meth:`compute` with the rows written into ``out``, e.g. views of a formulation's rows,
        laid out (and filled) for ``source``, the task's constraint then. None, with nothing
        computed, when the task has replaced its constraint since (a new mask)."""
        if self._constraint is not source:
            return None
        self._out = out
        try:
            written = self.compute(t, q, v, data)
        finally:
            self._out = None
        if written is out:
            self._stale_from = out
        else:  # a task that writes its own constraint: copy its rows
            out.matrix[...] = written.matrix
            out.vector[...] = written.vector
        return out

    def _target(self) -> ConstraintEquality:
        """The constraint :meth:`compute` writes: the rows given to :meth:`compute_into`, else the
        task's own constraint."""
        out = self._out
        if out is not None:
            return out
        self._stale_from = None
        return self._constraint


class TaskActuation(TaskBase):
    """A task on joint torques tau (size na).

    ``selected_joints`` (a slice or indices) says the constraint matrix is the rows of the
    identity for those joints, so the formulation can copy rows of its torque map instead of
    multiplying by the matrix; None (the default) means a general matrix.
    """

    family = "actuation"
    selected_joints: slice | np.ndarray | None = None


class TaskContactForce(TaskBase):
    """A task on contact forces: on every force variable, or on those of ``contact_name`` if set."""

    family = "force"
    contact_name: str | None = None

    def set_contacts(self, contacts: list[tuple[ContactBase, int]]) -> None:
        """The active contacts with the offsets of their force variables in f, given by the formulation
        before every compute (TSID's ``setContactList``); tasks that do not need them ignore them."""


class PdGains:
    """Proportional-derivative gains ``kp``, ``kd`` of a fixed size.

    ``kd`` defaults to critical damping, 2 sqrt(kp), until it is set.
    """

    def __init__(self, size: int, kp: float = 0.0) -> None:
        self._size = size
        self._kp = np.full(size, kp)
        self._kd_set: np.ndarray | None = None
        self._kd = 2.0 * np.sqrt(self._kp)

    @property
    def kp(self) -> np.ndarray:
        """Proportional gains [1/s^2]."""
        return self._kp

    @kp.setter
    def kp(self, value: object) -> None:
        self._kp = as_gain("kp", value, self._size)
        if self._kd_set is None:
            self._kd = 2.0 * np.sqrt(self._kp)

    @property
    def kd(self) -> np.ndarray:
        """Derivative gains [1/s]; 2 sqrt(kp) when never set."""
        return self._kd

    @kd.setter
    def kd(self, value: object) -> None:
        self._kd = self._kd_set = as_gain("kd", value, self._size)


class Masked:
    """A 0/1 ``mask`` over a task's rows or joints, read as floats and stored as booleans.

    Setting it validates the values, stores the selected rows as ``_rows`` (a slice when they are
    contiguous; ``_all_rows`` says whether every row is kept) and lets the task rebuild its
    constraint in ``_apply_mask``; ``_mask_size`` says how
    many entries it has and what they mean.
    """

    _mask: np.ndarray
    _rows: slice | np.ndarray
    _all_rows: bool

    @property
    def mask(self) -> np.ndarray:
        """The mask, one 0/1 float per entry (see the task's ``_mask_size``)."""
        return self._mask.astype(float)

    @mask.setter
    def mask(self, value: object) -> None:
        self._mask = as_mask("mask", value, self._mask_size())
        self._rows = mask_rows(self._mask)
        self._all_rows = bool(self._mask.all())
        self._apply_mask()
        self._stale_from = None  # a new constraint: no rows of the old one to read back

    def _mask_size(self) -> int:
        raise NotImplementedError

    def _apply_mask(self) -> None:
        raise NotImplementedError


class GainVector:
    """A gain attribute (e.g. ``kp``) validated on assignment: a scalar or a vector of the owner's
    ``gain_size``, every entry >= 0, stored as a vector. The docstring given states its unit."""

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self._name, self._attribute = name, f"_{name}"

    def __get__(self, task: object, owner: type | None = None) -> np.ndarray:
        if task is None:
            return self  # type: ignore[return-value]
        return getattr(task, self._attribute)

    def __set__(self, task: object, value: object) -> None:
        setattr(task, self._attribute, as_gain(self._name, value, task.gain_size))  # type: ignore[attr-defined]


class TaskMotionTracking(Masked, TaskMotion, PdGains):
    """A motion task that tracks an error of ``size`` components with PD gains.

    The constraint is J dv = a* - drift on the rows the 0/1 ``mask`` (one entry per component)
    selects, with a* = Kp e + Kd de (+ a feed-forward) computed by the subclass. The last
    ``position_error``, ``velocity_error``, ``desired_acceleration`` and drift are kept, all
    components, in the units of the task.
    """

    def __init__(self, name: str, robot: RobotWrapper, size: int) -> None:
        TaskMotion.__init__(self, name, robot)
        PdGains.__init__(self, size)
        self.position_error = np.zeros(size)
        self.velocity_error = np.zeros(size)
        self.desired_acceleration = np.zeros(size)
        self._drift = np.zeros(size)
        self.mask = np.ones(size)

    def _mask_size(self) -> int:
        return self._size

    def _apply_mask(self) -> None:
        self._constraint = ConstraintEquality(self.name, int(self._mask.sum()), self.robot.nv)

    def _fill(self, jacobian: np.ndarray, desired: np.ndarray, drift: np.ndarray) -> ConstraintEquality:
        """The constraint J dv = desired - drift on the masked rows (all components given); with
        every row kept, no row selection is made."""
        constraint = self._target()
        if self._all_rows:
            constraint.matrix[...] = jacobian
            np.subtract(desired, drift, out=constraint.vector)
        else:
            rows = self._rows
            constraint.matrix[...] = jacobian[rows]
            np.subtract(desired[rows], drift[rows], out=constraint.vector)
        return constraint

    def get_acceleration(self, dv: np.ndarray) -> np.ndarray:
        """The task-space acceleration J dv + drift implied by dv, on the masked rows."""
        return self.constraint.matrix @ dv + self._drift[self._rows]
