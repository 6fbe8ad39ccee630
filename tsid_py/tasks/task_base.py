"""Task base classes: a task turns (t, q, v, data) into one affine constraint.

Three families, by the variable the constraint is linear in, as TSID's: :class:`TaskMotion` on
the accelerations dv (size nv), :class:`TaskContactForce` on the contact forces f,
:class:`TaskActuation` on the joint torques tau (size na). How each enters the problem:
docs/concepts/formulation.md, section "Tasks". Writing a task: docs/guides/custom-task.md.

A task implements ``dim`` and :meth:`TaskBase.fill`. The library does the rest: gains, masks,
buffers, shape checks, the mapping onto x = [dv; f].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np

from tsid_py.constraints import ConstraintBase, ConstraintBound, Kind, new_constraint
from tsid_py.errors import DimensionError, TsidError
from tsid_py.sealed import Sealed
from tsid_py.tasks.task_parts import joint_selection

if TYPE_CHECKING:
    import pinocchio as pin

    from tsid_py.robot_wrapper import RobotWrapper


@dataclass(slots=True, kw_only=True)
class TaskState:
    """What a task's last computation left.

    Attributes:
        rows: The rows it wrote: its owner's (a formulation's, refilled at every control step) or
            those :meth:`TaskBase.compute` made. None before the first computation, after one that
            failed, and after a new mask changed the rows.
    """

    rows: ConstraintBase | None = None


class TaskBase(Sealed):
    """A named task on a robot.

    A subclass derives from one of the three families (:class:`TaskMotion`,
    :class:`TaskContactForce`, :class:`TaskActuation`), sets ``kind`` and implements ``dim`` and
    :meth:`fill`. What a computation leaves for the next step and for the getters lives in
    ``self._state``, a :class:`TaskState` (a task with more to keep gives it a subclass).

    Attributes:
        kind: A :class:`~tsid_py.constraints.Kind`: ``EQUALITY`` (A y = b), ``INEQUALITY``
            (lb <= A y <= ub) or ``BOUND`` (lb <= y <= ub).
    """

    kind: ClassVar[Kind] = Kind.EQUALITY
    _dim: int  # the rows, for a task whose mask or constructor sets them
    _mask: np.ndarray  # a masked task's (tsid_py.tasks.task_parts.Mask): the mask, the entries it
    _rows: slice | np.ndarray  # keeps, whether it keeps them all
    _all_rows: bool
    _state: TaskState

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        self.name = name
        self.robot = robot
        self._state = TaskState()  # a task with more to keep replaces it with its own

    @property
    def dim(self) -> int:
        """Number of rows of the constraint."""
        try:
            return self._dim
        except AttributeError:
            raise NotImplementedError(f"{type(self).__name__} must define dim") from None

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
        """Write the constraint at (t, q, v) into ``out``: the one place a task writes its rows.

        Write every entry of ``out.matrix`` (not a bound's: its matrix is the identity), and of
        ``out.vector`` (an equality) or ``out.lower_bound`` and ``out.upper_bound``. Read the robot
        through ``data``. Write nowhere else. Entries that have not changed since the task last
        filled this same ``out`` may be left as they are (:meth:`refilling`).

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
        """Whether ``out`` holds what this task wrote at its last computation.

        The formulation hands the same ``out`` at every step of a layout, and nothing else writes
        it: the problem and the QP it hands out are read-only. So a matrix that did not change
        since need not be written again.
        """
        return self._state.rows is out

    def compute_into(
        self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data, out: ConstraintBase
    ) -> None:
        """:meth:`fill` ``out``, and keep it as the rows :attr:`constraint` reads.

        The arguments are those of :meth:`fill`. Between two calls with the same ``out``, only this
        task writes it (:meth:`refilling`).

        Raises:
            DimensionError: The task wrote arrays whose shapes do not fit ``out``; the message names
                the task.
        """
        state = self._state
        try:
            self.fill(t, q, v, data, out)
        except TsidError:
            state.rows = None
            raise
        except (ValueError, TypeError) as error:
            state.rows = None
            if out.rows != self.dim:
                raise DimensionError(
                    f"task {self.name!r}: its constraint has {self.dim} rows, the problem has {out.rows} "
                    "for it (was its mask changed during the step?)"
                ) from error
            raise DimensionError(
                f"task {self.name!r} wrote arrays of the wrong shape into its {out.rows} x {out.cols} "
                f"constraint: {error}"
            ) from error
        state.rows = out

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
        return out.copy()

    @property
    def constraint(self) -> ConstraintBase:
        """The constraint as last computed, of the task's kind: a copy of the rows the task wrote,
        the caller's (zeros before the first computation, and after a mask changed the rows).

        The rows stay their owner's: a formulation's are refilled at every control step, so this
        is the constraint of the formulation's last step.
        """
        rows = self._state.rows
        if rows is None or rows.rows != self.dim:
            return new_constraint(self.kind, self.name, self.dim, self.cols)
        if self.kind == Kind.BOUND:  # (a Kind or its string) held as rows of an inequality
            copy = cast(ConstraintBound, new_constraint(Kind.BOUND, self.name, self.dim, self.dim))
            bounds = cast(ConstraintBound, rows)  # an inequality's rows, whose bounds a bound's are
            copy.lower_bound, copy.upper_bound = bounds.lower_bound, bounds.upper_bound  # copied in
            return copy
        made = rows.copy()
        made.name = self.name
        return made

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class TaskMotion(TaskBase):
    """A task on accelerations dv: J dv = a* - drift (an equality), or bounds on J dv or on dv."""

    @property
    def cols(self) -> int:
        return self.robot.nv


class TaskActuation(TaskBase):
    """A task on the joint torques tau (size na).

    A mask (:class:`~tsid_py.tasks.task_parts.Mask`) of such a task is over the actuated joints.
    By default the joints it keeps give the rows of the identity S_mask (``_selection``), and are
    the task's ``selected_joints``.

    Attributes:
        selected_joints: A slice or indices when the constraint's matrix is the rows of the identity
            for those joints: the formulation then copies rows of its torque map instead of
            multiplying by the matrix. None (the default): a general matrix.
    """

    selected_joints: slice | np.ndarray | None = None

    @property
    def cols(self) -> int:
        return self.robot.na

    def _mask_size(self) -> int:
        """A mask is over the actuated joints (0/1 per joint)."""
        return self.robot.na

    def _apply_mask(self) -> None:
        """S_mask, and the joints whose rows of the torque map the formulation takes."""
        self._selection = joint_selection(self._mask, self.robot.na)
        self.selected_joints = self._rows


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
