"""What a solver returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from tsid_py.hqp import HqpData, ProblemId


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
        iterations: Active-set iterations taken (0 when a warm start was confirmed at once).
        active_set: Indices of the level-0 inequality rows at a bound. The rows of the level-0
            inequalities are counted stacked in order; a two-sided row counts once.
        lagrange_multipliers: l_eq for the level-0 equality rows, then l_in for the inequality
            rows (> 0 at a lower bound, < 0 at an upper bound). For a one-level problem,
            H x + g = A_eq^T l_eq + A_in^T l_in (tests/test_kkt.py). In a priority cascade, they
            are those the last level's QP gave the level-0 rows. That QP also holds the rows the
            levels above pinned, whose multipliers are not returned: the identity then holds for
            no single level's problem.
        message: Why a solve failed; empty otherwise.
        problem: A copy of the problem, kept when the solve failed so it can be inspected.
        infeasible_constraints: When level 0 is infeasible, the names of the hard constraints that
            must give way for it to become feasible (:mod:`tsid_py.solvers.diagnostics`).
        conflicting_set: When level 0 is infeasible, an irreducible set of hard constraints in
            conflict, besides the equation of motion: dropping any one restores feasibility.
        problem_id: The ``HqpData.id`` of the problem solved (its layout and step); None for a
            problem built by hand. The formulation's getters check it.
    """

    status: QPStatus
    x: np.ndarray | None = None
    iterations: int = 0
    active_set: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    lagrange_multipliers: np.ndarray = field(default_factory=lambda: np.zeros(0))
    message: str = ""
    problem: HqpData | None = None
    infeasible_constraints: list[str] = field(default_factory=list)
    conflicting_set: list[str] = field(default_factory=list)
    problem_id: ProblemId | None = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        """Whether the status is OPTIMAL."""
        return self.status == QPStatus.OPTIMAL
