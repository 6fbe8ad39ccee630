"""Any number of priority levels, solved as a cascade of QPs.

Level 0 holds the hard constraints. Each level k >= 1 is a weighted least-squares cost
|W_k^1/2 (A_k x - b_k)|^2. Level k is solved subject to level 0 and to the optima of levels
1..k-1. A problem with one cost level is a single QP. What the user sees:
docs/concepts/priorities.md.

After level k is solved with solution x_k, its optimal set is {x feasible : A_k x = A_k x_k}: the
cost is strictly convex in A_k x over the feasible set. Those rows are compressed to the
directions A_k can still move in, in the null space of the equalities already there. So they are
orthonormal and independent of those equalities (:func:`optimal_set`). They are added as
constraints, and the next level is solved.

The pinned rows enter as slabs |R x - R x_k| <= PIN_TOLERANCE max(1, |R x_k|), not as
equalities. A level's optimum often sits on level-0 inequalities (friction faces, torque limits),
which are then exactly dependent on the pinned rows. An active-set solver handed both as hard rows
can stop at a suboptimal point, or declare the QP inconsistent because of rounding. quadprog did,
1 % above the optimum of the Talos three-level problem. The slab changes the costs of the levels
above by O(PIN_TOLERANCE).

Every backend provides the primitive ``solve_qp(DenseQp) -> HqpOutput``. Its
``lagrange_multipliers`` hold the equality rows first, then the inequality rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.linalg

from tsid_py.hqp import HqpData, WeightedConstraint
from tsid_py.solvers.dense_qp import DenseQp, SolveQp, dense_qp, load_cost
from tsid_py.solvers.diagnostics import infeasible_output
from tsid_py.solvers.hqp_output import HqpOutput, QPStatus

RANK_TOLERANCE = 1e-9  # rank-revealing QR: diagonal entries below this fraction of the largest are null
PIN_TOLERANCE = 1e-10  # relative half-width of the slab that pins a level at its optimum


def cost_levels(hqp: HqpData) -> list[tuple[int, Sequence[WeightedConstraint]]]:
    """The non-empty cost levels as (priority, constraints); [(1, [])] when there is none."""
    all_levels = hqp.levels
    if len(all_levels) == 2:  # the common case: one cost level (possibly empty)
        return [(1, all_levels[1])]
    levels = [(k, level) for k, level in enumerate(all_levels) if k > 0 and level]
    return levels or [(1, [])]


def is_cascade(hqp: HqpData) -> bool:
    """Whether a level beyond 1 holds constraints (the problem is not one hard and one cost level)."""
    return any(level for level in hqp.levels[2:])


def solve_hierarchy(hqp: HqpData, solve_qp: SolveQp) -> HqpOutput:
    """Solve every priority level of ``hqp`` in order.

    Args:
        hqp: The problem.
        solve_qp: The backend's primitive, one dense QP to one output.

    Returns:
        The solution of the last level, with the iterations summed over the levels and the
            multipliers of the level-0 rows. A failed level gives its status, with the problem
            kept. When level 0 itself is infeasible, the output also names the constraints
            involved (:func:`~tsid_py.solvers.diagnostics.infeasible_output`).
    """
    levels = cost_levels(hqp)
    qp = dense_qp(hqp, levels[0][0])
    if len(levels) == 1:  # one QP: the common case, kept short
        out = solve_qp(qp)
        return out if out.ok else _failed(hqp, out, levels[0][0], 0, solve_qp)
    n = hqp.n_var
    base = qp.constraints
    hard, fixed = base, base.A_eq  # the QP's constraints; the rows the next pins must be independent of
    iterations = 0
    for index, (priority, level) in enumerate(levels):
        if index > 0:
            g = np.zeros(n)
            cost = load_cost(level, n, hqp.nv)
            qp = DenseQp(cost.cost(g), g, hard)
        out = solve_qp(qp)
        iterations += out.iterations
        if not out.ok:
            return _failed(hqp, out, priority, index, solve_qp)
        if index + 1 < len(levels):
            R, r = optimal_set(level, fixed, out.x)  # type: ignore[arg-type]  # out.ok: x is set
            width = PIN_TOLERANCE * max(1.0, float(np.abs(r).max(initial=0.0)))
            hard = hard.with_inequalities(
                R, r - width, r + width, f"optimum of level {priority}", pinned=True
            )
            fixed = np.vstack([fixed, R])
    out.iterations = iterations
    if out.lagrange_multipliers.size == hard.n_eq + hard.n_in:  # keep the level-0 rows (they come first)
        out.lagrange_multipliers = out.lagrange_multipliers[: base.n_eq + base.n_in]
    return out


def _failed(hqp: HqpData, out: HqpOutput, priority: int, index: int, solve_qp: SolveQp) -> HqpOutput:
    """The output of a failed level ``index`` (priority ``priority``), with the problem kept."""
    if index == 0 and out.status == QPStatus.INFEASIBLE:
        return infeasible_output(hqp, out.message, solve_qp)
    above = "the optima of the levels above" if index else "the hard constraints of level 0"
    out.message = f"priority level {priority}, solved under {above}: {out.message}"
    out.problem = hqp.snapshot()
    return out


def optimal_set(
    level: Sequence[WeightedConstraint], A_eq: np.ndarray, x: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Rows (R, R x) that pin a level at the optimum reached by x, independent of the rows A_eq.

    A is the level's weighted rows, stacked. Q is an orthonormal basis of the rows of A_eq, and
    P = A (I - Q^T Q) is A's part in the null space of A_eq. R is an orthonormal basis of the rows
    of P. On {A_eq x = b_eq}, R x = R x_k is then the same set as A x = A x_k, and [A_eq; R] keeps
    full row rank.

    Args:
        level: The level's weighted constraints.
        A_eq: The equality rows already held, (m, n).
        x: The level's optimum, size n.

    Returns:
        R: Shape (r, n), r the rank of P.
        r: R x, size r.
    """
    rows = [np.sqrt(item.weight) * item.constraint.matrix for item in level if item.weight > 0.0]
    if not rows:
        return np.zeros((0, x.size)), np.zeros(0)
    P = np.vstack(rows)
    if A_eq.shape[0]:
        Q = row_space(A_eq)
        P = P - (P @ Q.T) @ Q
    R = row_space(P)
    return R, R @ x


def row_space(A: np.ndarray) -> np.ndarray:
    """An orthonormal basis of the rows of A, as rows.

    From a QR factorization of A^T with column pivoting, which reveals the rank. Diagonal entries
    below RANK_TOLERANCE times the largest (below RANK_TOLERANCE when A is small) count as zero.
    Two to three times cheaper than an SVD at these sizes (38 x 62: 83 against 279 us).
    """
    if not A.size:
        return np.zeros((0, A.shape[1]))
    Q, R, _ = scipy.linalg.qr(A.T, mode="economic", pivoting=True, check_finite=False)
    diagonal = np.abs(np.diag(R))
    rank = int(np.count_nonzero(diagonal > RANK_TOLERANCE * max(diagonal[0], 1.0)))
    return Q[:, :rank].T
