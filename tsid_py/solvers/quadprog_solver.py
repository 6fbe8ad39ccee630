"""The default backend: Goldfarb-Idnani dual active set, from the ``quadprog`` package."""

from __future__ import annotations

import numpy as np
import quadprog

from tsid_py.hqp import HqpData
from tsid_py.solvers.cascade import is_cascade, solve_hierarchy
from tsid_py.solvers.dense_qp import DenseQp
from tsid_py.solvers.diagnostics import infeasible_output
from tsid_py.solvers.hqp_output import HqpOutput, QPStatus
from tsid_py.solvers.qp_matrices import qp_matrices
from tsid_py.solvers.solver_base import Solver


class SolverHQuadProg(Solver):
    """Solve level 0 as hard constraints and levels 1, 2, ... as weighted least-squares costs.

    Same method as TSID's ``SolverHQuadProgFast`` (eiquadprog is also Goldfarb-Idnani). A
    problem with one cost level is one QP; more levels are solved as a cascade of QPs
    (:mod:`tsid_py.solvers.cascade`).
    """

    def solve(self, hqp: HqpData) -> HqpOutput:
        if is_cascade(hqp):
            return solve_hierarchy(hqp, self.solve_qp)
        qp = qp_matrices(hqp)
        n_eq = qp.A_eq.shape[0]
        C = np.vstack([qp.A_eq, qp.A_in]).T
        b = np.concatenate([qp.b_eq, qp.b_in])
        if b.size == 0:  # quadprog needs at least one constraint; H is positive definite
            return HqpOutput(QPStatus.OPTIMAL, x=np.linalg.solve(qp.H, -qp.g))
        try:
            x, _, _, iterations, multipliers, active = quadprog.solve_qp(qp.H, -qp.g, C, b, n_eq)
        except ValueError as exc:
            message = str(exc)
            if "inconsistent" in message:
                return infeasible_output(hqp, f"quadprog: {message}", self.solve_qp)
            return HqpOutput(QPStatus.ERROR, message=f"quadprog: {message}", problem=hqp.snapshot())
        active = np.asarray(active, dtype=int)
        active_inequalities = np.sort(active[active > n_eq] - 1 - n_eq)
        return HqpOutput(
            QPStatus.OPTIMAL,
            x=x,
            iterations=int(iterations[0]),
            active_set=active_inequalities,
            lagrange_multipliers=multipliers,
        )

    def solve_qp(self, qp: DenseQp) -> HqpOutput:
        """Solve one dense QP (the cascade's primitive).

        Multipliers: equality rows, then one per two-sided inequality row (lower side active
        positive, upper side negative); the active set lists two-sided inequality rows.
        """
        c = qp.constraints
        C_in, d_in, rows = c.one_sided()
        C = np.vstack([c.A_eq, C_in]).T
        b = np.concatenate([c.b_eq, d_in])
        if b.size == 0:
            return HqpOutput(QPStatus.OPTIMAL, x=np.linalg.solve(qp.H, -qp.g))
        try:
            x, _, _, iterations, multipliers, active = quadprog.solve_qp(qp.H, -qp.g, C, b, c.n_eq)
        except ValueError as exc:
            message = str(exc)
            status = QPStatus.INFEASIBLE if "inconsistent" in message else QPStatus.ERROR
            return HqpOutput(status, message=f"quadprog: {message}")
        n_lower = int(np.isfinite(c.lb).sum())
        sides = np.where(np.arange(rows.size) < n_lower, 1.0, -1.0)
        inequality_multipliers = np.zeros(c.n_in)
        np.add.at(inequality_multipliers, rows, sides * multipliers[c.n_eq :])
        active = np.asarray(active, dtype=int)
        return HqpOutput(
            QPStatus.OPTIMAL,
            x=x,
            iterations=int(iterations[0]),
            active_set=np.unique(rows[active[active > c.n_eq] - 1 - c.n_eq]),
            lagrange_multipliers=np.concatenate([multipliers[: c.n_eq], inequality_multipliers]),
        )
