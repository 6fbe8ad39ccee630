"""Every task's Jacobian and drift against finite differences, and its desired acceleration."""

import numpy as np
import pinocchio as pin
import pytest
from conftest import directional_derivative, random_state

import tsid_py as tsid
from tsid_py.constraints import ConstraintEquality
from tsid_py.testing import assert_task_derivatives


def computed(task, robot, q, v):
    data = robot.create_data()
    robot.compute_all_terms(data, q, v)
    return task.compute(0.0, q, v, data), data


def test_com_task_matrix_vector_and_drift(talos, rng):
    q, v = random_state(talos, rng)
    task = tsid.TaskComEquality("com", talos)
    task.kp = [10.0, 20.0, 30.0]
    ref = tsid.TrajectorySample([0.1, 0.0, 0.9], [0.1, 0.2, 0.3], [1.0, 2.0, 3.0])
    task.set_reference(ref)
    c, data = computed(task, talos, q, v)
    vector, matrix = c.vector.copy(), c.matrix.copy()
    com = pin.centerOfMass(talos.model, talos.create_data(), q, v).copy()
    vcom = talos.com_vel(data).copy()
    kd = 2 * np.sqrt(task.kp)

    def com_velocity(qq):
        d = talos.create_data()
        talos.compute_all_terms(d, qq, v)
        return d.vcom[0].copy()

    drift = directional_derivative(com_velocity, talos, q, v)
    expected = ref.acc - task.kp * (com - ref.pos) - kd * (vcom - ref.vel) - drift
    np.testing.assert_allclose(vector, expected, atol=1e-5)
    np.testing.assert_allclose(matrix @ v, vcom, atol=1e-10)


def test_com_task_mask_selects_rows(talos):
    task = tsid.TaskComEquality("com", talos)
    task.mask = [1, 0, 1]
    assert task.constraint.rows == 2
    with pytest.raises(tsid.errors.InvalidParameterError, match="only 0 and 1"):
        task.mask = [1, 0.5, 1]


@pytest.mark.parametrize("local", [True, False])
def test_se3_task_jacobian_and_drift(talos, rng, local):
    q, v = random_state(talos, rng)
    frame = "arm_right_7_joint"
    task = tsid.TaskSE3Equality("ee", talos, frame)
    task.use_local_frame(local)
    task.kp = 0.0
    task.kd = 0.0
    c, data = computed(task, talos, q, v)
    vector, matrix = c.vector.copy(), c.matrix.copy()
    fid = talos.frame_id(frame)

    def world_velocity(qq):
        d = talos.create_data()
        talos.compute_all_terms(d, qq, v)
        return talos.frame_velocity_world_oriented(d, fid).vector

    R = data.oMf[fid].rotation.copy()
    world_drift = directional_derivative(world_velocity, talos, q, v)
    drift = world_drift if not local else np.concatenate([R.T @ world_drift[:3], R.T @ world_drift[3:]])
    # reference = identity placement, zero gains: b = -drift - kd * velocity terms vanish
    np.testing.assert_allclose(-vector, drift, atol=1e-5)
    velocity = talos.frame_velocity(data, fid).vector if local else world_velocity(q)
    np.testing.assert_allclose(matrix @ v, velocity, atol=1e-10)


def test_se3_error_points_to_the_reference(talos):
    q = talos.default_configuration()
    data = talos.create_data()
    talos.compute_all_terms(data, q, np.zeros(talos.nv))
    frame = "leg_left_sole_fix_joint"
    placement = talos.frame_placement(data, frame)
    shift = np.array([0.01, -0.02, 0.03])
    reference = pin.SE3(placement.rotation, placement.translation + shift)
    task = tsid.TaskSE3Equality("foot", talos, frame)
    task.kp = 100.0
    task.set_reference(reference)
    task.compute(0.0, q, np.zeros(talos.nv), data)
    np.testing.assert_allclose(placement.rotation @ task.position_error[:3], shift, atol=1e-12)
    np.testing.assert_allclose(task.position_error[3:], 0.0, atol=1e-12)
    assert task.kd == pytest.approx(2 * np.sqrt(100.0) * np.ones(6))


def test_am_task_drift_and_jacobian(talos, rng):
    q, v = random_state(talos, rng)
    task = tsid.TaskAMEquality("am", talos)
    c, data = computed(task, talos, q, v)

    def momentum(qq):
        d = talos.create_data()
        talos.compute_all_terms(d, qq, v)
        return talos.momentum_jacobian(d)[3:] @ v

    np.testing.assert_allclose(-c.vector, directional_derivative(momentum, talos, q, v), atol=1e-5)
    pin.computeCentroidalMomentum(talos.model, data, q, v)
    np.testing.assert_allclose(c.matrix @ v, data.hg.angular, atol=1e-9)


