"""Every backend's solutions pass one KKT check, with the multipliers the backend returns.

A backend solves the dense QP of :mod:`tsid_py.solvers.dense_qp`,

    minimize 1/2 x^T H x + g^T x   subject to   A_eq x = b_eq,   lb <= A_in x <= ub,

and returns x and l = [l_eq; l_in] (``HqpOutput.lagrange_multipliers``: one entry per equality
row, then one per inequality row, l_in > 0 at an active lower bound and < 0 at an active upper
bound). Then (x, l) is the optimum exactly when the KKT conditions hold:

- stationarity: H x + g - A_eq^T l_eq - A_in^T l_in = 0;
- primal feasibility: A_eq x = b_eq and lb <= A_in x <= ub;
- dual feasibility: l_in,i > 0 only where row i has a lower bound, l_in,i < 0 only where it has an
  upper bound (a side at or beyond ``NO_BOUND`` is none); either sign on a row with lb = ub or a
  pinned row (a priority cascade's slab, which stands for an equality);
- complementarity: l_in,i > 0 only where a_i x = lb_i, l_in,i < 0 only where a_i x = ub_i.

:func:`kkt_residuals` measures each relative to the problem's scale; the tests run it on every QP
each installed backend solves in closed loops of the oracle scenarios (tests/oracle_problems.py),
nominal and pushed (a random initial velocity, so friction cones and torque limits bind), warm
started (quadprog's confirmed active sets of :mod:`tsid_py.solvers.active_set`, DAQP's own), on
every level of a priority cascade, and on the problem the user sees (the output of
``Solver.solve`` against the QP built anew from a snapshot of the problem).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields

import numpy as np
import pytest
from oracle_problems import PROBLEMS, build_tsid_py, initial_state, integrate
from threadpoolctl import threadpool_limits

import tsid_py as tp
from tsid_py.constraints import NO_BOUND, ConstraintEquality, ConstraintInequality
from tsid_py.hqp import HqpData, WeightedConstraint
from tsid_py.solvers import installed_backends
from tsid_py.solvers.dense_qp import DenseQp, HardConstraints, dense_qp
from tsid_py.solvers.hqp_output import HqpOutput
from tsid_py.tasks import TaskMotion

BACKENDS = installed_backends()
KKT_TOLERANCE = 1e-8  # every relative residual of a solution


@pytest.fixture(autouse=True, scope="module")
def one_blas_thread() -> Iterator[None]:
    """One BLAS thread while these loops run, as in a control loop (tsid_py.threads): with two
    threads on a busy 2-core machine they take three times as long. Restored afterwards."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


@dataclass(frozen=True)
class KktResiduals:
    """The KKT residuals of (x, l) for a :class:`DenseQp`, each relative to the problem's scale.

    Attributes:
        stationarity: max_j |H x + g - A_eq^T l_eq - A_in^T l_in|_j over the same sum of absolute
            values, s_j = (|H| |x| + |g| + |A_eq|^T |l_eq| + |A_in|^T |l_in|)_j (the size of the terms
            that cancel in component j) plus 1e-6 max_j s_j.
        equality: max_i |a_i x - b_i| / s_i over the equality rows, s_i = 1 + |a_i|_1 |x|_inf + |b_i|
            the scale of row i in a problem of the size of x (a row's own a_i x can be 0 to rounding
            while x is not: a friction row of a corner that carries no force).
        inequality: max_i of the violation max(lb_i - a_i x, a_i x - ub_i, 0) / s_i (b_i: the
            violated bound), over the inequality rows.
        dual: max_i |l_in,i| / |l|_inf over the rows whose multiplier pushes from a side that is no
            bound (l_in,i > 0 with no lower bound, or < 0 with no upper bound).
        complementarity: max_i min(|l_in,i| / |l|_inf, |a_i x - b_i| / s_i), b_i the bound the sign
            of l_in,i names: either the multiplier is negligible or the row sits on that bound.
        active: Inequality rows with a non-zero multiplier that are one-sided in the library's sense
            (not lb = ub, not pinned), on the lower side and on the upper side.
        absolute_stationarity: max_j |H x + g - A_eq^T l_eq - A_in^T l_in|_j, for the report.
    """

    stationarity: float
    equality: float
    inequality: float
    dual: float
    complementarity: float
    active: tuple[int, int]
    absolute_stationarity: float

    def worst(self) -> float:
        """The largest relative residual."""
        return max(self.stationarity, self.equality, self.inequality, self.dual, self.complementarity)

    def __str__(self) -> str:
        values = ", ".join(
            f"{f.name} {getattr(self, f.name):.2e}" for f in fields(self) if f.name != "active"
        )
        return f"{values}, active rows (lower, upper) {self.active}"


