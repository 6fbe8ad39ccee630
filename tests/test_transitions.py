"""Transitions: task weights and contact force caps ramp linearly over their durations."""

import numpy as np
import pytest
from conftest import arm_with_posture

import tsid_py as tsid
from tsid_py.controllers import BipedController
from tsid_py.hqp import HqpData
from tsid_py.physics import check_solution
from tsid_py.transitions import LinearRamp

DT = 0.002


def entry_weight(hqp: HqpData, name: str) -> float:
    """The weight of the constraint called ``name`` in the HQP (fails if it is absent)."""
    (weight,) = [w for level in hqp for w, c in level if c.name == name]
    return weight


def constraint_names(hqp: HqpData) -> set[str]:
    return {c.name for level in hqp for _, c in level}


def test_linear_ramp_starts_at_first_use_and_holds_its_end():
    ramp = LinearRamp(2.0, 6.0, 0.4)
    assert not ramp.is_past_end(100.0)
    assert ramp.value(1.0) == pytest.approx(2.0, abs=1e-15)
    assert ramp.t_start == 1.0  # exact: the t of the first use
    assert ramp.value(1.1) == pytest.approx(3.0)
    assert ramp.value(1.4) == pytest.approx(6.0) and ramp.is_at_end(1.4) and not ramp.is_past_end(1.4)
    assert ramp.value(2.0) == pytest.approx(6.0, abs=1e-14)  # start + 1 (end - start)
    assert ramp.is_past_end(1.402)


def test_weight_of_an_added_task_rises_linearly_over_its_duration(ur5):
    form, q, v = arm_with_posture(ur5)
    ee = tsid.TaskSE3Equality("ee", ur5, "ee_fixed_joint")
    ee.kp = 10.0
    form.add_motion_task(ee, weight=2.0, priority=1, transition_duration=0.1)
    t0 = 0.5
    solver = tsid.SolverHQuadProg()
    for i in range(0, 61):
        t = t0 + i * DT
        hqp = form.compute_problem_data(t, q, v)
        expected = 2.0 * min(i * DT / 0.1, 1.0)
        assert entry_weight(hqp, "ee") == pytest.approx(expected, abs=1e-12)
        sol = solver.solve(hqp)
        dv, tau = form.get_accelerations(sol), form.get_actuator_forces(sol)
        assert check_solution(ur5, q, v, dv, tau, {}, ur5.effort_limit()).dynamics_residual < 1e-8
    assert entry_weight(hqp, "posture") == 1e-3  # exact: the weight as set


def test_update_weight_ramps_from_the_current_weight_and_remove_task_ramps_to_zero(ur5):
    form, q, v = arm_with_posture(ur5)
    form.update_task_weight("posture", 1e-2, duration=0.02)
    weights = [entry_weight(form.compute_problem_data(i * DT, q, v), "posture") for i in range(15)]
    np.testing.assert_allclose(weights, np.minimum(1e-3 + 9e-3 * np.arange(15) * DT / 0.02, 1e-2), atol=1e-15)

    form.remove_task("posture", duration=0.01)
    t0 = 1.0
    for i in range(6):
        hqp = form.compute_problem_data(t0 + i * DT, q, v)
        assert entry_weight(hqp, "posture") == pytest.approx(1e-2 * (1 - i * DT / 0.01), abs=1e-15)
    assert "posture" in form.tasks
    hqp = form.compute_problem_data(t0 + 6 * DT, q, v)
    assert "posture" not in form.tasks and "posture" not in constraint_names(hqp)


def test_an_immediate_change_cancels_a_ramp(ur5):
    form, q, v = arm_with_posture(ur5)
    form.update_task_weight("posture", 1.0, duration=1.0)
    form.compute_problem_data(0.0, q, v)
    form.update_task_weight("posture", 0.5)
    assert entry_weight(form.compute_problem_data(0.5, q, v), "posture") == 0.5  # exact: as set


def test_transition_errors(ur5, talos):
    form, q, v = arm_with_posture(ur5)
    with pytest.raises(tsid.errors.InvalidParameterError, match="transition"):
        form.update_task_weight("posture", 1.0, duration=-0.1)
    bounds = tsid.TaskJointBounds("bounds", ur5, DT)
    with pytest.raises(tsid.errors.InvalidParameterError, match="cost level"):
        form.add_motion_task(bounds, weight=1.0, priority=0, transition_duration=0.1)
    controller = BipedController(talos)
    with pytest.raises(tsid.errors.InvalidParameterError, match="transition_duration"):
        controller.formulation.remove_rigid_contact("contact_rfoot", -1.0)
    with pytest.raises(tsid.errors.UnknownNameError):
        controller.formulation.remove_rigid_contact("contact_nose", 0.1)


def normal_force_cap(hqp: HqpData, contact: str) -> float:
    (constraint,) = [c for _, c in hqp[0] if c.name == f"{contact}_force_constraint"]
    return float(constraint.upper_bound[-1])


