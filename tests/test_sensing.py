"""What a robot measures: the sensors' readings against the truth they are made from, the
kinematic-inertial estimator on known motions, and a closed loop in which the controller never
reads the simulator's truth."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

import tsid_py as tsid
from tsid_py.controllers import BipedController
from tsid_py.geometry import GRAVITY
from tsid_py.loop import ContactMeasurement, ControlLoop, Measurer, PlantState
from tsid_py.loop.estimation import EstimatorParams, KinematicInertialEstimator
from tsid_py.loop.sensing import RobotSensors, SensorParams

DT = 0.002
STEP = 2 * math.pi / 2**19  # the default encoders' resolution [rad]
QUIET = SensorParams(
    gyro_noise=0.0,
    gyro_bias_walk=0.0,
    accel_noise=0.0,
    accel_bias_walk=0.0,
    force_noise=0.0,
    torque_noise=0.0,
)


def _truth(talos, *state):
    """The loop's measured state of a true ``PlantState(*state)``: what the sensors read."""
    return Measurer(talos).measure(PlantState(*state))


def _standing(talos):
    """Talos standing at its q0, each foot carrying half its weight (the ground's wrench, world)."""
    q0 = BipedController(talos).q0
    half = np.array([0.0, 0.0, 0.5 * talos.total_mass * GRAVITY, 0.0, 0.0, 0.0])
    contacts = {frame: ContactMeasurement(half, True) for frame in talos.spec.feet.values()}
    return q0, contacts


# ------------------------------------------------------------------ the sensors
def test_the_sensors_read_the_truth_within_their_resolution_and_noise(talos, rng):
    q0, contacts = _standing(talos)
    v = 0.1 * rng.standard_normal(talos.nv)
    sensors = RobotSensors(talos, DT, SensorParams(seed=3))
    reading = sensors.read(_truth(talos, 0.0, q0, v, contacts))
    assert np.abs(reading.joints - q0[7:]).max() <= STEP / 2 + 1e-15  # quantized, no noise by default
    np.testing.assert_allclose(reading.gyro, v[3:6], atol=6 * sensors.params.gyro_noise / math.sqrt(DT))
    # at the first reading the base is taken at rest: the accelerometer reads g up, in the base frame
    rotation = pin.Quaternion(q0[6], q0[3], q0[4], q0[5]).toRotationMatrix()
    expected = rotation.T @ np.array([0.0, 0.0, GRAVITY])
    np.testing.assert_allclose(
        reading.accelerometer, expected, atol=6 * sensors.params.accel_noise / math.sqrt(DT)
    )
    frame = talos.spec.feet["left"]
    data = talos.create_data()
    pin.forwardKinematics(talos.model, data, q0)
    foot = pin.updateFramePlacement(talos.model, data, talos.frame_id(frame)).rotation
    np.testing.assert_allclose(foot @ reading.wrenches[frame][:3], contacts[frame].wrench[:3], atol=6 * 0.25)


def test_the_accelerometer_reads_the_bases_acceleration_less_gravity(talos):
    """Two readings of a base accelerating at a known rate (world axes): the specific force."""
    q0, contacts = _standing(talos)
    sensors = RobotSensors(talos, DT, QUIET)
    v = talos.zero_velocity()
    sensors.read(_truth(talos, 0.0, q0, v, contacts))
    rotation = pin.Quaternion(q0[6], q0[3], q0[4], q0[5]).toRotationMatrix()
    acceleration = np.array([0.5, -0.2, 1.0])  # world [m/s^2]
    v[:3] = rotation.T @ (acceleration * DT)
    reading = sensors.read(_truth(talos, DT, q0, v, contacts))
    np.testing.assert_allclose(
        reading.accelerometer, rotation.T @ (acceleration + [0.0, 0.0, GRAVITY]), atol=1e-9
    )


def test_the_same_seed_reads_the_same_and_another_differs(talos, rng):
    q0, contacts = _standing(talos)
    state = PlantState(0.0, q0, 0.1 * rng.standard_normal(talos.nv), contacts)
    truth = Measurer(talos).measure(state)
    a, b, c = (RobotSensors(talos, DT, SensorParams(seed=s)).read(truth) for s in (1, 1, 2))
    np.testing.assert_array_equal(a.gyro, b.gyro)  # exact: the same seed draws the same noise
    assert np.abs(a.gyro - c.gyro).max() > 0.0


