"""Every installed backend on problems with known solutions and on an infeasible one."""

import threading

import numpy as np
import pytest

import tsid_py as tsid
from tsid_py.constraints import ConstraintBound, ConstraintEquality, ConstraintInequality
from tsid_py.hqp import HqpData, WeightedConstraint
from tsid_py.solvers import QPStatus
from tsid_py.threads import limit_blas_threads, step_blas_threads


def problem(levels):
    return HqpData([[WeightedConstraint(w, c) for w, c in level] for level in levels], n_var=2)


def test_projection_onto_a_line_with_a_bound(solver):
    # min |x - (2, 0)|^2 s.t. x1 + x2 = 1, x2 >= 0.25  ->  x = (0.75, 0.25)
    line = ConstraintEquality.from_arrays("line", [[1.0, 1.0]], [1.0])
    floor = ConstraintInequality.from_arrays("floor", [[0.0, 1.0]], [0.25], [np.inf])
    target = ConstraintEquality.from_arrays("target", np.eye(2), [2.0, 0.0])
    sol = solver.solve(problem([[(1.0, line), (1.0, floor)], [(1.0, target)]]))
    assert sol.status == QPStatus.OPTIMAL
    np.testing.assert_allclose(sol.x, [0.75, 0.25], atol=1e-7)
    assert sol.active_set.tolist() == [0]


def test_weights_trade_off_two_costs(solver):
    # min w1 |x1 - 1|^2 + w2 |x1 - 3|^2 -> x1 = (w1 + 3 w2) / (w1 + w2)
    a = ConstraintEquality.from_arrays("a", [[1.0, 0.0]], [1.0])
    b = ConstraintEquality.from_arrays("b", [[1.0, 0.0]], [3.0])
    sol = solver.solve(problem([[], [(3.0, a), (1.0, b)]]))
    assert sol.x[0] == pytest.approx(1.5, abs=1e-7)


def test_infeasible_problem_is_reported_and_kept(solver):
    low = ConstraintInequality.from_arrays("low", [[1.0, 0.0]], [-np.inf], [0.0])
    high = ConstraintInequality.from_arrays("high", [[1.0, 0.0]], [1.0], [np.inf])
    sol = solver.solve(problem([[(1.0, low), (1.0, high)], []]))
    assert sol.status == QPStatus.INFEASIBLE
    assert sol.x is None
    assert sol.problem is not None and "high" in sol.problem.describe()


def test_constraint_check():
    c = ConstraintInequality.from_arrays("c", [[1.0, 1.0]], [0.0], [1.0])
    assert c.check([0.5, 0.5])
    assert not c.check([1.0, 0.5])
    np.testing.assert_allclose(c.residual([1.0, 0.5]), [0.5])
    with pytest.raises(tsid.errors.InvalidParameterError, match="lower > upper"):
        ConstraintInequality.from_arrays("bad", [[1.0, 0.0]], [1.0], [0.0])


def random_problem(rng, n=12, n_eq=3, n_in=10):
    """A strictly convex QP whose box bounds bind on some rows, as HqpData."""
    A = rng.standard_normal((n + 4, n))
    cost = ConstraintEquality.from_arrays("cost", A, 3.0 * rng.standard_normal(n + 4))
    eq = ConstraintEquality.from_arrays("eq", rng.standard_normal((n_eq, n)), rng.standard_normal(n_eq))
    C = rng.standard_normal((n_in, n))
    lb, ub = -0.5 * np.ones(n_in), 0.5 * np.ones(n_in)
    lb[::3] = -np.inf  # some one-sided rows
    box = ConstraintInequality.from_arrays("box", C, lb, ub)
    return HqpData(
        [[WeightedConstraint(1.0, eq), WeightedConstraint(1.0, box)], [WeightedConstraint(1.0, cost)]], n
    )


