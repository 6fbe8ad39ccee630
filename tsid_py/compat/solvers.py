"""TSID's solvers and their output (bindings/python/solvers/*.hpp) over tsid_py's."""

from __future__ import annotations

import numpy as np

from tsid_py.compat._wrap import Wrapper
from tsid_py.compat.constraints import HQPData as _HQPData
from tsid_py.solvers import SolverHQuadProg as _Solver


class HQPOutput(Wrapper):
    """``status`` is TSID's code (0 optimal, 1 infeasible, 2 unbounded, 3 max iterations, 4 error;
    tsid_py: ``sol.status``, a ``QPStatus``); ``x``; and, as TSID's C++ HQPOutput, ``activeSet``,
    ``iterations`` and ``getattr(sol, "lambda")`` (tsid_py: ``lagrange_multipliers``)."""

    _names = {"activeSet": "active_set", "iterations": "iterations", "lambda": "lagrange_multipliers"}

    @property
    def status(self) -> int:
        return int(self._inner.status)

    @property
    def x(self) -> np.ndarray | None:
        x = self._inner.x
        return None if x is None else np.array(x)


class SolverHQuadProg(Wrapper):
    """``(name)``: the QP solver (TSID's eiquadprog; tsid_py's quadprog, the same Goldfarb-Idnani
    method). ``resize(n, neq, nin)`` is accepted and does nothing: tsid_py sizes itself per problem."""

    def __init__(self, name: str) -> None:
        self._inner = _Solver(name)

    def resize(self, n: int, neq: int, nin: int) -> None:
        """Nothing to do (TSID preallocates its workspace here)."""

    def solve(self, HQPData: object) -> HQPOutput:
        """Solve a problem from ``computeProblemData`` or built by hand (``HQPData.append``)."""
        problem = HQPData.problem() if isinstance(HQPData, _HQPData) else HQPData
        return HQPOutput._wrap(self._inner.solve(problem))


class SolverHQuadProgFast(SolverHQuadProg):
    """TSID's faster eiquadprog: the same solver in tsid_py."""