@pytest.mark.parametrize(
    "bad, words",
    [
        ({"latency": -1}, "latency"),
        ({"encoder_bits": 0}, "encoder_bits"),
        ({"gyro_noise": float("nan")}, "gyro_noise"),
        ({"velocity_cutoff": 0.0}, "velocity_cutoff"),
    ],
)
def test_bad_sensor_numbers_are_refused(bad, words):
    with pytest.raises(tsid.errors.TsidError, match=words):
        SensorParams(**bad)


def test_a_spec_sets_the_sensors_and_an_unknown_key_is_named(talos):
    import dataclasses

    spec = dataclasses.replace(talos.spec, sensors={"latency": 2, "force_noise": 1.0})
    assert SensorParams.for_robot(tsid.robot_specs.SpecRobot(spec)).latency == 2
    wrong = tsid.robot_specs.SpecRobot(dataclasses.replace(talos.spec, sensors={"latancy": 2}))
    with pytest.raises(tsid.errors.RobotSpecError, match="latancy"):
        SensorParams.for_robot(wrong)


# ------------------------------------------------------------------ the estimator
@pytest.mark.slow
def test_the_estimator_holds_a_robot_at_rest_where_it_stands(talos):
    """Noise-free readings of Talos at rest: the estimate stays at q0, at rest."""
    q0, contacts = _standing(talos)
    sensors = RobotSensors(talos, DT, QUIET)
    estimator = KinematicInertialEstimator(talos, q0, DT, QUIET)
    for k in range(200):
        estimate = estimator.update(sensors.read(_truth(talos, k * DT, q0, talos.zero_velocity(), contacts)))
    assert all(c.touching for c in estimate.contacts.values())
    np.testing.assert_allclose(estimate.q[7:], q0[7:], atol=STEP / 2 + 1e-15)  # the encoders' resolution
    np.testing.assert_allclose(estimate.q[:7], q0[:7], atol=1e-5)  # the base through the legs' kinematics
    np.testing.assert_allclose(estimate.v, 0.0, atol=1e-6)


@pytest.mark.slow
def test_the_legs_odometry_follows_a_base_moving_over_feet_that_stand_still(talos):
    """Talos's base moves sideways at 5 cm/s over its feet (the feet held where they stand, the legs
    moving to keep them there: a true motion with feet still); the estimated base follows it."""
    q0, contacts = _standing(talos)
    controller = BipedController(talos)
    feet = {side: controller.foot_placement(side) for side in ("right", "left")}
    sensors = RobotSensors(talos, DT, QUIET)
    estimator = KinematicInertialEstimator(talos, q0, DT, QUIET)
    q, data = q0.copy(), talos.create_data()
    speed = np.array([0.0, 0.05, 0.0])
    previous = q.copy()
    for k in range(250):  # 0.5 s: the base moves 2.5 cm, the legs' inverse kinematics keep the feet
        target = q0[:3] + speed * k * DT
        q = _base_at(talos, q, target, feet, data)
        v = pin.difference(talos.model, previous, q) / DT if k else talos.zero_velocity()
        previous = q.copy()
        estimate = estimator.update(sensors.read(_truth(talos, k * DT, q, v, contacts)))
    np.testing.assert_allclose(estimate.q[:3], q[:3], atol=2e-4)
    rotation = pin.Quaternion(q[6], q[3], q[4], q[5]).toRotationMatrix()
    np.testing.assert_allclose(rotation @ estimate.v[:3], speed, atol=5e-3)