def kkt_residuals(qp: DenseQp, x: np.ndarray, multipliers: np.ndarray) -> KktResiduals:
    """The relative KKT residuals (see :class:`KktResiduals`) of x and l = [l_eq; l_in] for ``qp``.

    The sign convention is the library's: H x + g = A_eq^T l_eq + A_in^T l_in, l_in > 0 at a lower
    bound, < 0 at an upper bound.
    """
    c = qp.constraints
    assert multipliers.shape == (c.n_eq + c.n_in,), "one multiplier per equality row, then per inequality row"
    assert x.shape == (qp.n,)
    l_eq, l_in = multipliers[: c.n_eq], multipliers[c.n_eq :]
    gradient = qp.H @ x + qp.g - c.A_eq.T @ l_eq - c.A_in.T @ l_in
    size = (
        np.abs(qp.H) @ np.abs(x)
        + np.abs(qp.g)
        + np.abs(c.A_eq).T @ np.abs(l_eq)
        + np.abs(c.A_in).T @ np.abs(l_in)
    )
    absolute = _largest(np.abs(gradient))
    # component by component, so that a wrong multiplier of a small row does not hide behind the
    # large ones; floored at 1e-6 of the largest, the rounding of x at the problem's own scale
    stationarity = _largest(np.abs(gradient) / (size + 1e-6 * _largest(size) + np.finfo(float).tiny))

    x_size = _largest(np.abs(x))
    eq_size = 1.0 + x_size * np.abs(c.A_eq).sum(axis=1)  # s_i without its bound
    equality = _largest(np.abs(c.A_eq @ x - c.b_eq) / (eq_size + np.abs(c.b_eq)))

    Ax, row_size = c.A_in @ x, 1.0 + x_size * np.abs(c.A_in).sum(axis=1)
    has_lower, has_upper = c.lb > -NO_BOUND, c.ub < NO_BOUND  # a side beyond NO_BOUND is none
    lb, ub = np.where(has_lower, c.lb, 0.0), np.where(has_upper, c.ub, 0.0)
    below, above = np.where(has_lower, lb - Ax, 0.0), np.where(has_upper, Ax - ub, 0.0)
    violation = np.maximum(np.maximum(below, above), 0.0)
    inequality = _largest(violation / (row_size + np.where(below > above, np.abs(lb), np.abs(ub))))

    free_sign = c.lb == c.ub  # rows that stand for equalities: either sign, feasibility only
    if c.pinned is not None:
        free_sign = free_sign | c.pinned
    scale = max(_largest(np.abs(multipliers)), np.finfo(float).tiny)
    at_lower, at_upper = (l_in > 0) & ~free_sign, (l_in < 0) & ~free_sign
    wrong_side = (at_lower & ~has_lower) | (at_upper & ~has_upper)
    dual = _largest(np.abs(l_in[wrong_side])) / scale
    named = at_lower | at_upper  # the bound a multiplier's sign names
    bound = np.where(at_lower, lb, ub)[named]
    gap = np.abs(Ax[named] - bound) / (row_size[named] + np.abs(bound))
    gap[wrong_side[named]] = np.inf  # no bound there at all
    complementarity = _largest(np.minimum(np.abs(l_in[named]) / scale, gap))
    active = (int(np.count_nonzero(at_lower)), int(np.count_nonzero(at_upper)))
    return KktResiduals(stationarity, equality, inequality, dual, complementarity, active, absolute)


