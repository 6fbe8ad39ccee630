"""An infeasible level 0 is reported with the constraints that conflict, and the problem is kept."""

import numpy as np
import pytest

import tsid_py as tsid
from tsid_py.constraints import ConstraintEquality, ConstraintInequality
from tsid_py.controllers.biped import BipedController
from tsid_py.hqp import HqpData, WeightedConstraint
from tsid_py.solvers import QPStatus
from tsid_py.solvers.diagnostics import infeasible_output


def test_the_conflicting_constraints_are_named(solver):
    # x0 <= 0 and x0 >= 1 conflict; "free" is satisfiable and must not be blamed.
    low = ConstraintInequality.from_arrays("low", [[1.0, 0.0]], [-np.inf], [0.0])
    high = ConstraintInequality.from_arrays("high", [[1.0, 0.0]], [1.0], [np.inf])
    free = ConstraintEquality.from_arrays("free", [[0.0, 1.0]], [3.0])
    cost = ConstraintEquality.from_arrays("cost", np.eye(2), [0.0, 0.0])
    hqp = HqpData(
        [[WeightedConstraint(1.0, c) for c in (low, high, free)], [WeightedConstraint(1.0, cost)]], 2
    )
    sol = solver.solve(hqp)
    assert sol.status == QPStatus.INFEASIBLE
    assert len(sol.infeasible_constraints) == 1 and sol.infeasible_constraints[0] in ("low", "high")
    assert sorted(sol.conflicting_set) == ["high", "low"]
    assert "restores feasibility" in sol.message
    assert_kept(sol, hqp, "free", "low", "high")


def biped_with_hard(talos, solver, task_name):
    """The Talos balance controller with one of its level-1 tasks moved to level 0."""
    controller = BipedController(talos, solver=solver)
    form = controller.formulation
    task = form.tasks[task_name]
    form.remove_task(task_name)
    form.add_motion_task(task, weight=1.0, priority=0)
    return controller


def solve_standing(controller):
    hqp = controller.formulation.compute_problem_data(0.0, controller.q0, controller.robot.zero_velocity())
    return hqp, controller.solver.solve(hqp)


def assert_kept(sol, hqp, *names):
    """The failed output keeps a copy of the problem, with the named constraints in it."""
    assert sol.problem is not None and sol.problem is not hqp
    description = sol.problem.describe()
    assert all(name in description for name in names)


def test_a_hard_com_task_outside_the_support_polygon_is_blamed(talos, solver):
    # The CoM reference 0.3 m to the side, outside the feet (|y| < 0.15 m): kp = 10 asks 3 m/s^2,
    # more than the friction cones (mu = 0.3, 2.9 m/s^2) can give.
    controller = biped_with_hard(talos, solver, "task-com")
    controller.set_com_reference(tsid.TrajectorySample(controller.com_initial + [0.0, 0.3, 0.0]))
    hqp, sol = solve_standing(controller)
    assert sol.status == QPStatus.INFEASIBLE
    assert sol.infeasible_constraints == ["task-com"]
    cones = ["contact_rfoot_force_constraint", "contact_lfoot_force_constraint"]
    assert sorted(sol.conflicting_set) == sorted(["task-com", *cones])
    assert "relaxing 'task-com' restores feasibility" in sol.message
    assert_kept(sol, hqp, "task-com", *cones)
    with pytest.raises(tsid.errors.SolverFailedError, match="task-com"):
        controller.formulation.get_accelerations(sol)


def test_torque_bounds_too_tight_to_stand_still_are_named(talos, solver):
    # The posture held at level 0 (no joint may move) with 20 N m per joint: the knees need 55 N m.
    controller = biped_with_hard(talos, solver, "task-posture")
    controller.actuation_task.set_bounds(-20.0 * np.ones(talos.na), 20.0 * np.ones(talos.na))
    hqp, sol = solve_standing(controller)
    assert sol.status == QPStatus.INFEASIBLE
    assert {"task-posture", "task-actuation-bounds"} <= set(sol.conflicting_set)
    assert len(sol.conflicting_set) == 3  # ... and the contact of one foot: the robot cannot fall
    assert sol.conflicting_set[0] in ("contact_rfoot_motion_task", "contact_lfoot_motion_task")
    # the cheapest relaxation lets the feet go (the robot would fall): relaxing them restores feasibility
    assert sol.infeasible_constraints == ["contact_rfoot_motion_task", "contact_lfoot_motion_task"]
    assert "'task-actuation-bounds'" in sol.message
    assert_kept(sol, hqp, "task-actuation-bounds")


def test_contradictory_equalities_are_named(talos, solver):
    # The right foot is in contact (zero acceleration) and a level-0 task lifts it 5 cm.
    controller = BipedController(talos, solver=solver)
    lift = controller.foot_tasks["right"]
    target = controller.foot_placement("right").copy()
    target.translation += np.array([0.0, 0.0, 0.05])
    lift.set_reference(target)
    controller.formulation.add_motion_task(lift, weight=1.0, priority=0)
    hqp, sol = solve_standing(controller)
    assert sol.status == QPStatus.INFEASIBLE
    assert sol.infeasible_constraints == ["task-right-foot"]
    assert sorted(sol.conflicting_set) == ["contact_rfoot_motion_task", "task-right-foot"]
    assert_kept(sol, hqp, "task-right-foot")


def test_redundant_but_consistent_equalities_are_not_called_infeasible(talos, solver):
    # A level-0 foot task asking what the contact asks (stay put): dependent rows, no conflict.
    controller = BipedController(talos, solver=solver)
    hold = controller.foot_tasks["right"]
    hold.set_reference(controller.foot_placement("right"))
    controller.formulation.add_motion_task(hold, weight=1.0, priority=0)
    hqp, sol = solve_standing(controller)
    assert sol.ok
    row = next(item.constraint for item in hqp[0] if item.constraint.name == "task-right-foot")
    assert np.abs(row.matrix @ sol.x - row.vector).max() < 1e-8
    # had the backend failed on it, the diagnostics would find level 0 feasible and say so
    out = infeasible_output(hqp, "backend gave up", solver.solve_qp)
    assert out.status == QPStatus.ERROR
    assert out.infeasible_constraints == [] and out.conflicting_set == []
    assert "is feasible" in out.message and out.problem is not None