@pytest.mark.parametrize("beyond", [0.0, 0.02])
@pytest.mark.slow
def test_feet_that_roll_onto_their_toes_turn_about_the_point_they_press_on(talos, beyond):
    """Talos tips forward as one rigid body about its toes' edge, 8 deg in 0.4 s, its weight on
    the toes (the sensors' centre of pressure there, or 2 cm past them, as noise would put it: the
    sole's edge is where it can be): the soles' frames rise 1.4 cm, the toes stay. The estimate
    follows the base (the toes held still, not the frames)."""
    q0, _ = _standing(talos)
    sole = talos.spec.sole
    data = talos.create_data()
    pin.forwardKinematics(talos.model, data, q0)
    feet = [talos.frame_id(frame) for frame in talos.spec.feet.values()]
    soles = [pin.updateFramePlacement(talos.model, data, f) for f in feet]
    toe = np.array([soles[0].translation[0] + sole.lxp, 0.0, 0.0])  # a point of the toes' edge
    base0 = pin.XYZQUATToSE3(q0[:7])
    sensors = RobotSensors(talos, DT, QUIET)
    estimator = KinematicInertialEstimator(talos, q0, DT, QUIET)
    previous, steps = q0.copy(), 200
    for k in range(steps + 1):
        pitch = math.radians(8.0) * min(k, steps) / steps
        tipped = pin.SE3(pin.rpy.rpyToMatrix(0.0, pitch, 0.0), np.zeros(3))
        about_toes = pin.SE3(np.eye(3), toe) * tipped * pin.SE3(np.eye(3), -toe)
        q = q0.copy()
        q[:7] = pin.SE3ToXYZQUAT(about_toes * base0)
        v = pin.difference(talos.model, previous, q) / DT if k else talos.zero_velocity()
        previous = q.copy()
        pin.forwardKinematics(talos.model, data, q)
        contacts = {}
        for frame, frame_id in zip(talos.spec.feet.values(), feet, strict=True):
            origin = pin.updateFramePlacement(talos.model, data, frame_id).translation
            force = np.array([0.0, 0.0, 0.5 * talos.total_mass * GRAVITY])
            pressed = np.array([toe[0] + beyond, origin[1], toe[2]])  # under the frame, at the toes
            wrench = np.concatenate([force, np.cross(pressed - origin, force)])
            contacts[frame] = ContactMeasurement(wrench, True)
        estimate = estimator.update(sensors.read(_truth(talos, k * DT, q, v, contacts)))
        rotation = pin.Quaternion(q[6], q[3], q[4], q[5]).toRotationMatrix()
        if 0 < k < steps:
            np.testing.assert_allclose(rotation @ estimate.v[:3], rotation @ v[:3], atol=2e-3)
    risen = pin.updateFramePlacement(talos.model, data, feet[0]).translation[2] - soles[0].translation[2]
    assert risen > 0.012  # what holding the frames still would have missed
    np.testing.assert_allclose(estimate.q[:3], q[:3], atol=5e-4)


def test_a_foot_touches_above_the_threshold_and_lifts_below_the_release(talos):
    """Contact detection with a hysteresis: 3 % of the weight does not put a foot down (the
    threshold is 5 %) but keeps one down (the release is 1 %); 0.5 % lifts it."""
    q0, both = _standing(talos)
    frame, weight = talos.spec.feet["left"], talos.total_mass * GRAVITY
    sensors = RobotSensors(talos, DT, QUIET)
    estimator = KinematicInertialEstimator(talos, q0, DT, QUIET)

    def touching(fraction, k):
        contacts = dict(both)
        contacts[frame] = ContactMeasurement(np.array([0.0, 0.0, fraction * weight, 0, 0, 0]), True)
        reading = sensors.read(_truth(talos, k * DT, q0, talos.zero_velocity(), contacts))
        return estimator.update(reading).contacts[frame].touching

    assert touching(0.5, 0) and touching(0.03, 1) and not touching(0.005, 2) and not touching(0.03, 3)
    assert touching(0.06, 4)
    with pytest.raises(tsid.errors.InvalidParameterError, match="contact_release"):
        SensorParams(contact_threshold=0.01, contact_release=0.02)


@pytest.mark.parametrize("flat_ground", [True, False])
@pytest.mark.slow
def test_on_flat_ground_a_foots_soft_contact_does_not_drift_the_height_step_after_step(talos, flat_ground):
    """Steps in place, as a soft contact makes them: a foot that carries the robot sinks 1.5 mm, a
    foot that touches down lightly stands on the ground (the base still, the legs taking the
    difference). Anchoring each new foot where the estimate puts it drifts the height 1.5 mm a
    touch-down; on flat ground the estimate stays within one sink of the truth."""
    q0, both = _standing(talos)
    controller = BipedController(talos)
    placements = {side: controller.foot_placement(side) for side in ("right", "left")}
    frames = {side: talos.spec.feet[side] for side in placements}
    air = ContactMeasurement(np.zeros(6), False)
    sensors = RobotSensors(talos, DT, QUIET)
    estimator = KinematicInertialEstimator(talos, q0, DT, QUIET, EstimatorParams(flat_ground=flat_ground))
    t, sink, data = 0.0, 0.0015, talos.create_data()

    def at(heights):
        feet = {}
        for side, dz in heights.items():
            feet[side] = pin.SE3(placements[side])
            feet[side].translation = placements[side].translation + [0.0, 0.0, dz]
        return _base_at(talos, q0, q0[:3], feet, data)

    q = q0
    for _ in range(5):
        for stance, other in (("right", "left"), ("left", "right")):
            phases = (  # (the feet's heights, which touch)
                ({stance: -sink, other: 0.0}, (stance, other)),  # the other touches down lightly
                ({stance: 0.0, other: -sink}, (stance, other)),  # the weight goes over
                ({stance: 0.0, other: -sink}, (other,)),  # the stance foot lifts
            )
            for heights, touching in phases:
                q = at(heights)
                contacts = {frames[side]: both[frames[side]] if side in touching else air for side in frames}
                for _ in range(5):  # 10 ms in each phase, at rest
                    estimate = estimator.update(
                        sensors.read(_truth(talos, t, q, talos.zero_velocity(), contacts))
                    )
                    t += DT
    error = estimate.q[2] - q[2]
    if flat_ground:
        assert abs(error) <= sink + 1e-6
    else:
        assert error > 5 * sink  # (what flat ground is for: 10 touch-downs, 1.5 mm each)


