"""The Pinocchio plant: rigid-contact physics from pinocchio.constraintDynamics, not from our QP."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest

import tsid_py as tsid
from tsid_py.controllers.biped import BipedController
from tsid_py.errors import (
    DimensionError,
    InvalidParameterError,
    TsidError,
    UnknownFrameError,
    UnsupportedProblemError,
)
from tsid_py.loop import Command, ControlLoop, StepHooks
from tsid_py.loop.pinocchio_plant import SERVO_DAMPING, SERVO_FREQUENCY, PinocchioPlant
from tsid_py.loop.plant import servo_gains

G = 9.81


@pytest.fixture(scope="module")
def standing(talos):
    """Talos' biped q0 (soles on z = 0) and the torques of one controller step there."""
    controller = BipedController(talos)
    q0, v0 = controller.q0, talos.zero_velocity()
    return q0, controller.compute(0.0, q0, v0).tau


def weight_on_feet(state) -> float:
    return sum(contact.wrench[2] for contact in state.contacts.values())


def dynamics_residual(robot, step) -> float:
    """max |M dv + h - tau - J^T f| of a plant step, with M and h of a Data of our own."""
    data = robot.create_data()
    mass = pin.crba(robot.model, data, step.q)
    mass = np.triu(mass) + np.triu(mass, 1).T
    h = pin.rnea(robot.model, data, step.q, step.v, np.zeros(robot.nv))
    return float(np.abs(mass @ step.dv + h - step.tau - step.jacobian.T @ step.forces.ravel()).max())


def com_velocity(robot, state) -> np.ndarray:
    data = robot.create_data()
    pin.centerOfMass(robot.model, data, state.q, state.v)
    return data.vcom[0].copy()


def test_standing_talos_carries_its_weight_and_obeys_its_dynamics(talos, standing):
    q0, tau = standing
    plant = PinocchioPlant(talos)
    plant.reset(q0, talos.zero_velocity())
    assert plant.engaged.all()  # the eight sole corners are on the ground
    plant.apply(Command(tau))
    plant.advance(0.1)
    state = plant.state()
    weight = talos.total_mass * G
    assert abs(weight_on_feet(state) - weight) < 0.01 * weight  # measured: ~1e-6 relative
    assert all(contact.touching for contact in state.contacts.values())
    assert all(contact.friction_ratio < 0.01 for contact in state.contacts.values())
    assert dynamics_residual(talos, plant.last_step) < 1e-8  # measured: ~1e-13
    assert state.t == pytest.approx(0.1, abs=1e-15)
    assert np.linalg.norm(pin.difference(talos.model, q0, state.q)[:3]) < 1e-3
    assert plant.clipped_steps == 0 and plant.slip_steps == 0


@pytest.mark.slow
def test_the_biped_controller_balances_talos_on_the_pinocchio_plant(talos):
    controller = BipedController(talos)
    plant = PinocchioPlant(talos)
    outcome = ControlLoop(controller, 0.002, plant=plant).run(500, StepHooks())
    assert outcome.qp_failures == 0 and len(outcome.log.t) == 500
    q = np.array(outcome.log.q)
    assert np.abs(q[:, 2] - q[0, 2]).max() < 5e-3  # measured: ~1e-5 m
    data = talos.create_data()
    for frame in talos.spec.feet.values():
        track = []
        for configuration in q[::10]:
            talos.forward_kinematics(data, configuration)
            track.append(talos.frame_placement(data, frame).translation)
        assert np.linalg.norm(np.array(track) - track[0], axis=1).max() < 1e-3  # measured: ~1e-8 m
    assert plant.engaged.all() and plant.clipped_steps == 0