def _largest(values: np.ndarray) -> float:
    """The largest entry, 0 when there is none."""
    return float(values.max(initial=0.0))


# ------------------------------------------------------------------------------- recording solves
@dataclass
class Solved:
    """One dense QP a backend solved: its level in the cascade (0: the first QP), the iterations
    reported (0 for quadprog: the warm start's active set was confirmed), the KKT residuals."""

    level: int
    iterations: int
    kkt: KktResiduals


@dataclass
class KktRecorder:
    """Wraps a solver's ``solve_qp`` (the primitive every level of the cascade calls) and checks
    each dense QP it solves, there and then (the formulation refills its buffers at the next step):
    its KKT residuals are kept, and every inequality row with a multiplier must be in the output's
    ``active_set``."""

    solver: tp.Solver
    solved: list[Solved] = field(default_factory=list)
    _level: int = 0

    def __post_init__(self) -> None:
        solve_qp = self.solver.solve_qp

        def checked(qp: DenseQp) -> HqpOutput:
            out = solve_qp(qp)
            assert out.ok, out.message
            assert out.x is not None
            pushing = np.flatnonzero(out.lagrange_multipliers[qp.constraints.n_eq :])
            assert np.isin(pushing, out.active_set).all(), "a row with a multiplier is not in the active set"
            self.solved.append(
                Solved(self._level, out.iterations, kkt_residuals(qp, out.x, out.lagrange_multipliers))
            )
            self._level += 1
            return out

        self.solver.solve_qp = checked  # type: ignore[method-assign]  # an instance's own, for this test

    def solve(self, hqp: HqpData) -> HqpOutput:
        """The solver's ``solve``, its QPs checked."""
        self._level = 0
        return self.solver.solve(hqp)


# ------------------------------------------------------------------------------------ scenarios
@dataclass(frozen=True)
class Case:
    """A closed loop of an oracle scenario: ``steps`` control steps from its initial state, with
    v0 = ``push`` times a seeded standard normal vector (0: at rest); ``cascade`` moves the posture
    task to priority 2 (a cascade of two QPs); ``active``: at least one step must have an active
    one-sided inequality (checked for every backend)."""

    problem: str
    steps: int
    push: float = 0.0
    cascade: bool = False
    active: bool = True
    slow: bool = False  # over 0.1 s with a backend: make test-fast leaves it out

    @property
    def id(self) -> str:
        return f"{self.problem}{'-pushed' if self.push else ''}{'-cascade' if self.cascade else ''}"


CASES = [
    Case("talos-balance", 60, active=False),
    Case("talos-balance", 100, push=1.0),
    # force bounds active before the first lift-off (steps 393-399), after the touch-down at step 800
    # and before the second lift-off at step 950
    Case("talos-walking", 960, slow=True),
    Case("talos-com-sinusoid", 60, active=False),
    Case("talos-com-sinusoid", 100, push=2.0),  # multipliers up to ~2e3
    Case("romeo-balance", 60, active=False),
    Case("romeo-balance", 100, push=1.0),
    Case("ur5-reaching", 60),  # torque limits bind for the first steps
    Case("ur5-reaching", 100, push=1.0),
    Case("solo12-com-sinusoid", 60, active=False),
    Case("solo12-com-sinusoid", 100, push=2.0),
    Case("talos-balance", 60, push=1.0, cascade=True, slow=True),
    Case("ur5-reaching", 60, push=1.0, cascade=True),
    Case("solo12-com-sinusoid", 60, push=2.0, cascade=True),
]
SNAPSHOT_EVERY = 20  # steps between two checks of the user's output against a QP built anew