def _base_at(talos, q, position, feet, data):
    """q with the base at ``position`` and the legs' joints moved (Gauss-Newton on the feet's
    placements) so that the feet stay where they are."""
    q = q.copy()
    q[:3] = position
    model = talos.model
    for _ in range(20):
        pin.computeJointJacobians(model, data, q)
        errors, jacobians = [], []
        for side, target in feet.items():
            frame = talos.frame_id(talos.spec.feet[side])
            placement = pin.updateFramePlacement(model, data, frame)
            errors.append(pin.log6(placement.actInv(target)).vector)
            jacobians.append(pin.getFrameJacobian(model, data, frame, pin.LOCAL)[:, 6:])
        error = np.concatenate(errors)
        if np.abs(error).max() < 1e-12:
            break
        step = np.linalg.lstsq(np.vstack(jacobians), error, rcond=None)[0]
        q = pin.integrate(model, q, np.concatenate([np.zeros(6), step]))
    return q


@pytest.mark.slow
def test_the_tilt_filter_pulls_a_wrong_tilt_back_at_its_gain(talos):
    """An estimate started 2 deg off in roll at rest converges toward the accelerometer's gravity:
    the error decays as exp(-tilt_gain t)."""
    q0, contacts = _standing(talos)
    tilted = q0.copy()
    tilted[3:7] = (
        pin.Quaternion(q0[6], q0[3], q0[4], q0[5]) * pin.Quaternion(pin.rpy.rpyToMatrix(0.035, 0, 0))
    ).coeffs()
    gain = 2.0
    estimator = KinematicInertialEstimator(talos, tilted, DT, QUIET, EstimatorParams(tilt_gain=gain))
    sensors = RobotSensors(talos, DT, QUIET)
    true = pin.Quaternion(q0[6], q0[3], q0[4], q0[5]).toRotationMatrix()

    def error(estimate):
        rotation = pin.Quaternion(estimate.q[6], *estimate.q[3:6]).toRotationMatrix()
        return float(np.linalg.norm(pin.log3(true.T @ rotation)))

    first = error(estimator.update(sensors.read(_truth(talos, 0.0, q0, talos.zero_velocity(), contacts))))
    for k in range(1, 250):
        last = error(
            estimator.update(sensors.read(_truth(talos, k * DT, q0, talos.zero_velocity(), contacts)))
        )
    assert last == pytest.approx(first * math.exp(-gain * 249 * DT), rel=0.05)


def test_bad_input_to_the_estimator_is_refused(talos, ur5):
    q0, _ = _standing(talos)
    with pytest.raises(tsid.errors.InvalidParameterError, match="floating base"):
        KinematicInertialEstimator(ur5, ur5.neutral_configuration(), DT)
    with pytest.raises(tsid.errors.InvalidParameterError, match="Reading"):
        KinematicInertialEstimator(talos, q0, DT).update(PlantState(0.0, q0, talos.zero_velocity()))
    with pytest.raises(tsid.errors.InvalidParameterError, match="MeasuredState"):
        RobotSensors(talos, DT).read(PlantState(0.0, q0, talos.zero_velocity()))
    with pytest.raises(tsid.errors.InvalidParameterError, match="tilt_gain"):
        EstimatorParams(tilt_gain=-1.0)
    with pytest.raises(tsid.errors.InvalidParameterError, match="plant with physics"):
        ControlLoop(BipedController(talos), DT, sensing="robot")
    with pytest.raises(tsid.errors.InvalidParameterError, match="sensing"):
        ControlLoop(BipedController(talos), DT, sensing="perfect")