def test_a_push_changes_the_momentum_by_its_impulse(talos, standing):
    force, duration, mass = np.array([0.0, 100.0, 0.0]), 0.1, talos.total_mass
    # In the air, the posture held by the joint servos: the CoM gains F dt / m, the base about as much.
    q = talos.default_configuration()
    q[2] += 1.0
    plant = PinocchioPlant(talos)
    plant.reset(q, talos.zero_velocity())
    plant.apply(Command(np.zeros(talos.na), q_des=q[7:], v_des=np.zeros(talos.na)))
    before = com_velocity(talos, plant.state())
    plant.push(force, duration)
    plant.advance(duration)
    state = plant.state()
    gained = com_velocity(talos, state) - before
    np.testing.assert_allclose(
        gained, [0.0, force[1] * duration / mass, -G * duration], atol=1e-3 * G * duration
    )
    rotation = pin.Quaternion(state.q[6], state.q[3], state.q[4], state.q[5]).toRotationMatrix()
    base = rotation @ state.v[:3]
    assert base[1] == pytest.approx(force[1] * duration / mass, rel=0.1)  # measured: +3 %
    assert not any(contact.touching for contact in state.contacts.values())
    assert dynamics_residual(talos, plant.last_step) < 1e-8
    assert plant.clipped_steps == 0
    plant.advance(0.05)  # the push is over
    assert com_velocity(talos, plant.state())[1] == pytest.approx(gained[1], rel=1e-3)

    # On the ground: m dv_com is the impulse of the push, gravity and the measured ground forces.
    q0, tau = standing
    plant.reset(q0, talos.zero_velocity())
    plant.apply(Command(tau))
    plant.advance(0.02)
    before = com_velocity(talos, plant.state())
    plant.push(force, duration)
    impulse = np.zeros(3)
    for _ in range(round(duration / plant.timestep)):
        plant.advance(plant.timestep)
        ground = sum(contact.wrench[:3] for contact in plant.state().contacts.values())
        impulse += plant.timestep * (force + ground - [0.0, 0.0, mass * G])
    gained = mass * (com_velocity(talos, plant.state()) - before)
    np.testing.assert_allclose(gained, impulse, atol=0.01 * np.linalg.norm(force) * duration)


def test_a_foot_above_the_ground_touches_nothing_until_it_lands(talos):
    q = talos.default_configuration()
    data = talos.create_data()
    talos.forward_kinematics(data, q)
    feet = list(talos.spec.feet.values())
    q[2] += 0.05 - min(talos.frame_placement(data, f).translation[2] for f in feet)  # soles 5 cm up
    plant = PinocchioPlant(talos)
    plant.reset(q, talos.zero_velocity())
    plant.apply(Command(np.zeros(talos.na), q_des=q[7:], v_des=np.zeros(talos.na)))
    for _ in range(2):
        for frame, contact in plant.state().contacts.items():
            assert frame in feet
            assert contact.touching is False
            np.testing.assert_array_equal(contact.wrench, np.zeros(6))  # exact: no force, zeros set
        plant.advance(0.01)
    assert plant.last_step.forces.shape == (0, 3)
    np.testing.assert_allclose(plant.last_step.dv[:3], _gravity_in_base(plant), atol=1e-9)  # free fall
    plant.advance(0.15)  # falls 5 cm in 0.1 s, lands on its soles
    state = plant.state()
    assert all(contact.touching for contact in state.contacts.values())
    assert weight_on_feet(state) > 0.0


def _gravity_in_base(plant) -> np.ndarray:
    """The free-fall acceleration of a free flyer's origin (LOCAL axes, at rest): R^T g."""
    q = plant.last_step.q
    rotation = pin.Quaternion(q[6], q[3], q[4], q[5]).toRotationMatrix()
    return rotation.T @ np.array([0.0, 0.0, -G])


@pytest.mark.slow
def test_a_pushed_robot_tips_onto_one_foot_then_onto_its_outer_edge(talos, standing):
    q0, _ = standing
    plant = PinocchioPlant(talos)
    plant.reset(q0, talos.zero_velocity())
    plant.apply(Command(np.zeros(talos.na), q_des=q0[7:], v_des=np.zeros(talos.na)))  # holds its posture
    plant.advance(0.05)
    plant.push(np.array([0.0, 600.0, 0.0]), 0.2)  # towards +y, the left foot
    right, left = talos.spec.feet["right"], talos.spec.feet["left"]
    on_one_foot = False
    for _ in range(40):
        plant.advance(0.01)
        contacts = plant.state().contacts
        on_one_foot |= not contacts[right].touching and contacts[left].touching
        assert dynamics_residual(talos, plant.last_step) < 1e-8
    assert on_one_foot
    # corners (-x-y, -x+y, +x-y, +x+y) of the right foot, then of the left: the left's outer edge
    np.testing.assert_array_equal(plant.engaged, [0, 0, 0, 0, 0, 1, 0, 1])  # exact: flags
    contact = plant.state().contacts[left]
    assert contact.touching and contact.wrench[2] > 0.0
    assert contact.wrench[3] == pytest.approx(0.065 * contact.wrench[2], rel=0.05)  # the CoP on that edge


def test_torques_beyond_the_effort_limits_are_clipped(talos, standing):
    q0, _ = standing
    plant = PinocchioPlant(talos)
    plant.reset(q0, talos.zero_velocity())
    effort = talos.effort_limit()
    plant.apply(Command(2.0 * np.where(effort > 0, effort, 1.0)))
    plant.advance(0.003)
    assert plant.clipped_steps == 3
    step = plant.last_step
    applied = step.tau[6:] + talos.model.damping[6:] * step.v[6:]
    np.testing.assert_allclose(applied[effort > 0], effort[effort > 0])
    assert dynamics_residual(talos, step) < 1e-8


