"""Hierarchical QP data: priority levels of weighted constraints on x = [dv; f].

Level 0 holds hard constraints (equalities and inequalities). Each level >= 1 is a weighted
least-squares cost sum_i w_i |A_i x - b_i|^2 over its equality constraints.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

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


class ProblemSource(Protocol):
    """Who computed a problem and keeps refilling it: a formulation's workspace."""

    serial: int  # names the workspace, unique in the process
    stamp: int  # counts the steps it filled; a problem is current while the stamp is its own

    def dense_qp(self) -> object:
        """The :class:`~tsid_py.solvers.dense_qp.DenseQp` of levels 0 and 1, from its own buffers."""


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
        variables: Optionally, a number naming how x is laid out (where each contact's forces
            sit) in the formulation that made the problem; solvers copy it into their output, so the
            formulation can refuse to read a solution laid out otherwise.
        nv: Size of dv when x = [dv; f] (the QP builder then forms H block by block); None: unknown.
    """

    def __init__(
        self,
        levels: Sequence[Sequence[WeightedConstraint]],
        n_var: int,
        variables: int | None = None,
        nv: int | None = None,
        *,
        _source: ProblemSource | None = None,
        _origin: tuple[int, int] | None = None,
    ) -> None:
        self._levels = levels
        self.n_var = n_var
        self.variables = variables
        self.nv = nv
        self._source = _source
        self._stamp = None if _source is None else _source.stamp
        self._origin = _origin  # a snapshot's: the step of the problem it copies

    @property
    def levels(self) -> Sequence[Sequence[WeightedConstraint]]:
        """The levels (raises :class:`StaleProblemError` once the formulation computed another problem)."""
        self.check_current()
        return self._levels

    def check_current(self) -> None:
        """Raise :class:`StaleProblemError` if the formulation has computed another problem since."""
        if self._source is not None and self._source.stamp != self._stamp:
            raise StaleProblemError(
                "this problem was computed before the formulation's last compute_problem_data, which "
                "refilled its arrays; solve a problem before computing the next, or keep hqp.snapshot()"
            )

    def formulation_qp(self) -> object | None:
        """The QP of levels 0 and 1 from the formulation's own buffers (the one dense QP builder's
        layout, :mod:`tsid_py.solvers.dense_qp`), or None for a problem built by hand. For solvers:
        its constraints are read-only views of the formulation's rows, its H and g formed by this
        call; all are valid until the formulation's next step."""
        self.check_current()
        return None if self._source is None else self._source.dense_qp()

    @property
    def stamp(self) -> tuple[int, int] | None:
        """Which step of which workspace computed this problem, or the one it is a snapshot of
        (None for a problem built by hand)."""
        # a problem with a source was stamped by it: _stamp is an int there
        return self._origin if self._source is None else (self._source.serial, self._stamp)  # type: ignore[return-value]

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
        return HqpData(levels, self.n_var, self.variables, self.nv, _origin=self.stamp)

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