def test_posture_task_is_a_pd_law_on_the_actuated_joints(talos, rng):
    q, v = random_state(talos, rng)
    task = tsid.TaskJointPosture("posture", talos)
    kp = np.linspace(1.0, 32.0, talos.na)
    task.kp = kp
    q_ref = talos.default_configuration()[7:]
    task.set_reference(tsid.TrajectorySample(q_ref, tangent_size=talos.na))
    c, _ = computed(task, talos, q, v)
    expected = -kp * (q[7:] - q_ref) - 2 * np.sqrt(kp) * v[6:]
    np.testing.assert_allclose(c.vector, expected, atol=1e-12)
    np.testing.assert_allclose(c.matrix, np.hstack([np.zeros((talos.na, 6)), np.eye(talos.na)]))
    task.mask = np.r_[np.ones(6), np.zeros(talos.na - 6)]
    assert task.compute(0.0, q, v, talos.create_data()).rows == 6


def test_the_posture_task_written_out_fills_what_the_tracking_base_fills(talos, rng):
    """TaskJointPosture's own fill (a slice for S v, S written once per mask) against the
    TaskMotionTracking fill of its error, Jacobian and drift, which the finite differences check:
    a partial mask, a moving reference, both ways of taking the error."""
    task = tsid.TaskJointPosture("posture", talos)
    task.kp = np.linspace(1.0, 32.0, talos.na)
    task.mask = (rng.random(talos.na) > 0.3).astype(float)
    reference = tsid.TrajectorySample(
        talos.default_configuration()[7:] + 0.1 * rng.standard_normal(talos.na),
        rng.standard_normal(talos.na),
        rng.standard_normal(talos.na),
    )
    task.set_reference(reference)
    q, v = random_state(talos, rng)
    assert_task_derivatives(task, q, v)
    data = talos.create_data()
    talos.compute_all_terms(data, q, v)
    for vector_space in (True, False):  # q_a - q_ref, or Pinocchio's difference (the same here)
        task._vector_space = vector_space
        written, generic = (ConstraintEquality("c", task.dim, talos.nv) for _ in range(2))
        tsid.TaskMotionTracking.fill(task, 0.0, q, v, data, generic)
        expected = [task.position_error, task.velocity_error, task.desired_acceleration]
        task.fill(0.0, q, v, data, written)
        np.testing.assert_allclose(written.matrix, generic.matrix, atol=0.0)  # exact: rows of I
        np.testing.assert_allclose(written.vector, generic.vector, atol=1e-12)
        for got, want in zip(
            [task.position_error, task.velocity_error, task.desired_acceleration], expected, strict=True
        ):
            np.testing.assert_allclose(got, want, atol=1e-12)


def test_the_com_task_written_out_fills_what_the_tracking_base_fills(talos, rng):
    """TaskComEquality's own fill against the TaskMotionTracking fill of its error, Jacobian and
    drift (which the finite differences check): a partial mask, per-axis gains, a moving reference."""
    task = tsid.TaskComEquality("com", talos)
    task.kp = np.array([10.0, 20.0, 30.0])
    task.mask = [1, 0, 1]
    task.set_reference(tsid.TrajectorySample(*(rng.standard_normal(3) for _ in range(3))))
    q, v = random_state(talos, rng)
    assert_task_derivatives(task, q, v)
    data = talos.create_data()
    talos.compute_all_terms(data, q, v)
    written, generic = (ConstraintEquality("c", task.dim, talos.nv) for _ in range(2))
    tsid.TaskMotionTracking.fill(task, 0.0, q, v, data, generic)
    kept = [task.position_error, task.velocity_error, task.desired_acceleration, task.drift]
    task.fill(0.0, q, v, data, written)
    np.testing.assert_allclose(written.matrix, generic.matrix, atol=1e-15)
    np.testing.assert_allclose(written.vector, generic.vector, atol=1e-12)
    got = [task.position_error, task.velocity_error, task.desired_acceleration, task.drift]
    for value, expected in zip(got, kept, strict=True):
        np.testing.assert_allclose(value, expected, atol=1e-12)