# ------------------------------------------------------------------ the closed loop
@pytest.mark.slow
def test_with_robot_sensing_the_controller_never_reads_the_truth(talos, monkeypatch):
    """In MuJoCo with robot sensing, the plant's true state is replaced with NaN as soon as the
    sensors and the judge have read it: the controller, which gets only the estimate, runs on, and
    the robot stands (the verdict, from the truth); the controller was handed the estimate, never
    the truth."""
    pytest.importorskip("mujoco", reason="the [sim] extra (mujoco) is not installed")
    from tsid_py.loop import verdict
    from tsid_py.loop.mujoco_plant import MujocoPlant

    truths = []
    plant = MujocoPlant(talos)
    state = plant.state

    def kept_state():
        truth = state()
        truths.append(truth)
        return truth

    plant.state = kept_state  # type: ignore[method-assign]
    observe = verdict.BalanceJudge.observe

    judged = []

    def judge_then_poison(self, sample, *args):
        observe(self, sample, *args)
        judged.append(sample.q.copy())  # the truth the judge read (the measured state's copy)
        truth = truths[-1]  # read by the sensors and measured for the judge: nothing may read it now
        truth.q[:] = np.nan
        truth.v[:] = np.nan
        for measured in truth.contacts.values():
            measured.wrench[:] = np.nan
        truth.imu.gyro[:] = np.nan  # MuJoCo's own IMU
        truth.imu.accelerometer[:] = np.nan

    monkeypatch.setattr(verdict.BalanceJudge, "observe", judge_then_poison)
    controller = BipedController(talos)
    given = []
    compute = controller.compute

    def spied(t, q, v):
        given.append((q.copy(), judged[-1]))
        return compute(t, q, v)

    controller.compute = spied  # type: ignore[method-assign]
    outcome = ControlLoop(controller, DT, plant, sensing="robot").run(750)
    summary = outcome.summary()
    assert summary["verdict"] == "recovered" and summary["qp_failures"] == 0 and len(given) == 750
    assert all(np.isfinite(q).all() for q, _ in given)  # the estimate, never the NaN truth
    assert not any(np.array_equal(q, truth) for q, truth in given)  # exact: never the truth itself
    assert summary["sensing"] == "robot" and summary["estimate_position_error_max_m"] < 0.01


@pytest.mark.slow
def test_truth_sensing_is_todays_loop_and_robot_sensing_holds_talos_in_mujoco():
    """Balance in MuJoCo: truth sensing's summary has no estimate; robot sensing holds Talos, its
    CoM within 2 mm of the reference (the truth's), the estimate within 1 cm and 1 deg."""
    pytest.importorskip("mujoco", reason="the [sim] extra (mujoco) is not installed")
    from tsid_py.scenarios import balance
    from tsid_py.scenarios.runner import LoopSetup
    from tsid_py.viz.plots import estimate_figure, estimate_series

    truth_run = balance.run(duration=2.0, setup=LoopSetup("mujoco"))
    robot_run = balance.run(duration=2.0, setup=LoopSetup("mujoco", sensing="robot"))
    truth, robot = truth_run.summary, robot_run.summary
    assert truth["sensing"] == "truth" and "estimator" not in truth
    assert robot["verdict"] == "recovered" and robot["com_error_max_m"] < 2e-3
    assert robot["estimate_position_error_max_m"] < 0.01 and robot["estimate_orientation_error_max_deg"] < 1.0
    # the log keeps the estimate beside the truth; the plot's errors are the summary's
    assert estimate_series(truth_run) is None and estimate_figure(truth_run) is None
    errors = estimate_series(robot_run)
    largest = np.linalg.norm(errors["position"], axis=1).max()
    assert largest == pytest.approx(robot["estimate_position_error_max_m"], rel=1e-9)
    assert np.degrees(errors["orientation"].max()) == pytest.approx(
        robot["estimate_orientation_error_max_deg"], rel=1e-6
    )
    assert estimate_figure(robot_run) is not None