def test_warm_start_gives_the_cold_solution_and_valid_multipliers():
    rng = np.random.default_rng(7)
    warm, cold = tsid.SolverHQuadProg(), tsid.SolverHQuadProg(warm_start=False)
    hqp = random_problem(rng)
    cost, eq, box = hqp[1][0].constraint, hqp[0][0].constraint, hqp[0][1].constraint
    confirmed = 0
    for _ in range(60):  # a slowly drifting problem: the active set mostly stays, sometimes changes
        cost.vector += 0.05 * rng.standard_normal(cost.rows)
        w, c = warm.solve(hqp), cold.solve(hqp)
        assert w.ok and c.ok
        np.testing.assert_allclose(w.x, c.x, atol=1e-9, rtol=0)
        confirmed += w.iterations == 0
        # KKT: H x + g = A_eq^T l_eq + C^T l_in, l_in > 0 at a lower bound, < 0 at an upper bound
        H = cost.matrix.T @ cost.matrix + 1e-8 * np.eye(12)
        g = -cost.matrix.T @ cost.vector
        l_eq, l_in = w.lagrange_multipliers[:3], w.lagrange_multipliers[3:]
        np.testing.assert_allclose(H @ w.x + g, eq.matrix.T @ l_eq + box.matrix.T @ l_in, atol=1e-8)
        Cx = box.matrix @ w.x
        assert np.all(Cx >= box.lower_bound - 1e-9) and np.all(Cx <= box.upper_bound + 1e-9)
        at_lower, at_upper = (
            np.isclose(Cx, box.lower_bound, atol=1e-8),
            np.isclose(Cx, box.upper_bound, atol=1e-8),
        )
        assert np.all(l_in[~(at_lower | at_upper)] == 0.0)  # exact: inactive rows get 0
        assert np.all(l_in[at_lower] >= -1e-9) and np.all(l_in[at_upper] <= 1e-9)
        assert sorted(w.active_set.tolist()) == np.flatnonzero(l_in != 0.0).tolist()  # exact: as above
    assert 10 < confirmed < 60  # the warm start was used, and quadprog ran when the active set changed


def test_warm_start_falls_back_when_the_guess_is_wrong():
    floor = ConstraintInequality.from_arrays("floor", [[0.0, 1.0]], [0.25], [np.inf])
    target = ConstraintEquality.from_arrays("target", np.eye(2), [2.0, 0.0])
    hqp = problem([[(1.0, floor)], [(1.0, target)]])
    solver = tsid.SolverHQuadProg()
    assert solver.solve(hqp).active_set.tolist() == [0]  # x2 = 0 is below the floor: bound active
    target.vector[:] = [2.0, 1.0]  # now the floor is inactive; the guess [0] must be rejected
    sol = solver.solve(hqp)
    np.testing.assert_allclose(sol.x, [2.0, 1.0], atol=1e-7)
    assert sol.active_set.tolist() == []


def test_a_solutions_active_set_is_the_callers_not_the_warm_start_guess():
    """Changing the active set of a cold solution leaves the guess the next solve starts from."""
    floor = ConstraintInequality.from_arrays("floor", [[1.0, 0.0], [0.0, 1.0]], [-5.0, 0.25], [5.0, 5.0])
    target = ConstraintEquality.from_arrays("target", np.eye(2), [2.0, 0.0])
    hqp = problem([[(1.0, floor)], [(1.0, target)]])
    solver = tsid.SolverHQuadProg()
    cold = solver.solve(hqp)
    assert cold.iterations > 0 and cold.active_set.tolist() == [1]
    cold.active_set[:] = 0  # the caller's to change
    warm = solver.solve(hqp)
    assert warm.iterations == 0 and warm.active_set.tolist() == [1]  # the guess confirmed at once


