"""Hierarchical QP data: priority levels of weighted constraints on x = [dv; f].

Level 0 holds hard constraints (equalities and inequalities). Each level >= 1 is a weighted
least-squares cost sum_i w_i |A_i x - b_i|^2 over its equality constraints.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from tsid_py.constraints import ConstraintBase
from tsid_py.errors import StaleProblemError

BASE_DYNAMICS = "base-dynamics"  # the level-0 equality of the equation of motion's unactuated rows


@dataclass(frozen=True)
class WeightedConstraint:
    """One constraint of a level, with its weight (used in cost levels; 1 for hard ones).

    ``columns``, when given, are the only columns of x where the constraint's matrix may be
    non-zero (e.g. the dv block of a motion task): the QP builder skips the zero blocks.
    """

    weight: float
    constraint: ConstraintBase
    columns: slice | None = None

    def __iter__(self) -> Iterator[Any]:
        """Unpacks as (weight, constraint), like TSID's pairs."""
        return iter((self.weight, self.constraint))


@dataclass(frozen=True)
class ProblemLayout:
    """How a formulation lays its problems out, made once per layout (a task or contact added or
    removed, a mask changed): problems and solutions with equal layouts are laid out alike.

    Attributes:
        key: Names the layout, unique in the process.
        variables: Names how x = [dv; f] is laid out (where each contact's forces sit): layouts
            that differ only in their tasks share it, and a solution of one reads in the other.
        n_var: Size of x.
        rows: The rows of each level.
    """

    key: int
    variables: int
    n_var: int
    rows: tuple[int, ...]


class ProblemId(NamedTuple):
    """Which problem: its layout and the step of the formulation that computed it. (A named
    tuple: one is made every control step.)"""

    layout: ProblemLayout
    step: int


class StepCounter:
    """The steps a formulation's buffers were filled for; a problem read from them is current
    while the count is its own step."""

    def __init__(self) -> None:
        self.step = 0


class DenseRows(Protocol):
    """Rows laid out for the dense QP builder (a formulation's buffers): what forms the QP of
    levels 0 and 1 without copying them."""

    def dense_qp(self) -> object:
        """The :class:`~tsid_py.solvers.dense_qp.DenseQp` of levels 0 and 1 from the rows."""


class HqpData:
    """The priority levels of a problem: ``hqp[0]`` the hard constraints, ``hqp[1:]`` the costs.

    A problem returned by :meth:`InverseDynamicsFormulation.compute_problem_data` is the
    formulation's problem of that step, as TSID's ``HQPData`` is: its levels are tuples, its
    constraints read-only views of the formulation's buffers, and it may be read (and solved) until
    the formulation computes the next one; reading it afterwards raises :class:`StaleProblemError`.
    :meth:`snapshot` gives an independent copy to keep (and change).

    Args:
        levels: One list (or tuple) of :class:`WeightedConstraint` per level.
        n_var: Size of the decision vector x.
        nv: Size of dv when x = [dv; f] (the QP builder then forms H block by block); None: unknown.
        id: Which problem of which layout, for a formulation's problem and its snapshots (None: a
            problem built by hand); solvers copy it into their output, so that the formulation
            reads a solution only in its layout.
        counter: The step counter of the buffers the levels view (None: the levels are its own).
        rows: Those buffers as the dense QP builder's rows (None: built from the levels).
    """

    def __init__(
        self,
        levels: Sequence[Sequence[WeightedConstraint]],
        n_var: int,
        nv: int | None = None,
        *,
        id: ProblemId | None = None,  # noqa: A002 (the problem's identity)
        counter: StepCounter | None = None,
        rows: DenseRows | None = None,
    ) -> None:
        self._levels = levels
        self.n_var = n_var
        self.nv = nv
        self.id = id
        self._counter, self._rows = counter, rows

    @property
    def levels(self) -> Sequence[Sequence[WeightedConstraint]]:
        """The levels (raises :class:`StaleProblemError` once the formulation computed another problem)."""
        self.check_current()
        return self._levels

    def check_current(self) -> None:
        """Raise :class:`StaleProblemError` if the formulation has computed another problem since."""
        if self._counter is not None and self.id is not None and self._counter.step != self.id.step:
            raise StaleProblemError(
                "this problem was computed before the formulation's last compute_problem_data, which "
                "refilled its arrays; solve a problem before computing the next, or keep hqp.snapshot()"
            )

    def dense_qp(self) -> object | None:
        """The QP of levels 0 and 1 formed from the rows the levels view (the dense QP builder's
        layout, :mod:`tsid_py.solvers.dense_qp`), or None when the problem has no such rows (built
        by hand, or a snapshot). For solvers: its constraints are read-only views of the rows, its
        H and g formed by this call; all are valid until the formulation's next step."""
        self.check_current()
        return None if self._rows is None else self._rows.dense_qp()

    def __len__(self) -> int:
        return len(self.levels)

    def __getitem__(self, level: int) -> Sequence[WeightedConstraint]:
        return self.levels[level]

    def __iter__(self) -> Iterator[Sequence[WeightedConstraint]]:
        return iter(self.levels)

    def snapshot(self) -> HqpData:
        """A deep copy, independent of the formulation that computed this one."""
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
