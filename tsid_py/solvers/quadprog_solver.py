"""The default backend: Goldfarb-Idnani dual active set, from the ``quadprog`` package."""

from __future__ import annotations

import numpy as np
import quadprog

from tsid_py.hqp import HqpData
from tsid_py.solvers.hqp_output import HqpOutput, QPStatus
from tsid_py.solvers.qp_matrices import qp_matrices
from tsid_py.solvers.solver_base import Solver


class SolverHQuadProg(Solver):
    """Solve level 0 as hard constraints and level 1 as a weighted least-squares cost.

    Same method as TSID's ``SolverHQuadProgFast`` (eiquadprog is also Goldfarb-Idnani).
    A problem with more than two levels raises :class:`~tsid_py.errors.UnsupportedProblemError`.
    """

    def solve(self, hqp: HqpData) -> HqpOutput:
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
            status = QPStatus.INFEASIBLE if "inconsistent" in message else QPStatus.ERROR
            return HqpOutput(status, message=f"quadprog: {message}", problem=hqp.snapshot())
        active = np.asarray(active, dtype=int)
        active_inequalities = np.sort(active[active > n_eq] - 1 - n_eq)
        return HqpOutput(
            QPStatus.OPTIMAL,
            x=x,
            iterations=int(iterations[0]),
            active_set=active_inequalities,
            lagrange_multipliers=multipliers,
        )