def test_warm_start_on_an_ill_conditioned_problem_matches_quadprog():
    """Romeo started with a random velocity (seeded): up to ~20 friction rows active, and the
    Schur complement E H^-1 E^T ill-conditioned. The warm start needs iterative refinement
    there; it must still give quadprog's optimum.
    """
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from oracle_problems import PROBLEMS, build_tsid_py, initial_state, integrate

    problem = PROBLEMS["romeo-balance"]
    q, v = initial_state(problem)
    v = np.random.default_rng(0).standard_normal(v.size)  # a push, so friction rows bind
    warm = build_tsid_py(problem, q)
    cold = tsid.SolverHQuadProg(warm_start=False)
    confirmed, most_active = 0, 0
    for i in range(40):
        hqp = warm.formulation.compute_problem_data(i * problem.dt, q, v)
        w, c = warm.solver.solve(hqp), cold.solve(hqp)
        assert w.ok and c.ok
        np.testing.assert_allclose(w.x, c.x, rtol=0, atol=1e-8 * np.abs(c.x).max())
        confirmed += w.iterations == 0
        most_active = max(most_active, c.active_set.size)
        q, v = integrate(warm.model, q, v, w.x[: warm.model.nv], problem.dt)
    assert confirmed > 20
    assert most_active >= 10  # the ill-conditioned case this test is about: many rows active


def test_limit_blas_threads_sets_one_thread_in_every_loaded_blas():
    from threadpoolctl import threadpool_info, threadpool_limits

    with threadpool_limits(limits=2, user_api="blas"):  # restore afterwards for the other tests
        limit_blas_threads()
        blas = [info for info in threadpool_info() if info["user_api"] == "blas"]
        assert blas and all(info["num_threads"] == 1 for info in blas)
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(tsid.errors.InvalidParameterError, match="threads"):
            limit_blas_threads(bad)


def test_the_library_steps_on_one_blas_thread_and_gives_the_callers_back(talos, ur5):
    """compute_problem_data, solve and solve_step run with every BLAS at one thread and restore
    the caller's counts; step_blas_threads(None) leaves the caller's; an unchanged script that set
    nothing gets it (the README's case)."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from tsid_py.controllers import BipedController

    def counts() -> list[int]:
        return [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]

    seen: list[list[int]] = []

    class Probe(tsid.TaskMotionTracking):  # a user's task: it runs inside compute_problem_data
        def compute_error(self, t, q, v, data):
            seen.append(counts())
            return q[7:8] - controller.q0[7:8]  # the first joint at its start

        def compute_jacobian(self, t, q, v, data):
            return np.eye(1, talos.nv, 6)

        def compute_drift(self, t, q, v, data):
            return np.zeros(1)

    controller = BipedController(talos)
    controller.formulation.add_motion_task(Probe("probe", talos, 1), weight=1e-6)

    with threadpool_limits(limits=2, user_api="blas"):
        assert set(counts()) == {2}
        controller.compute(0.0, controller.q0, talos.zero_velocity())  # solve_step
        controller.formulation.compute_problem_data(0.0, controller.q0, talos.zero_velocity())
        assert seen and all(set(c) == {1} for c in seen)  # inside: one thread
        assert set(counts()) == {2}  # outside: the caller's, given back
        seen.clear()
        worker = threading.Thread(target=controller.compute, args=(0.0, controller.q0, talos.zero_velocity()))
        worker.start()
        worker.join()
        assert seen and all(set(c) == {1} for c in seen)  # a step in another Python thread too
        assert set(counts()) == {2}

        seen.clear()
        step_blas_threads(None)
        try:
            controller.formulation.compute_problem_data(0.0, controller.q0, talos.zero_velocity())
        finally:
            step_blas_threads(1)
        assert seen and all(set(c) == {2} for c in seen)  # off: the caller's settings inside too
    with pytest.raises(tsid.errors.InvalidParameterError, match="1 or None"):
        step_blas_threads(2)


def test_the_one_thread_guard_keeps_a_functions_parameters_and_reads_the_counts_it_sets():
    """A plain function's guard has its parameters (keywords work); any other keeps *args; inside,
    every count is 1 whether it was or not; the counts read without a call agree with OpenBLAS's."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from tsid_py import threads

    def counts() -> list[int]:
        return [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]

    @threads.one_blas_thread
    def plain(a, b):
        return a, b, counts()

    @threads.one_blas_thread
    def with_default(a, b=2, *rest, c=3):
        return a, b, rest, c, counts()

    assert plain.__name__ == "plain" and plain.__code__.co_varnames[:2] == ("a", "b")
    with threadpool_limits(limits=2, user_api="blas"):
        assert plain(1, b=2)[:2] == (1, 2) and set(plain(b=1, a=0)[2]) == {1}
        assert with_default(1, 5, 6, c=7)[:4] == (1, 5, (6,), 7) and set(with_default(0)[4]) == {1}
        assert set(counts()) == {2}
    state = threads._STATE
    for library in state.libraries or ():
        if library.counter is not None:
            assert library.counter.value == library.read()


