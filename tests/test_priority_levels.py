"""Any number of priority levels: each level is optimal under the levels above, on every backend."""

import numpy as np
import pytest

import tsid_py as tsid
from tsid_py.constraints import ConstraintEquality, ConstraintInequality
from tsid_py.controllers.biped import BipedController
from tsid_py.hqp import HqpData, WeightedConstraint
from tsid_py.scenarios.runner import run_biped
from tsid_py.trajectories import TrajectoryEuclidianSinusoid

E, Ineq = ConstraintEquality.from_arrays, ConstraintInequality.from_arrays


def problem(levels, n):
    return HqpData([[WeightedConstraint(w, c) for w, c in level] for level in levels], n_var=n)


def level_cost(level, x):
    return sum(w * float(np.sum((c.matrix @ x - c.vector) ** 2)) for w, c in level)


def test_three_levels_with_a_binding_bound_have_the_known_solution(solver):
    # level 0: x0 <= 0.5; level 1: x0 = 1, x1 + x2 = 2; level 2: x = (1, 3, 0).
    # Level 1 reaches x0 = 0.5 and any x1 + x2 = 2; level 2 then picks x1 = 2.5, x2 = -0.5.
    # Weighting the two levels in one QP would give another answer (x1 + x2 != 2).
    bound = Ineq("bound", [[1.0, 0.0, 0.0]], [-np.inf], [0.5])
    level1 = E("level1", [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]], [1.0, 2.0])
    level2 = E("level2", np.eye(3), [1.0, 3.0, 0.0])
    sol = solver.solve(problem([[(1.0, bound)], [(1.0, level1)], [(1.0, level2)]], 3))
    assert sol.ok
    np.testing.assert_allclose(sol.x, [0.5, 2.5, -0.5], atol=1e-7)


def test_equality_hierarchy_matches_null_space_projections(solver, rng):
    # Without inequalities the cascade is the classic null-space projection:
    # x1 = A1^+ b1, x2 = x1 + (A2 N1)^+ (b2 - A2 x1), x3 = x2 + (A3 N12)^+ (b3 - A3 x2).
    n = 9
    A = [rng.standard_normal((3, n)), rng.standard_normal((4, n)), rng.standard_normal((n, n))]
    b = [rng.standard_normal(3), rng.standard_normal(4), rng.standard_normal(n)]
    x, N = np.zeros(n), np.eye(n)
    for Ak, bk in zip(A, b, strict=True):
        AN_pinv = np.linalg.pinv(Ak @ N, rcond=1e-9)
        x = x + AN_pinv @ (bk - Ak @ x)
        N = N @ (np.eye(n) - AN_pinv @ Ak @ N)
    levels = [[]] + [[(1.0, E(f"level{k}", Ak, bk))] for k, (Ak, bk) in enumerate(zip(A, b, strict=True))]
    sol = solver.solve(problem(levels, n))
    assert sol.ok
    np.testing.assert_allclose(sol.x, x, atol=1e-6)


def test_a_lower_level_never_degrades_a_higher_one(solver, rng):
    # Level 0: a box, one equality and a half-space d.x <= 0.5; level 1 asks d.x = 2 (so its optimal
    # residual is not zero) and one more row; level 2 conflicts with level 1; level 3 is a
    # full-rank posture-like target.
    n = 10
    d = rng.standard_normal((1, n))
    hard = [
        (1.0, Ineq("box", np.eye(n), -2.0 * np.ones(n), 2.0 * np.ones(n))),
        (1.0, E("plane", rng.standard_normal((1, n)), [0.1])),
        (1.0, Ineq("half-space", d, [-np.inf], [0.5])),
    ]
    level1 = [(2.0, E("task-a", d, [2.0])), (0.5, E("task-b", rng.standard_normal((1, n)), [1.0]))]
    level2 = [(1.0, E("task-c", rng.standard_normal((4, n)), 3 * rng.standard_normal(4)))]
    level3 = [(1.0, E("posture", np.eye(n), rng.standard_normal(n)))]
    x1 = solver.solve(problem([hard, level1], n)).x
    x2 = solver.solve(problem([hard, level1, level2], n)).x
    x3 = solver.solve(problem([hard, level1, level2, level3], n))
    assert x3.ok
    for x in (x1, x2, x3.x):
        assert all(c.check(x, 1e-9) for _, c in hard)
    # level 1 keeps its optimum (not zero: the half-space binds) whatever the levels below ask
    assert level_cost(level1, x1) == pytest.approx(2.0 * 1.5**2, rel=1e-6)
    assert level_cost(level1, x2) == pytest.approx(level_cost(level1, x1), abs=1e-8)
    assert level_cost(level1, x3.x) == pytest.approx(level_cost(level1, x1), abs=1e-8)
    assert level_cost(level2, x3.x) == pytest.approx(level_cost(level2, x2), abs=1e-8)
    # level 2 is reduced as far as level 1's optimal set allows: well below its cost at x1
    assert level_cost(level2, x2) < 0.5 * level_cost(level2, x1)


