"""Closed kinematic chains (ContactTwoFramePositions), measured external forces (Measured6dWrench,
Measured3dForce)."""

import numpy as np
import pinocchio as pin
import pytest
from conftest import random_state

import tsid_py as tsid
from tsid_py.contacts import Measured3dForce, Measured6dWrench
from tsid_py.controllers.biped import BipedController
from tsid_py.physics import check_solution
from tsid_py.robot_specs import SpecRobot

DT = 0.002


@pytest.fixture(scope="module")
def talos_with_handle() -> SpecRobot:
    """Talos with a frame "handle" on the torso, where the left gripper is in the half-sitting posture."""
    robot = tsid.load_robot("talos")
    data = BipedController(robot).data
    torso = robot.model.getJointId("torso_2_joint")
    placement = data.oMi[torso].actInv(data.oMf[robot.frame_id("gripper_left_joint")])
    parent = robot.model.getFrameId("torso_2_joint")
    robot.model.addFrame(pin.Frame("handle", torso, parent, placement, pin.FrameType.OP_FRAME))
    return robot


def dynamics_residual(robot, q, v, dv, tau, generalized_external_force):
    """|M dv + h - S^T tau - external| from Pinocchio's RNEA, independent of the formulation."""
    rnea = pin.rnea(robot.model, robot.create_data(), q, v, dv)
    return np.abs(rnea - np.concatenate([np.zeros(6), tau]) - generalized_external_force).max()


@pytest.mark.slow
def test_a_grasp_closes_the_chain_and_carries_a_passive_arm(talos_with_handle):
    robot = talos_with_handle
    controller = BipedController(robot)
    grasp = tsid.ContactTwoFramePositions("grasp", robot, "gripper_left_joint", "handle", -1000.0, 1000.0)
    grasp.kp = 100.0
    controller.formulation.add_rigid_contact(grasp, force_reg_weight=1e-5)
    # the left elbow is passive: the handle must carry the forearm for the chain to hold
    passive = tsid.TaskActuationEquality("passive-elbow", robot)
    elbow = robot.model.joints[robot.model.getJointId("arm_left_4_joint")].idx_v - 6
    passive.mask = np.eye(robot.na)[elbow]
    controller.formulation.add_actuation_task(passive, weight=1.0, priority=0)
    q, v, separation, force = controller.q0.copy(), robot.zero_velocity(), 0.0, 0.0
    for i in range(250):
        out = controller.compute(i * DT, q, v)
        assert out.solution.ok
        separation = max(separation, np.linalg.norm(grasp.motion_task.position_error[:3]))
        f = out.forces["grasp"]
        force = max(force, np.linalg.norm(f))
        data = controller.data
        J = [robot.frame_jacobian_world_oriented(data, name)[:3] for name in ("gripper_left_joint", "handle")]
        feet = sum(
            robot.frame_jacobian_local(data, c.frame_id).T @ c.wrench(out.forces[c.name])
            for c in controller.contacts.values()
        )
        external = feet + (J[0] - J[1]).T @ f
        assert dynamics_residual(robot, q, v, out.dv, out.tau, external) < 1e-8
        contacts = {name: (controller.formulation.contacts[name], f) for name, f in out.forces.items()}
        check = check_solution(robot, q, v, out.dv, out.tau, contacts)  # the loop's check: +f and -f
        assert check.dynamics_residual < 1e-8
        assert abs(out.tau[elbow]) < 1e-9
        q, v = tsid.integrate(robot, q, v, out.dv, DT)
    assert separation < 1e-4  # the hand stays on the handle (up to the integration error) [m]
    assert force > 5.0  # ... because the handle holds the arm up [N]


