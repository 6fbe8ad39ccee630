"""Hierarchical QP data: priority levels of weighted constraints on x = [dv; f].

Level 0 holds hard constraints (equalities and inequalities). Each level >= 1 is a weighted
least-squares cost sum_i w_i |A_i x - b_i|^2 over its equality constraints.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import ClassVar

from tsid_py.constraints import ConstraintBase


@dataclass
class WeightedConstraint:
    """One constraint of a level, with its weight (used in cost levels; 1 for hard ones).

    ``columns``, when given, are the only columns of x where the constraint's matrix may be
    non-zero (e.g. the dv block of a motion task): solvers may skip the zero blocks.
    """

    weight: float
    constraint: ConstraintBase
    columns: slice | None = None
    revision: ClassVar[int] = 0  # counts assignments to any entry's attributes (a new weight, ...)

    def __setattr__(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)
        WeightedConstraint.revision += 1

    def __iter__(self):
        """Unpacks as (weight, constraint), like TSID's pairs."""
        return iter((self.weight, self.constraint))


class HqpData:
    """The priority levels of a problem: ``hqp[0]`` the hard constraints, ``hqp[1:]`` the costs.

    Args:
        levels: One list of :class:`WeightedConstraint` per level.
        n_var: Size of the decision vector x.
        stacked: Optionally, the :class:`~tsid_py.stacked.StackedLevels` whose buffers the
            constraints of levels 0 and 1 are views of (solvers then skip the stacking).
        layout: Optionally, a number naming the layout of x (where each contact's forces sit)
            in the formulation that made the problem; solvers copy it into their output, so the
            formulation can refuse to read a solution laid out otherwise.
    """

    def __init__(
        self,
        levels: list[list[WeightedConstraint]],
        n_var: int,
        stacked: object = None,
        layout: int | None = None,
    ) -> None:
        self.levels = levels
        self.n_var = n_var
        self.stacked = stacked  # a tsid_py.stacked.StackedLevels when the formulation keeps one
        self.layout = layout

    def __len__(self) -> int:
        return len(self.levels)

    def __getitem__(self, level: int) -> list[WeightedConstraint]:
        return self.levels[level]

    def __iter__(self):
        return iter(self.levels)

    def snapshot(self) -> HqpData:
        """A deep copy, independent of the formulation that keeps refilling this one."""
        return HqpData(copy.deepcopy(self.levels), self.n_var)  # plain arrays: no stacked layout

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
        sizes = [len(level) for level in self.levels]
        return f"HqpData(n_var={self.n_var}, constraints per level={sizes})"