@pytest.mark.parametrize("where", ["b_eq", "A_eq", "lb", "ub", "A_in", "cost"])
def test_a_problem_with_nan_rows_is_an_error_never_optimal(solver, where):
    """quadprog drops a NaN row as if it were met: the solver reports an error naming the rows,
    after a warm start from the same problem's finite version too."""
    line = ConstraintEquality.from_arrays("line", [[1.0, 1.0]], [1.0])
    floor = ConstraintInequality.from_arrays("floor", [[0.0, 1.0]], [0.25], [np.inf])
    target = ConstraintEquality.from_arrays("target", np.eye(2), [2.0, 0.0])
    hqp = problem([[(1.0, line), (1.0, floor)], [(1.0, target)]])
    assert solver.solve(hqp).status == QPStatus.OPTIMAL
    array, name = {
        "b_eq": (line.vector, "line"),
        "A_eq": (line.matrix, "line"),
        "lb": (floor.lower_bound, "floor"),
        "ub": (floor.upper_bound, "floor"),
        "A_in": (floor.matrix, "floor"),
        "cost": (target.vector, "the cost"),
    }[where]
    array.ravel()[0] = np.nan
    sol = solver.solve(hqp)
    assert sol.status == QPStatus.ERROR and sol.x is None
    assert "NaN or infinity in" in sol.message and name in sol.message


@pytest.mark.parametrize(
    ("levels", "n_var", "error", "message"),
    [
        ("bound-2", 3, "DimensionError", "constraint 'b' at level 0 has 2 columns; the problem's n_var is 3"),
        ("cost", 4, "DimensionError", "constraint 'c' at level 1 has 3 columns; the problem's n_var is 4"),
        ("weight -1", 3, "InvalidParameterError", "the weight of constraint 'c' at level 1 must be >= 0"),
        ("weight nan", 3, "NonFiniteError", "the weight of constraint 'c' at level 1 must be finite"),
        ("weight a", 3, "InvalidParameterError", "the weight of constraint 'c' at level 1 must be a number"),
        ("no levels", 3, "InvalidParameterError", "the levels of an HqpData are a list of levels"),
        ("not a pair", 3, "InvalidParameterError", "level 1 of an HqpData holds 'c'"),
        ("not a constraint", 3, "InvalidParameterError", "level 1 of an HqpData holds WeightedConstraint"),
        ("cost", -1, "InvalidParameterError", "n_var of an HqpData must be an integer >= 0"),
    ],
)
def test_a_problem_built_by_hand_is_checked_level_by_level(levels, n_var, error, message):
    """A weight of -1 made the cost a maximum; wrong columns failed in numpy's broadcasting."""
    cost = ConstraintEquality.from_arrays("c", np.eye(3), [1.0, 2.0, 3.0])
    bound = ConstraintBound.from_arrays("b", -np.ones(2), np.ones(2))
    built = {
        "bound-2": [[WeightedConstraint(1.0, bound)], [WeightedConstraint(1.0, cost)]],
        "cost": [[], [WeightedConstraint(1.0, cost)]],
        "weight -1": [[], [WeightedConstraint(-1.0, cost)]],
        "weight nan": [[], [WeightedConstraint(float("nan"), cost)]],
        "weight a": [[], [WeightedConstraint("a", cost)]],
        "no levels": None,
        "not a pair": [[], ["c"]],
        "not a constraint": [[], [WeightedConstraint(1.0, "c")]],
    }[levels]
    with pytest.raises(getattr(tsid.errors, error), match=message):
        HqpData(built, n_var)


