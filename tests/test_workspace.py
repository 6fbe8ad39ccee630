"""The workspace fills the QP's buffers in place; the f block of H and its inverse are cached.

Every shortcut is checked against a problem built without it: a fresh formulation (nothing
copied yet, nothing cached), or the same QP builder on a snapshot.
"""

import numpy as np
import pytest

import tsid_py as tsid
from tsid_py.controllers import BipedController
from tsid_py.solvers.dense_qp import dense_qp

FIELDS = ("A_eq", "b_eq", "A_in", "lb", "ub")


def arrays(qp):
    """H, g and the constraint arrays of a dense QP, by name (the QP's own arrays)."""
    return {"H": qp.H, "g": qp.g, **{name: getattr(qp.constraints, name) for name in FIELDS}}


def dense(form, t, q, v):
    """Copies of the dense QP of the formulation's problem at (t, q, v), and the QP."""
    qp = dense_qp(form.compute_problem_data(t, q, v))
    return {name: array.copy() for name, array in arrays(qp).items()}, qp


def right_foot_forces(hqp):
    """The right foot's force inequality in a problem."""
    (force,) = [c for _, c in hqp[0] if c.name == "contact_rfoot_force_constraint"]
    return force


def assert_same_problem(a, b):
    for name in a:
        np.testing.assert_allclose(a[name], b[name], rtol=1e-12, atol=1e-12, err_msg=name)


def moving_state(controller, talos):
    return controller.q0, np.full(talos.nv, 0.01)


def readd_contacts(controller, before=lambda contact: None):
    """Take both feet out and add them again (right, then left), calling ``before`` on the right one."""
    form = controller.formulation
    for name in ("contact_rfoot", "contact_lfoot"):
        form.remove_rigid_contact(name)
    before(controller.contacts["right"])
    for side in ("right", "left"):
        form.add_rigid_contact(controller.contacts[side], force_reg_weight=1e-5)


def change_right_contact(contact):
    contact.set_friction_coefficient(0.1)  # new arrays
    contact.set_min_normal_force(20.0)
    contact.set_contact_points(0.8 * contact.contact_points)  # a new force generator


def test_a_contact_changed_after_it_was_added_matches_a_contact_added_changed(talos):
    """A contact changed after it was added (friction, f_min, points): the workspace copies it again."""
    changed, reference = BipedController(talos), BipedController(talos)
    q, v = moving_state(changed, talos)
    readd_contacts(changed)
    dense(changed.formulation, 0.0, q, v)
    change_right_contact(changed.contacts["right"])
    readd_contacts(reference, before=change_right_contact)
    for t in (0.002, 0.004):
        first, _ = dense(changed.formulation, t, q, v)
        second, _ = dense(reference.formulation, t, q, v)
        assert_same_problem(first, second)
    changed.formulation.remove_task("task-am")  # a new layout copies everything
    reference.formulation.remove_task("task-am")
    assert_same_problem(
        dense(changed.formulation, 0.006, q, v)[0], dense(reference.formulation, 0.006, q, v)[0]
    )
    for controller in (changed, reference):
        controller.contacts["right"].set_min_normal_force(30.0)
        controller.contacts["right"].set_force_reference(np.array([0.0, 0.0, 300.0, 0.0, 0.0, 0.0]))
    assert_same_problem(
        dense(changed.formulation, 0.008, q, v)[0], dense(reference.formulation, 0.008, q, v)[0]
    )
    hqp = changed.formulation.compute_problem_data(0.01, q, v)
    assert right_foot_forces(hqp).lower_bound[-1] == 30.0  # exact: f_min as set


