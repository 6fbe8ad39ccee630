"""RobotWrapper and robot specs: sizes, frames, Jacobians against finite differences, errors."""

import numpy as np
import pinocchio as pin
import pytest
from conftest import directional_derivative, random_state

import tsid_py as tsid


@pytest.mark.parametrize(
    ("name", "nq", "nv", "na"),
    [("talos", 39, 38, 32), ("romeo", 62, 61, 55), ("ur5", 6, 6, 6), ("solo12", 19, 18, 12)],
)
def test_specs_load_with_expected_sizes(name, nq, nv, na):
    robot = tsid.load_robot(name)
    assert (robot.nq, robot.nv, robot.na) == (nq, nv, na)
    assert robot.is_fixed_base == (name == "ur5")
    assert robot.default_configuration().shape == (nq,)
    assert robot.posture_gains().shape == (na,)


def test_available_robots_lists_the_specs():
    assert {"talos", "romeo", "ur5", "solo12"} <= set(tsid.available_robots())


def test_unknown_robot_suggests_close_names():
    with pytest.raises(tsid.errors.UnknownNameError, match="talos"):
        tsid.load_robot("thalos")


def test_unknown_frame_suggests_close_names(talos):
    with pytest.raises(tsid.errors.UnknownFrameError, match="leg_right_sole_fix_joint"):
        talos.frame_id("leg_right_sole_fix")


def test_unknown_reference_configuration(solo12):
    with pytest.raises(tsid.errors.UnknownNameError, match="standing"):
        solo12.reference_configuration("stand")
    with pytest.raises(tsid.errors.UnknownNameError, match="unknown reference configuration 3"):
        solo12.reference_configuration(3)


def test_wrong_q_size_and_nan_velocity_are_rejected(talos):
    data = talos.create_data()
    with pytest.raises(tsid.errors.DimensionError, match="q must have size 39"):
        talos.compute_all_terms(data, np.zeros(38), np.zeros(38))
    v = np.zeros(38)
    v[4] = np.nan
    with pytest.raises(tsid.errors.NonFiniteError, match="v contains NaN"):
        talos.compute_all_terms(data, talos.default_configuration(), v)


def test_com_and_frame_jacobians_match_finite_differences(talos, rng):
    q, v = random_state(talos, rng)
    data = talos.create_data()
    talos.compute_all_terms(data, q, v)
    direction = rng.standard_normal(talos.nv)

    def com(qq):
        d = talos.create_data()
        return pin.centerOfMass(talos.model, d, qq)

    np.testing.assert_allclose(
        talos.com_jacobian(data) @ direction, directional_derivative(com, talos, q, direction), atol=1e-7
    )

    frame = talos.frame_id("leg_left_sole_fix_joint")

    def position(qq):
        d = talos.create_data()
        pin.framesForwardKinematics(talos.model, d, qq)
        return d.oMf[frame].translation.copy()

    J_world = talos.frame_jacobian_world_oriented(data, frame)
    np.testing.assert_allclose(
        J_world[:3] @ direction, directional_derivative(position, talos, q, direction), atol=1e-7
    )
    R = data.oMf[frame].rotation
    J_local = talos.frame_jacobian_local(data, frame)
    np.testing.assert_allclose(R @ J_local[3:], J_world[3:], atol=1e-12)


def test_drifts_match_finite_differences_along_constant_velocity(talos, rng):
    """q(s) = q (+) s v moves at constant v (dv = 0): d/ds of (J v) is the drift."""
    q, v = random_state(talos, rng)
    data = talos.create_data()
    talos.compute_all_terms(data, q, v)
    frame = talos.frame_id("arm_left_7_joint")

    def terms(qq):
        d = talos.create_data()
        talos.compute_all_terms(d, qq, v)
        world_velocity = talos.frame_velocity_world_oriented(d, frame).vector
        return np.concatenate([talos.com_vel(d), talos.momentum_jacobian(d) @ v, world_velocity])

    fd = directional_derivative(terms, talos, q, v)
    np.testing.assert_allclose(talos.com_acc(data), fd[:3], atol=1e-6)
    np.testing.assert_allclose(talos.angular_momentum_time_variation(data), fd[6:9], atol=1e-5)
    np.testing.assert_allclose(
        talos.frame_classic_acceleration_world_oriented(data, frame).vector, fd[9:], atol=1e-6
    )
    R = talos.frame_placement(data, frame).rotation  # the LOCAL drift: the same, in the frame's axes
    np.testing.assert_allclose(
        talos.frame_classic_acceleration(data, frame).vector, (fd[9:].reshape(2, 3) @ R).ravel(), atol=1e-6
    )


def test_mass_matrix_is_symmetric_and_consistent_with_rnea(talos, rng):
    q, v = random_state(talos, rng)
    data = talos.create_data()
    talos.compute_all_terms(data, q, v)
    a = rng.standard_normal(talos.nv)
    M, h = talos.mass(data), talos.nonlinear_effects(data)
    np.testing.assert_allclose(M, M.T, atol=1e-12)
    np.testing.assert_allclose(M @ a + h, pin.rnea(talos.model, talos.create_data(), q, v, a), atol=1e-8)


def test_limits_have_actuated_size(ur5):
    assert ur5.effort_limit().tolist() == [150.0, 150.0, 150.0, 28.0, 28.0, 28.0]  # exact: the URDF's
    assert ur5.velocity_limit().shape == (6,)
    lower, upper = ur5.position_limits()
    assert np.all(lower < upper)


@pytest.mark.parametrize("name", ["talos", "ur5", "solo12"])
def test_momentum_drifts_match_pinocchio_s_own_algorithm(name, rng):
    """com_acc and angular_momentum_time_variation against computeCentroidalMomentumTimeVariation
    at dv = 0, with one Data reused over several states (computeAllTerms alone accumulates the
    weight into data.dhg at every call: the drifts must not depend on the calls before)."""
    robot = tsid.load_robot(name)
    data = robot.create_data()
    for _ in range(3):
        q, v = random_state(robot, rng)
        robot.compute_all_terms(data, q, v)
        reference = robot.create_data()
        pin.computeCentroidalMomentumTimeVariation(robot.model, reference, q, v, np.zeros(robot.nv))
        scale = 1.0 + np.linalg.norm(reference.dhg.vector)
        np.testing.assert_allclose(
            robot.com_acc(data) * robot.total_mass, reference.dhg.linear, atol=1e-12 * scale
        )
        np.testing.assert_allclose(
            robot.angular_momentum_time_variation(data), reference.dhg.angular, atol=1e-12 * scale
        )