@pytest.mark.slow
def test_a_measured_push_is_carried_by_the_feet(talos):
    controller = BipedController(talos)
    push = Measured6dWrench("push", talos, "torso_2_joint")
    push.use_local_frame(False)
    push.set_measured_contact_force([40.0, 0.0, 0.0, 0.0, 0.0, 0.0])  # 40 N forward on the torso
    controller.formulation.add_measured_force(push)
    q, v = controller.q0.copy(), talos.zero_velocity()
    for i in range(500):
        out = controller.compute(i * DT, q, v)
        assert out.solution.ok
        data = controller.data
        feet = sum(
            talos.frame_jacobian_local(data, c.frame_id).T @ c.wrench(out.forces[c.name])
            for c in controller.contacts.values()
        )
        external = feet + talos.frame_jacobian_world_oriented(data, "torso_2_joint").T @ push.measured_wrench
        assert dynamics_residual(talos, q, v, out.dv, out.tau, external) < 1e-8
        q, v = tsid.integrate(talos, q, v, out.dv, DT)
    # after 1 s the robot stands still against the push: the feet push back with 40 N along -x
    horizontal = 0.0
    for c in controller.contacts.values():
        rotation = controller.foot_placement("right" if c.name == "contact_rfoot" else "left").rotation
        horizontal += (rotation @ c.wrench(out.forces[c.name])[:3])[0]
    assert horizontal == pytest.approx(-40.0, abs=1.0)
    assert np.linalg.norm(talos.com(controller.data) - controller.com_initial) < 0.01
    controller.formulation.remove_measured_force("push")
    with pytest.raises(tsid.errors.UnknownNameError, match="push"):
        controller.formulation.remove_measured_force("push")


def test_a_measured_wrench_is_the_same_in_local_or_world_axes(talos, rng):
    """J_local^T w = J_world^T (R w): the two ways of stating one wrench give one joint torque."""
    q, v = random_state(talos, rng)
    data = talos.create_data()
    talos.compute_all_terms(data, q, v)
    wrench = rng.standard_normal(6)
    local = Measured6dWrench("local", talos, "torso_2_joint")
    local.set_measured_contact_force(wrench)
    world = Measured6dWrench("world", talos, "torso_2_joint")
    world.use_local_frame(False)
    rotation = data.oMf[talos.frame_id("torso_2_joint")].rotation
    world.set_measured_contact_force(np.concatenate([rotation @ wrench[:3], rotation @ wrench[3:]]))
    np.testing.assert_allclose(
        local.compute_joint_torques(data), world.compute_joint_torques(data), atol=1e-10
    )
    # and it is the generalized force of an external wrench in RNEA: tau_ext = J^T w
    zero = np.zeros(talos.nv)
    joint = talos.model.frames[talos.frame_id("torso_2_joint")].parentJoint
    placement = talos.model.frames[talos.frame_id("torso_2_joint")].placement
    external = [pin.Force.Zero() for _ in range(talos.model.njoints)]
    external[joint] = placement.act(pin.Force(wrench))
    no_wrench = pin.rnea(talos.model, talos.create_data(), q, v, zero)
    with_wrench = pin.rnea(talos.model, talos.create_data(), q, v, zero, external)
    np.testing.assert_allclose(no_wrench - with_wrench, local.compute_joint_torques(data), atol=1e-8)


@pytest.mark.parametrize("local", [True, False])
def test_a_measured_3d_force_is_a_pure_force_at_the_frame_origin(talos, rng, local):
    """Measured3dForce f equals Measured6dWrench (f, 0), in either axes, and RNEA's external force."""
    q, v = random_state(talos, rng)
    data = talos.create_data()
    talos.compute_all_terms(data, q, v)
    force = rng.standard_normal(3)
    point = Measured3dForce("hand", talos, "arm_right_7_joint")
    wrench = Measured6dWrench("hand-wrench", talos, "arm_right_7_joint")
    for measured in (point, wrench):
        measured.use_local_frame(local)
    point.set_measured_contact_force(force)
    wrench.set_measured_contact_force(np.concatenate([force, np.zeros(3)]))
    torques = point.compute_joint_torques(data)
    np.testing.assert_allclose(torques, wrench.compute_joint_torques(data), atol=1e-12)
    frame = talos.model.frames[talos.frame_id("arm_right_7_joint")]
    local_force = force if local else data.oMf[talos.frame_id("arm_right_7_joint")].rotation.T @ force
    external = [pin.Force.Zero() for _ in range(talos.model.njoints)]
    external[frame.parentJoint] = frame.placement.act(pin.Force(local_force, np.zeros(3)))
    zero = np.zeros(talos.nv)
    no_force = pin.rnea(talos.model, talos.create_data(), q, v, zero)
    with_force = pin.rnea(talos.model, talos.create_data(), q, v, zero, external)
    np.testing.assert_allclose(no_force - with_force, torques, atol=1e-8)
    form = tsid.InverseDynamicsFormulation("f", talos)
    form.add_measured_force(point)
    with pytest.raises(tsid.errors.DimensionError, match="size 3"):
        point.set_measured_contact_force(np.zeros(6))
