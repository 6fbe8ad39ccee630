"""The default backend: Goldfarb-Idnani dual active set, from the ``quadprog`` package."""

from __future__ import annotations

import numpy as np
import quadprog

from tsid_py.hqp import HqpData
from tsid_py.solvers.active_set import solve_with_active_set
from tsid_py.solvers.hqp_output import HqpOutput, QPStatus
from tsid_py.solvers.qp_matrices import QpMatrices, qp_matrices
from tsid_py.solvers.solver_base import Solver


class SolverHQuadProg(Solver):
    """Solve level 0 as hard constraints and level 1 as a weighted least-squares cost.

    Same method as TSID's ``SolverHQuadProgFast`` (eiquadprog is also Goldfarb-Idnani), with a
    warm start: the active set of the previous solve is tried first and kept when the KKT
    conditions confirm it (:mod:`tsid_py.solvers.active_set`; the solution then reports 0
    iterations); quadprog runs only when the active set changes. ``warm_start=False`` always
    calls quadprog. A problem with more than two levels raises
    :class:`~tsid_py.errors.UnsupportedProblemError`.
    """

    def __init__(self, name: str = "qp", warm_start: bool = True) -> None:
        super().__init__(name)
        self.warm_start = warm_start
        self._guess: tuple[tuple[int, ...], np.ndarray, np.ndarray] | None = None

    def solve(self, hqp: HqpData) -> HqpOutput:
        qp = qp_matrices(hqp)
        shape = (qp.H.shape[0], qp.A_eq.shape[0], qp.C.shape[0])
        if self.warm_start and self._guess is not None and self._guess[0] == shape:
            confirmed = solve_with_active_set(qp, self._guess[1], self._guess[2])
            if confirmed is not None:
                x, multipliers = confirmed
                return HqpOutput(
                    QPStatus.OPTIMAL, x=x, active_set=self._guess[1].copy(), lagrange_multipliers=multipliers
                )
        out = self._solve_quadprog(qp, hqp)
        if out.ok:
            Cx = qp.C[out.active_set] @ out.x
            lower = np.abs(Cx - qp.lb[out.active_set]) <= np.abs(Cx - qp.ub[out.active_set])
            self._guess = (shape, out.active_set, np.where(lower, 1.0, -1.0))
        return out

    def _solve_quadprog(self, qp: QpMatrices, hqp: HqpData) -> HqpOutput:
        n_eq = qp.A_eq.shape[0]
        A_in = qp.A_in
        C = np.vstack([qp.A_eq, A_in]).T
        b = np.concatenate([qp.b_eq, qp.b_in])
        if b.size == 0:  # quadprog needs at least one constraint; H is positive definite
            return HqpOutput(QPStatus.OPTIMAL, x=np.linalg.solve(qp.H, -qp.g))
        try:
            x, _, _, iterations, multipliers, active = quadprog.solve_qp(qp.H, -qp.g, C, b, n_eq)
        except ValueError as exc:
            message = str(exc)
            status = QPStatus.INFEASIBLE if "inconsistent" in message else QPStatus.ERROR
            return HqpOutput(status, message=f"quadprog: {message}", problem=hqp.snapshot())
        rows, sides = qp.one_sided
        row_multipliers = np.zeros(qp.C.shape[0])
        np.add.at(row_multipliers, rows, sides * multipliers[n_eq:])
        active = np.asarray(active, dtype=int) - 1
        active_rows = np.unique(rows[active[active >= n_eq] - n_eq])
        return HqpOutput(
            QPStatus.OPTIMAL,
            x=x,
            iterations=int(iterations[0]),
            active_set=active_rows,
            lagrange_multipliers=np.concatenate([multipliers[:n_eq], row_multipliers]),
        )