def run_case(case: Case, solver: tp.Solver, check: Callable[[HqpData, HqpOutput], None]) -> KktRecorder:
    """Run ``case`` in closed loop with ``solver`` (its QPs checked), ``check`` called on every
    SNAPSHOT_EVERY-th step's problem and output."""
    problem = PROBLEMS[case.problem]
    q, v = initial_state(problem)
    if case.push:
        v = case.push * np.random.default_rng(0).standard_normal(v.size)
    recorder = KktRecorder(solver)
    controller = build_tsid_py(problem, q, solver)
    form = controller.formulation
    assert isinstance(form, tp.InverseDynamicsFormulation)
    if case.cascade:
        posture = form.tasks["task-posture"]
        assert isinstance(posture, TaskMotion)
        form.remove_task("task-posture")
        form.add_motion_task(posture, weight=problem.posture[1], priority=2)
    for i in range(case.steps):
        t = i * problem.dt
        for update in controller.references:
            update(t)
        hqp = form.compute_problem_data(t, q, v)
        out = recorder.solve(hqp)
        assert out.ok, out.message
        if i % SNAPSHOT_EVERY == 0:
            check(hqp, out)
        q, v = integrate(controller.model, q, v, form.get_accelerations(out), problem.dt)
    return recorder


def assert_kkt(kkt: KktResiduals, where: str) -> None:
    assert kkt.worst() <= KKT_TOLERANCE, f"{where}: {kkt}"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c.id, marks=pytest.mark.slow if c.slow else ()) for c in CASES]
)
def test_every_qp_of_a_closed_loop_satisfies_kkt(backend: str, case: Case) -> None:
    """Every QP the backend solves (each level of a cascade, warm started or not) passes the KKT
    check, and so does the output of ``Solver.solve`` against the QP of a snapshot of the problem
    (for one cost level: a cascade's output keeps the multipliers of the level-0 rows only)."""

    def check_output(hqp: HqpData, out: HqpOutput) -> None:
        if not case.cascade:
            assert out.x is not None
            assert_kkt(kkt_residuals(dense_qp(hqp.snapshot()), out.x, out.lagrange_multipliers), "output")

    recorder = run_case(case, tp.make_solver(backend), check_output)
    for k, solved in enumerate(recorder.solved):
        assert_kkt(solved.kkt, f"{backend}, QP {k} (level {solved.level}, {solved.iterations} iterations)")
    levels = {solved.level for solved in recorder.solved}
    assert levels == ({0, 1} if case.cascade else {0})
    if case.active:
        assert any(sum(solved.kkt.active) for solved in recorder.solved), "no inequality was ever active"
    if backend == "quadprog":  # both paths: quadprog itself and a confirmed warm start
        assert any(solved.iterations > 0 for solved in recorder.solved)
        assert any(solved.iterations == 0 for solved in recorder.solved)
        if case.push:  # the warm start confirmed active sets with rows held at their bounds
            assert any(solved.iterations == 0 and sum(solved.kkt.active) for solved in recorder.solved)


# --------------------------------------------------------------------------- small, exact problems
def random_drifting_problem(rng: np.random.Generator, n: int = 12, n_eq: int = 3, n_in: int = 10) -> HqpData:
    """A strictly convex QP whose two-sided rows bind on either side, some rows one-sided, one a
    fixed row lb = ub, one without bounds at all (both sides beyond NO_BOUND)."""
    A = rng.standard_normal((n + 4, n))
    cost = ConstraintEquality.from_arrays("cost", A, 3.0 * rng.standard_normal(n + 4))
    eq = ConstraintEquality.from_arrays("eq", rng.standard_normal((n_eq, n)), rng.standard_normal(n_eq))
    lb, ub = -0.5 * np.ones(n_in), 0.5 * np.ones(n_in)
    lb[::3] = -np.inf
    ub[1] = NO_BOUND
    lb[4] = ub[4] = 0.1
    lb[5], ub[5] = -2 * NO_BOUND, np.inf
    box = ConstraintInequality.from_arrays("box", rng.standard_normal((n_in, n)), lb, ub)
    return HqpData(
        [[WeightedConstraint(1.0, eq), WeightedConstraint(1.0, box)], [WeightedConstraint(1.0, cost)]], n
    )


