"""Stacking of HqpData levels into the dense matrices of one QP.

minimize 1/2 x^T H x + g^T x   subject to   A_eq x = b_eq,   A_in x >= b_in

Level 0 gives the constraints (an inequality lb <= A x <= ub gives the rows A x >= lb and
-A x >= -ub for its finite sides). Level 1 gives the cost H = sum w A^T A + eps I,
g = -sum w A^T b, with eps = 1e-8 as TSID's DEFAULT_HESSIAN_REGULARIZATION, so H is positive
definite even where the costs leave directions free.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tsid_py.errors import UnsupportedProblemError
from tsid_py.hqp import HqpData, WeightedConstraint

HESSIAN_REGULARIZATION = 1e-8


@dataclass
class QpMatrices:
    H: np.ndarray
    g: np.ndarray
    A_eq: np.ndarray
    b_eq: np.ndarray
    A_in: np.ndarray
    b_in: np.ndarray
    inequality_names: list[str]


def hard_constraints(level: list[WeightedConstraint], n: int) -> tuple[np.ndarray, ...]:
    """(A_eq, b_eq, A_in, b_in, row names of A_in) from the constraints of level 0."""
    eq_rows, eq_vec, in_rows, in_vec, names = [], [], [], [], []
    for item in level:
        c = item.constraint
        if c.is_equality():
            eq_rows.append(c.matrix)
            eq_vec.append(c.vector)
            continue
        fixed = c.lower_bound == c.upper_bound  # lb = ub: an equality, not two opposite dependent rows
        eq_rows.append(c.matrix[fixed])
        eq_vec.append(c.lower_bound[fixed])
        for sign, bound in ((1.0, c.lower_bound), (-1.0, c.upper_bound)):
            finite = np.isfinite(bound) & ~fixed
            if finite.any():
                in_rows.append(sign * c.matrix[finite])
                in_vec.append(sign * bound[finite])
                side = "lower" if sign > 0 else "upper"
                names.extend(f"{c.name}[{row}] {side}" for row in np.flatnonzero(finite))
    return (*_stack(eq_rows, eq_vec, n), *_stack(in_rows, in_vec, n), names)


def _stack(rows: list[np.ndarray], vectors: list[np.ndarray], n: int) -> tuple[np.ndarray, np.ndarray]:
    if not rows:
        return np.zeros((0, n)), np.zeros(0)
    return np.vstack(rows), np.concatenate(vectors)


def least_squares_cost(level: list[WeightedConstraint], n: int) -> tuple[np.ndarray, np.ndarray]:
    """H = sum w A^T A + eps I and g = -sum w A^T b over the equalities of a cost level."""
    H = HESSIAN_REGULARIZATION * np.eye(n)
    g = np.zeros(n)
    for item in level:
        c = item.constraint
        if not c.is_equality():
            raise UnsupportedProblemError(
                f"{c.kind} {c.name!r} is in a cost level; only equalities can be costs "
                "(put inequalities at priority 0)"
            )
        if item.weight == 0.0:
            continue
        WA = item.weight * c.matrix
        H += WA.T @ c.matrix
        g -= WA.T @ c.vector
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
    A_eq, b_eq, A_in, b_in, names = hard_constraints(hqp.levels[0] if hqp.levels else [], n)
    H, g = least_squares_cost(hqp.levels[1] if len(hqp.levels) > 1 else [], n)
    return QpMatrices(H, g, A_eq, b_eq, A_in, b_in, names)