def test_a_task_in_two_formulations_fills_both(ur5):
    """Both problems are computed before either is solved: each keeps its own task rows."""
    q, v = ur5.default_configuration(), np.linspace(-0.2, 0.3, ur5.nv)
    forms = [tsid.InverseDynamicsFormulation(name, ur5) for name in ("a", "b")]
    posture = tsid.TaskJointPosture("posture", ur5)
    posture.kp = 10.0
    posture.set_reference(tsid.TrajectorySample(q + 0.1))
    for form in forms:
        form.add_motion_task(posture, weight=1e-3)
    states = [(q, v), (q + 0.05, 2 * v)]
    order = [1, 0]  # the formulation the task was added to last first
    problems = {k: forms[k].compute_problem_data(0.0, *states[k]) for k in order}
    for k, (q_k, v_k) in enumerate(states):
        hqp = problems[k]
        (entry,) = hqp[1]
        expected = -10.0 * (q_k - q - 0.1) - 2 * np.sqrt(10.0) * v_k
        np.testing.assert_allclose(entry.constraint.vector, expected, rtol=1e-12)


def test_evaluating_a_task_elsewhere_leaves_a_built_problem_alone(talos):
    """A task or contact evaluated at another state between compute_problem_data and solve (for
    a log, a prediction) must not change the problem already built, as in TSID."""
    controller = BipedController(talos)
    form = controller.formulation
    q, v = moving_state(controller, talos)
    hqp = form.compute_problem_data(0.0, q, v)
    before = {name: array.copy() for name, array in arrays(dense_qp(hqp)).items()}
    other = talos.create_data()
    q_other, v_other = q.copy(), -v
    q_other[:3] += 0.05
    talos.compute_all_terms(other, q_other, v_other)
    controller.com_task.compute(0.0, q_other, v_other, other)
    controller.contacts["left"].motion_task.compute(0.0, q_other, v_other, other)
    after = arrays(dense_qp(hqp))
    for name in before:
        np.testing.assert_array_equal(before[name], after[name], err_msg=name)  # exact: nothing wrote


def test_a_ramp_in_one_formulation_leaves_the_contact_and_the_other_alone(talos):
    """The cap of a loading ramp lives in the formulation's copy of the bounds only."""
    a, b = BipedController(talos), BipedController(talos)
    contact = a.contacts["right"]
    q, v = a.q0, talos.zero_velocity()
    a.formulation.remove_rigid_contact("contact_rfoot")
    a.formulation.add_rigid_contact(contact, force_reg_weight=1e-5, transition_duration=0.1)
    a.formulation.compute_problem_data(0.0, q, v)  # the ramp has started
    b.formulation.remove_rigid_contact("contact_rfoot")
    b.formulation.add_rigid_contact(contact, force_reg_weight=1e-5)
    for t in (0.01, 0.05, 0.2):  # during the ramp, and after it
        capped = a.formulation.compute_problem_data(t, q, v)
        free = b.formulation.compute_problem_data(t, q, v)
        assert (normal_bound(capped) < contact.max_normal_force) == (t < 0.1)
        assert normal_bound(free) == contact.max_normal_force
        assert contact.force_constraint.upper_bound[-1] == contact.max_normal_force


def normal_bound(hqp):
    """The upper bound on the right foot's total normal force in a problem."""
    return right_foot_forces(hqp).upper_bound[-1]


