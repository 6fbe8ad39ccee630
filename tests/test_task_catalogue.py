"""The tasks beyond the classic exercise: their math (finite differences, closed forms) and behaviour."""

import numpy as np
import pinocchio as pin
import pytest
from conftest import directional_derivative, random_state

import tsid_py as tsid
from tsid_py.controllers.biped import BipedController
from tsid_py.solvers.hqp_output import HqpOutput, QPStatus

DT = 0.002


def computed(task, robot, q, v):
    data = robot.create_data()
    robot.compute_all_terms(data, q, v)
    return task.compute(0.0, q, v, data), data


def arm_formulation(ur5, *tasks):
    """UR5 (fixed base, no contact) with (task, priority) pairs and a posture task at level 1."""
    form = tsid.InverseDynamicsFormulation("arm", ur5)
    posture = tsid.TaskJointPosture("posture", ur5)
    posture.kp = 400.0
    form.add_motion_task(posture, weight=1.0, priority=1)
    for task, priority in tasks:
        if isinstance(task, tsid.tasks.TaskActuation):
            form.add_actuation_task(task, weight=1.0, priority=priority)
        else:
            form.add_motion_task(task, weight=1.0, priority=priority)
    return form, posture


# ------------------------------------------------------------------ TaskJointPosVelAccBounds
def bounds_task(robot, dt):
    task = tsid.TaskJointPosVelAccBounds("bounds", robot, dt)
    task.set_position_bounds(-np.ones(robot.na), np.ones(robot.na))
    task.set_velocity_bounds(2.0 * np.ones(robot.na))
    task.set_acceleration_bounds(10.0 * np.ones(robot.na))
    return task


def test_pos_vel_acc_bounds_are_the_limits_reached_in_one_step(ur5):
    dt = 0.01
    task = bounds_task(ur5, dt)
    q = np.array([0.9, 0.95, -0.9, 0.0, 0.5, -0.95])
    v = np.array([0.5, 0.1, -0.5, 1.9, -0.3, -0.2])
    lower, upper = task.acceleration_bounds(q, v)
    ub, lb = task.upper_bounds, task.lower_bounds
    # position: the upper bound lands exactly on q_max (joints moving up), the lower on q_min
    up, down = v > 0, v < 0
    np.testing.assert_allclose((q + dt * v + dt**2 / 2 * ub["position"])[up], 1.0, atol=1e-12)
    np.testing.assert_allclose((q + dt * v + dt**2 / 2 * lb["position"])[down], -1.0, atol=1e-12)
    # viability: the next state is exactly on the braking curve v+^2 = 2 a_max (q_max - q+)
    a = ub["viability"]
    v_next, q_next = v + dt * a, q + dt * v + dt**2 / 2 * a
    np.testing.assert_allclose(v_next**2, 2 * 10.0 * (1.0 - q_next), atol=1e-9)
    a = lb["viability"]
    v_next, q_next = v + dt * a, q + dt * v + dt**2 / 2 * a
    np.testing.assert_allclose(v_next**2, 2 * 10.0 * (q_next + 1.0), atol=1e-9)
    np.testing.assert_allclose(ub["velocity"], (2.0 - v) / dt)
    np.testing.assert_allclose(upper, np.min([ub[k] for k in ub], axis=0))
    np.testing.assert_allclose(lower, np.max([lb[k] for k in lb], axis=0))
    assert np.all(lower <= upper)
    task.mask = [0, 1, 0, 0, 1, 0]
    c = task.compute(0.0, q, v, ur5.create_data())
    np.testing.assert_allclose(c.upper_bound, upper[[1, 4]])
    np.testing.assert_allclose(c.matrix @ np.arange(6.0), [1.0, 4.0])


@pytest.mark.slow
def test_a_joint_driven_past_its_limit_stops_inside_it(ur5):
    q_limit = ur5.default_configuration() + 0.3
    task = tsid.TaskJointPosVelAccBounds("bounds", ur5, DT)
    task.set_position_bounds(q_limit - 0.6, q_limit)
    task.set_velocity_bounds(2.0 * np.ones(6))
    task.set_acceleration_bounds(10.0 * np.ones(6))
    target = tsid.TrajectorySample(ur5.default_configuration() + 1.0)  # 0.7 rad past the limits
    runs = {}
    for bounded in (False, True):
        form, posture = arm_formulation(ur5, *([(task, 0)] if bounded else []))
        posture.set_reference(target)
        solver = tsid.SolverHQuadProg()
        q, v, worst_a, worst_v, worst_q = ur5.default_configuration(), np.zeros(6), 0.0, 0.0, -np.inf
        for i in range(750):
            sol = solver.solve(form.compute_problem_data(i * DT, q, v))
            assert sol.ok
            dv = form.get_accelerations(sol)
            q, v = tsid.integrate(ur5, q, v, dv, DT)
            worst_a, worst_v = max(worst_a, np.abs(dv).max()), max(worst_v, np.abs(v).max())
            worst_q = max(worst_q, (q - q_limit).max())
        runs[bounded] = (worst_q, worst_v, worst_a, q)
    assert runs[False][0] > 0.5  # unbounded, the posture task drives the joints far past the limit
    worst_q, worst_v, worst_a, q = runs[True]
    # at the limit the position (viability) bound can ask a few um/s^2 more braking than a_max:
    # the task then makes lb = ub there (seen: 10.0000046)
    assert worst_q <= 1e-9 and worst_v <= 2.0 + 1e-9 and worst_a <= 10.0 + 1e-5
    np.testing.assert_allclose(q, q_limit, atol=2e-3)  # at rest against the limit


