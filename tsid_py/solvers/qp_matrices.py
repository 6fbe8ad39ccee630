"""Stacking of HqpData levels into one dense QP (:class:`~tsid_py.solvers.dense_qp.DenseQp`).

minimize 1/2 x^T H x + g^T x   subject to   A_eq x = b_eq,   lb <= A_in x <= ub

Level 0 gives the constraints (infinite bounds mean "no bound"). A cost level gives
H = sum w A^T A + eps I, g = -sum w A^T b, with eps = 1e-8 as TSID's
DEFAULT_HESSIAN_REGULARIZATION, so H is positive definite even where the costs leave
directions free. When the formulation keeps its levels 0 and 1 in stacked buffers
(:mod:`tsid_py.stacked`), nothing is copied, and H and g are that layout's buffers too: the
next call overwrites them.
"""

from __future__ import annotations

import numpy as np

from tsid_py.errors import UnsupportedProblemError
from tsid_py.hqp import HqpData, WeightedConstraint
from tsid_py.solvers.dense_qp import DenseQp, HardConstraints

HESSIAN_REGULARIZATION = 1e-8


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
    H.ravel()[:: n + 1] += HESSIAN_REGULARIZATION
    return H, g


def qp_matrices(hqp: HqpData, level: int = 1) -> DenseQp:
    """The QP of level 0 (constraints) and the cost level ``level``."""
    n = hqp.n_var
    stacked = hqp.stacked
    if level == 1 and stacked is not None and stacked.matches(hqp.levels):
        return stacked.qp(HESSIAN_REGULARIZATION)
    hard = HardConstraints.from_level(hqp.levels[0] if hqp.levels else [], n)
    H, g = least_squares_cost(hqp.levels[level] if level < len(hqp.levels) else [], n)
    return DenseQp(H, g, hard)
