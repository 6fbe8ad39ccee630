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

from tsid_py.constraints import ConstraintBase, ConstraintBound, Kind, new_constraint
from tsid_py.errors import DimensionError, TsidError
from tsid_py.sealed import Sealed

if TYPE_CHECKING:
    import pinocchio as pin

    from tsid_py.robot_wrapper import RobotWrapper


class TaskBase(Sealed):
    """A named task on a robot. Subclasses derive from one of the three families, the variable
    the constraint acts on (:class:`TaskMotion`: dv, :class:`TaskContactForce`: the contact
    forces, :class:`TaskActuation`: tau), set ``kind`` and implement ``dim`` and :meth:`fill`
    (see the module docstring).

    Attributes:
        kind: A :class:`~tsid_py.constraints.Kind`: ``EQUALITY`` (A y = b), ``INEQUALITY``
            (lb <= A y <= ub) or ``BOUND`` (lb <= y <= ub).
    """

    kind: ClassVar[Kind] = Kind.EQUALITY

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
        if self.kind is Kind.BOUND:  # the formulation holds it as rows of an inequality
            copy = cast(ConstraintBound, new_constraint(Kind.BOUND, self.name, self.dim, self.dim))
            copy.lower_bound, copy.upper_bound = last.lower_bound.copy(), last.upper_bound.copy()
            return copy
        copy = last.copy()
        copy.name = self.name
        return copy

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class TaskMotion(TaskBase):
    """A task on accelerations dv: J dv = a* - drift (an equality), or bounds on J dv or on dv."""

    @property
    def cols(self) -> int:
        return self.robot.nv


class TaskActuation(TaskBase):
    """A task on joint torques tau (size na).

    ``selected_joints`` (a slice or indices) says the constraint matrix is the rows of the
    identity for those joints, so the formulation can copy rows of its torque map instead of
    multiplying by the matrix; None (the default) means a general matrix.
    """

    selected_joints: slice | np.ndarray | None = None

    @property
    def cols(self) -> int:
        return self.robot.na


class TaskContactForce(TaskBase):
    """A task on contact forces: on every force variable, or on those of ``contact_name`` if set.

    The formulation gives the task its contacts with the offsets of their force variables in f
    (:meth:`set_contacts`) whenever they change, before it fills the task.
    """

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