def test_a_problem_built_by_hand_takes_tsids_weight_constraint_pairs(solver):
    cost = ConstraintEquality.from_arrays("c", np.eye(3), [1.0, 2.0, 3.0])
    floor = ConstraintBound.from_arrays("floor", [-np.inf, -np.inf, 3.5], [0.5, np.inf, np.inf])
    hqp = HqpData([[(1.0, floor)], [(2.0, cost)]], 3)
    assert isinstance(hqp[1][0], WeightedConstraint) and hqp[1][0].weight == 2.0  # exact: as given
    np.testing.assert_allclose(solver.solve(hqp).x, [0.5, 2.0, 3.5], atol=1e-7)


def test_quadprog_solves_equality_rows_that_repeat_one_another(monkeypatch):
    """A point foot a two-joint leg cannot move sideways repeats the base's rows (Solo8): the
    equality rows are dependent but agree, which Goldfarb-Idnani calls inconsistent (the solver
    was seen to fall back once). The solver keeps an independent set: the same x, active set and
    inequality multipliers as without the repeats (one bound below, one above, one both ways: the
    active rows' numbers survive the rows left out), and equality multipliers that put the same
    force on x; rows that truly disagree stay infeasible."""
    from tsid_py.constraints import NO_BOUND
    from tsid_py.solvers import quadprog_solver
    from tsid_py.solvers.dense_qp import DenseQp, HardConstraints
    from tsid_py.solvers.hqp_output import QPStatus
    from tsid_py.solvers.quadprog_solver import SolverHQuadProg

    independent = quadprog_solver._independent_rows
    rng = np.random.default_rng(70)  # quadprog refuses the repeats here; all three bounds active
    n = 6
    H, g = 2.0 * np.eye(n), 3.0 * rng.normal(size=n)
    A, b = rng.normal(size=(3, n)), rng.normal(size=3)
    mix = rng.normal(size=(2, 3))
    A_repeated, b_repeated = np.vstack([A, mix @ A]), np.concatenate([b, mix @ b])
    A_in = np.eye(n)[:3]
    lb, ub = np.array([-0.1, -2 * NO_BOUND, -0.1]), np.array([2 * NO_BOUND, 0.1, 0.1])

    def solve(A_eq, b_eq):
        rows = HardConstraints(
            A_eq, b_eq, A_in, lb, ub, [f"e{k}" for k in range(len(b_eq))], ["x0", "x1", "x2"]
        )
        return SolverHQuadProg(warm_start=False).solve_qp(DenseQp(H, g, rows))

    kept = []
    monkeypatch.setattr(
        quadprog_solver, "_independent_rows", lambda *rows: kept.append(independent(*rows)) or kept[-1]
    )
    alone, repeated = solve(A, b), solve(A_repeated, b_repeated)
    assert len(kept) == 1 and kept[0].size == 3  # quadprog refused the repeats, once
    assert alone.status == repeated.status == QPStatus.OPTIMAL
    assert repeated.active_set.tolist() == alone.active_set.tolist() == [0, 1, 2]
    np.testing.assert_allclose(repeated.x, alone.x, atol=1e-10)
    np.testing.assert_allclose(repeated.lagrange_multipliers[5:], alone.lagrange_multipliers[3:], atol=1e-8)
    assert repeated.lagrange_multipliers[5] > 0 > repeated.lagrange_multipliers[6]  # a lower, an upper bound
    np.testing.assert_allclose(
        A_repeated.T @ repeated.lagrange_multipliers[:5], A.T @ alone.lagrange_multipliers[:3], atol=1e-8
    )
    disagreeing = solve(np.vstack([A, A[0]]), np.append(b, b[0] + 1.0))
    assert disagreeing.status == QPStatus.INFEASIBLE