@pytest.mark.parametrize("warm_start", [True, False], ids=["warm", "cold"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_drifting_qp_satisfies_kkt_on_both_sides_of_two_sided_rows(backend: str, warm_start: bool) -> None:
    rng = np.random.default_rng(8)  # rows 2 and 7 bind on either side, at different steps
    hqp = random_drifting_problem(rng)
    cost = hqp[1][0].constraint
    assert isinstance(cost, ConstraintEquality)
    recorder = KktRecorder(tp.make_solver(backend, warm_start=warm_start))
    lower = upper = 0
    for _ in range(60):  # the active set mostly stays, sometimes changes
        cost.vector += 0.2 * rng.standard_normal(cost.rows)
        out = recorder.solve(hqp)
        assert out.ok and out.x is not None
        kkt = kkt_residuals(dense_qp(hqp.snapshot()), out.x, out.lagrange_multipliers)
        assert_kkt(kkt, "output")
        lower, upper = lower + kkt.active[0], upper + kkt.active[1]
    for k, solved in enumerate(recorder.solved):
        assert_kkt(solved.kkt, f"{backend}, QP {k} ({solved.iterations} iterations)")
    assert lower and upper  # both sides of the two-sided rows were active
    if backend == "quadprog" and warm_start:
        assert any(solved.iterations == 0 and sum(solved.kkt.active) for solved in recorder.solved)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_row_without_bounds_gets_a_zero_multiplier(backend: str) -> None:
    """A QP whose only constraint row has no bound on either side still returns one multiplier per
    row (quadprog, handed no constraint at all, solves H x = -g)."""
    free = ConstraintInequality.from_arrays("free", [[1.0, 1.0]], [-np.inf], [NO_BOUND])
    target = ConstraintEquality.from_arrays("target", np.eye(2), [2.0, 0.0])
    hqp = HqpData([[WeightedConstraint(1.0, free)], [WeightedConstraint(1.0, target)]], n_var=2)
    solver = tp.make_solver(backend)
    for _ in range(2):  # cold, then warm started
        out = solver.solve(hqp)
        assert out.ok and out.x is not None
        np.testing.assert_allclose(out.x, [2.0, 0.0], atol=1e-7)
        assert out.lagrange_multipliers.tolist() == [0.0]  # exact: never active, set to 0
        assert_kkt(kkt_residuals(dense_qp(hqp), out.x, out.lagrange_multipliers), backend)


# ------------------------------------------------------------------------ the check itself bites
def solved_projection() -> tuple[DenseQp, np.ndarray, np.ndarray]:
    """min 1/2 |x - (2, 0)|^2 s.t. x1 + x2 = 1, 0.25 <= x2 <= 0.8, x1 <= 0.7, solved by hand:
    (x, [l_line, l_band, l_cap]).

    On the line the cap binds: x = (0.7, 0.3), the band inactive; H x + g = (-1.3, 0.3) =
    l_line (1, 1) + l_cap (1, 0) gives l_line = 0.3 and l_cap = -1.6 (< 0: the upper side).
    """
    H, g = np.eye(2), np.array([-2.0, 0.0])
    constraints = HardConstraints(
        np.array([[1.0, 1.0]]),
        np.array([1.0]),
        np.array([[0.0, 1.0], [1.0, 0.0]]),
        np.array([0.25, -np.inf]),
        np.array([0.8, 0.7]),
        ["line"],
        ["band", "cap"],
    )
    return DenseQp(H, g, constraints), np.array([0.7, 0.3]), np.array([0.3, 0.0, -1.6])


def test_the_check_accepts_a_known_optimum_and_flags_each_broken_condition() -> None:
    qp, x, multipliers = solved_projection()
    exact = kkt_residuals(qp, x, multipliers)
    assert exact.worst() < 1e-15 and exact.active == (0, 1)
    flipped = kkt_residuals(qp, x, -multipliers)
    assert flipped.stationarity > 0.1 and flipped.dual > 0.1  # the cap has no lower side
    assert kkt_residuals(qp, x + [1e-3, -1e-3], multipliers).stationarity > 1e-4
    assert kkt_residuals(qp, x + [1e-3, 0.0], multipliers).equality > 1e-4
    assert kkt_residuals(qp, np.array([0.75, 0.25]), np.array([0.25, 0.0, -1.5])).inequality > 1e-2
    pushing_band = multipliers + [0.0, 1.0, 0.0]  # the band is not at its lower side
    assert kkt_residuals(qp, x, pushing_band).complementarity > 0.01
