"""The new tasks compute what the C++ TSID computes (where TSID exposes them to Python).

Each task is evaluated by both libraries at the same random state of Talos and the constraint
matrices and vectors (or bounds) compared. TaskCapturePointInequality and
TaskContactForceEquality have no Python binding in TSID 1.10: test_task_catalogue.py checks them
against their closed forms instead.
"""

import numpy as np
import pinocchio as pin
import pytest
from conftest import random_state

import tsid_py as tp
from tsid_py.contacts import Measured6dWrench
from tsid_py.robot_specs import example_robot_data_dir

tsid = pytest.importorskip("tsid", reason="the C++ TSID oracle is not installed (make oracle)")
pytestmark = pytest.mark.oracle


@pytest.fixture(scope="module")
def oracle_robot():
    root = example_robot_data_dir()
    urdf = str(root / "talos_data/robots/talos_reduced.urdf")
    return tsid.RobotWrapper(urdf, [str(root)], pin.JointModelFreeFlyer(), False)


def both_datas(talos, oracle_robot, q, v):
    data = talos.create_data()
    talos.compute_all_terms(data, q, v)
    odata = oracle_robot.data()
    oracle_robot.computeAllTerms(odata, q, v)
    return data, odata


def test_two_frames_equality(talos, oracle_robot, rng):
    q, v = random_state(talos, rng)
    data, odata = both_datas(talos, oracle_robot, q, v)
    frames = ("gripper_left_joint", "gripper_right_joint")
    ours = tp.TaskTwoFramesEquality("hands", talos, *frames)
    theirs = tsid.TaskTwoFramesEquality("hands", oracle_robot, *frames)
    kp, kd = np.linspace(1, 60, 6), np.linspace(2, 12, 6)
    ours.kp, ours.kd = kp, kd
    theirs.setKp(kp)
    theirs.setKd(kd)
    c, oc = ours.compute(0.0, q, v, data), theirs.compute(0.0, q, v, odata)
    np.testing.assert_allclose(c.matrix, oc.matrix, atol=1e-10)
    np.testing.assert_allclose(c.vector, oc.vector, atol=1e-8)


def test_joint_pos_vel_acc_bounds(talos, oracle_robot, rng):
    q, v = random_state(talos, rng)
    dt, na = 0.01, talos.na
    q_min, q_max = talos.position_limits()
    inside = np.clip(q[7:], q_min + 0.05, q_max - 0.05)  # a state inside the position limits
    q = np.concatenate([q[:7], inside])
    v = 0.3 * v
    data, odata = both_datas(talos, oracle_robot, q, v)
    ours = tp.TaskJointPosVelAccBounds("bounds", talos, dt)
    theirs = tsid.TaskJointPosVelAccBounds("bounds", oracle_robot, dt, False)
    ours.set_position_bounds(q_min, q_max)
    ours.set_velocity_bounds(2.0 * np.ones(na))
    ours.set_acceleration_bounds(20.0 * np.ones(na))
    theirs.setPositionBounds(q_min, q_max)
    theirs.setVelocityBounds(2.0 * np.ones(na))
    theirs.setAccelerationBounds(20.0 * np.ones(na))
    c, oc = ours.compute(0.0, q, v, data), theirs.compute(0.0, q, v, odata)
    np.testing.assert_allclose(c.matrix, np.hstack([np.zeros((na, 6)), np.eye(na)]))
    np.testing.assert_allclose(c.lower_bound, oc.lowerBound, rtol=1e-10, atol=1e-8)
    np.testing.assert_allclose(c.upper_bound, oc.upperBound, rtol=1e-10, atol=1e-8)


def test_actuation_equality(talos, oracle_robot, rng):
    q, v = random_state(talos, rng)
    data, odata = both_datas(talos, oracle_robot, q, v)
    weights, tau_ref = rng.uniform(0.5, 2.0, talos.na), rng.standard_normal(talos.na)
    mask = (rng.uniform(size=talos.na) > 0.3).astype(float)
    ours = tp.TaskActuationEquality("torque", talos)
    theirs = tsid.TaskActuationEquality("torque", oracle_robot)
    ours.mask = mask
    theirs.setMask(mask)
    ours.set_weight_vector(weights)
    theirs.setWeightVector(weights)
    ours.set_reference(tau_ref)
    theirs.setReference(tau_ref)
    c, oc = ours.compute(0.0, q, v, data), theirs.compute(0.0, q, v, odata)
    np.testing.assert_allclose(c.matrix, oc.matrix)
    np.testing.assert_allclose(c.vector, oc.vector, atol=1e-12)


def test_grasp_and_measured_push_in_closed_loop(talos):
    """Talos balance with the grippers held together (bilateral contact) and a measured push.

    Both libraries solve the same problem every step (dv, tau and every force compared), then
    integrate their own solution.
    """
    from oracle_problems import PROBLEMS, build_oracle, build_tsid_py, initial_state
    from test_parity_oracle import relative

    problem = PROBLEMS["talos-balance"]
    q, _ = initial_state(problem)
    frames = ("gripper_left_joint", "gripper_right_joint")
    ours, oracle = build_tsid_py(problem, q), build_oracle(problem, q, tsid)
    form, oform, osolver, keep = ours.formulation, oracle.formulation, oracle.solver, oracle.keep
    orobot = keep[0]
    grasp = tp.ContactTwoFramePositions("grasp", talos, *frames, -1000.0, 1000.0)
    grasp.kp, grasp.kd = 1.0, 2.0
    form.add_rigid_contact(grasp, force_reg_weight=1e-5)
    ograsp = tsid.ContactTwoFramePositions("grasp", orobot, *frames, -1000.0, 1000.0)
    ograsp.setKp(np.ones(3))
    ograsp.setKd(2.0 * np.ones(3))
    oform.addRigidContact(ograsp, 1e-5)
    wrench = np.array([30.0, -10.0, 5.0, 1.0, 2.0, -3.0])
    push = Measured6dWrench("push", talos, "torso_2_joint")
    push.set_measured_contact_force(wrench)
    form.add_measured_force(push)
    opush = tsid.Measured6dWrench("push", orobot, "torso_2_joint")
    opush.setMeasuredContactForce(wrench)
    oform.addMeasuredForce(opush)
    keep += [ograsp, opush]
    osolver.resize(oform.nVar, oform.nEq, oform.nIn)
    solver = ours.solver
    dt, qo, v, vo, worst = 0.002, q.copy(), talos.zero_velocity(), talos.zero_velocity(), 0.0
    for i in range(100):
        sol = solver.solve(form.compute_problem_data(i * dt, q, v))
        osol = osolver.solve(oform.computeProblemData(i * dt, qo, vo))
        assert sol.status == osol.status == 0
        dv, odv = form.get_accelerations(sol), oform.getAccelerations(osol)
        worst = max(
            worst, relative(form.get_actuator_forces(sol), oform.getActuatorForces(osol)), relative(dv, odv)
        )
        for name in ("contact_rfoot", "contact_lfoot", "grasp"):
            worst = max(worst, relative(form.get_contact_force(name, sol), oform.getContactForce(name, osol)))
        q, v = tp.integrate(talos, q, v, dv, dt)
        qo = pin.integrate(orobot.model(), qo, dt * (vo + 0.5 * dt * odv))
        vo = vo + dt * odv
    assert worst < 1e-6
