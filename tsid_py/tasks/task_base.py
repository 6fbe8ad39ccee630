"""Task base classes: a task turns (t, q, v, data) into one affine constraint.

Three families, by the variable the constraint is linear in, as TSID's: :class:`TaskMotion` on
the accelerations dv (size nv), :class:`TaskContactForce` on the contact forces f,
:class:`TaskActuation` on the joint torques tau (size na). How each enters the problem:
docs/concepts/formulation.md, section "Tasks". Writing a task: docs/guides/custom-task.md.

A task implements ``dim`` and :meth:`TaskBase.fill`. The library does the rest: gains, masks,
buffers, shape checks, the mapping onto x = [dv; f].
"""

from __future__ import annotations

import weakref
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np

from tsid_py.constraints import (
    ConstraintBase,
    ConstraintBound,
    ConstraintEquality,
    ConstraintInequality,
    Kind,
    new_constraint,
)
from tsid_py.errors import DimensionError, TsidError
from tsid_py.sealed import Sealed

if TYPE_CHECKING:
    import pinocchio as pin

    from tsid_py.robot_wrapper import RobotWrapper


class TaskBase(Sealed):
    """A named task on a robot.

    A subclass derives from one of the three families (:class:`TaskMotion`,
    :class:`TaskContactForce`, :class:`TaskActuation`), sets ``kind`` and implements ``dim`` and
    :meth:`fill`.

    Attributes:
        kind: A :class:`~tsid_py.constraints.Kind`: ``EQUALITY`` (A y = b), ``INEQUALITY``
            (lb <= A y <= ub) or ``BOUND`` (lb <= y <= ub).
    """

    kind: ClassVar[Kind] = Kind.EQUALITY
    _constraint_follows_fill: ClassVar[bool] = True  # the class's _last_constraint makes what its fill writes

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls._constraint_follows_fill = _made_for_its_fill(cls)  # once per class, not per read

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        self.name = name
        self.robot = robot
        # what the last computation left: whether there was one, a weak reference to where fill
        # wrote (for refilling), and what the task keeps to answer its getters and ``constraint``
        self._last = SimpleNamespace(filled=False, out=None)

    @property
    def dim(self) -> int:
        """Number of rows of the constraint."""
        raise NotImplementedError(f"{type(self).__name__} must define dim")

    def _set_watched(self, name: str, value: object) -> None:
        """A public attribute set on a task in a problem: the problem is told when the task's
        number of rows (``dim``: a mask) changed, what its layout takes from the task."""
        rows = self.dim
        object.__setattr__(self, name, value)
        if self.dim != rows:
            self._tell()

    @property
    def cols(self) -> int:
        """Size of the variable the constraint acts on (nv, na, or the contact forces)."""
        raise NotImplementedError

    def fill(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data, out: Any) -> None:
        """Write the constraint at (t, q, v) into ``out``. Each task implements it.

        Write every entry of ``out.matrix`` (not a bound's: its matrix is the identity), and of
        ``out.vector`` (an equality) or ``out.lower_bound`` and ``out.upper_bound``. Read the robot
        through ``data``. Keep no reference to ``out``, and write nowhere else. Entries that have
        not changed since the task last filled this same ``out`` may be left as they are
        (:meth:`refilling`).

        Args:
            t: Time [s].
            q: Configuration, size nq.
            v: Velocity, size nv.
            data: Pinocchio's data, filled at (q, v) with zero acceleration
                (``robot.compute_all_terms``).
            out: A constraint of the task's ``kind``, ``dim`` x ``cols``, owned by the caller. The
                formulation hands a view of its own rows, refilled every control step;
                :meth:`compute` hands a new one. Each task annotates it with its class.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement fill")

    def refilling(self, out: ConstraintBase) -> bool:
        """Whether ``out`` is the constraint this task filled last.

        The formulation hands the same ``out`` at every step of a layout, and nothing else writes
        it: the problem and the QP it hands out are read-only. So a matrix that did not change
        since need not be written again.
        """
        last = self._last.out
        return last is not None and last() is out

    def compute_into(
        self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data, out: ConstraintBase
    ) -> None:
        """:meth:`fill` ``out``, and remember that it did (for :meth:`refilling` and :attr:`constraint`).

        The arguments are those of :meth:`fill`. Between two calls with the same ``out``, only this
        task writes it (:meth:`refilling`).

        Raises:
            DimensionError: The task wrote arrays whose shapes do not fit ``out``; the message names
                the task.
        """
        last = self._last
        last.filled = False  # until fill has written all it keeps
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
        last.filled = True
        if last.out is None or last.out() is not out:
            last.out = weakref.ref(out)  # weak: the rows are their owner's, who may drop them

    def compute(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> ConstraintBase:
        """The constraint at (t, q, v), as a new constraint, the caller's.

        Args:
            t: Time [s].
            q: Configuration, size nq; checked and read as a float vector (a list, a column or an
                ``np.matrix`` works). A task on forces or torques may be given None.
            v: Velocity, size nv; as q.
            data: Pinocchio's data, filled at (q, v) by ``robot.compute_all_terms``.

        Returns:
            A constraint of the task's ``kind``, ``dim`` x ``cols``.
        """
        if q is not None and v is not None:  # tasks on forces or torques may be given no state
            q, v = self.robot.check_state(q, v)
        out = new_constraint(self.kind, self.name, self.dim, self.cols)
        self.compute_into(t, q, v, data, out)
        self._last.computed = out  # the task's own rows: held, so that the default constraint reads them
        return out.copy()

    @property
    def constraint(self) -> ConstraintBase:
        """The constraint as last computed, of the task's kind: a new one, the caller's (zeros
        before the first computation, and after a mask changed the rows).

        The library's tasks make it again from what they kept of that computation
        (:meth:`_last_constraint`): the terms their getters read, and the settings it used. They
        keep no reference to the rows they filled, which are their owner's (a formulation's).
        """
        if not self._last.filled:
            return new_constraint(self.kind, self.name, self.dim, self.cols)
        made = self._last_constraint() if self._constraint_follows_fill else TaskBase._last_constraint(self)
        made.name = self.name
        return made

    def _last_constraint(self) -> ConstraintBase:
        """The last computed constraint, a new one. A task that keeps its terms makes it from them
        (every task of the library does), and a subclass that writes its own :meth:`fill` writes
        its own ``_last_constraint`` too. By default: a copy of the rows :meth:`fill` wrote, while
        their owner keeps them (zeros once it dropped them)."""
        last = self._last.out() if self._last.out is not None else None
        if last is None or last.rows != self.dim:
            return new_constraint(self.kind, self.name, self.dim, self.cols)
        if self.kind == Kind.BOUND:  # (a Kind or its string) held as rows of an inequality
            copy = cast(ConstraintBound, new_constraint(Kind.BOUND, self.name, self.dim, self.dim))
            copy.lower_bound, copy.upper_bound = last.lower_bound, last.upper_bound  # copied in
            return copy
        return last.copy()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def equality_as_computed(name: str, matrix: np.ndarray, vector: np.ndarray | float) -> ConstraintEquality:
    """matrix y = vector as a new constraint, copied as computed (not validated, as
    :func:`inequality_as_computed`; a number for ``vector`` fills it)."""
    constraint = ConstraintEquality(name, *matrix.shape)
    constraint.matrix[...], constraint.vector[...] = matrix, vector
    return constraint


def inequality_as_computed(
    name: str, matrix: np.ndarray, lower: np.ndarray, upper: np.ndarray
) -> ConstraintInequality:
    """lower <= matrix y <= upper as a new constraint, copied as computed: not validated, since
    the bounds a task computes at a state beyond its limits may cross."""
    constraint = ConstraintInequality(name, *matrix.shape)
    constraint.matrix[...] = matrix
    constraint.lower_bound[...], constraint.upper_bound[...] = lower, upper
    return constraint


def _made_for_its_fill(cls: type) -> bool:
    """Whether the ``_last_constraint`` of ``cls`` makes what its ``fill`` writes: both are the
    library's, or the ``_last_constraint`` was written with or after the ``fill`` it follows (a
    subclass that overrides ``fill`` alone reads its rows instead, :meth:`TaskBase._last_constraint`)."""
    fill_owner = next(c for c in cls.__mro__ if "fill" in c.__dict__)
    made_owner = next(c for c in cls.__mro__ if "_last_constraint" in c.__dict__)
    return _is_library_class(fill_owner) or issubclass(made_owner, fill_owner)


def _is_library_class(cls: type) -> bool:
    return cls.__module__ == "tsid_py" or cls.__module__.startswith("tsid_py.")


class TaskMotion(TaskBase):
    """A task on accelerations dv: J dv = a* - drift (an equality), or bounds on J dv or on dv."""

    @property
    def cols(self) -> int:
        return self.robot.nv


class TaskActuation(TaskBase):
    """A task on the joint torques tau (size na).

    Attributes:
        selected_joints: A slice or indices when the constraint's matrix is the rows of the identity
            for those joints: the formulation then copies rows of its torque map instead of
            multiplying by the matrix. None (the default): a general matrix.
    """

    selected_joints: slice | np.ndarray | None = None

    @property
    def cols(self) -> int:
        return self.robot.na


class TaskContactForce(TaskBase):
    """A task on the contact forces: on every force variable, or on those of ``contact_name`` if set.

    The formulation hands the task its contacts (:meth:`set_contacts`) whenever they change,
    before it fills the task.
    """

    contact_name: str | None = None

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        super().__init__(name, robot)
        self._contacts: list[tuple[Any, int]] = []  # (ContactBase, offset): tasks do not import contacts

    def set_contacts(self, contacts: list[tuple[Any, int]]) -> None:
        """Take the active contacts (TSID's ``setContactList``).

        Args:
            contacts: (contact, offset) pairs, the offset the index of the contact's first force
                variable in f. A task on one contact's forces uses only that contact's.
        """
        self._contacts = list(contacts)

    @property
    def cols(self) -> int:
        return sum(contact.n_force for contact, _ in self._contacts)
