"""An infeasible level 0 is reported with the constraints that conflict, and the problem is kept."""

import numpy as np
import pytest

import tsid_py as tsid
from tsid_py.controllers.biped import BipedController
from tsid_py.hqp import HqpData, WeightedConstraint


def test_the_conflicting_constraints_are_named(solver):
    # x0 <= 0 and x0 >= 1 conflict; "free" is satisfiable and must not be blamed.
    low = tsid.ConstraintInequality.from_arrays("low", [[1.0, 0.0]], [-np.inf], [0.0])
    high = tsid.ConstraintInequality.from_arrays("high", [[1.0, 0.0]], [1.0], [np.inf])
    free = tsid.ConstraintEquality.from_arrays("free", [[0.0, 1.0]], [3.0])
    cost = tsid.ConstraintEquality.from_arrays("cost", np.eye(2), [0.0, 0.0])
    hqp = HqpData(
        [[WeightedConstraint(1.0, c) for c in (low, high, free)], [WeightedConstraint(1.0, cost)]], 2
    )
    sol = solver.solve(hqp)
    assert sol.status == tsid.QPStatus.INFEASIBLE
    assert len(sol.infeasible_constraints) == 1 and sol.infeasible_constraints[0] in ("low", "high")
    assert "restores feasibility" in sol.message
    assert sol.problem is not None and sol.problem is not hqp and "free" in sol.problem.describe()


def test_a_hard_com_task_outside_the_friction_cones_is_blamed(talos, solver):
    # The CoM task at level 0 asks 5 m/s^2 forward: feet with mu = 0.3 cannot push that hard.
    controller = BipedController(talos, solver=solver)
    form = controller.formulation
    form.remove_task("task-com")
    form.add_motion_task(controller.com_task, weight=1.0, priority=0)
    controller.set_com_reference(tsid.TrajectorySample(controller.com_initial + [0.5, 0.0, 0.0]))
    sol = solver.solve(form.compute_problem_data(0.0, controller.q0, talos.zero_velocity()))
    assert sol.status == tsid.QPStatus.INFEASIBLE
    assert sol.infeasible_constraints == ["task-com"]
    assert "'task-com' restores feasibility" in sol.message
    with pytest.raises(tsid.SolverFailedError, match="task-com"):
        form.get_accelerations(sol)