def test_the_cached_f_block_follows_weights_and_references(talos):
    controller = BipedController(talos)
    form, nv = controller.formulation, talos.nv
    q, v = moving_state(controller, talos)

    def check(t, cached):
        problem, qp = dense(form, t, q, v)
        generic = dense_qp(form.compute_problem_data(t, q, v).snapshot())
        np.testing.assert_allclose(problem["H"], generic.H, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(problem["g"], generic.g, rtol=1e-12, atol=1e-12)
        assert (qp.tail_inverse is not None) == cached
        if cached:
            np.testing.assert_allclose(qp.tail_inverse @ qp.H[nv:, nv:], np.eye(form.n_var - nv), atol=1e-6)
        warm = controller.solver.solve(form.compute_problem_data(t, q, v))
        cold = tsid.SolverHQuadProg(warm_start=False).solve(form.compute_problem_data(t, q, v))
        np.testing.assert_allclose(warm.x, cold.x, rtol=1e-8, atol=1e-8)

    check(0.0, cached=False)  # first sight of the block
    check(0.002, cached=True)
    form.update_rigid_contact_weights("contact_rfoot", force_reg_weight=1e-3)
    check(0.004, cached=False)
    check(0.006, cached=True)
    controller.contacts["left"].set_force_reference(np.array([0.0, 0.0, 400.0, 0.0, 0.0, 0.0]))
    check(0.008, cached=True)  # only g changes: the block of H and its inverse stay
    controller.contacts["left"].set_regularization_task_weight_vector(np.full(6, 2e-3))
    check(0.010, cached=False)


def test_a_mask_changed_then_a_task_added_before_the_next_problem(talos):
    """A new layout (a task added) meets a task whose rows changed size: it gives them their size."""
    controller = BipedController(talos)
    form = controller.formulation
    q, v = moving_state(controller, talos)
    form.compute_problem_data(0.0, q, v)
    controller.com_task.mask = [1.0, 1.0, 0.0]
    extra = tsid.TaskJointPosture("extra", talos)
    form.add_motion_task(extra, weight=1e-6)
    hqp = form.compute_problem_data(0.002, q, v)
    rows = {e.constraint.name: e.constraint.rows for e in hqp[1]}
    assert rows["task-com"] == 2 and rows["extra"] == talos.na
    (com,) = [e.constraint for e in hqp[1] if e.constraint.name == "task-com"]
    expected = controller.com_task.compute(0.002, q, v, form.data)
    np.testing.assert_array_equal(com.matrix[:, : talos.nv], expected.matrix)  # exact: the rows it wrote
    np.testing.assert_array_equal(com.vector, expected.vector)  # exact: the rows it wrote
    assert controller.solver.solve(hqp).ok


@pytest.mark.parametrize("robot_name", ["talos", "ur5"])
def test_a_warm_started_solve_leaves_the_problem_as_it_was(robot_name, request):
    """The warm start reads [A_eq; g] as a view of the workspace's buffer: LAPACK must not write in it
    (UR5 has no f block, so its whole H is factorized with that view as right-hand side)."""
    robot = request.getfixturevalue(robot_name)
    if robot_name == "talos":
        controller = BipedController(robot)
        form, solver, q = controller.formulation, controller.solver, controller.q0
    else:
        from conftest import arm_with_posture

        form, q, _ = arm_with_posture(robot)
        solver = tsid.SolverHQuadProg()
    v = np.full(robot.nv, 0.01)
    for t in (0.0, 0.002):  # the second solve is the warm start
        before, qp = dense(form, t, q, v)
        sol = solver.solve(form.compute_problem_data(t, q, v))
        after = arrays(qp)
        assert sol.ok
        for name in before:
            np.testing.assert_array_equal(before[name], after[name], err_msg=name)  # exact: nothing wrote
    assert sol.iterations == 0  # confirmed by the warm start


def test_a_task_reads_back_the_rows_the_formulation_wrote(talos):
    """A task fills the formulation's rows; its constraint (a copy) shows them when read."""
    controller = BipedController(talos)
    form = controller.formulation
    q, v = moving_state(controller, talos)
    form.compute_problem_data(0.0, q, v)
    tasks = [controller.com_task, controller.posture_task, controller.contacts["left"].motion_task]
    seen = [(task.constraint.matrix.copy(), task.constraint.vector.copy()) for task in tasks]
    for task, (matrix, vector) in zip(tasks, seen, strict=True):
        fresh = task.compute(0.0, q, v, form.data)  # the same state, written to the task itself
        np.testing.assert_array_equal(fresh.matrix, matrix)  # exact: the same task, the same state
        np.testing.assert_array_equal(fresh.vector, vector)  # exact: the same task, the same state


def test_a_mask_changed_to_as_many_rows_is_seen(talos):
    """A posture mask moved to other joints keeps the row count: its new rows must reach x."""
    controller = BipedController(talos)
    form = controller.formulation
    q, v = moving_state(controller, talos)
    form.compute_problem_data(0.0, q, v)
    mask = np.ones(talos.na)
    mask[0] = 0.0
    controller.posture_task.mask = mask
    form.compute_problem_data(0.002, q, v)
    mask = np.ones(talos.na)
    mask[5] = 0.0  # as many rows, other joints
    controller.posture_task.mask = mask
    hqp = form.compute_problem_data(0.004, q, v)
    (entry,) = [c for _, c in hqp[1] if c.name == "task-posture"]
    expected = controller.posture_task.compute(0.004, q, v, form.data)
    np.testing.assert_array_equal(entry.matrix[:, : talos.nv], expected.matrix)  # exact: the rows it wrote
    np.testing.assert_array_equal(entry.vector, expected.vector)  # exact: the rows it wrote


def test_a_contact_whose_motion_mask_changes_is_refused_by_name(talos):
    """The mask changed after a step: the motion task tells the problem, which refuses it."""
    controller = BipedController(talos)
    form = controller.formulation
    form.compute_problem_data(0.0, controller.q0, talos.zero_velocity())
    controller.contacts["left"].motion_task.mask = [1, 1, 1, 0, 0, 0]
    with pytest.raises(tsid.TsidError, match="contact_lfoot"):
        form.compute_problem_data(0.002, controller.q0, talos.zero_velocity())


def test_a_problem_goes_stale_when_a_mask_rebuilds_the_workspace(talos):
    """The old problem's buffers are gone with its workspace: reading it must raise, not show old rows."""
    controller = BipedController(talos)
    form = controller.formulation
    q, v = moving_state(controller, talos)
    hqp = form.compute_problem_data(0.0, q, v)
    controller.com_task.mask = [1.0, 1.0, 0.0]
    form.compute_problem_data(0.002, q, v)
    with pytest.raises(tsid.errors.StaleProblemError):
        _ = hqp.levels


def test_reading_sizes_after_a_change_leaves_the_last_solution_readable(ur5):
    """n_eq and n_in count rows from the structure: they do not swap in an empty workspace under
    a solution about to be read."""
    from conftest import arm_with_posture

    form, q, v = arm_with_posture(ur5)
    solver = tsid.SolverHQuadProg()
    sol = solver.solve(form.compute_problem_data(0.0, q, v))
    tau = form.get_actuator_forces(sol)
    bounds = tsid.TaskJointBounds("joint-bounds", ur5, 0.002)
    form.add_motion_task(bounds, weight=1.0, priority=0)
    assert (form.n_eq, form.n_in) == (0, ur5.nv)
    np.testing.assert_array_equal(form.get_actuator_forces(sol), tau)  # exact: the same solution read again
    assert np.abs(tau).max() > 1.0  # gravity torques, not the zeros of an empty torque map
    form.compute_problem_data(0.002, q, v)
    with pytest.raises(tsid.errors.SolverFailedError, match="read tau before the next"):
        form.get_actuator_forces(sol)


def test_a_mask_change_fills_each_task_once_per_step(talos):
    """A rebuilt layout is filled once: a force task's integral advances by one dt per step."""
    controller = BipedController(talos)
    form = controller.formulation
    right = controller.contacts["right"]
    task = tsid.TaskContactForceEquality("right-force", talos, 0.002, right)
    task.ki = 1.0
    task.set_reference(tsid.TrajectorySample(np.full(6, 10.0)))
    form.add_force_task(task, weight=1e-3, priority=1)
    q, v = moving_state(controller, talos)
    form.compute_problem_data(0.0, q, v)
    controller.com_task.mask = [1.0, 0.0, 1.0]  # a new mask: a new workspace at the next step
    form.compute_problem_data(0.002, q, v)
    expected = np.zeros(6)
    for _ in range(2):
        expected = expected + 0.002 * (np.full(6, 10.0) - task.leak_rate * expected)
    np.testing.assert_allclose(task.integral_error, expected, rtol=1e-12)


def test_a_bound_task_reads_back_as_a_bound(ur5):
    from conftest import arm_with_posture

    form, q, v = arm_with_posture(ur5)
    bounds = tsid.TaskJointBounds("joint-bounds", ur5, 0.002)
    bounds.set_velocity_bounds(-np.ones(ur5.na), np.ones(ur5.na))
    form.add_motion_task(bounds, weight=1.0, priority=0)
    form.compute_problem_data(0.0, q, v)
    read = bounds.constraint
    fresh = bounds.compute(0.0, q, v, form.data)
    assert read.is_bound() and fresh.is_bound()
    np.testing.assert_array_equal(read.upper_bound, fresh.upper_bound)  # exact: the same task, the same state


def test_an_inequality_at_a_cost_level_is_refused_when_added(ur5):
    form = tsid.InverseDynamicsFormulation("arm", ur5)
    with pytest.raises(tsid.errors.UnsupportedProblemError, match="only equalities can be costs"):
        form.add_motion_task(tsid.TaskJointBounds("joint-bounds", ur5, 0.002), weight=1.0, priority=1)


def test_a_solver_cannot_corrupt_the_rows_tasks_do_not_rewrite(ur5):
    """Constant rows (a posture's selection) are written once per layout: the QP handed to solvers
    sees them read-only, and what it does to H lasts one step."""
    from conftest import arm_with_posture

    form, q, v = arm_with_posture(ur5)
    form.add_motion_task(tsid.TaskJointPosVelAccBounds("pva", ur5, 0.002), weight=1.0, priority=0)
    qp = dense_qp(form.compute_problem_data(0.0, q, v))
    for array in (qp.constraints.A_in, qp.constraints.lb, qp.rows):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 0.0
    qp.H[...] = 0.0  # the backends read H and g only; a careless one would not last
    again = dense_qp(form.compute_problem_data(0.002, q, v))
    fresh_form, _, _ = arm_with_posture(ur5)
    fresh_form.add_motion_task(tsid.TaskJointPosVelAccBounds("pva", ur5, 0.002), weight=1.0, priority=0)
    fresh = dense_qp(fresh_form.compute_problem_data(0.002, q, v))
    np.testing.assert_array_equal(again.H, fresh.H)  # exact: the same rows, the same code
    np.testing.assert_array_equal(again.constraints.A_in, fresh.constraints.A_in)  # exact: as above


def test_tau_from_a_snapshot_of_an_old_problem_is_refused(talos):
    controller = BipedController(talos)
    form, solver = controller.formulation, tsid.SolverHQuadProg()
    q, v = moving_state(controller, talos)
    kept = form.compute_problem_data(0.0, q, v).snapshot()
    sol = solver.solve(kept)
    form.get_actuator_forces(sol)  # the dynamics of its step are still the formulation's
    form.compute_problem_data(0.002, q, v)
    with pytest.raises(tsid.errors.SolverFailedError, match="read tau before the next"):
        form.get_actuator_forces(sol)


def test_a_force_task_needs_its_contact_there_and_staying(talos):
    controller = BipedController(talos)
    form, right = controller.formulation, controller.contacts["right"]
    task = tsid.TaskContactForceEquality("right-force", talos, 0.002, right)
    form.remove_rigid_contact(right.name, 0.1, normal_force=300.0)  # being ramped out
    with pytest.raises(tsid.errors.InvalidParameterError, match="being ramped out"):
        form.add_force_task(task, weight=1e-3)
    form.remove_rigid_contact(right.name)
    with pytest.raises(tsid.errors.UnknownNameError, match="add the contact first"):
        form.add_force_task(task, weight=1e-3)