@pytest.mark.parametrize("cls", [tsid.TaskComEquality, tsid.TaskJointPosture])
def test_a_subclass_with_its_own_drift_is_filled_with_it_not_by_the_fill_written_out(talos, rng, cls):
    """The CoM and posture tasks write their fill out for their own terms; a user's subclass that
    computes a term of its own (here the drift) must see it used."""

    class Drifting(cls):  # a user's class
        def compute_drift(self, t, q, v, data):
            return np.full(self.size, 0.5)

    plain, drifting = cls("plain", talos), Drifting("drifting", talos)
    q, v = random_state(talos, rng)
    data = talos.create_data()
    talos.compute_all_terms(data, q, v)
    expected = plain.compute(0.0, q, v, data).vector + plain.drift - 0.5  # its drift replaced
    np.testing.assert_allclose(drifting.compute(0.0, q, v, data).vector, expected, atol=1e-12)
    np.testing.assert_allclose(drifting.drift, np.full(drifting.size, 0.5), atol=0.0)  # exact: as returned


@pytest.mark.parametrize("cls", [tsid.TaskComEquality, tsid.TaskJointPosture])
def test_a_subclass_with_its_own_jacobian_is_filled_with_it(talos, rng, cls):
    """As above, for a Jacobian of its own: the rows are that Jacobian, and its velocity error J v."""

    class Doubled(cls):  # a user's class
        def compute_jacobian(self, t, q, v, data):
            return 2.0 * super().compute_jacobian(t, q, v, data)

    plain, doubled = cls("plain", talos), Doubled("doubled", talos)
    q, v = random_state(talos, rng)
    data = talos.create_data()
    talos.compute_all_terms(data, q, v)
    plain_rows, doubled_rows = plain.compute(0.0, q, v, data), doubled.compute(0.0, q, v, data)
    np.testing.assert_allclose(doubled_rows.matrix, 2.0 * plain_rows.matrix, atol=1e-15)
    velocity = plain.velocity_error + plain.reference.vel  # J v of the plain task
    np.testing.assert_allclose(doubled.velocity_error, 2.0 * velocity - plain.reference.vel, atol=1e-12)


def test_joint_bounds_limit_the_next_velocity(ur5):
    task = tsid.TaskJointBounds("bounds", ur5, dt=0.01)
    task.set_velocity_bounds(-np.ones(6), np.ones(6))
    task.set_acceleration_bounds(-50 * np.ones(6), 50 * np.ones(6))
    v = np.array([0.9, -0.9, 0.0, 0.5, 1.0, -1.0])
    c = task.compute(0.0, ur5.default_configuration(), v, ur5.create_data())
    np.testing.assert_allclose(c.upper_bound, np.minimum((1 - v) / 0.01, 50))
    np.testing.assert_allclose(c.lower_bound, np.maximum((-1 - v) / 0.01, -50))
    with pytest.raises(tsid.errors.InvalidParameterError, match="lower > upper"):
        task.set_velocity_bounds(np.ones(6), -np.ones(6))


def test_gains_are_validated(talos):
    task = tsid.TaskComEquality("com", talos)
    with pytest.raises(tsid.errors.DimensionError, match="kp must have size 3"):
        task.kp = [1.0, 2.0]
    with pytest.raises(tsid.errors.InvalidParameterError, match="kp must be >= 0"):
        task.kp = -1.0


def test_se3_task_local_and_world_agree_with_a_moving_reference(talos, rng):
    """In local axes every term is the world-axes term rotated by R^T: rows agree after rotation."""
    q, v = random_state(talos, rng)
    frame = "arm_right_7_joint"
    reference = tsid.TrajectorySample(
        tsid.TrajectorySample.from_se3(pin.SE3(pin.exp3(rng.standard_normal(3)), rng.standard_normal(3))).pos,
        rng.standard_normal(6),
        rng.standard_normal(6),
        tangent_size=6,
    )
    rows = {}
    for local in (True, False):
        task = tsid.TaskSE3Equality("ee", talos, frame)
        task.use_local_frame(local)
        task.kp, task.kd = 30.0, 7.0
        task.set_reference(reference)
        c, data = computed(task, talos, q, v)
        rows[local] = (c.matrix.copy(), c.vector.copy())
    R = data.oMf[talos.frame_id(frame)].rotation
    rotate = np.kron(np.eye(2), R)
    np.testing.assert_allclose(rotate @ rows[True][0], rows[False][0], atol=1e-10)
    np.testing.assert_allclose(rotate @ rows[True][1], rows[False][1], atol=1e-9)
