"""Every installed backend on problems with known solutions and on an infeasible one."""

import numpy as np
import pytest

import tsid_py as tsid
from tsid_py.hqp import HqpData, WeightedConstraint


def problem(levels):
    return HqpData([[WeightedConstraint(w, c) for w, c in level] for level in levels], n_var=2)


def test_projection_onto_a_line_with_a_bound(solver):
    # min |x - (2, 0)|^2 s.t. x1 + x2 = 1, x2 >= 0.25  ->  x = (0.75, 0.25)
    line = tsid.ConstraintEquality.from_arrays("line", [[1.0, 1.0]], [1.0])
    floor = tsid.ConstraintInequality.from_arrays("floor", [[0.0, 1.0]], [0.25], [np.inf])
    target = tsid.ConstraintEquality.from_arrays("target", np.eye(2), [2.0, 0.0])
    sol = solver.solve(problem([[(1.0, line), (1.0, floor)], [(1.0, target)]]))
    assert sol.status == tsid.QPStatus.OPTIMAL
    np.testing.assert_allclose(sol.x, [0.75, 0.25], atol=1e-7)
    assert sol.active_set.tolist() == [0]


def test_weights_trade_off_two_costs(solver):
    # min w1 |x1 - 1|^2 + w2 |x1 - 3|^2 -> x1 = (w1 + 3 w2) / (w1 + w2)
    a = tsid.ConstraintEquality.from_arrays("a", [[1.0, 0.0]], [1.0])
    b = tsid.ConstraintEquality.from_arrays("b", [[1.0, 0.0]], [3.0])
    sol = solver.solve(problem([[], [(3.0, a), (1.0, b)]]))
    assert sol.x[0] == pytest.approx(1.5, abs=1e-7)


def test_infeasible_problem_is_reported_and_kept(solver):
    low = tsid.ConstraintInequality.from_arrays("low", [[1.0, 0.0]], [-np.inf], [0.0])
    high = tsid.ConstraintInequality.from_arrays("high", [[1.0, 0.0]], [1.0], [np.inf])
    sol = solver.solve(problem([[(1.0, low), (1.0, high)], []]))
    assert sol.status == tsid.QPStatus.INFEASIBLE
    assert sol.x is None
    assert sol.problem is not None and "high" in sol.problem.describe()


def test_constraint_check():
    c = tsid.ConstraintInequality.from_arrays("c", [[1.0, 1.0]], [0.0], [1.0])
    assert c.check([0.5, 0.5])
    assert not c.check([1.0, 0.5])
    np.testing.assert_allclose(c.residual([1.0, 0.5]), [0.5])
    with pytest.raises(tsid.InvalidParameterError, match="lower > upper"):
        tsid.ConstraintInequality.from_arrays("bad", [[1.0, 0.0]], [1.0], [0.0])
