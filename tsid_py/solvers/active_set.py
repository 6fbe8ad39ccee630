"""Warm start by a guessed active set, confirmed with the KKT conditions.

Between two control steps, the set of inequalities at a bound rarely changes. A guess W names
inequality rows and the side each sits on (+1 lower bound, -1 upper bound). Hold the equalities
and the rows of W at their bounds: E x = e, with E = [A_eq; A_in,W] and e = [b_eq; bounds of W].
Solve the KKT system H x + g = E^T l, E x = e. Then check two things:

- x meets every inequality;
- the multipliers l of W push the right way: l >= 0 at a lower bound, l <= 0 at an upper bound.
  Either sign is allowed on a row with lb = ub and on a pinned row: they stand for equalities.

If both hold, x satisfies the KKT conditions of the full QP. H is positive definite, so x is the
unique optimum: no active-set iteration is needed. Otherwise the guess is rejected, and the caller
solves from scratch.

The KKT system is solved in the range space of E (Nocedal & Wright, Numerical Optimization,
16.2). With [X, y] = H^-1 [E^T, g] (one Cholesky factorization and its solves, a single LAPACK
call),

    (E X) l = e + E y,        x = X l - y.

E H^-1 E^T can be ill-conditioned: Romeo with 16 friction faces active, a lower level of a
priority cascade. So the solution is refined iteratively when rounding leaves the rows held
unmet. A system that refinement cannot fix is left to the caller.

This runs at every control step, so the path is written for few NumPy calls. One product gives
E X and E y together. A NaN from a singular guess fails the residual test, as NaN compares
false. The scale of a violated inequality is computed only when there is one.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import lapack

from tsid_py.solvers.dense_qp import DenseQp, HardConstraints

_dpotrf, _dpotrs, _dtrtrs, _dposv = lapack.dpotrf, lapack.dpotrs, lapack.dtrtrs, lapack.dposv

PRIMAL_TOLERANCE = 1e-12  # relative to 1 + |e| (rows held, 2-norm) or 1 + max |A_in x| (inequalities)
DUAL_TOLERANCE = 1e-12  # relative to 1 + max |multiplier|
_PRIMAL_TOLERANCE_SQUARED = PRIMAL_TOLERANCE**2
REFINEMENTS = 2  # iterative-refinement steps allowed when the rows held are not met to rounding


def solve_with_active_set(
    qp: DenseQp, rows: np.ndarray, sides: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """The optimum of ``qp``, if the guess is its optimal active set.

    Args:
        qp: The QP.
        rows: The guessed active inequality rows.
        sides: Per row, +1 at its lower bound, -1 at its upper bound.

    Returns:
        (x, [l_eq; l_in]), with H x + g = A_eq^T l_eq + A_in^T l_in. ``l_in`` has one entry per
            inequality row: positive at an active lower bound, negative at an active upper bound
            (either sign on a row with lb = ub or pinned), zero elsewhere. None when the guess is
            not the optimal active set.
    """
    c = qp.constraints
    E, e = c.A_eq, c.b_eq
    if rows.size:
        lower, upper = c.lb[rows], c.ub[rows]  # the rows' bounds, read once (also the sides' check below)
        held_bounds = np.where(sides > 0, lower, upper)
        if not math.isfinite(held_bounds.dot(held_bounds)):
            return None  # a row held at an infinite bound (a guess from another QP of this shape)
        E = np.concatenate([E, c.A_in[rows]])
        e = np.concatenate([e, held_bounds])
    stacked = not rows.size and qp.rows is not None  # E = A_eq: [A_eq; g] is one buffer already
    Eg = qp.rows[: e.size + 1] if stacked else np.concatenate([E, qp.g[None]])  # type: ignore[index]  # stacked: rows set
    solution = _range_space(qp, E, e, Eg)
    if solution is None:
        return None
    x, multipliers = solution
    n_eq = c.n_eq
    if rows.size:
        held = multipliers[n_eq:]
        tolerance = DUAL_TOLERANCE * (1.0 + np.abs(multipliers).max())
        one_sided = lower != upper
        if c.pinned is not None:
            one_sided &= ~c.pinned[rows]
        if np.count_nonzero((sides * held < -tolerance) & one_sided):
            return None
    if not _feasible(c, x):
        return None
    all_multipliers = np.zeros(n_eq + c.n_in)
    all_multipliers[:n_eq] = multipliers[:n_eq]
    if rows.size:
        all_multipliers[n_eq + rows] = multipliers[n_eq:]
    return x, all_multipliers


def _range_space(
    qp: DenseQp, E: np.ndarray, e: np.ndarray, Eg: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """(x, l) from the Schur complement E H^-1 E^T (Eg: the rows [E; g^T]); None when H or
    E H^-1 E^T is not positive definite (to LAPACK) or the rows held stay unmet after refinement.

    With H = L L^T on its first k columns (the rest, when ``qp.tail_inverse`` is given, inverted
    already): Z = L^-1 [E_k^T, g_k] (one triangular solve), and [E; g^T] H^-1 [E^T, g] = Z^T Z (+ its
    tail part), whose blocks are E H^-1 E^T and E H^-1 g; then x = H^-1 (E^T l - g), its first k
    entries L^-T (Z l - z_g). Half the triangular solves of forming H^-1 [E^T, g] in full. With no
    row held (m = 0) the optimum is x = -H^-1 g, from the factor alone.
    """
    m = e.size
    hessian = _Hessian(qp)
    k = hessian.head
    factor, info = _dpotrf(qp.H[:k, :k], lower=1, clean=0)
    if info != 0:
        return None
    hessian.factor = factor
    if not m:  # no row held: the unconstrained optimum x = -H^-1 g
        x = hessian.solve(-qp.g)
        return (x, np.zeros(0)) if x is not None and math.isfinite(x.dot(x)) else None
    Z, info = _dtrtrs(factor, Eg[:, :k].T, lower=1)
    if info != 0:
        return None
    K = Z.T.dot(Z)  # [E; g^T] H^-1 [E^T, g] on the first k columns
    inverse = hessian.inverse
    if inverse is not None:
        F = Eg[:, k:]
        K += F.dot(inverse).dot(F.T)
    schur, multipliers, info = _dposv(K[:m, :m], K[:m, m] + e, lower=1, overwrite_a=1, overwrite_b=1)
    if info != 0:
        return None
    x = np.empty(qp.n)
    x[:k], info = _dtrtrs(factor, Z[:, :m].dot(multipliers) - Z[:, m], lower=1, trans=1)
    if inverse is not None:
        x[k:] = inverse.dot(F[:m].T.dot(multipliers) - F[m])
    for attempt in range(REFINEMENTS + 1):
        residual = e - E.dot(x)
        squared = residual.dot(residual)
        if squared <= _PRIMAL_TOLERANCE_SQUARED or squared <= _PRIMAL_TOLERANCE_SQUARED * (1.0 + e.dot(e)):
            return x, multipliers
        if attempt == REFINEMENTS:
            return None  # too ill-conditioned (or singular: NaN)
        # one step of iterative refinement of the KKT system, with the same factors
        u = hessian.solve(E.T.dot(multipliers) - qp.H.dot(x) - qp.g)
        step, _ = lapack.dpotrs(schur, residual - E.dot(u), lower=1)  # type: ignore[arg-type]  # factorized
        x, multipliers = x + u + hessian.solve(E.T.dot(step)), multipliers + step  # type: ignore[operator]
    return None


class _Hessian:
    """H^-1 b with the Cholesky factor of H's first ``head`` columns (set by the caller).

    When the QP gives ``tail_inverse`` (H block diagonal, the inverse of its last block known),
    only the first block is factorized and the last entries of b are multiplied by the inverse.
    """

    def __init__(self, qp: DenseQp) -> None:
        self.inverse = qp.tail_inverse
        self.head = qp.n if self.inverse is None else qp.n - self.inverse.shape[0]
        self.factor: np.ndarray | None = None

    def solve(self, b: np.ndarray) -> np.ndarray | None:
        """H^-1 b for a vector b of size n, or None before H was factorized."""
        k, inverse = self.head, self.inverse
        if self.factor is None:
            return None
        head, _ = _dpotrs(self.factor, b[:k], lower=1)
        if inverse is None:
            return np.asarray(head)
        return np.concatenate((head, inverse.dot(b[k:])))


def _feasible(c: HardConstraints, x: np.ndarray) -> bool:
    """Whether x meets every inequality row, to PRIMAL_TOLERANCE relative to 1 + max |A_in x|."""
    if not c.n_in:
        return True
    Ax = c.A_in.dot(x)
    violation = np.maximum.reduce(np.maximum(c.lb - Ax, Ax - c.ub))
    return violation <= PRIMAL_TOLERANCE or violation <= PRIMAL_TOLERANCE * (1.0 + np.abs(Ax).max())
