"""What a solver returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from tsid_py.hqp import HqpData


class QPStatus(IntEnum):
    """Solver status; the values are TSID's HQP_STATUS codes (0 means optimal)."""

    UNKNOWN = -1
    OPTIMAL = 0
    INFEASIBLE = 1
    UNBOUNDED = 2
    MAX_ITER_REACHED = 3
    ERROR = 4


@dataclass
class HqpOutput:
    """A solution of an :class:`HqpData`.

    Attributes:
        status: Whether the solve succeeded.
        x: The decision vector [dv; f] (None unless optimal).
        iterations: Active-set iterations taken.
        active_set: Indices of the active level-0 inequality rows, in the solver's row order.
        lagrange_multipliers: Multipliers of the level-0 rows (equalities first).
        message: Why a solve failed, empty otherwise.
        problem: A copy of the problem, kept when the solve failed so it can be inspected.
        infeasible_constraints: When level 0 is infeasible, the names of the hard constraints
            that must give way for it to become feasible (see :mod:`tsid_py.solvers.diagnostics`).
    """

    status: QPStatus
    x: np.ndarray | None = None
    iterations: int = 0
    active_set: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    lagrange_multipliers: np.ndarray = field(default_factory=lambda: np.zeros(0))
    message: str = ""
    problem: HqpData | None = None
    infeasible_constraints: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == QPStatus.OPTIMAL