def test_a_level_pinned_at_a_vertex_leaves_no_freedom_below(solver):
    # Level 1 drives x to the corner (1, 1) of the unit box; level 2 cannot move it.
    box = Ineq("box", np.eye(2), -np.ones(2), np.ones(2))
    level1 = E("corner", np.eye(2), [3.0, 2.0])
    level2 = E("elsewhere", np.eye(2), [-1.0, 0.0])
    sol = solver.solve(problem([[(1.0, box)], [(1.0, level1)], [(1.0, level2)]], 2))
    assert sol.ok
    np.testing.assert_allclose(sol.x, [1.0, 1.0], atol=1e-8)


def three_level_biped(talos, solver):
    """Contacts hard, CoM (and force regularization) at level 1, posture at level 2."""
    controller = BipedController(talos, solver=solver)
    form = controller.formulation
    form.remove_task("task-posture")
    form.add_motion_task(controller.posture_task, weight=1.0, priority=2)
    return controller


def test_three_level_humanoid_keeps_the_com_level_optimal(talos, solver):
    controller = three_level_biped(talos, solver)
    q, v = controller.q0.copy(), talos.zero_velocity()
    v[8:14] = 0.3  # a moving right leg gives the posture level something to want
    controller.set_com_reference(tsid.TrajectorySample(controller.com_initial + [0.02, -0.03, -0.01]))
    hqp = controller.formulation.compute_problem_data(0.0, q, v)
    three = solver.solve(hqp)
    two = solver.solve(HqpData(hqp.levels[:2], hqp.n_var))
    assert three.ok and two.ok
    assert level_cost(hqp[1], three.x) == pytest.approx(level_cost(hqp[1], two.x), abs=1e-8)
    assert level_cost(hqp[2], three.x) < level_cost(hqp[2], two.x)


@pytest.mark.slow
def test_three_level_humanoid_balances_while_swaying(talos, solver):
    controller = three_level_biped(talos, solver)
    sway = TrajectoryEuclidianSinusoid("com", controller.com_initial, [0.0, 0.05, 0.0], [0.0, 0.5, 0.0])
    summary = run_biped(controller, 1.0, 0.002, sway.sample, "three-levels").summary
    assert summary["qp_failures"] == 0
    assert summary["steps"] == 500
    assert summary["dynamics_residual_max"] < 1e-8
    # the reference starts moving at t = 0 with the robot at rest; the two-level controller lags by
    # up to 3.2 cm there, the CoM at its own level by 1.9 cm
    assert summary["com_error_max_m"] < 0.02
    assert summary["foot_drift_max_m"] < 1e-4
    assert summary["max_torque_ratio"] <= 1.0 + 1e-9


@pytest.mark.slow
def test_three_level_warm_start_holds_the_pinned_optimum(talos):
    """The optimum of level 1 is pinned by slabs whose active side flips from step to step; the
    warm start holds them at either side, so balancing needs quadprog only on the first step, and
    its solutions are the cold solves' (to the slabs' 1e-10 relative width)."""
    controller = three_level_biped(talos, tsid.SolverHQuadProg())
    form, cold = controller.formulation, tsid.SolverHQuadProg(warm_start=False)
    q, v, dt = controller.q0.copy(), talos.zero_velocity(), 0.002
    iterations = []
    for i in range(100):
        hqp = form.compute_problem_data(i * dt, q, v)
        warm, reference = controller.solver.solve(hqp), cold.solve(hqp)
        assert warm.ok and reference.ok
        np.testing.assert_allclose(warm.x, reference.x, atol=1e-7 * np.abs(reference.x).max())
        iterations.append(warm.iterations)
        q, v = tsid.integrate(talos, q, v, form.get_accelerations(warm), dt)
    assert iterations[0] > 0 and not any(iterations[1:])  # 0 iterations: confirmed by the KKT test