@pytest.mark.slow
def test_point_feet_and_a_fixed_base(solo12, ur5):
    q = solo12.default_configuration()
    data = solo12.create_data()
    solo12.forward_kinematics(data, q)
    q[2] -= min(solo12.frame_placement(data, f).translation[2] for f in solo12.spec.feet.values())
    plant = PinocchioPlant(solo12)
    assert plant.points.shape == (4, 3)  # one point per foot, at its frame
    plant.reset(q, solo12.zero_velocity())
    plant.apply(Command(np.zeros(solo12.na), q_des=q[7:], v_des=np.zeros(solo12.na)))
    plant.advance(0.5)  # it sags a few mm on its PD servos, then stands
    state = plant.state()
    assert weight_on_feet(state) == pytest.approx(solo12.total_mass * G, rel=0.02)
    for contact in state.contacts.values():
        assert contact.touching
        # a point: no moment at it; r x f with r = point - frame origin, ~1e-16 m of rounding
        np.testing.assert_allclose(contact.wrench[3:], 0.0, atol=1e-12)

    arm = PinocchioPlant(ur5)  # no feet: forward dynamics, Pinocchio's ABA
    q, v = ur5.default_configuration(), np.full(ur5.nv, 0.1)
    arm.reset(q, v)
    tau = np.linspace(-5.0, 5.0, ur5.na)
    arm.apply(Command(tau))
    arm.advance(0.001)
    expected = pin.aba(ur5.model, ur5.create_data(), q, v, tau - ur5.model.damping * v)
    np.testing.assert_allclose(arm.last_step.dv, expected, atol=1e-10)
    assert arm.state().contacts == {}
    with pytest.raises(UnsupportedProblemError):
        arm.push(np.ones(3), 0.1)


def test_servo_gains_from_the_inertia_or_from_the_spec(talos):
    data = talos.create_data()
    q = talos.default_configuration()
    pin.crba(talos.model, data, q)
    kp, kd = servo_gains(talos, data, SERVO_FREQUENCY, SERVO_DAMPING)
    diagonal = np.diag(data.M)[6:]
    omega = 2 * np.pi * 20.0
    np.testing.assert_allclose(kp, diagonal * omega**2)
    np.testing.assert_allclose(kd, 2 * 0.7 * diagonal * omega)
    spec = SimpleNamespace(servo={"kp": 300.0, "kd": list(range(talos.na))})
    robot = SimpleNamespace(spec=spec, na=talos.na, nv=talos.nv, name="stub")
    kp, kd = servo_gains(robot, data, SERVO_FREQUENCY, SERVO_DAMPING)
    np.testing.assert_array_equal(kp, np.full(talos.na, 300.0))  # exact: from the spec
    np.testing.assert_array_equal(kd, np.arange(talos.na))  # exact: from the spec
    with pytest.raises(InvalidParameterError):
        servo_gains(talos, talos.create_data(), SERVO_FREQUENCY)  # no mass matrix computed


def test_bad_input_raises_tsid_errors(talos, standing):
    q0, tau = standing
    plant = PinocchioPlant(talos)
    plant.reset(q0, talos.zero_velocity())
    cases = [
        (InvalidParameterError, lambda: plant.advance(0.0015)),  # not a multiple of 1 ms
        (InvalidParameterError, lambda: plant.advance(-0.001)),
        (DimensionError, lambda: plant.apply(Command(np.zeros(talos.na + 1)))),
        (DimensionError, lambda: plant.apply(Command(tau, q_des=np.zeros(3), v_des=np.zeros(talos.na)))),
        (InvalidParameterError, lambda: plant.apply(Command(tau, q_des=q0[7:]))),  # no v_des
        (DimensionError, lambda: plant.push(np.ones(2), 0.1)),
        (InvalidParameterError, lambda: plant.push(np.ones(3), -1.0)),
        (DimensionError, lambda: plant.reset(q0[:-1], talos.zero_velocity())),
        (UnknownFrameError, lambda: PinocchioPlant(talos, ["no_such_frame"])),
        (InvalidParameterError, lambda: PinocchioPlant(talos, timestep=0.0)),
    ]
    for error, call in cases:
        with pytest.raises(error) as raised:
            call()
        assert isinstance(raised.value, TsidError)
    plant.advance(0.002 + 1e-15)  # a multiple up to rounding is fine
    assert plant.state().t == pytest.approx(0.002)
    assert isinstance(plant, tsid.loop.Plant) and plant.name == "pinocchio"
