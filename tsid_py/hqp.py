"""Hierarchical QP data: priority levels of weighted constraints on x = [dv; f].

Level 0 holds the hard constraints (equalities and inequalities). Each level k >= 1 is the cost
sum_i w_i |A_i x - b_i|^2 of its equalities. Levels: docs/concepts/priorities.md. Who owns a
problem's arrays, and why: docs/architecture.md, section "Who owns which array".
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from tsid_py.constraints import ConstraintBase
from tsid_py.errors import DimensionError, InvalidParameterError, StaleProblemError
from tsid_py.validation import as_count, as_scalar

BASE_DYNAMICS = "base-dynamics"  # the level-0 equality of the equation of motion's unactuated rows


@dataclass(frozen=True)
class WeightedConstraint:
    """One constraint of a level, with its weight. It unpacks as (weight, constraint), as TSID's pairs.

    Attributes:
        weight: Its weight at a cost level; 1 at level 0.
        constraint: The constraint on x.
        columns: The only columns of x where the matrix may be non-zero (e.g. the dv block of a
            motion task), or None. The QP builder skips the zero blocks.
    """

    weight: float
    constraint: ConstraintBase
    columns: slice | None = None

    def __iter__(self) -> Iterator[Any]:
        """(weight, constraint)."""
        return iter((self.weight, self.constraint))


@dataclass(frozen=True)
class ProblemLayout:
    """How a formulation lays its problems out. Problems and solutions of equal layouts are alike.

    A formulation makes a new one when a task or contact is added or removed, or a task or contact
    changes its number of rows (a mask).

    Attributes:
        key: Names the layout: the revision of the formulation's structure it was laid out at
            (unique in the process).
        variables: Names how x = [dv; f] is laid out (where each contact's forces sit): the
            revision at which the contacts last changed. Layouts that differ only in their tasks
            share it, so a solution of one reads in the other.
        n_var: Size of x.
        rows: The number of rows of each level.
    """

    key: int
    variables: int
    n_var: int
    rows: tuple[int, ...]


class ProblemId(NamedTuple):
    """Which problem: its layout and the id of the formulation's step that computed it.

    A named tuple, as one is made at every control step.
    """

    layout: ProblemLayout
    step: int


_STEP_IDS = itertools.count(1)  # step ids, unique in the process


class StepClock:
    """The step a formulation is at: ``step``, the id of the step that last filled its buffers
    (unique in the process, so a solution's ``problem_id.step`` names its formulation's step too).

    A problem that views the buffers is current while ``step`` is its own step.
    """

    def __init__(self) -> None:
        self.step = 0

    def tick(self) -> None:
        """A new step: the problems handed out so far are stale."""
        self.step = next(_STEP_IDS)


class DenseRows(Protocol):
    """A formulation's buffers, laid out by the dense QP builder: they form the QP of levels 0
    and 1 without a copy."""

    def dense_qp(self) -> object:
        """The :class:`~tsid_py.solvers.dense_qp.DenseQp` of levels 0 and 1 from the rows."""


class HqpData:
    """The priority levels of a problem: ``hqp[0]`` the hard constraints, ``hqp[1:]`` the costs.

    A formulation's problem (:meth:`InverseDynamicsFormulation.compute_problem_data`) is a view,
    as TSID's ``HQPData`` is. Its levels are tuples and its constraints read-only views of the
    formulation's buffers. Read and solve it before the formulation computes the next problem:
    reading it afterwards raises :class:`StaleProblemError`. :meth:`snapshot` gives a copy to keep
    and change. A problem built by hand is plain data: a solver needs nothing else. Its levels are
    checked when it is built, and kept as they are then (the constraints themselves, not copies).

    Args:
        levels: One sequence per level of :class:`WeightedConstraint` or, as TSID's levels,
            (weight, constraint) pairs. Weights are finite and >= 0 (level 0 ignores them).
        n_var: Size of the decision vector x: every constraint's number of columns.
        nv: Size of dv when x = [dv; f], so the QP builder forms H block by block; None: unknown.
        id: Which problem of which layout, for a formulation's problem and its snapshots; None for
            a problem built by hand. Solvers copy it into ``HqpOutput.problem_id``.
        clock: The step clock of the buffers the levels view; None when the levels are its own.
        rows: Those buffers as the dense QP builder's rows; None: the QP is built from the levels.

    Raises:
        InvalidParameterError: (built by hand) A level or an entry is not one, or a weight is
            negative or not a number; the message names the level and the constraint.
        NonFiniteError: (built by hand) A weight is NaN or infinite.
        DimensionError: (built by hand) A constraint's columns are not ``n_var``.
    """

    def __init__(
        self,
        levels: Sequence[Sequence[WeightedConstraint]],
        n_var: int,
        nv: int | None = None,
        *,
        id: ProblemId | None = None,  # noqa: A002 (the problem's identity)
        clock: StepClock | None = None,
        rows: DenseRows | None = None,
    ) -> None:
        if clock is None:  # built by hand (or a snapshot): a formulation's levels are its own
            n_var = as_count("n_var of an HqpData", n_var)
            levels = _checked_levels(levels, n_var)
        self._levels = levels
        self.n_var = n_var
        self.nv = nv
        self.id = id
        self._clock, self._rows = clock, rows

    @classmethod
    def _view(
        cls,
        levels: Sequence[Sequence[WeightedConstraint]],
        n_var: int,
        nv: int,
        id: ProblemId,  # noqa: A002 (the problem's identity)
        clock: StepClock,
        rows: DenseRows,
    ) -> HqpData:
        """A formulation's problem, made at every control step: ``HqpData(levels, n_var, nv,
        id=id, clock=clock, rows=rows)`` without the call's keywords (its levels are its own:
        nothing to check)."""
        hqp = cls.__new__(cls)
        hqp._levels, hqp.n_var, hqp.nv, hqp.id, hqp._clock, hqp._rows = levels, n_var, nv, id, clock, rows
        return hqp

    @property
    def levels(self) -> Sequence[Sequence[WeightedConstraint]]:
        """The levels.

        Raises:
            StaleProblemError: The formulation has computed another problem since.
        """
        self.check_current()
        return self._levels

    def check_current(self) -> None:
        """Check that the formulation has computed no other problem since this one.

        Raises:
            StaleProblemError: It has.
        """
        if self._clock is not None and self.id is not None and self._clock.step != self.id.step:
            raise StaleProblemError(
                "this problem was computed before the formulation's last compute_problem_data, which "
                "refilled its arrays; solve a problem before computing the next, or keep hqp.snapshot()"
            )

    def dense_qp(self) -> object | None:
        """The QP of levels 0 and 1, formed from the rows the levels view (for solvers).

        Returns:
            The :class:`~tsid_py.solvers.dense_qp.DenseQp`, or None when the problem has no such
                rows (built by hand, or a snapshot). Its constraints are read-only views of the
                rows, and this call forms its H and g. All are valid until the formulation's next
                step.

        Raises:
            StaleProblemError: The formulation has computed another problem since.
        """
        self.check_current()
        return None if self._rows is None else self._rows.dense_qp()

    def __len__(self) -> int:
        return len(self.levels)

    def __getitem__(self, level: int) -> Sequence[WeightedConstraint]:
        return self.levels[level]

    def __iter__(self) -> Iterator[Sequence[WeightedConstraint]]:
        return iter(self.levels)

    def snapshot(self) -> HqpData:
        """A deep copy, independent of the formulation: writable, and never stale. It keeps ``id``."""
        levels = [
            [WeightedConstraint(e.weight, e.constraint.copy(), e.columns) for e in level]
            for level in self.levels
        ]
        return HqpData(levels, self.n_var, self.nv, id=self.id)

    def describe(self) -> str:
        """One line per constraint: level, kind, name, rows, weight."""
        lines = []
        for index, level in enumerate(self.levels):
            for item in level:
                c = item.constraint
                lines.append(
                    f"level {index}: {c.kind:<10} {c.name:<32} rows={c.rows:<3} weight={item.weight:g}"
                )
        return "\n".join(lines)

    def __repr__(self) -> str:
        sizes = [len(level) for level in self._levels]
        return f"HqpData(n_var={self.n_var}, constraints per level={sizes})"


def _checked_levels(levels: object, n_var: int) -> list[list[WeightedConstraint]]:
    """The levels of a problem built by hand, each entry a :class:`WeightedConstraint` (a
    (weight, constraint) pair made one), its weight and columns checked."""
    if isinstance(levels, (str, bytes)) or not isinstance(levels, Sequence):
        raise InvalidParameterError(f"the levels of an HqpData are a list of levels, got {levels!r}")
    checked = []
    for index, level in enumerate(levels):
        if isinstance(level, (str, bytes)) or not isinstance(level, Sequence):
            raise InvalidParameterError(
                f"level {index} of an HqpData must be a list of (weight, constraint), got {level!r}"
            )
        checked.append([_checked_entry(index, entry, n_var) for entry in level])
    return checked


def _checked_entry(level: int, entry: object, n_var: int) -> WeightedConstraint:
    """One entry of level ``level``: a WeightedConstraint, or a (weight, constraint) pair."""
    if isinstance(entry, WeightedConstraint) and isinstance(entry.constraint, ConstraintBase):
        weight, constraint, columns = entry.weight, entry.constraint, entry.columns
    elif isinstance(entry, Sequence) and len(entry) == 2 and isinstance(entry[1], ConstraintBase):
        (weight, constraint), columns = entry, None
    else:
        raise InvalidParameterError(
            f"level {level} of an HqpData holds {entry!r}: "
            "give a WeightedConstraint of a constraint, or a (weight, constraint) pair"
        )
    where = f"constraint {constraint.name!r} at level {level}"
    weight = as_scalar(f"the weight of {where}", weight, minimum=0.0)
    if constraint.cols != n_var:
        raise DimensionError(f"{where} has {constraint.cols} columns; the problem's n_var is {n_var}")
    return entry if isinstance(entry, WeightedConstraint) else WeightedConstraint(weight, constraint, columns)
