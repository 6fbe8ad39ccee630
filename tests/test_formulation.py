"""The formulation end to end: physics invariants, known answers, errors on bad input."""

import copy

import numpy as np
import pinocchio as pin
import pytest
from conftest import arm_with_posture

import tsid_py as tsid
from tsid_py.controllers import BipedController
from tsid_py.physics import check_solution
from tsid_py.scenarios.runner import run_biped
from tsid_py.solvers import HqpOutput, QPStatus
from tsid_py.solvers.dense_qp import dense_qp

G = 9.81


def test_fixed_base_arm_at_rest_returns_gravity_torques(ur5):
    form, q, v = arm_with_posture(ur5)
    sol = tsid.SolverHQuadProg().solve(form.compute_problem_data(0.0, q, v))
    tau = form.get_actuator_forces(sol)
    gravity = pin.computeGeneralizedGravity(ur5.model, ur5.create_data(), q)
    np.testing.assert_allclose(tau, gravity, atol=1e-8)
    assert (form.n_var, form.n_eq, form.n_in) == (6, 0, 0)


@pytest.mark.slow
def test_talos_standing_still_for_two_seconds(talos):
    controller = BipedController(talos)
    com0 = controller.com_initial.copy()
    feet0 = {side: controller.foot_placement(side).translation.copy() for side in ("right", "left")}
    result = run_biped(controller, 2.0, 0.002, tsid.TrajectoryEuclidianConstant("c", com0).sample, "balance")
    log = result.log.arrays()
    assert result.summary["qp_failures"] == 0 and result.summary["steps"] == 1000
    assert np.max(np.linalg.norm(log["com"] - com0, axis=1)) < 1e-4
    for side, p0 in feet0.items():
        assert np.linalg.norm(controller.foot_placement(side).translation - p0) < 1e-6
    # forces are in the (slightly tilted) foot frames: sum their world-vertical components
    weight = talos.total_mass * np.linalg.norm(talos.model.gravity.linear)
    vertical = sum(
        log[f"forces/{c.name}"].reshape(-1, 4, 3).sum(axis=1) @ c.reference.rotation[2]
        for c in controller.contacts.values()
    )
    np.testing.assert_allclose(vertical, weight, rtol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("robot_name", ["talos", "romeo"])
def test_every_solution_satisfies_the_physics(robot_name):
    robot = tsid.load_robot(robot_name)
    controller = BipedController(robot)
    sway = tsid.TrajectoryEuclidianSinusoid("c", controller.com_initial, [0, 0.05, 0], [0, 0.5, 0])
    q, v = controller.q0.copy(), robot.zero_velocity()
    for i in range(300):
        controller.set_com_reference(sway.sample(i * 0.002))
        out = controller.compute(i * 0.002, q, v)
        assert out.solution.ok
        contacts = {n: (controller.formulation.contacts[n], f) for n, f in out.forces.items()}
        check = check_solution(robot, q, v, out.dv, out.tau, contacts, controller.tau_max)
        assert check.dynamics_residual <= 1e-8
        assert check.max_pyramid_violation <= 1e-6
        assert check.max_normal_bound_violation <= 1e-6
        assert check.max_torque_ratio <= 1.0 + 1e-6
        q, v = tsid.integrate(robot, q, v, out.dv, 0.002)


def test_the_residual_check_catches_a_wrong_torque(talos):
    controller = BipedController(talos)
    q, v = controller.q0, talos.zero_velocity()
    out = controller.compute(0.0, q, v)
    contacts = {n: (controller.formulation.contacts[n], f) for n, f in out.forces.items()}
    tau = out.tau.copy()
    tau[3] += 1.0
    assert check_solution(talos, q, v, out.dv, tau, contacts).dynamics_residual > 1e-4


def test_solo12_on_four_point_contacts(solo12):
    q, v = solo12.default_configuration(), solo12.zero_velocity()
    form = tsid.InverseDynamicsFormulation("quadruped", solo12)
    solo12.compute_all_terms(form.data, q, v)
    contacts = {}
    for name in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"):
        c = tsid.ContactPoint(name, solo12, name, [0, 0, 1], 0.5, 0.1, 100.0)
        c.kp = 10.0
        c.set_reference(solo12.frame_placement(form.data, name))
        form.add_rigid_contact(c, force_reg_weight=1e-5)
        contacts[name] = c
    com = tsid.TaskComEquality("com", solo12)
    com.kp = 10.0
    com.set_reference(tsid.TrajectorySample(solo12.com(form.data).copy()))
    form.add_motion_task(com)
    posture = tsid.TaskJointPosture("posture", solo12)
    posture.kp = 10.0
    posture.set_reference(tsid.TrajectorySample(q[7:]))
    form.add_motion_task(posture, weight=1e-2)
    sol = tsid.SolverHQuadProg().solve(form.compute_problem_data(0.0, q, v))
    forces = {n: (c, form.get_contact_force(n, sol)) for n, c in contacts.items()}
    check = check_solution(solo12, q, v, form.get_accelerations(sol), form.get_actuator_forces(sol), forces)
    assert check.dynamics_residual < 1e-8
    vertical = sum(c.reference.rotation[2] @ f for c, f in forces.values())
    assert vertical == pytest.approx(solo12.total_mass * G, rel=1e-4)
    assert np.abs(form.get_accelerations(sol)).max() < 1e-4


def test_remove_and_update(talos):
    controller = BipedController(talos)
    form = controller.formulation
    n_var = form.n_var
    form.update_task_weight("task-com", 2.0)
    form.update_rigid_contact_weights("contact_rfoot", force_reg_weight=1e-4)
    form.remove_task("task-am")
    assert "task-am" not in form.tasks
    form.remove_rigid_contact("contact_lfoot")
    assert form.n_var == n_var - 12 and not form.check_contact("contact_lfoot")
    hqp = form.compute_problem_data(0.0, controller.q0, talos.zero_velocity())
    assert all(item.constraint.cols == form.n_var for level in hqp for item in level)


def test_bad_inputs_raise_named_errors(talos):
    controller = BipedController(talos)
    form = controller.formulation
    q, v = controller.q0, talos.zero_velocity()
    with pytest.raises(tsid.errors.DimensionError, match="q must have size 39"):
        form.compute_problem_data(0.0, q[:-1], v)
    bad_v = v.copy()
    bad_v[0] = np.nan
    with pytest.raises(tsid.errors.NonFiniteError, match="v contains NaN"):
        form.compute_problem_data(0.0, q, bad_v)
    with pytest.raises(tsid.errors.UnknownFrameError, match="did you mean"):
        tsid.TaskSE3Equality("hand", talos, "gripper_left_jont")
    with pytest.raises(tsid.errors.InvalidParameterError, match="weight must be >= 0"):
        form.add_motion_task(tsid.TaskComEquality("com2", talos), weight=-1.0)
    with pytest.raises(tsid.errors.InvalidParameterError, match="f_min must be <= f_max"):
        tsid.Contact6d(
            "c", talos, "leg_left_sole_fix_joint", talos.spec.sole.corners(), [0, 0, 1], 0.3, 10.0, 1.0
        )
    with pytest.raises(tsid.errors.DuplicateNameError, match="task-com"):
        form.add_motion_task(tsid.TaskComEquality("task-com", talos))
    with pytest.raises(tsid.errors.UnknownNameError, match="task-com"):
        form.remove_task("task-con")
    with pytest.raises(tsid.errors.InvalidParameterError, match="priority"):
        form.add_motion_task(tsid.TaskComEquality("com3", talos), priority=-1)
    for name in (None, ["task-com"]):  # no name at all: an unknown one, not a TypeError
        with pytest.raises(tsid.errors.UnknownNameError, match="unknown task"):
            form.remove_task(name)


def test_reading_a_failed_solution_raises(talos):
    form = BipedController(talos).formulation
    failed = HqpOutput(QPStatus.INFEASIBLE, message="test")
    with pytest.raises(tsid.errors.SolverFailedError, match="INFEASIBLE"):
        form.get_actuator_forces(failed)
    with pytest.raises(tsid.errors.InvalidParameterError, match="HqpOutput of solver.solve"):
        form.get_accelerations(None)


def test_integrate_keeps_the_quaternion_unit(talos, rng):
    q, v = talos.default_configuration(), rng.standard_normal(talos.nv)
    q1, v1 = tsid.integrate(talos, q, v, rng.standard_normal(talos.nv), 0.01)
    assert np.linalg.norm(q1[3:7]) == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(tsid.errors.InvalidParameterError, match="dt must be > 0"):
        tsid.integrate(talos, q, v, v, 0.0)


def test_active_torque_bounds_hold_on_the_true_torques(talos):
    """Tight bounds on the knees make the level-0 torque constraint active; the torques that the
    independent RNEA check accepts must then sit on the bound, not beyond it."""
    controller = BipedController(talos)
    q, v = controller.q0, talos.zero_velocity()
    free = controller.compute(0.0, q, v).tau
    knees = [3, 9]
    tau_max = np.full(talos.na, np.inf)
    tau_max[knees] = 0.8 * np.abs(free[knees])
    controller.actuation_task.set_bounds(-tau_max, tau_max)
    out = controller.compute(0.0, q, v)
    assert out.solution.ok
    contacts = {n: (controller.formulation.contacts[n], f) for n, f in out.forces.items()}
    check = check_solution(talos, q, v, out.dv, out.tau, contacts, tau_max)
    assert check.dynamics_residual < 1e-8
    assert check.max_torque_ratio == pytest.approx(1.0, abs=1e-6)


def test_the_workspace_qp_equals_the_qp_built_from_a_copy_and_follows_changes(talos):
    """The one QP builder: the formulation's problem, read from its workspace's buffers, and a
    snapshot laid out anew give the same rows, in the same order (so active sets and multipliers
    count the same rows)."""
    controller = BipedController(talos)
    form = controller.formulation
    q, v = controller.q0, np.full(talos.nv, 0.01)

    def compare():
        hqp = form.compute_problem_data(0.0, q, v)
        assert hqp.id is not None  # the formulation's own
        fast, generic = dense_qp(hqp), dense_qp(hqp.snapshot())
        np.testing.assert_allclose(fast.H, generic.H, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(fast.g, generic.g, rtol=1e-12, atol=1e-12)
        for name in ("A_eq", "b_eq", "A_in", "lb", "ub"):
            a, b = getattr(fast.constraints, name), getattr(generic.constraints, name)
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        assert fast.constraints.in_names == generic.constraints.in_names
        return fast

    before = compare().H.copy()  # the workspace's buffer: the next call overwrites it
    form.update_task_weight("task-com", 10.0)
    after = compare()
    assert not np.allclose(before, after.H)
    form.remove_task("task-am")
    compare()
    torque = tsid.TaskActuationEquality("torque-reference", talos)  # a cost on tau: rows span dv and f
    torque.set_reference(np.ones(talos.na))
    form.add_actuation_task(torque, weight=1e-4, priority=1)
    compare()
    form.remove_task("torque-reference")
    form.remove_rigid_contact("contact_lfoot")
    assert compare().constraints.A_eq.shape == (12, talos.nv + 12)


def test_the_problem_handed_out_is_read_only_and_goes_stale(talos):
    """The formulation's problem is its buffers seen read-only, valid until the next problem."""
    controller = BipedController(talos)
    form = controller.formulation
    q, v = controller.q0, talos.zero_velocity()
    hqp = form.compute_problem_data(0.0, q, v)
    with pytest.raises(AttributeError):
        hqp.levels[1].append(None)  # tuples: the formulation's levels cannot be changed
    with pytest.raises(ValueError, match="read-only"):
        hqp[1][0].constraint.vector[0] = 1.0
    kept = hqp.snapshot()
    kept[1][0].constraint.vector[0] = 1.0  # a snapshot is the caller's
    form.compute_problem_data(0.002, q, v)
    with pytest.raises(tsid.errors.StaleProblemError, match="snapshot"):
        _ = hqp.levels
    with pytest.raises(tsid.errors.StaleProblemError):
        controller.solver.solve(hqp)
    assert controller.solver.solve(kept).ok


def test_solution_of_an_earlier_layout_is_refused(talos):
    """A contact removed and another of the same size added: x has the right size but the old layout."""
    controller = BipedController(talos)
    form, solver = controller.formulation, tsid.SolverHQuadProg()
    q, v = controller.q0, talos.zero_velocity()
    old = solver.solve(form.compute_problem_data(0.0, q, v))
    tau = form.get_actuator_forces(old)
    contact = form.contacts["contact_rfoot"]
    form.remove_rigid_contact("contact_rfoot")
    form.add_rigid_contact(contact)  # same n_var as before, but the feet's forces have swapped places
    assert list(form.contacts) == ["contact_lfoot", "contact_rfoot"]
    assert old.x.shape == (form.n_var,)
    with pytest.raises(tsid.errors.SolverFailedError, match="before a contact was added or removed"):
        form.get_actuator_forces(old)
    new = solver.solve(form.compute_problem_data(0.0, q, v))
    np.testing.assert_allclose(form.get_actuator_forces(new), tau, atol=1e-6 * np.abs(tau).max())
    # a task added, or a copy of the solution: x keeps its layout, the solution stays readable
    form.add_motion_task(tsid.TaskJointPosture("another-posture", talos), weight=1e-3, priority=2)
    from_copy = form.get_actuator_forces(copy.deepcopy(new))
    np.testing.assert_array_equal(from_copy, form.get_actuator_forces(new))  # exact: a copy


def test_torque_bounds_on_some_joints_bound_those_joints_only(talos):
    """A mask that selects non-adjacent joints (the knees): their rows of the torque map, exactly."""
    controller = BipedController(talos)
    form = controller.formulation
    q, v = controller.q0, np.full(talos.nv, 0.01)
    free = controller.compute(0.0, q, v).tau
    knees = [3, 9]
    form.remove_task("task-actuation-bounds")
    bounds = tsid.TaskActuationBounds("knee-bounds", talos)
    bounds.mask = np.isin(np.arange(talos.na), knees).astype(float)
    tau_max = np.full(talos.na, np.inf)
    tau_max[knees] = 0.8 * np.abs(free[knees])
    bounds.set_bounds(-tau_max, tau_max)
    form.add_actuation_task(bounds, weight=1.0, priority=0)
    out = controller.compute(0.0, q, v)
    assert out.solution.ok
    rows = next(
        e.constraint for e in form.compute_problem_data(0.0, q, v)[0] if e.constraint.name == "knee-bounds"
    )
    h = pin.nonLinearEffects(talos.model, talos.create_data(), q, v)[talos.nv - talos.na :]
    np.testing.assert_allclose(rows.matrix @ out.solution.x, (out.tau - h)[knees], atol=1e-9)
    np.testing.assert_allclose(np.abs(out.tau[knees]), tau_max[knees], rtol=1e-9)  # both knees at their bound
    contacts = {n: (form.contacts[n], f) for n, f in out.forces.items()}
    assert check_solution(talos, q, v, out.dv, out.tau, contacts, None).dynamics_residual < 1e-8


def test_a_mask_changed_after_adding_the_task_resizes_its_rows(talos):
    """As in TSID, a task's mask may change while it is in the formulation: its rows follow."""
    controller = BipedController(talos)
    form, solver = controller.formulation, tsid.SolverHQuadProg()
    q, v = controller.q0, np.full(talos.nv, 0.01)
    solver.solve(form.compute_problem_data(0.0, q, v))
    mask = np.ones(talos.na)
    mask[[0, 5, 20]] = 0.0
    controller.posture_task.mask = mask
    com = controller.com_task
    com.mask = [1.0, 1.0, 0.0]
    hqp = form.compute_problem_data(0.0, q, v)
    rows = {e.constraint.name: e.constraint.rows for e in hqp[1]}
    assert rows["task-posture"] == talos.na - 3 and rows["task-com"] == 2
    changed = solver.solve(hqp)
    assert changed.ok
    fresh = BipedController(talos)  # the same tasks, masked before they are added
    params, form2 = fresh.params, fresh.formulation
    form2.remove_task("task-posture")
    form2.remove_task("task-com")
    fresh.posture_task.mask, fresh.com_task.mask = mask, [1.0, 1.0, 0.0]
    form2.add_motion_task(fresh.com_task, weight=params.w_com)
    form2.add_motion_task(fresh.posture_task, weight=params.w_posture)
    expected = tsid.SolverHQuadProg().solve(form2.compute_problem_data(0.0, q, v))
    np.testing.assert_allclose(
        form.get_actuator_forces(changed), form2.get_actuator_forces(expected), atol=1e-8
    )


def test_torque_bounds_survive_a_mask_change(talos):
    bounds = tsid.TaskActuationBounds("bounds", talos)
    limit = talos.effort_limit()
    bounds.set_bounds(-limit, limit)
    bounds.mask = np.isin(np.arange(talos.na), [3, 9]).astype(float)
    c = bounds.compute(0.0, None, None, None)
    np.testing.assert_array_equal(c.upper_bound, limit[[3, 9]])  # exact: selected, as set
    np.testing.assert_array_equal(c.lower_bound, -limit[[3, 9]])  # exact: selected, as set
    np.testing.assert_array_equal(c.matrix @ np.arange(talos.na), [3.0, 9.0])  # exact: 0/1 rows, integers


def test_contact_forces_by_name_are_each_contacts_own_and_new(talos):
    controller = BipedController(talos)
    form = controller.formulation
    sol = controller.solver.solve(form.compute_problem_data(0.0, controller.q0, talos.zero_velocity()))
    forces = form.get_contact_forces_by_name(sol)
    assert list(forces) == list(form.contacts)
    for name, force in forces.items():
        np.testing.assert_array_equal(force, form.get_contact_force(name, sol))  # exact: the same slice
        force[:] = 0.0  # the caller's copy
    assert np.abs(form.get_contact_forces(sol)).max() > 100.0  # the solution is untouched


def test_a_problem_names_its_layout_and_step(talos):
    """hqp.id: the layout (its rows per level, the size of x) and the step's id (unique in the
    process, growing); a solution carries it; a new step keeps the layout, a contact removed
    makes a new one."""
    controller = BipedController(talos)
    form, q, v = controller.formulation, controller.q0, talos.zero_velocity()
    first = form.compute_problem_data(0.0, q, v)
    layout = first.id.layout
    assert layout.n_var == form.n_var
    assert layout.rows == tuple(sum(c.rows for _, c in level) for level in first.levels)
    assert controller.solver.solve(first).problem_id == first.id
    second = form.compute_problem_data(0.002, q, v)
    assert second.id.layout == layout and second.id.step > first.id.step
    form.remove_rigid_contact("contact_rfoot")
    third = form.compute_problem_data(0.004, q, v)
    assert third.id.layout != layout and third.id.layout.variables != layout.variables
