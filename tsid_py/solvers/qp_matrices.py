"""Stacking of HqpData levels into the dense matrices of one QP.

minimize 1/2 x^T H x + g^T x   subject to   A_eq x = b_eq,   lb <= C x <= ub

Level 0 gives the constraints (infinite bounds mean "no bound"). Level 1 gives the cost
H = sum w A^T A + eps I, g = -sum w A^T b, with eps = 1e-8 as TSID's
DEFAULT_HESSIAN_REGULARIZATION, so H is positive definite even where the costs leave
directions free. The sum is formed as one product S^T S of the stacked rows sqrt(w) A.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from tsid_py.errors import UnsupportedProblemError
from tsid_py.hqp import HqpData, WeightedConstraint

HESSIAN_REGULARIZATION = 1e-8


@dataclass
class QpMatrices:
    """One dense QP; ``blocks`` names the level-0 inequalities stacked in C: (name, rows)."""

    H: np.ndarray
    g: np.ndarray
    A_eq: np.ndarray
    b_eq: np.ndarray
    C: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    blocks: list[tuple[str, int]]

    @cached_property
    def one_sided(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, sides) of the finite bounds: row i of C with side +1 (C_i x >= lb_i) or -1
        (-C_i x >= -ub_i); lower sides first, as :attr:`A_in` stacks them."""
        lower, upper = np.flatnonzero(np.isfinite(self.lb)), np.flatnonzero(np.isfinite(self.ub))
        rows = np.concatenate([lower, upper])
        sides = np.concatenate([np.ones(lower.size), -np.ones(upper.size)])
        return rows, sides

    @property
    def A_in(self) -> np.ndarray:
        """The inequalities as A_in x >= b_in (finite sides only)."""
        rows, sides = self.one_sided
        return sides[:, None] * self.C[rows]

    @property
    def b_in(self) -> np.ndarray:
        rows, sides = self.one_sided
        return np.where(sides > 0, self.lb[rows], -self.ub[rows])

    def row_name(self, row: int) -> str:
        """``name[i]`` of the level-0 inequality that row ``row`` of C comes from."""
        for name, rows in self.blocks:
            if row < rows:
                return f"{name}[{row}]"
            row -= rows
        raise IndexError(row)

    @property
    def inequality_names(self) -> list[str]:
        """One name per row of :attr:`A_in`, e.g. ``contact_rfoot_force_constraint[16] upper``."""
        rows, sides = self.one_sided
        return [
            f"{self.row_name(r)} {'lower' if s > 0 else 'upper'}" for r, s in zip(rows, sides, strict=True)
        ]


def hard_constraints(
    level: list[WeightedConstraint], n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[tuple[str, int]]]:
    """(A_eq, b_eq, C, lb, ub, blocks) from the constraints of level 0."""
    equalities = [item.constraint for item in level if item.constraint.is_equality()]
    inequalities = [item.constraint for item in level if not item.constraint.is_equality()]
    if equalities:
        A_eq = np.concatenate([c.matrix for c in equalities])
        b_eq = np.concatenate([c.vector for c in equalities])
    else:
        A_eq, b_eq = np.zeros((0, n)), np.zeros(0)
    if inequalities:
        C = np.concatenate([c.matrix for c in inequalities])
        lb = np.concatenate([c.lower_bound for c in inequalities])
        ub = np.concatenate([c.upper_bound for c in inequalities])
    else:
        C, lb, ub = np.zeros((0, n)), np.zeros(0), np.zeros(0)
    return A_eq, b_eq, C, lb, ub, [(c.name, c.rows) for c in inequalities]


def least_squares_cost(level: list[WeightedConstraint], n: int) -> tuple[np.ndarray, np.ndarray]:
    """H = sum w A^T A + eps I and g = -sum w A^T b over the equalities of a cost level.

    Constraints that state their ``columns`` add only to that block of H and g; those sharing a
    block are stacked as rows sqrt(w) A and multiplied once.
    """
    blocks: dict[tuple[int, int], tuple[list[np.ndarray], list[np.ndarray]]] = {}
    for item in level:
        c = item.constraint
        if not c.is_equality():
            raise UnsupportedProblemError(
                f"{c.kind} {c.name!r} is in a cost level; only equalities can be costs "
                "(put inequalities at priority 0)"
            )
        if item.weight > 0.0:
            start, stop, _ = (item.columns or slice(0, n)).indices(n)
            rows, vectors = blocks.setdefault((start, stop), ([], []))
            root = np.sqrt(item.weight)
            rows.append(root * c.matrix[:, start:stop])
            vectors.append(root * c.vector)
    H, g = np.zeros((n, n)), np.zeros(n)
    for (start, stop), (rows, vectors) in blocks.items():
        S = np.concatenate(rows)
        H[start:stop, start:stop] += S.T @ S
        g[start:stop] -= S.T @ np.concatenate(vectors)
    H.flat[:: n + 1] += HESSIAN_REGULARIZATION
    return H, g


def qp_matrices(hqp: HqpData, max_levels: int = 2) -> QpMatrices:
    """The dense QP of a problem with a hard level and at most one cost level."""
    used = max((i + 1 for i, level in enumerate(hqp.levels) if level), default=1)
    if used > max_levels:
        raise UnsupportedProblemError(
            f"the problem has {used} priority levels (0 to {used - 1}); this solver handles "
            f"levels 0 (hard) and 1 (weighted costs): move the tasks of levels >= 2 to level 1 with weights"
        )
    n = hqp.n_var
    stacked = hqp.stacked
    if stacked is not None and stacked.matches(hqp.levels):
        H, g = stacked.cost(HESSIAN_REGULARIZATION)
        return QpMatrices(H, g, stacked.A_eq, stacked.b_eq, stacked.C, stacked.lb, stacked.ub, stacked.blocks)
    A_eq, b_eq, C, lb, ub, blocks = hard_constraints(hqp.levels[0] if hqp.levels else [], n)
    H, g = least_squares_cost(hqp.levels[1] if len(hqp.levels) > 1 else [], n)
    return QpMatrices(H, g, A_eq, b_eq, C, lb, ub, blocks)
