"""The default backend: Goldfarb-Idnani dual active set, from the ``quadprog`` package."""

from __future__ import annotations

import numpy as np
import quadprog
import scipy.linalg

from tsid_py.constraints import NO_BOUND
from tsid_py.solvers.active_set import solve_with_active_set
from tsid_py.solvers.dense_qp import DenseQp
from tsid_py.solvers.hqp_output import HqpOutput, QPStatus
from tsid_py.solvers.solver_base import Solver

_GUESSES_KEPT = 8  # warm-start guesses remembered, one per QP shape (a cascade has one per level)


class SolverHQuadProg(Solver):
    """Solve level 0 as hard constraints and levels 1, 2, ... as weighted least-squares costs.

    The method of TSID's ``SolverHQuadProgFast``: eiquadprog is Goldfarb-Idnani too. More than
    one cost level is a cascade of QPs (:mod:`tsid_py.solvers.cascade`).

    Args:
        name: A label.
        warm_start: Try the active set of the previous QP of the same shape first, and keep it
            when the KKT conditions confirm it (:mod:`tsid_py.solvers.active_set`). The solution
            then reports 0 iterations, and quadprog runs only when the active set changes. False:
            always call quadprog.
    """

    def __init__(self, name: str = "qp", warm_start: bool = True) -> None:
        super().__init__(name)
        self.warm_start = bool(warm_start)
        self._guesses: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray]] = {}

    def solve_qp(self, qp: DenseQp) -> HqpOutput:
        """Solve one dense QP.

        Returns:
            The output. Its multipliers hold the equality rows, then the inequality rows (> 0 at a
                lower bound, < 0 at an upper bound).
        """
        c = qp.constraints
        shape = (qp.g.shape[0], c.b_eq.shape[0], c.lb.shape[0])  # (n, n_eq, n_in)
        guess = self._guesses.get(shape) if self.warm_start else None
        if guess is not None:
            confirmed = solve_with_active_set(qp, *guess)
            if confirmed is not None:
                x, multipliers = confirmed
                return HqpOutput(
                    QPStatus.OPTIMAL, x=x, active_set=guess[0].copy(), lagrange_multipliers=multipliers
                )
        out = _solve_quadprog(qp)
        if out.ok and self.warm_start:
            if len(self._guesses) >= _GUESSES_KEPT:
                self._guesses.clear()
            Ax = c.A_in[out.active_set].dot(out.x)
            lower = np.abs(Ax - c.lb[out.active_set]) <= np.abs(Ax - c.ub[out.active_set])
            self._guesses[shape] = (out.active_set.copy(), np.where(lower, 1.0, -1.0))  # out is the caller's
        return out


DEPENDENT_TOLERANCE = 1e-9  # relative: an equality row within this of the others' span repeats them


def _independent_rows(A_eq: np.ndarray, b_eq: np.ndarray) -> np.ndarray | None:
    """The equality rows to keep when some repeat others (a point foot whose sideways motion a
    two-joint leg cannot make: Solo8's feet, rows of the base's motion four times over), which
    Goldfarb-Idnani reports as inconsistent: an independent set (QR with column pivoting of
    A_eq^T), if the others agree with it; None if the rows are truly inconsistent, or none repeat.
    Their multipliers are then 0 (a dependent row's are not unique)."""
    if b_eq.size == 0:
        return None
    _, r, pivots = scipy.linalg.qr(A_eq.T, mode="economic", pivoting=True)
    diagonal = np.abs(np.diag(r))
    rank = int(np.sum(diagonal > DEPENDENT_TOLERANCE * max(1.0, float(diagonal[0]))))
    if rank == b_eq.size:
        return None
    kept = np.sort(pivots[:rank])
    x = np.linalg.lstsq(A_eq[kept], b_eq[kept], rcond=None)[0]
    scale = max(1.0, float(np.abs(b_eq).max()))
    return kept if float(np.abs(A_eq @ x - b_eq).max()) <= DEPENDENT_TOLERANCE * 1e3 * scale else None


def _solve_quadprog(qp: DenseQp) -> HqpOutput:
    """One cold quadprog solve.

    Rows with lb = ub go in as equalities. As two opposite one-sided rows they would be dependent,
    which Goldfarb-Idnani reports as inconsistent. A QP holding NaN is an error: quadprog would
    drop its rows as if they were met (a warm start never confirms such a QP, so it comes here).
    """
    non_finite = qp.non_finite()
    if non_finite:
        return HqpOutput(QPStatus.ERROR, message=f"the QP holds {non_finite}")
    c = qp.constraints
    fixed = np.flatnonzero(c.lb == c.ub)
    free = np.flatnonzero(c.lb != c.ub)
    lower, upper = free[c.lb[free] > -NO_BOUND], free[c.ub[free] < NO_BOUND]  # others: no bound
    n_eq = c.n_eq + fixed.size
    A = np.vstack([c.A_eq, c.A_in[fixed], c.A_in[lower], -c.A_in[upper]])
    b = np.concatenate([c.b_eq, c.lb[fixed], c.lb[lower], -c.ub[upper]])
    if b.size == 0:  # quadprog needs at least one constraint; H is positive definite
        # no equality row, no bound on any inequality row: every multiplier is 0 (one per row)
        return HqpOutput(
            QPStatus.OPTIMAL, x=np.linalg.solve(qp.H, -qp.g), lagrange_multipliers=np.zeros(c.n_in)
        )
    try:
        x, _, _, iterations, multipliers, active = quadprog.solve_qp(qp.H, -qp.g, A.T, b, n_eq)
    except ValueError as exc:
        message = str(exc)
        kept = _independent_rows(A[:n_eq], b[:n_eq]) if "inconsistent" in message else None
        if kept is None:
            status = QPStatus.INFEASIBLE if "inconsistent" in message else QPStatus.ERROR
            return HqpOutput(status, message=f"quadprog: {message}")
        rows = np.concatenate([kept, np.arange(n_eq, b.size)])
        try:
            x, _, _, iterations, reduced, active = quadprog.solve_qp(
                qp.H, -qp.g, A[rows].T, b[rows], kept.size
            )
        except ValueError as again:
            return HqpOutput(QPStatus.INFEASIBLE, message=f"quadprog: {again}")
        multipliers = np.zeros(b.size)
        multipliers[rows] = reduced
        active = np.where(active > 0, rows[active - 1] + 1, 0)  # quadprog's numbers of the rows given
    rows = np.concatenate([fixed, lower, upper])
    signs = np.concatenate([np.ones(fixed.size + lower.size), -np.ones(upper.size)])
    l_in = np.zeros(c.n_in)
    np.add.at(l_in, rows, signs * multipliers[c.n_eq :])
    active = np.asarray(active, dtype=int) - 1  # quadprog counts from 1, pads with 0
    return HqpOutput(
        QPStatus.OPTIMAL,
        x=x,
        iterations=int(iterations[0]),
        active_set=np.unique(rows[active[active >= c.n_eq] - c.n_eq]),
        lagrange_multipliers=np.concatenate([multipliers[: c.n_eq], l_in]),
    )
