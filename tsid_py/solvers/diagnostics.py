"""Why is level 0 infeasible? A phase-1 slack QP names the constraints in conflict.

Each hard row r (equality a_r x = b_r or inequality lb_r <= a_r x <= ub_r), scaled to a unit
normal, gets a slack t_r >= 0 that widens it on both sides. Minimizing sum t finds the rows that
must give way: an L1 norm, so few slacks are non-zero. A tiny quadratic term keeps the Hessian
positive definite. The constraints owning those rows are reduced to an irreducible set whose
removal restores feasibility, and reported by name.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tsid_py.hqp import BASE_DYNAMICS, HqpData
from tsid_py.solvers.dense_qp import DenseQp, HardConstraints, SolveQp, load_hard
from tsid_py.solvers.hqp_output import HqpOutput, QPStatus

PHYSICS = frozenset({BASE_DYNAMICS})  # the equation of motion, named by InverseDynamicsFormulation
SLACK_TOLERANCE = 1e-6  # a slack above this (in units of the row's scaled residual) is a conflict
PHASE_ONE_REGULARIZATION = 1e-8


def conflicting_constraints(hard: HardConstraints, solve_qp: SolveQp) -> list[str] | None:
    """Names of the hard constraints whose rows need a non-zero slack, in row order.

    The phase-1 QP's unknowns are (x, s+, s-, t): relaxed equalities a x + s+ - s- = b,
    inequalities a x + t >= lb and a x - t <= ub, s+, s-, t >= 0, and the cost sum(s+ + s- + t).
    The equality rows of :data:`PHYSICS` (the equation of motion) get no slack: they are not a
    choice.

    Returns:
        The names, or None if the phase-1 QP itself fails.
    """
    eq_scale = np.maximum(np.linalg.norm(hard.A_eq, axis=1), 1e-12)
    in_scale = np.maximum(np.linalg.norm(hard.A_in, axis=1), 1e-12)
    A_eq, b_eq = hard.A_eq / eq_scale[:, None], hard.b_eq / eq_scale
    A_in, lb, ub = hard.A_in / in_scale[:, None], hard.lb / in_scale, hard.ub / in_scale
    relaxed = np.array([name not in PHYSICS for name in hard.eq_names], dtype=bool)
    n, m_in = A_eq.shape[1], A_in.shape[0]
    E = np.eye(A_eq.shape[0])[:, relaxed]  # slack columns of the relaxed equality rows
    m_eq = E.shape[1]
    m = 2 * m_eq + m_in
    zeros_in = np.zeros((m_in, 2 * m_eq))
    phase_one = HardConstraints(
        np.hstack([A_eq, E, -E, np.zeros((A_eq.shape[0], m_in))]),
        b_eq,
        np.vstack(
            [
                np.hstack([A_in, zeros_in, np.eye(m_in)]),
                np.hstack([A_in, zeros_in, -np.eye(m_in)]),
                np.hstack([np.zeros((m, n)), np.eye(m)]),
            ]
        ),
        np.concatenate([lb, np.full(m_in, -np.inf), np.zeros(m)]),
        np.concatenate([np.full(m_in, np.inf), ub, np.full(m, np.inf)]),
        hard.eq_names,
        hard.in_names * 2 + ["slack"] * m,
    )
    H = PHASE_ONE_REGULARIZATION * np.eye(n + m)
    g = np.concatenate([np.zeros(n), np.ones(m)])
    out = solve_qp(DenseQp(H, g, phase_one))
    if not out.ok:
        return None
    slack = out.x[n:]  # type: ignore[index]  # out.ok: x is set
    relaxed_names = [name for name, free in zip(hard.eq_names, relaxed, strict=True) if free]
    names = relaxed_names * 2 + hard.in_names
    return list(dict.fromkeys(names[r] for r in np.flatnonzero(slack > SLACK_TOLERANCE)))


def without(hard: HardConstraints, dropped: list[str]) -> HardConstraints:
    """The hard constraints minus every row of the named constraints."""
    eq = np.array([name not in dropped for name in hard.eq_names], dtype=bool)
    in_ = np.array([name not in dropped for name in hard.in_names], dtype=bool)
    return HardConstraints(
        hard.A_eq[eq],
        hard.b_eq[eq],
        hard.A_in[in_],
        hard.lb[in_],
        hard.ub[in_],
        [name for name in hard.eq_names if name not in dropped],
        [name for name in hard.in_names if name not in dropped],
    )


def infeasible_output(hqp: HqpData, message: str, solve_qp: SolveQp) -> HqpOutput:
    """An INFEASIBLE output that names the level-0 constraints in conflict and keeps the problem.

    Two lists of names (the equation of motion is never in them: it is not a choice):

    - ``infeasible_constraints``: what to relax. The constraints found by
      :func:`conflicting_constraints`, pruned one by one while dropping the rest still restores
      feasibility, so no smaller subset of them would do.
    - ``conflicting_set``: what conflicts. An irreducible infeasible subset of level 0 (deletion
      filter: a constraint leaves the set when the set stays infeasible without it), e.g. a CoM task
      and the two feet's friction cones.

    When the phase-1 QP needs no slack at all, level 0 is feasible and the backend failed for
    another reason (e.g. linearly dependent equality rows): the status is then ERROR.
    """
    n = hqp.n_var
    hard = load_hard(hqp.levels[0] if hqp.levels else [], n).constraints

    def feasible_without(dropped: list[str]) -> bool:
        return solve_qp(DenseQp(np.eye(n), np.zeros(n), without(hard, dropped))).ok

    names = conflicting_constraints(hard, solve_qp)
    if names is None:
        status = QPStatus.INFEASIBLE
        names, conflict = [], []
    elif not names:
        return HqpOutput(
            QPStatus.ERROR,
            message=f"{message}; level 0 (hard constraints) is feasible (a phase-1 QP needs no slack): "
            "the backend failed on a degenerate problem (e.g. linearly dependent equality rows)",
            problem=hqp.snapshot(),
        )
    else:
        status = QPStatus.INFEASIBLE
        if feasible_without(names):
            for name in list(names):
                rest = [other for other in names if other != name]
                if rest and feasible_without(rest):
                    names = rest
        conflict = irreducible_conflict(hard, feasible_without)
        message = (
            f"{message}; level 0 (hard constraints) is infeasible: relaxing "
            f"{', '.join(map(repr, names))} restores feasibility"
        )
        if conflict:
            message += (
                f"; the conflicting set is {', '.join(map(repr, conflict))} (with the equation of motion)"
            )
    return HqpOutput(
        status,
        message=message,
        problem=hqp.snapshot(),
        infeasible_constraints=names,
        conflicting_set=conflict,
    )


def irreducible_conflict(hard: HardConstraints, feasible_without: Callable[[list[str]], bool]) -> list[str]:
    """An irreducible infeasible subset of the hard constraints (names in row order), by deletion.

    Every constraint but the equation of motion is tried once: it is dropped for good when the
    constraints left stay infeasible without it. What remains is infeasible, and feasible as soon as
    any one of its members is removed. Empty if level 0 turns out feasible.
    """
    names = [name for name in dict.fromkeys(hard.eq_names + hard.in_names) if name not in PHYSICS]
    if feasible_without([]):
        return []
    dropped: list[str] = []
    for name in names:
        if not feasible_without([*dropped, name]):
            dropped.append(name)
    return [name for name in names if name not in dropped]