# --------------------------------------------------------------------- TaskActuationEquality
def test_actuation_equality_rows_are_weighted_torque_errors(talos, rng):
    controller = BipedController(talos)
    form = controller.formulation
    task = tsid.TaskActuationEquality("torque", talos)
    weights, tau_ref = rng.uniform(0.5, 2.0, talos.na), rng.standard_normal(talos.na)
    task.set_weight_vector(weights)
    task.set_reference(tau_ref)
    task.mask = (rng.uniform(size=talos.na) > 0.5).astype(float)
    form.add_actuation_task(task, weight=1.0, priority=1)
    q, v = random_state(talos, rng)
    hqp = form.compute_problem_data(0.0, q, v)
    row = next(item.constraint for item in hqp[1] if item.constraint.name == "torque")
    x = rng.standard_normal(form.n_var)
    tau = form.get_actuator_forces(HqpOutput(QPStatus.OPTIMAL, x=x))
    axes = task.mask.astype(bool)
    np.testing.assert_allclose(row.matrix @ x - row.vector, (weights * (tau - tau_ref))[axes], atol=1e-9)


def test_a_passive_joint_gets_zero_torque(ur5):
    passive = tsid.TaskActuationEquality("passive-elbow", ur5)
    passive.mask = [0, 0, 1, 0, 0, 0]
    form, posture = arm_formulation(ur5, (passive, 0))
    posture.set_reference(tsid.TrajectorySample(ur5.default_configuration() + 0.5))
    solver = tsid.SolverHQuadProg()
    q, v, data = ur5.default_configuration(), np.zeros(6), ur5.create_data()
    for i in range(250):
        sol = solver.solve(form.compute_problem_data(i * DT, q, v))
        assert sol.ok
        dv, tau = form.get_accelerations(sol), form.get_actuator_forces(sol)
        assert abs(tau[2]) < 1e-9
        np.testing.assert_allclose(pin.rnea(ur5.model, data, q, v, dv), tau, atol=1e-8)
        q, v = tsid.integrate(ur5, q, v, dv, DT)
    assert np.abs(v).max() > 0.1  # the arm did move


# ------------------------------------------------------------------- TaskContactForceEquality
def test_contact_force_law_with_a_leaky_integral(talos):
    contact = tsid.Contact6d(
        "foot", talos, "leg_right_sole_fix_joint", talos.spec.sole.corners(), [0, 0, 1], 0.3, 5.0, 1000.0
    )
    task = tsid.TaskContactForceEquality("force", talos, 0.01, contact)
    task.kp, task.kd, task.ki = 0.5, 0.1, 2.0
    task.set_leak_rate(0.2)
    reference = tsid.TrajectorySample(np.arange(6.0), np.ones(6))
    measured = tsid.TrajectorySample(np.arange(6.0) - 1.0, 0.5 * np.ones(6))
    task.set_reference(reference)
    task.set_external_force(measured)
    integral = np.zeros(6)
    for _ in range(3):
        c = task.compute(0.0, None, None, None)
        expected = reference.pos + 0.5 * 1.0 + 0.1 * 0.5 + 2.0 * integral
        np.testing.assert_allclose(c.vector, expected, atol=1e-12)
        integral = integral + 0.01 * (1.0 - 0.2 * integral)
    np.testing.assert_allclose(c.matrix, contact.force_generator)


def test_contact_force_task_sets_one_foots_share(talos, solver):
    controller = BipedController(talos, solver=solver)
    form = controller.formulation
    right = controller.contacts["right"]
    task = tsid.TaskContactForceEquality("right-force", talos, DT, right)
    weight = talos.total_mass * 9.81
    task.set_reference(tsid.TrajectorySample([0.0, 0.0, 0.7 * weight, 0.0, 0.0, 0.0]))
    form.add_force_task(task, weight=1.0, priority=1)
    out = controller.compute(0.0, controller.q0, talos.zero_velocity())
    assert out.solution.ok
    wrench = right.wrench(out.forces[right.name])
    assert wrench[2] == pytest.approx(0.7 * weight, abs=1.0)
    total = wrench[2] + controller.contacts["left"].wrench(out.forces["contact_lfoot"])[2]
    assert total == pytest.approx(weight, rel=1e-2)
    for duration in (0.0, 0.1):  # refused at once, not when a ramp would take the contact out
        with pytest.raises(
            tsid.errors.InvalidParameterError, match="force task 'right-force' acts on contact"
        ):
            form.remove_rigid_contact(right.name, duration, normal_force=300.0)
    form.remove_task(task.name)
    form.remove_rigid_contact(right.name)
    assert controller.compute(0.002, controller.q0, talos.zero_velocity()).solution.ok