def checked_solve(controller, t, q, v):
    """Solve one step and check the physics of the solution; returns (hqp, forces by contact)."""
    form, robot = controller.formulation, controller.robot
    hqp = form.compute_problem_data(t, q, v)
    sol = controller.solver.solve(hqp)
    assert sol.ok
    dv, tau = form.get_accelerations(sol), form.get_actuator_forces(sol)
    forces = {name: form.get_contact_force(name, sol) for name in form.contacts}
    check = check_solution(
        robot, q, v, dv, tau, {n: (form.contacts[n], f) for n, f in forces.items()}, controller.tau_max
    )
    assert check.dynamics_residual < 1e-8
    assert check.max_pyramid_violation < 1e-6 and check.max_normal_bound_violation < 1e-6
    assert check.max_torque_ratio <= 1.0 + 1e-6
    return hqp, forces


def test_contact_unloads_linearly_to_f_min_then_leaves_and_reloads_gradually(talos):
    controller = BipedController(talos)
    form, contact = controller.formulation, controller.contacts["right"]
    q, v = controller.q0, talos.zero_velocity()
    _, forces = checked_solve(controller, 0.0, q, v)
    start = contact.get_normal_force(forces["contact_rfoot"])
    assert start > 300.0  # about half the weight
    n_var = form.n_var

    form.remove_rigid_contact("contact_rfoot", transition_duration=0.05, normal_force=start)
    end = contact.min_normal_force + 1e-3
    t0, normal = 0.1, []
    for i in range(26):
        hqp, forces = checked_solve(controller, t0 + i * DT, q, v)
        cap = start + (end - start) * i * DT / 0.05
        assert normal_force_cap(hqp, "contact_rfoot") == pytest.approx(cap, rel=1e-12)
        normal.append(contact.get_normal_force(forces["contact_rfoot"]))
        assert normal[-1] <= cap + 1e-6
    assert normal[-1] == pytest.approx(end, abs=1e-6)
    assert np.max(np.abs(np.diff(normal))) <= (start - end) * DT / 0.05 + 1e-6  # no jump on the way down
    assert contact.max_normal_force == 1000.0  # exact: the contact object keeps its own bound
    hqp, forces = checked_solve(controller, t0 + 26 * DT, q, v)
    assert not form.check_contact("contact_rfoot") and form.n_var == n_var - 12
    assert "contact_rfoot_force_constraint" not in constraint_names(hqp)

    form.add_rigid_contact(contact, force_reg_weight=1e-5, transition_duration=0.1)
    t1 = 1.0
    for i in range(0, 51, 10):
        hqp, forces = checked_solve(controller, t1 + i * DT, q, v)
        cap = end + (contact.max_normal_force - end) * i * DT / 0.1
        assert normal_force_cap(hqp, "contact_rfoot") == pytest.approx(cap, rel=1e-12)
        assert contact.get_normal_force(forces["contact_rfoot"]) <= cap + 1e-6
    hqp, _ = checked_solve(controller, t1 + 0.2, q, v)
    assert normal_force_cap(hqp, "contact_rfoot") == contact.max_normal_force  # exact: ramp over, f_max


def test_reading_a_solution_changes_nothing_and_a_ramp_starts_where_it_is_told(talos):
    """The getters only read: a ramped removal starts from the normal force it is given (and needs
    one), whatever solution was read; a controller gives the last step's planned force.
    (Compat's getters keep the solution they read, as TSID's decodeSolution: the oracle's walk
    through tsid_py.compat checks it against the C++ TSID.)"""
    controller = BipedController(talos)
    form, contact = controller.formulation, controller.contacts["right"]
    q, v = controller.q0, talos.zero_velocity()
    assert controller.planned_normal_force("contact_rfoot") is None  # no step yet
    out = controller.compute(0.0, q, v)
    planned = contact.get_normal_force(out.forces["contact_rfoot"])
    assert controller.planned_normal_force("contact_rfoot") == pytest.approx(planned, rel=1e-12)
    out.forces["contact_rfoot"][:] = 0.0  # the caller's copy: the controller's is its own
    assert controller.planned_normal_force("contact_rfoot") == pytest.approx(planned, rel=1e-12)

    for _ in range(3):  # reads of the solution, as many as one likes
        form.get_contact_force("contact_rfoot", out.solution)
    with pytest.raises(tsid.errors.InvalidParameterError, match="give the normal force the ramp starts from"):
        form.remove_rigid_contact("contact_rfoot", transition_duration=0.05)  # a ramp from where?
    form.remove_rigid_contact("contact_rfoot", 0.05, normal_force=contact.max_normal_force)
    hqp = form.compute_problem_data(0.002, q, v)
    assert normal_force_cap(hqp, "contact_rfoot") == pytest.approx(contact.max_normal_force, rel=1e-12)

    controller = BipedController(talos)  # the controller's own lift starts from its planned force
    controller.compute(0.0, q, v)
    planned = controller.planned_normal_force("contact_rfoot")
    controller.remove_contact("right", 0.05)
    hqp = controller.formulation.compute_problem_data(0.002, q, v)
    assert normal_force_cap(hqp, "contact_rfoot") == pytest.approx(planned, rel=1e-12)
    with pytest.raises(tsid.errors.InvalidParameterError, match="normal_force"):
        form.remove_rigid_contact("contact_lfoot", 0.05, normal_force=-1.0)