@pytest.mark.slow
def test_mujocos_own_imu_reads_the_bases_motion_and_the_sensors_take_it(talos):
    """MuJoCo's gyroscope and accelerometer on the base (the model's ``imu`` site) against the
    truth: at rest the specific force is g up; pushed, the gyroscope is the base's angular velocity
    (of the last physics step: within what 1 ms changes it) and the accelerometer the base
    velocity's change over the period, less gravity, in the base frame (but where it changes
    within the period). Quiet sensors read it as
    it is."""
    pytest.importorskip("mujoco", reason="the [sim] extra (mujoco) is not installed")
    from tsid_py.loop import Command
    from tsid_py.loop.mujoco_plant import MujocoPlant

    controller, plant = BipedController(talos), MujocoPlant(talos)
    plant.reset(controller.q0, talos.zero_velocity())
    sensors, previous, compared = RobotSensors(talos, DT, QUIET), None, 0
    worst_gyro = moved = 0.0
    errors: list[float] = []  # the accelerometer's against the velocity's change [m/s^2]
    for k in range(400):
        state = plant.state()
        rotation = pin.Quaternion(state.q[6], *state.q[3:6]).normalized().toRotationMatrix()
        if k == 5:
            np.testing.assert_allclose(state.imu.accelerometer, rotation.T @ [0, 0, GRAVITY], atol=0.05)
        if k == 200:
            plant.push((0.0, 150.0, 0.0), 0.1)
        velocity = rotation @ state.v[:3]
        if previous is not None and 200 < k < 300:  # pushed: the base moves
            expected = rotation.T @ ((velocity - previous) / DT + [0.0, 0.0, GRAVITY])
            errors.append(float(np.max(np.abs(state.imu.accelerometer - expected))))
            worst_gyro = max(worst_gyro, float(np.max(np.abs(state.imu.gyro - state.v[3:6]))))
            moved = max(moved, float(np.max(np.abs(state.v[3:6]))))
            compared += 1
        previous = velocity
        measured = controller.measurer.measure(state)
        reading = sensors.read(measured, state.imu)
        np.testing.assert_allclose(reading.gyro, state.imu.gyro, atol=1e-12)
        np.testing.assert_allclose(reading.accelerometer, state.imu.accelerometer, atol=1e-12)
        controller.observe(measured)
        out = controller.compute(state.t, state.q, state.v)
        plant.apply(Command(out.tau, out.dv))
        plant.advance(DT)
    with pytest.raises(tsid.errors.NonFiniteError, match="imu.gyro"):
        sensors.read(measured, type(state.imu)(np.full(3, np.nan), state.imu.accelerometer))
    with pytest.raises(tsid.errors.InvalidParameterError, match="ImuMeasurement"):
        sensors.read(measured, (state.imu.gyro, state.imu.accelerometer))
    assert compared == 99 and moved > 0.1, moved  # it turned
    assert worst_gyro < 0.05 * moved, (worst_gyro, moved)
    # the specific force moved by 0.4-4.5 m/s^2; the two agree but where it changes within a period
    # (the push's start, a foot's impact: the difference averages over 2 ms, MuJoCo reads 1 ms)
    assert np.median(errors) < 0.02 and np.quantile(errors, 0.9) < 0.06, sorted(errors)[-10:]


def test_the_motors_take_a_command_late_and_through_their_torque_loop():
    """latency 2: the command of step k acts at step k + 2; a torque bandwidth of 50 Hz: a step of
    the command is followed as 1 - (1 - a)^n, a = dt w / (1 + dt w), w = 2 pi 50 (the first
    command is taken as it is)."""
    from tsid_py.loop.motors import Motors
    from tsid_py.loop.plant import Command

    late = Motors(2, 0.0, DT)
    taken = [late.take(Command(np.array([float(k)]), q_des=np.array([k]))).tau[0] for k in range(5)]
    assert taken == [0.0, 0.0, 0.0, 1.0, 2.0]  # exact: the commands themselves, two periods late
    lagged = Motors(0, 50.0, DT)
    w = 2 * math.pi * 50.0
    a = DT * w / (1 + DT * w)
    assert lagged.take(Command(np.zeros(2))).tau == pytest.approx([0.0, 0.0])
    for n in range(1, 6):
        command = Command(np.array([10.0, -4.0]), q_des=np.ones(1), v_des=np.zeros(1))
        out = lagged.take(command)
        np.testing.assert_allclose(out.tau, np.array([10.0, -4.0]) * (1 - (1 - a) ** n), rtol=1e-12)
        assert out.q_des is command.q_des and command.tau[0] == 10.0  # exact: the targets as they are
    with pytest.raises(tsid.errors.InvalidParameterError, match="torque_bandwidth"):
        SensorParams(torque_bandwidth=-1.0)
    with pytest.raises(tsid.errors.InvalidParameterError, match="latency"):
        Motors(-1, 0.0, DT)
