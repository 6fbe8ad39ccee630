"""DAQP backend: a dual active-set solver for small dense QPs (Arnstrom et al., IEEE TAC 2022).

Optional: ``pip install tsid_py[daqp]``. Equalities are passed as immutable rows, and two-sided
inequalities as they are, unsplit. Each solve starts from the active set of the previous solve of
the same shape: in a control loop at 1 kHz, that set rarely changes.
"""

from __future__ import annotations

import numpy as np

from tsid_py.errors import InvalidParameterError, UnknownNameError, UnsupportedProblemError
from tsid_py.solvers.dense_qp import DenseQp
from tsid_py.solvers.hqp_output import HqpOutput, QPStatus
from tsid_py.solvers.solver_base import Solver
from tsid_py.validation import as_scalar, unknown_name_message

try:
    import daqp
except ImportError:  # pragma: no cover - exercised only where the extra is not installed
    daqp = None

# DAQP's constraint "sense" flags (daqp/include/constants.h)
_ACTIVE, _LOWER, _IMMUTABLE = 1, 2, 4
_EQUALITY = _ACTIVE | _IMMUTABLE

# DAQP's exit flags (daqp/include/constants.h). -6, "overdetermined initial active set", comes from
# linearly dependent equality rows: inconsistent ones (infeasible) or redundant ones, which the
# infeasibility diagnostics tell apart (:func:`tsid_py.solvers.diagnostics.infeasible_output`).
_STATUS = {1: QPStatus.OPTIMAL, 2: QPStatus.OPTIMAL, -1: QPStatus.INFEASIBLE, -3: QPStatus.UNBOUNDED}
_STATUS |= {-4: QPStatus.MAX_ITER_REACHED, -6: QPStatus.INFEASIBLE}
_EXIT_REASONS = {-2: "cycling", -5: "non-convex", -6: "linearly dependent equality rows"}

# the settings of daqp.solve (daqp/include/types.h) and their types; tolerances in the units of x
_SETTINGS: dict[str, type] = {
    "primal_tol": float,
    "dual_tol": float,
    "zero_tol": float,
    "pivot_tol": float,
    "progress_tol": float,
    "cycle_tol": int,
    "iter_limit": int,
    "fval_bound": float,
    "eps_prox": float,
    "eta_prox": float,
    "rho_soft": float,
    "rel_subopt": float,
    "abs_subopt": float,
    "sing_tol": float,
    "refactor_tol": float,
    "time_limit": float,
}


class SolverDAQP(Solver):
    """Levels 0 (hard) and 1, 2, ... (weighted costs) solved with DAQP, warm-started.

    Args:
        name: A label.
        warm_start: Start each QP from the previous active set of a QP of the same shape.
        **settings: DAQP settings passed through (e.g. ``primal_tol=1e-6``, ``iter_limit=1000``);
            the names and types of :data:`_SETTINGS` (integers for ``iter_limit`` and
            ``cycle_tol``, finite numbers otherwise).
    """

    def __init__(self, name: str = "daqp", warm_start: bool = True, **settings: float) -> None:
        if daqp is None:
            raise UnsupportedProblemError(
                "the DAQP backend needs the daqp package: pip install tsid_py[daqp]"
            )
        super().__init__(name)
        self.warm_start = bool(warm_start)
        self.settings = {key: _setting(key, value) for key, value in settings.items()}
        self._active_sets: dict[tuple[int, int, int], np.ndarray] = {}

    def solve_qp(self, qp: DenseQp) -> HqpOutput:
        """Solve one dense QP; a stale warm start that fails is retried cold.

        Returns:
            The output. Its multipliers hold the equality rows, then the inequality rows (> 0 at a
                lower bound, < 0 at an upper bound).
        """
        non_finite = qp.non_finite()
        if non_finite:
            return HqpOutput(QPStatus.ERROR, message=f"the QP holds {non_finite}")
        c = qp.constraints
        A = np.vstack([c.A_eq, c.A_in])
        upper = np.concatenate([c.b_eq, c.ub])
        lower = np.concatenate([c.b_eq, c.lb])
        sense = np.zeros(A.shape[0], dtype=np.int32)
        sense[: c.n_eq] = _EQUALITY
        key = (qp.n, c.n_eq, c.n_in)
        previous = self._active_sets.get(key) if self.warm_start else None
        if previous is not None:
            sense[c.n_eq :] = previous
        x, _, exitflag, info = daqp.solve(qp.H, qp.g, A, upper, lower, sense, **self.settings)
        if exitflag < 0 and previous is not None:  # a stale active set can be inconsistent: start cold
            sense[c.n_eq :] = 0
            x, _, exitflag, info = daqp.solve(qp.H, qp.g, A, upper, lower, sense, **self.settings)
        status = _STATUS.get(exitflag, QPStatus.ERROR)
        if status != QPStatus.OPTIMAL:
            self._active_sets.pop(key, None)
            return HqpOutput(
                status,
                iterations=int(info["iterations"]),
                message=f"daqp: exit flag {exitflag} ({_EXIT_REASONS.get(exitflag, status.name.lower())})",
            )
        lam = np.asarray(info["lam"])
        lam_in = lam[c.n_eq :]
        active = np.flatnonzero(lam_in != 0.0)
        self._active_sets[key] = np.where(
            lam_in > 0, _ACTIVE, np.where(lam_in < 0, _ACTIVE | _LOWER, 0)
        ).astype(np.int32)
        return HqpOutput(
            QPStatus.OPTIMAL,
            x=np.asarray(x),
            iterations=int(info["iterations"]),
            active_set=active,
            lagrange_multipliers=-lam,  # DAQP: H x + g = -A^T lam; ours: H x + g = A^T l
        )


def _setting(key: str, value: object) -> float | int:
    """A DAQP setting checked against :data:`_SETTINGS` (name, type, finiteness)."""
    if key not in _SETTINGS:
        raise UnknownNameError(unknown_name_message("DAQP setting", key, _SETTINGS))
    if _SETTINGS[key] is int:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise InvalidParameterError(f"DAQP setting {key} must be an integer >= 0, got {value!r}")
        return int(value)
    if isinstance(value, bool):
        raise InvalidParameterError(f"DAQP setting {key} must be a number, got {value!r}")
    return as_scalar(f"DAQP setting {key}", value)