# ---------------------------------------------------------------------- TaskTwoFramesEquality
def test_two_frames_jacobian_drift_and_error(talos, rng):
    q, v = random_state(talos, rng)
    frames = ("gripper_left_joint", "gripper_right_joint")
    task = tsid.TaskTwoFramesEquality("hands", talos, *frames)
    task.kp, task.kd = 0.0, 0.0
    c, data = computed(task, talos, q, v)
    ids = [talos.frame_id(f) for f in frames]

    def relative_velocity(qq):
        d = talos.create_data()
        talos.compute_all_terms(d, qq, v)
        return (
            talos.frame_velocity_world_oriented(d, ids[0]).vector
            - talos.frame_velocity_world_oriented(d, ids[1]).vector
        )

    np.testing.assert_allclose(c.matrix @ v, relative_velocity(q), atol=1e-10)
    np.testing.assert_allclose(-c.vector, directional_derivative(relative_velocity, talos, q, v), atol=1e-5)
    np.testing.assert_allclose(
        task.position_error[:3], data.oMf[ids[1]].translation - data.oMf[ids[0]].translation, atol=1e-12
    )


@pytest.mark.slow
def test_two_frames_brings_the_hands_together(talos):
    controller = BipedController(talos)
    task = tsid.TaskTwoFramesEquality("hands", talos, "gripper_left_joint", "gripper_right_joint")
    task.kp = 20.0
    task.mask = [1, 1, 1, 0, 0, 0]
    controller.formulation.add_motion_task(task, weight=1.0, priority=1)
    q, v, distances = controller.q0.copy(), talos.zero_velocity(), []
    for i in range(750):
        out = controller.compute(i * DT, q, v)
        assert out.solution.ok
        distances.append(np.linalg.norm(task.position_error[:3]))
        q, v = tsid.integrate(talos, q, v, out.dv, DT)
    assert distances[0] > 0.8 and distances[-1] < 0.3 * distances[0]


# ----------------------------------------------------------------- TaskCapturePointInequality
def support_task(controller, margin):
    robot = controller.robot
    task = tsid.TaskCapturePointInequality("capture-point", robot, DT)
    feet = [controller.foot_placement(side).translation for side in ("right", "left")]
    x, y = [f[0] for f in feet], [f[1] for f in feet]
    task.set_support_limits_x_axis(min(x) - 0.1, max(x) + 0.1)
    task.set_support_limits_y_axis(min(y) - 0.065, max(y) + 0.065)
    task.set_safety_margin(margin, margin)
    return task


def test_capture_point_bounds_are_the_next_capture_point_on_the_limits(talos, rng):
    controller = BipedController(talos)
    task = support_task(controller, 0.02)
    q, v = random_state(talos, rng)
    c, data = computed(task, talos, q, v)
    com, vcom = talos.com(data)[:2], talos.com_vel(data)[:2]
    w = np.sqrt(9.81 / talos.com(data)[2])

    def com_velocity(qq):
        d = talos.create_data()
        talos.compute_all_terms(d, qq, v)
        return d.vcom[0][:2].copy()

    drift = directional_derivative(com_velocity, talos, q, v)
    np.testing.assert_allclose(c.matrix @ v, vcom, atol=1e-10)
    for bound, limit in ((c.lower_bound, task.support_min + 0.02), (c.upper_bound, task.support_max - 0.02)):
        a = bound + drift  # the CoM acceleration at the bound
        next_capture_point = com + DT * vcom + DT**2 / 2 * a + (vcom + DT * a) / w
        np.testing.assert_allclose(next_capture_point, limit, atol=1e-6)


@pytest.mark.slow
def test_capture_point_stays_inside_the_margin_under_a_push(talos):
    peaks = {}
    for guarded in (False, True):
        controller = BipedController(talos)
        task = support_task(controller, 0.04)
        if guarded:
            controller.formulation.add_motion_task(task, weight=1.0, priority=0)
        q, v = controller.q0.copy(), talos.zero_velocity()
        v[1] = 0.3  # a sideways push of the base, and a CoM reference that keeps going
        peak = -np.inf
        for i in range(400):
            t = i * DT
            controller.set_com_reference(
                tsid.TrajectorySample(controller.com_initial + [0.0, 0.3 * t, 0.0], [0.0, 0.3, 0.0])
            )
            out = controller.compute(t, q, v)
            assert out.solution.ok
            task.compute(t, q, v, controller.data)
            peak = max(peak, float(np.max(task.capture_point - (task.support_max - task.safety_margin))))
            q, v = tsid.integrate(talos, q, v, out.dv, DT)
        peaks[guarded] = peak
    assert peaks[False] > 0.05  # unguarded, the capture point leaves the support polygon
    assert peaks[True] <= 1e-6
