"""The catalogue beyond TSID (issue 19, items 1-6): line contact, wrench-parametrised planar contact
with the contact wrench cone, prescribed-wrench contact, joint coupling, self-collision avoidance and
the motor velocity-torque envelope. Each: its derivatives against finite differences, a behaviour in
closed loop, the physics residual of every solution, and bad input."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
import quadprog
from conftest import feet_to_wrench_contacts

import tsid_py as tsid
from tsid_py.contacts import PrescribedWrench
from tsid_py.contacts.contact_line import TaskLineHold
from tsid_py.contacts.prescribed_wrench import linear_ramp
from tsid_py.controllers import ArmController, BipedController
from tsid_py.loop import ControlLoop, StepHooks
from tsid_py.physics import check_solution
from tsid_py.solvers import HqpOutput, QPStatus
from tsid_py.tasks.task_self_collision import PairDistance
from tsid_py.testing import assert_task_derivatives

DT = 0.002
RESIDUAL = 1e-8
EMPTY = np.zeros(0)


# ----------------------------------------------------------------------------- helpers
def assert_frame_task_derivatives(task, q, v, placement_offset=None, eps=1e-6, rtol=1e-5):
    """A frame-holding motion task (TaskSE3Equality or TaskLineHold) against finite differences:
    its rows J match log6 differences of the held frame's placement, and its drift is that frame's
    classical acceleration at dv = 0, d/dt (J v) + (w x v_lin, 0). Gains are zeroed to read -drift."""
    robot = task.robot
    kp, kd = task.kp, task.kd
    task.kp, task.kd = 0.0, 0.0
    offset = pin.SE3.Identity() if placement_offset is None else placement_offset
    rows = np.flatnonzero(task.mask)
    data = robot.create_data()

    def placement(qq):
        robot.compute_all_terms(data, qq, v)
        return robot.frame_placement(data, task.frame_id) * offset

    def rows_at(qq):
        robot.compute_all_terms(data, qq, v)
        return task.compute(0.0, qq, v, data)

    def twist(direction):
        plus = placement(pin.integrate(robot.model, q, eps * direction))
        minus = placement(pin.integrate(robot.model, q, -eps * direction))
        center = placement(q)
        return (pin.log6(center.actInv(plus)).vector - pin.log6(center.actInv(minus)).vector) / (2 * eps)

    try:
        c = rows_at(q)
        J_fd = np.column_stack([twist(np.eye(robot.nv)[k]) for k in range(robot.nv)])
        scale = max(1.0, np.abs(J_fd).max())
        assert np.abs(c.matrix - J_fd[rows]).max() / scale < rtol
        ahead = rows_at(pin.integrate(robot.model, q, eps * v)).matrix.dot(v)
        behind = rows_at(pin.integrate(robot.model, q, -eps * v)).matrix.dot(v)
        body = J_fd.dot(v)
        classical = np.zeros(6)
        classical[rows] = (ahead - behind) / (2 * eps)
        classical[:3] += np.cross(body[3:], body[:3])
        assert np.abs(-c.vector - classical[rows]).max() / max(1.0, np.abs(classical).max()) < rtol
    finally:
        task.kp, task.kd = kp, kd


def near_default(robot, rng, spread=0.1):
    q = pin.integrate(robot.model, robot.default_configuration(), spread * rng.standard_normal(robot.nv))
    return q, rng.standard_normal(robot.nv)


def physics(controller, q, v, out, extra=None):
    contacts = {name: (controller.formulation.contacts[name], f) for name, f in out.forces.items()}
    contacts.update(extra or {})
    return check_solution(controller.robot, q, v, out.dv, out.tau, contacts)


# ------------------------------------------------------------------------ line contact
UR5_Q = np.array([0.2, -1.0, 0.7, -0.5, 1.0, 0.3])  # away from the wrist singularity of the spec's q0
EDGE = [[0.0, 0.0], [-0.05, 0.05], [0.0, 0.0]]  # along the ee frame's y axis [m]


def test_line_contact_hold_matches_finite_differences(ur5, talos, rng):
    line = tsid.ContactLine("edge", ur5, "ee_fixed_joint", EDGE, [-1, 0, 0], 0.5, 5.0, 200.0)
    assert isinstance(line.motion_task, TaskLineHold) and line.motion_task.dim == 5
    for _ in range(2):
        q = pin.integrate(ur5.model, UR5_Q, 0.3 * rng.standard_normal(6))
        assert_frame_task_derivatives(line.motion_task, q, rng.standard_normal(6), line.line_placement)
    toe = tsid.ContactLine(
        "toe", talos, "leg_left_sole_fix_joint", [[0.1, 0.1], [-0.065, 0.065], [0, 0]], [0, 0, 1], 0.3, 5, 1e3
    )
    q, v = near_default(talos, rng)
    assert_frame_task_derivatives(toe.motion_task, q, v, toe.line_placement)
    # T: the 5 held components of the end-point forces' wrench at the midpoint, tau_x = 0 for any f
    f = rng.standard_normal(6)
    full = line.wrench(f)
    points = line.endpoints
    np.testing.assert_allclose(full[:3], f[:3] + f[3:])
    np.testing.assert_allclose(full[3:], np.cross(points[:, 0], f[:3]) + np.cross(points[:, 1], f[3:]))
    L = line.line_placement
    at_midpoint = np.concatenate(
        [L.rotation.T @ full[:3], L.rotation.T @ (full[3:] - np.cross(L.translation, full[:3]))]
    )
    assert abs(at_midpoint[3]) < 1e-12
    np.testing.assert_allclose(line.line_wrench(f), at_midpoint[[0, 1, 2, 4, 5]], atol=1e-12)


@pytest.mark.slow
def test_line_contact_lets_the_body_roll_about_its_edge_and_holds_the_rest(ur5):
    """UR5's end effector on an edge: the posture task turns the wrist; the edge's midpoint and the
    two rotations across the edge stay, the roll about it does not (and the forces stay in their
    pyramids, the physics exact)."""
    form = tsid.InverseDynamicsFormulation("arm", ur5)
    q, v = UR5_Q.copy(), ur5.zero_velocity()
    ur5.compute_all_terms(form.data, q, v)
    line = tsid.ContactLine("edge", ur5, "ee_fixed_joint", EDGE, [-1, 0, 0], 0.5, 5.0, 200.0)
    line.kp = 100.0
    line.set_reference(ur5.frame_placement(form.data, "ee_fixed_joint"))
    form.add_rigid_contact(line, force_reg_weight=1e-5)
    posture = tsid.TaskJointPosture("posture", ur5)
    posture.kp = 20.0
    posture.set_reference(tsid.TrajectorySample(q + [0.0, 0.4, 0.0, 0.6, 0.0, 0.0]))
    form.add_motion_task(posture, weight=1e-2, priority=1)
    solver = tsid.SolverHQuadProg()
    start = ur5.frame_placement(form.data, "ee_fixed_joint") * line.line_placement
    for i in range(400):
        sol = solver.solve(form.compute_problem_data(i * DT, q, v))
        assert sol.ok
        dv, tau, f = (
            form.get_accelerations(sol),
            form.get_actuator_forces(sol),
            form.get_contact_force("edge", sol),
        )
        check = check_solution(ur5, q, v, dv, tau, {"edge": (line, f)})
        assert check.dynamics_residual < RESIDUAL
        assert check.max_pyramid_violation < 1e-9 and check.min_normal_force >= 5.0 - 1e-9
        q, v = tsid.integrate(ur5, q, v, dv, DT)
    data = ur5.create_data()
    ur5.compute_all_terms(data, q, v)
    moved = pin.log6(start.actInv(ur5.frame_placement(data, "ee_fixed_joint") * line.line_placement)).vector
    assert abs(moved[3]) > 0.1  # rolled about the edge [rad]
    assert np.abs(moved[[0, 1, 2, 4, 5]]).max() < 1e-5  # the rest held (integration error)


def test_a_talos_foot_on_its_toe_edge_beside_a_flat_foot(talos):
    controller = BipedController(talos)
    form, left = controller.formulation, controller.contacts["left"]
    toe = tsid.ContactLine(
        "toe", talos, left.frame_name, [[0.1, 0.1], [-0.065, 0.065], [0, 0]], [0, 0, 1], 0.3, 5, 1e3
    )
    toe.kp = 10.0
    toe.set_reference(left.reference)
    form.remove_rigid_contact(left.name)
    form.add_rigid_contact(toe, force_reg_weight=1e-5)
    q, v = controller.q0, talos.zero_velocity()
    out = controller.compute(0.0, q, v)
    check = physics(controller, q, v, out)
    assert check.dynamics_residual < RESIDUAL and check.max_pyramid_violation < 1e-9
    assert toe.get_normal_force(out.forces["toe"]) > 5.0


# ------------------------------------------------------------------ wrench-parametrised
def test_the_cwc_rows_are_the_four_corner_pyramids(talos, rng):
    """Caron et al.'s 16 rows admit a wrench iff corner forces in the pyramids produce it: wrenches
    of random corner forces are inside; random wrenches near the cone are inside exactly when a
    decomposition exists (a QP over the 12 corner forces)."""
    corners = talos.spec.sole.corners()
    frame = "leg_right_sole_fix_joint"
    corner_contact = tsid.Contact6d("c6", talos, frame, corners, [0, 0, 1], 0.3, 0.0, 1e9)
    wrench_contact = tsid.ContactWrench("cw", talos, frame, corners, [0, 0, 1], 0.3, 0.0, 1e9)
    T, B = corner_contact.force_generator, corner_contact.force_constraint.matrix[:-1]
    U = wrench_contact.cone_rows()
    assert U.shape == (16, 6)
    generated = []
    for _ in range(300):
        f_z = rng.uniform(0.0, 100.0, 4)
        tangential = rng.uniform(-1.0, 1.0, (4, 2)) * 0.3 * f_z[:, None]
        w = T @ np.column_stack([tangential, f_z]).reshape(-1)
        generated.append(w)
        assert (U @ w).max() <= 1e-9 * max(1.0, f_z.sum())

    def decomposable(w):
        constraints = np.vstack([T, -B]).T
        try:
            quadprog.solve_qp(np.eye(12), np.zeros(12), constraints, np.concatenate([w, np.zeros(16)]), meq=6)
        except ValueError:
            return False
        return True

    inside = outside = 0
    for w in generated[:150]:
        reach = w[2] * np.array([0.3, 0.3, 0.3, 0.065, 0.1, 0.05])  # mu f_z, Y f_z, X f_z, ...
        candidate = w + rng.normal(0.0, 0.5, 6) * reach
        margin = (U @ candidate).max()
        if abs(margin) < 1e-6 * np.abs(candidate).max():
            continue
        assert (margin < 0) == decomposable(candidate)
        inside, outside = inside + (margin < 0), outside + (margin > 0)
    assert inside > 10 and outside > 10
    # and the contact's own inequality is the CWC on its variables, T y = w
    y = np.linalg.solve(wrench_contact.force_generator, generated[0])
    np.testing.assert_allclose(wrench_contact.force_constraint.matrix[:16] @ y, U @ generated[0], atol=1e-9)


def test_wrench_contact_gives_contact6d_foot_wrenches_on_talos_balance(talos):
    """Same states (Contact6d's closed loop, a CoM sinusoid), both problems: the foot wrenches agree
    to the solver's tolerance while no bound is active; the plain-wrench variables (T = I) do not,
    because the QP's 1e-8 |x|^2 then weighs the wrench instead of the corner forces."""
    corner = BipedController(talos)
    wrench = feet_to_wrench_contacts(BipedController(talos))
    plain = feet_to_wrench_contacts(BipedController(talos), wrench_variables=True)
    assert wrench.formulation.n_var == corner.formulation.n_var - 12
    trajectory = tsid.TrajectoryEuclidianSinusoid("com", corner.com_initial, [0, 0.05, 0], [0, 0.5, 0])
    q, v = corner.q0, talos.zero_velocity()
    worst, worst_plain, load = 0.0, 0.0, 0.0
    for i in range(40):
        t = i * 5 * DT
        for controller in (corner, wrench, plain):
            controller.set_com_reference(trajectory.sample(t))
        outs = [c.compute(t, q, v) for c in (corner, wrench, plain)]
        for controller, out in zip((wrench, plain), outs[1:], strict=True):
            assert physics(controller, q, v, out).dynamics_residual < RESIDUAL
        for name in ("contact_rfoot", "contact_lfoot"):
            w = [
                c.formulation.contacts[name].wrench(o.forces[name])
                for c, o in zip((corner, wrench, plain), outs, strict=True)
            ]
            assert (wrench.formulation.contacts[name].cone_rows() @ w[1]).max() < -1.0  # no bound active
            worst = max(worst, np.abs(w[1] - w[0]).max())
            worst_plain = max(worst_plain, np.abs(w[2] - w[0]).max())
            load = max(load, w[0][2])
        q, v = tsid.integrate(talos, q, v, outs[0].dv, 5 * DT)
    print(
        f"Contact6d vs ContactWrench: max |dw| {worst:.2e} N (plain wrench variables {worst_plain:.2f} N) "
        f"of {load:.0f} N"
    )
    assert worst < 1e-6 * load
    assert worst_plain > 1e-3 * load


def test_the_cop_stays_in_the_sole_when_pushed_against_its_edge(talos):
    """A CoM task far ahead with a stiff gain pushes both CoPs onto the heel edge (to accelerate
    forward the CoP goes back): they stop there, as Contact6d's do."""
    corner, wrench = BipedController(talos), feet_to_wrench_contacts(BipedController(talos))
    for controller in (corner, wrench):
        controller.com_task.kp = 1000.0
        controller.set_com_reference(tsid.TrajectorySample(controller.com_initial + [0.3, 0.0, 0.0]))
    q, v = corner.q0, talos.zero_velocity()
    outs = [c.compute(0.0, q, v) for c in (corner, wrench)]
    assert physics(wrench, q, v, outs[1]).dynamics_residual < RESIDUAL
    X, Y = talos.spec.sole.lxp, talos.spec.sole.lyp
    for name in ("contact_rfoot", "contact_lfoot"):
        contact = wrench.formulation.contacts[name]
        cop = contact.center_of_pressure(outs[1].forces[name])
        assert abs(cop[0]) <= X + 1e-9 and abs(cop[1]) <= Y + 1e-9
        assert cop[0] == pytest.approx(-X, abs=1e-6)  # on the heel edge: the bound is active
        w6 = corner.formulation.contacts[name].wrench(outs[0].forces[name])
        assert -w6[4] / w6[2] == pytest.approx(cop[0], abs=1e-6)


def test_wrench_contact_motion_and_bad_input(talos, rng):
    contact = tsid.ContactWrench(
        "cw", talos, "leg_right_sole_fix_joint", (0.1, 0.065), [0, 0, 1], 0.3, 5, 1e3
    )
    assert_frame_task_derivatives(contact.motion_task, *near_default(talos, rng))
    with pytest.raises(tsid.errors.InvalidParameterError, match="rectangle"):
        tsid.ContactWrench(
            "cw",
            talos,
            "leg_right_sole_fix_joint",
            [
                [0, 1, 0, 1],
                [0, 0, 1, 2],
                [0] * 4,
            ],
            [0, 0, 1],
            0.3,
            5,
            1e3,
        )
    with pytest.raises(tsid.errors.InvalidParameterError, match=r"\(0, 0, 1\)"):
        tsid.ContactWrench("cw", talos, "leg_right_sole_fix_joint", (0.1, 0.05), [1, 0, 0], 0.3, 5, 1e3)
    with pytest.raises(tsid.errors.InvalidParameterError, match="X"):
        tsid.ContactWrench("cw", talos, "leg_right_sole_fix_joint", (0.0, 0.05), [0, 0, 1], 0.3, 5, 1e3)
    with pytest.raises(tsid.errors.InvalidParameterError, match="mu"):
        tsid.ContactWrench("cw", talos, "leg_right_sole_fix_joint", (0.1, 0.05), [0, 0, 1], 0.0, 5, 1e3)
    with pytest.raises(tsid.errors.DimensionError):
        contact.set_force_reference(np.zeros(5))


def test_line_contact_bad_input(ur5):
    make = lambda points, normal: tsid.ContactLine("e", ur5, "ee_fixed_joint", points, normal, 0.5, 5, 100)  # noqa: E731
    with pytest.raises(tsid.errors.InvalidParameterError, match="distinct"):
        make([[0, 0], [0, 0], [0, 0]], [1, 0, 0])
    with pytest.raises(tsid.errors.InvalidParameterError, match="orthogonal"):
        make(EDGE, [0, 1, 0])
    with pytest.raises(tsid.errors.DimensionError):
        make([[0, 0, 0], [0, 1, 2], [0, 0, 0]], [1, 0, 0])
    with pytest.raises(tsid.errors.UnknownFrameError):
        tsid.ContactLine("e", ur5, "no_such_frame", EDGE, [1, 0, 0], 0.5, 5, 100)
    line = make(EDGE, [1, 0, 0])
    with pytest.raises(tsid.errors.InvalidParameterError, match="axes only"):
        line.motion_task.use_local_frame(False)
    moving = tsid.TrajectorySample.from_se3(pin.SE3.Identity(), np.ones(6))
    with pytest.raises(tsid.errors.InvalidParameterError, match="fixed placement"):
        line.set_reference(moving)
    with pytest.raises(tsid.errors.InvalidParameterError, match="f_min"):
        tsid.ContactLine("e", ur5, "ee_fixed_joint", EDGE, [1, 0, 0], 0.5, 50, 10)


# ------------------------------------------------------------------------ prescribed wrench
@pytest.mark.slow
def test_a_prescribed_wrench_enters_the_dynamics_on_schedule_and_the_hand_is_held(talos):
    """Talos pushes a wall with its left hand: 0 to 30 N (the wall pushes back along -x) over 0.1 s.
    The hold task keeps the hand in place; the RNEA residual with every external wrench (feet and
    hand) is zero at every step, and leaving the hand's wrench out leaves a residual of its size."""
    controller = BipedController(talos)
    hand = PrescribedWrench("wall", talos, "gripper_left_joint")
    hand.use_local_frame(False)
    hand.set_reference(talos.frame_placement(controller.data, "gripper_left_joint"))
    hand.motion_task.kp = 100.0
    hand.set_schedule(linear_ramp(np.zeros(6), [-30.0, 0, 0, 0, 0, 0], t0=0.02, duration=0.1))
    controller.formulation.add_measured_force(hand)
    controller.formulation.add_motion_task(hand.motion_task, priority=0)
    rotation = talos.frame_placement(controller.data, "gripper_left_joint").rotation

    class Check(StepHooks):
        worst, without, hold = 0.0, 0.0, 0.0

        def after_step(self, state, out):
            t, q, v = state.t, state.q, state.v
            applied = hand.wrench()
            np.testing.assert_allclose(rotation @ applied[:3], hand.wrench_at(t)[:3], atol=1e-6)
            self.worst = max(
                self.worst, physics(controller, q, v, out, {"wall": (hand, EMPTY)}).dynamics_residual
            )
            self.without = max(self.without, physics(controller, q, v, out).dynamics_residual)
            self.hold = max(self.hold, np.linalg.norm(hand.motion_task.position_error[:3]))

    check = Check()
    outcome = ControlLoop(controller, DT).run(100, check)
    assert outcome.qp_failures == 0
    assert hand.prescribed_wrench[0] == pytest.approx(-30.0)
    assert check.worst < RESIDUAL
    assert check.without > 1e-3  # the loop's own check sees the feet only (see docs/catalogue.md)
    assert check.hold < 1e-5  # the hand stays on the wall [m]
    hand.clear()
    assert not hand.scheduled and not hand.prescribed_wrench.any()


def test_prescribed_wrench_torques_are_rnea_and_bad_input(talos, rng):
    q, v = near_default(talos, rng)
    data = talos.create_data()
    talos.compute_all_terms(data, q, v)
    hand = PrescribedWrench("hand", talos, "arm_right_7_joint")
    wrench = rng.standard_normal(6)
    hand.set_wrench(wrench)
    frame = talos.model.frames[talos.frame_id("arm_right_7_joint")]
    external = [pin.Force.Zero() for _ in range(talos.model.njoints)]
    external[frame.parentJoint] = frame.placement.act(pin.Force(wrench))
    zero = np.zeros(talos.nv)
    free = pin.rnea(talos.model, talos.create_data(), q, v, zero)
    pushed = pin.rnea(talos.model, talos.create_data(), q, v, zero, external)
    np.testing.assert_allclose(free - pushed, hand.compute_joint_torques(data), atol=1e-8)
    assert_frame_task_derivatives(hand.motion_task, q, v)
    with pytest.raises(tsid.errors.DimensionError):
        hand.set_wrench(np.zeros(3))
    with pytest.raises(tsid.errors.InvalidParameterError, match="function of t"):
        hand.set_schedule([30.0, 0, 0, 0, 0, 0])
    hand.set_schedule(lambda t: [np.nan] * 6)
    with pytest.raises(tsid.errors.NonFiniteError):
        hand.advance(0.0)
    with pytest.raises(tsid.errors.InvalidParameterError, match="duration"):
        linear_ramp(np.zeros(6), np.ones(6), 0.0, -1.0)


# ---------------------------------------------------------------------------- coupling
def test_joint_coupling_derivatives_and_bad_input(talos, rng):
    task = tsid.TaskJointCoupling("mimic", talos, "arm_left_4_joint", "arm_left_3_joint", -0.7, 0.1)
    for _ in range(2):
        assert_task_derivatives(task, *near_default(talos, rng, 0.3))
    with pytest.raises(tsid.errors.InvalidParameterError, match="same joint"):
        tsid.TaskJointCoupling("m", talos, "arm_left_4_joint", "arm_left_4_joint", 1.0)
    with pytest.raises(tsid.errors.InvalidParameterError, match="nq = 7"):
        tsid.TaskJointCoupling("m", talos, "root_joint", "arm_left_4_joint", 1.0)
    with pytest.raises(tsid.errors.UnknownFrameError, match="arm_left_4_joint"):
        tsid.TaskJointCoupling("m", talos, "arm_left_4_jiont", "arm_left_3_joint", 1.0)
    with pytest.raises(tsid.errors.NonFiniteError):
        task.ratio = np.inf


@pytest.mark.slow
def test_a_hard_coupling_holds_its_ratio_in_closed_loop(ur5):
    """UR5 tracks a moving end-effector target; wrist 3 is slaved to the shoulder pan (q_5 = -1.5 q_0 +
    offset, hard). The coupling holds to 1e-6 while the pan swings; an offset changed at 0.6 s is
    caught up with the PD (kp 100, critically damped)."""
    controller = ArmController(ur5, DT)
    q0 = controller.q0
    coupling = tsid.TaskJointCoupling("mimic", ur5, "wrist_3_joint", "shoulder_pan_joint", -1.5)
    coupling.offset = q0[5] + 1.5 * q0[0]
    coupling.kp = 100.0
    controller.formulation.add_motion_task(coupling, priority=0)
    start = controller.ee_placement()

    class Sway(StepHooks):
        errors, pan = [], []

        def before_step(self, state):
            t = state.t
            target = pin.SE3(start)
            target.translation += [0.0, 0.15 * np.sin(2 * np.pi * t), 0.0]
            controller.ee_task.set_reference(target)
            if abs(t - 0.6) < DT / 2:
                coupling.offset += 0.05

        def after_step(self, state, out):
            q = state.q
            self.errors.append(coupling.coupling_error(q))
            self.pan.append(q[0])

    hooks = Sway()
    summary = ControlLoop(controller, DT).run(600, hooks).summary()
    assert summary["qp_failures"] == 0 and summary["dynamics_residual_max"] < RESIDUAL
    errors = np.abs(hooks.errors)
    assert errors[:300].max() < 1e-6
    assert np.ptp(hooks.pan[:300]) > 0.05  # the pan did swing [rad]
    elapsed = (len(errors) - 1 - 300) * DT  # since the offset moved, critically damped at omega = 10 1/s
    assert errors[300] == pytest.approx(0.05, abs=1e-9)
    assert errors[-1] == pytest.approx(0.05 * (1 + 10 * elapsed) * np.exp(-10 * elapsed), rel=0.05)


# ---------------------------------------------------------------------- self-collision
HAND_LINKS = ("arm_left_6_link", "arm_left_7_link", "gripper_left_base_link")
TORSO_LINKS = ("torso_2_link", "base_link")


class FrozenPairDistance(tsid.TaskMotionTracking):
    """n0 . (p_1(q) - p_2(q)) for the witness points of one pair frozen on their bodies and n0 fixed:
    its Jacobian and drift are, by construction, the self-collision task's (distance_jacobian)."""

    def __init__(self, task, k, q):
        super().__init__("frozen-pair", task.robot, 1)
        robot, model = task.robot, task.robot.model
        data = robot.create_data()
        robot.compute_all_terms(data, q, robot.zero_velocity())
        pair = task.compute_distances(data)[k]
        objects = task.geometry_model.geometryObjects
        ids = [task.geometry_model.getGeometryId(name) for name in pair.names]
        self.task, self.k, self.pair, self.normal = task, k, pair, pair.normal
        self.joints = [objects[g].parentJoint for g in ids]
        self.local = [
            data.oMi[j].actInv(p) for j, p in zip(self.joints, (pair.point1, pair.point2), strict=True)
        ]
        assert model.nv == robot.nv

    def points(self, data):
        return [data.oMi[j].act(r) for j, r in zip(self.joints, self.local, strict=True)]

    def compute_error(self, t, q, v, data):
        p1, p2 = self.points(data)
        return np.array([self.normal @ (p1 - p2)])

    def rows_at(self, data):
        p1, p2 = self.points(data)
        pair = PairDistance(self.pair.names, float(self.normal @ (p1 - p2)), p1, p2, self.normal)
        return self.task.distance_jacobian(data, self.k, pair)

    def compute_jacobian(self, t, q, v, data):
        return self.rows_at(data)[0][None, :]

    def compute_drift(self, t, q, v, data):
        return np.array([self.rows_at(data)[1]])


@pytest.fixture(scope="module")
def hand_torso(talos):
    return tsid.TaskSelfCollision(
        "self-collision", talos, DT, [(h, b) for h in HAND_LINKS for b in TORSO_LINKS],
        d_min=0.08, d_influence=0.15, damping=3.0,
    )  # fmt: skip


@pytest.mark.slow
def test_self_collision_jacobian_and_drift_match_finite_differences(talos, hand_torso, rng):
    q, v = near_default(talos, rng, 0.05)
    data = talos.create_data()
    talos.compute_all_terms(data, q, v)
    distances = hand_torso.compute_distances(data)
    k = int(np.argmin([p.distance for p in distances]))
    # the task's J_d and drift are those of the frozen witness points (exact, by the checker) ...
    assert_task_derivatives(FrozenPairDistance(hand_torso, k, q), q, v)
    # ... and J_d is the gradient of coal's distance itself (the witnesses move, d does not see it)
    jacobian, _ = hand_torso.distance_jacobian(data, k, distances[k])
    eps, fd = 1e-5, np.zeros(talos.nv)
    for i in range(talos.nv):
        values = []
        for sign in (1.0, -1.0):
            talos.compute_all_terms(data, pin.integrate(talos.model, q, sign * eps * np.eye(talos.nv)[i]), v)
            values.append(hand_torso.compute_distances(data)[k].distance)
        fd[i] = (values[0] - values[1]) / (2 * eps)
    assert np.abs(jacobian - fd).max() < 1e-7 * max(1.0, np.abs(fd).max())
    # rows: an active pair gets J_d dv >= lb, the others no bound
    c = hand_torso.compute(0.0, q, v, data)
    assert c.matrix.shape == (len(hand_torso.pair_names), talos.nv)
    assert np.all(np.isinf(c.upper_bound))


@pytest.mark.slow
def test_the_hand_driven_into_the_torso_stops_at_the_limit(talos, hand_torso):
    """An SE3 task pulls the left gripper toward the middle of the torso's collision hull; with the
    self-collision task (priority 0) no hand-torso pair comes closer than d_min = 8 cm, measured at
    every step with coal on the URDF's meshes, and the limit is reached (the damper binds)."""
    controller = BipedController(talos)
    form = controller.formulation
    form.add_motion_task(hand_torso, priority=0)
    hand = tsid.TaskSE3Equality("hand", talos, "gripper_left_joint")
    hand.kp, hand.mask = 30.0, [1, 1, 1, 0, 0, 0]
    hand.use_local_frame(False)
    torso = talos.frame_placement(controller.data, "torso_2_link")
    target = torso.act(np.array([-0.06, 0.0, 0.17]))  # the centre of torso_2's collision hull
    hand.set_reference(pin.SE3(np.eye(3), target))
    form.add_motion_task(hand, weight=10.0, priority=1)
    meshes = talos.load_collision_model()  # independent: the meshes, not the task's hulls
    for a, b in hand_torso.pair_names:
        meshes.addCollisionPair(pin.CollisionPair(meshes.getGeometryId(a), meshes.getGeometryId(b)))
    mesh_data, kinematics = pin.GeometryData(meshes), talos.create_data()

    class Measure(StepHooks):
        distances: list[float] = []

        def after_step(self, state, out):
            q = state.q
            pin.forwardKinematics(talos.model, kinematics, q)
            pin.updateGeometryPlacements(talos.model, kinematics, meshes, mesh_data)
            pin.computeDistances(meshes, mesh_data)
            self.distances.append(min(r.min_distance for r in mesh_data.distanceResults))

    hooks = Measure()
    summary = ControlLoop(controller, DT).run(250, hooks).summary()
    assert summary["qp_failures"] == 0  # (the hand pulls Talos off balance: 0.5 s decides nothing about it)
    assert summary["dynamics_residual_max"] < RESIDUAL
    closest = min(hooks.distances)
    print(f"self-collision: closest hand-torso mesh distance {closest:.6f} m (d_min {hand_torso.d_min} m)")
    assert closest >= hand_torso.d_min - 1e-6
    assert closest < hand_torso.d_min + 2e-3  # the limit binds
    assert hooks.distances[0] > hand_torso.d_min + 0.05


@pytest.mark.slow
def test_self_collision_pairs_from_the_spec_or_all_and_bad_input(talos):
    from_spec = tsid.TaskSelfCollision("spec", talos, DT)
    assert len(from_spec.pair_names) == len(set(from_spec.pair_names)) > 10
    assert ("gripper_left_base_link_0", "gripper_right_base_link_0") in from_spec.pair_names
    everything = tsid.TaskSelfCollision("all", talos, DT, "all", max_active=10)
    assert everything.dim == 10 and len(everything.pair_names) > 500
    assert ("leg_left_1_link_0", "leg_left_2_link_0") not in everything.pair_names  # adjacent
    data = talos.create_data()
    talos.compute_all_terms(data, talos.default_configuration(), talos.zero_velocity())
    everything.compute(0.0, talos.default_configuration(), talos.zero_velocity(), data)
    assert everything.min_distance > everything.d_min  # pairs touching by design are left out
    with pytest.raises(tsid.errors.UnknownNameError, match="torso_2_link"):
        tsid.TaskSelfCollision("bad", talos, DT, [("torso_2_lnk", "arm_left_7_link")])
    with pytest.raises(tsid.errors.InvalidParameterError, match="d_influence"):
        tsid.TaskSelfCollision(
            "bad", talos, DT, [("torso_2_link", "arm_left_7_link")], d_min=0.1, d_influence=0.05
        )
    with pytest.raises(tsid.errors.InvalidParameterError, match="gamma dt"):
        tsid.TaskSelfCollision("bad", talos, DT, [("torso_2_link", "arm_left_7_link")], damping=100.0)
    with pytest.raises(tsid.errors.InvalidParameterError, match="two names"):
        tsid.TaskSelfCollision("bad", talos, DT, [("torso_2_link",)])
    with pytest.raises(tsid.errors.InvalidParameterError, match="max_active"):
        tsid.TaskSelfCollision("bad", talos, DT, [("torso_2_link", "arm_left_7_link")], max_active=0)
    with pytest.raises(tsid.errors.InvalidParameterError, match="different joints"):
        tsid.TaskSelfCollision("bad", talos, DT, [("arm_left_7_link", "gripper_left_base_link")])
    with pytest.raises(tsid.errors.InvalidParameterError, match="spec"):
        tsid.TaskSelfCollision(
            "bad", tsid.RobotWrapper(talos.model), DT, [("torso_2_link", "arm_left_7_link")]
        )


# ---------------------------------------------------------------------- motor envelope
def test_the_motor_envelope_holds_at_speed(ur5):
    """UR5 sent 1 rad away on every joint with a stiff posture task: at speed the torques ride the
    envelope |tau| <= tau_max (1 - |v| / v_max), never above it."""
    form = tsid.InverseDynamicsFormulation("arm", ur5)
    posture = tsid.TaskJointPosture("posture", ur5)
    posture.kp = 400.0
    q, v = UR5_Q.copy(), ur5.zero_velocity()
    posture.set_reference(tsid.TrajectorySample(q + [1.0, -0.8, 0.8, 1.0, 1.0, 1.0]))
    form.add_motion_task(posture, weight=1.0, priority=1)
    tau_max, v_max = ur5.effort_limit(), np.full(6, 2.0)
    envelope = tsid.TaskMotorEnvelope("envelope", ur5, tau_max=tau_max, v_max=v_max)
    form.add_actuation_task(envelope, priority=0)
    solver = tsid.SolverHQuadProg()
    excess, bound_at_speed = -np.inf, 0
    for i in range(300):
        sol = solver.solve(form.compute_problem_data(i * DT, q, v))
        assert sol.ok
        dv, tau = form.get_accelerations(sol), form.get_actuator_forces(sol)
        assert check_solution(ur5, q, v, dv, tau, {}).dynamics_residual < RESIDUAL
        allowed = tau_max * np.clip(1 - np.abs(v) / v_max, 0, 1)
        excess = max(excess, float(np.max(np.abs(tau) - allowed)))
        bound_at_speed += int(np.any((np.abs(v) > 0.5 * v_max) & (np.abs(tau) > allowed - 1e-6)))
        q, v = tsid.integrate(ur5, q, v, dv, DT)
    assert excess <= 1e-6
    assert bound_at_speed > 10  # the envelope binds while joints run above half their no-load speed


def test_motor_envelope_defaults_braking_mapping_and_bad_input(talos, rng):
    envelope = tsid.TaskMotorEnvelope("envelope", talos)
    np.testing.assert_array_equal(envelope.tau_max, talos.effort_limit())  # exact: copied
    np.testing.assert_array_equal(envelope.v_max, talos.velocity_limit())  # exact: copied
    v = np.zeros(talos.nv)
    v[6:] = 0.5 * talos.velocity_limit() * np.sign(rng.standard_normal(talos.na))
    lower, upper = envelope.envelope(v)
    np.testing.assert_allclose(upper, 0.5 * talos.effort_limit())
    np.testing.assert_allclose(lower, -upper)
    braking = tsid.TaskMotorEnvelope("braking", talos, braking=True)
    lower, upper = braking.envelope(v)
    moving_up = v[6:] > 0
    np.testing.assert_allclose(lower[moving_up], -talos.effort_limit()[moving_up])
    np.testing.assert_allclose(upper[~moving_up], talos.effort_limit()[~moving_up])
    # through the torque map: rows on x bound tau = M_a dv + h_a - J_a^T f
    controller = BipedController(talos)
    controller.formulation.add_actuation_task(envelope, priority=0)
    q, v = near_default(talos, rng, 0.05)
    hqp = controller.formulation.compute_problem_data(0.0, q, v)
    row = next(item.constraint for item in hqp[0] if item.constraint.name == "envelope")
    x = rng.standard_normal(controller.formulation.n_var)
    tau = controller.formulation.get_actuator_forces(HqpOutput(QPStatus.OPTIMAL, x=x))
    lower, upper = envelope.envelope(v)
    np.testing.assert_allclose(row.matrix @ x - row.lower_bound, tau - lower, atol=1e-8)
    np.testing.assert_allclose(row.matrix @ x - row.upper_bound, tau - upper, atol=1e-8)
    with pytest.raises(tsid.errors.InvalidParameterError, match="> 0"):
        tsid.TaskMotorEnvelope("bad", talos, tau_max=0.0)
    with pytest.raises(tsid.errors.DimensionError):
        tsid.TaskMotorEnvelope("bad", talos, v_max=np.ones(3))
    with pytest.raises(tsid.errors.InvalidParameterError, match="> 0"):
        tsid.TaskMotorEnvelope("bad", talos, v_max=np.full(talos.na, np.nan))


def test_the_physics_check_reads_a_wrench_contact_as_its_total_force(talos):
    """check_solution's normal force and friction ratio of a ContactWrench come from its wrench,
    not from its variables read three by three."""
    from tsid_py.physics import normal_forces_and_friction_ratio

    contact = tsid.ContactWrench(
        "foot", talos, "leg_left_sole_fix_joint", (0.1, 0.065), [0, 0, 1], 0.3, 1.0, 1e3
    )
    wrench = np.array([30.0, 0.0, 400.0, 5.0, -3.0, 0.5])
    variables = np.linalg.lstsq(contact.force_generator, wrench, rcond=None)[0]
    f_n, ratio = normal_forces_and_friction_ratio(contact, variables)
    assert f_n.sum() == pytest.approx(400.0) and ratio == pytest.approx(30.0 / (0.3 * 400.0))
