"""Inverse dynamics from motion, forward dynamics, force-to-torque map, planar chain (tsid_py.analysis)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest
import scipy.linalg
from conftest import random_state

import tsid_py as tsid
from tsid_py.analysis import (
    ContactLimits,
    contact_forward_dynamics,
    contact_inverse_dynamics,
    force_torque_map,
    forward_dynamics,
    inverse_dynamics,
    multi_contact_inverse_dynamics,
    multi_contact_inverse_dynamics_over_time,
    velocities_and_accelerations,
)
from tsid_py.analysis.contact_geometry import root_wrench_matrix
from tsid_py.analysis.planar_chain import PlanarChain, default_planar_chain
from tsid_py.robot_specs import SpecRobot, specs_dir

TALOS_FEET = ["leg_right_sole_fix_joint", "leg_left_sole_fix_joint"]
SOLO_FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]


@pytest.fixture(scope="module")
def planar_chain() -> SpecRobot:
    return tsid.load_robot("planar_chain")


def smooth_motion(robot: tsid.RobotWrapper, frames: int, dt: float, seed: int = 0) -> np.ndarray:
    """Configurations q0 (+) s(t) with s a sum of sinusoids (a smooth motion on the manifold)."""
    rng = np.random.default_rng(seed)
    t = dt * np.arange(frames)[:, None]
    amplitude, frequency = rng.uniform(0.02, 0.1, robot.nv), rng.uniform(0.3, 1.5, robot.nv)
    offsets = amplitude * np.sin(2 * np.pi * frequency * t + rng.uniform(0, 6, robot.nv))
    return np.array([pin.integrate(robot.model, robot.default_configuration(), s) for s in offsets])


def dynamics_residual_with_wrenches(robot, q, v, a, tau, frames, wrenches, root_wrench=None) -> float:
    """max |M a + h - S^T tau - sum J^T w [- root_wrench on the root rows]| with M, h, J from the
    RobotWrapper (independent path)."""
    data = robot.create_data()
    robot.compute_all_terms(data, q, v)
    M = np.triu(robot.mass(data))
    M = M + np.triu(M, 1).T
    generalized = M @ a + robot.nonlinear_effects(data)
    generalized[robot.nv - robot.na :] -= tau
    if root_wrench is not None:
        generalized[:6] -= root_wrench
    for frame, wrench in zip(frames, wrenches, strict=True):
        generalized -= robot.frame_jacobian_local(data, frame).T @ wrench
    return float(np.max(np.abs(generalized)))


# ------------------------------------------------------------------ finite differences
def test_finite_differences_exact_for_constant_twist(talos, rng):
    xi, dt = rng.standard_normal(talos.nv), 0.01
    q = np.array([pin.integrate(talos.model, talos.default_configuration(), k * dt * xi) for k in range(8)])
    v, a = velocities_and_accelerations(talos, q, dt)
    assert np.max(np.abs(v - xi)) < 1e-9
    assert np.max(np.abs(a)) < 1e-6


def test_finite_differences_second_order(ur5):
    def errors(dt: float) -> tuple[float, float]:
        t = np.arange(0.0, 1.0 + dt / 2, dt)[:, None]
        w = np.linspace(1.0, 2.0, ur5.nv)
        q = np.sin(w * t)
        v, a = velocities_and_accelerations(ur5, q, dt)
        return np.max(np.abs(v - w * np.cos(w * t))), np.max(np.abs(a + w**2 * np.sin(w * t)))

    coarse, fine = errors(0.01), errors(0.005)
    assert 3.5 < coarse[0] / fine[0] < 4.5  # velocity error O(dt^2)
    assert 3.5 < coarse[1] / fine[1] < 4.5  # acceleration error O(dt^2), endpoints included


# ------------------------------------------------------------------ plain and contact ID / FD
@pytest.mark.parametrize("name", ["talos", "ur5", "solo12", "planar_chain"])
def test_forward_of_inverse_dynamics_is_identity(name, request, rng):
    robot = request.getfixturevalue(name)
    for _ in range(3):
        q, v = random_state(robot, rng)
        a = rng.standard_normal(robot.nv)
        result = inverse_dynamics(robot, q, v, a)
        assert result.physical == robot.is_fixed_base
        assert result.root_wrench.shape == (robot.nv - robot.na,)
        assert np.max(np.abs(forward_dynamics(robot, q, v, result.generalized_forces) - a)) < 1e-9


def test_forward_dynamics_refuses_a_singular_mass_matrix(romeo, rng):
    q, v = random_state(romeo, rng)  # Romeo's finger joints move massless links
    with pytest.raises(tsid.errors.UnsupportedProblemError, match="singular"):
        forward_dynamics(romeo, q, v, np.zeros(romeo.na))


def test_forward_dynamics_external_wrenches_enter_as_jacobian_transpose(talos, rng):
    q, v = random_state(talos, rng)
    tau = 20.0 * rng.standard_normal(talos.na)
    wrenches = 50.0 * rng.standard_normal((2, 6))
    a = forward_dynamics(talos, q, v, tau, dict(zip(TALOS_FEET, wrenches, strict=True)))
    assert dynamics_residual_with_wrenches(talos, q, v, a, tau, TALOS_FEET, wrenches) < 1e-8


def pinocchio_constraint_dynamics(robot, q, v, tau, frames, point: bool) -> tuple[np.ndarray, np.ndarray]:
    """Accelerations and contact forces (LOCAL) from Pinocchio's own constrained dynamics."""
    model = robot.model
    kind = pin.ContactType.CONTACT_3D if point else pin.ContactType.CONTACT_6D
    constraint_models, constraint_datas = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for frame in frames:
        f = model.frames[robot.frame_id(frame)]
        constraint = pin.RigidConstraintModel(kind, model, f.parentJoint, f.placement, pin.LOCAL)
        constraint_models.append(constraint)
        constraint_datas.append(constraint.createData())
    data = model.createData()
    pin.initConstraintDynamics(model, data, constraint_models, constraint_datas)
    tau_full = np.concatenate([np.zeros(6), tau])
    a = pin.constraintDynamics(model, data, q, v, tau_full, constraint_models, constraint_datas)
    return np.array(a), np.array(data.lambda_c)


@pytest.mark.parametrize(
    ("name", "frames", "point"),
    [("talos", TALOS_FEET, False), ("solo12", SOLO_FEET[:2], False), ("solo12", SOLO_FEET, True)],
)
def test_contact_forward_and_inverse_dynamics_round_trip(name, frames, point, request, rng):
    robot = request.getfixturevalue(name)
    for _ in range(3):
        q, v = random_state(robot, rng)
        tau = 10.0 * rng.standard_normal(robot.na)
        forward = contact_forward_dynamics(robot, q, v, tau, frames, point_contacts=point)
        a_pin, forces_pin = pinocchio_constraint_dynamics(robot, q, v, tau, frames, point)
        assert np.max(np.abs(forward.accelerations - a_pin)) < 1e-8
        unknowns = forward.contact_wrenches[:, :3] if point else forward.contact_wrenches
        assert np.max(np.abs(unknowns.reshape(-1) - forces_pin)) < 1e-8
        if point:
            assert np.all(forward.contact_wrenches[:, 3:] == 0.0)  # exact: no moment unknowns: zeros
        # Inverse of forward: the wrenches are balancing guesses, so they come back with tau.
        inverse = multi_contact_inverse_dynamics(
            robot, q, v, forward.accelerations, frames, forward.contact_wrenches, point_contacts=point
        )
        assert np.max(np.abs(inverse.contact_wrenches - forward.contact_wrenches)) < 1e-9
        assert np.max(np.abs(inverse.joint_torques - tau)) < 1e-9
        assert np.max(np.abs(inverse.root_residual)) < 1e-9
        assert inverse.feasible


def test_too_few_point_contacts_give_the_least_squares_root_residual(solo12, rng):
    """One or two points span 3 or 5 root directions: the residual is b minus its projection on them."""
    for frames in (SOLO_FEET[:1], SOLO_FEET[1:3]):
        q, v = random_state(solo12, rng)
        a = rng.standard_normal(solo12.nv)
        result = multi_contact_inverse_dynamics(solo12, q, v, a, frames, point_contacts=True)
        single = contact_inverse_dynamics(solo12, q, v, a, frames[0], point_contact=True)
        data = solo12.create_data()
        b = pin.rnea(solo12.model, data, q, v, a)[:6]
        pin.forwardKinematics(solo12.model, data, q)
        columns = np.concatenate([6 * k + np.arange(3) for k in range(len(frames))])
        A = root_wrench_matrix(solo12, data, [solo12.frame_id(f) for f in frames])[:, columns]
        projection = A @ np.linalg.lstsq(A, b, rcond=None)[0]
        assert not result.feasible
        assert np.max(np.abs(result.root_residual - (b - projection))) < 1e-8
        assert np.linalg.norm(result.root_residual) > 1e-3 * np.linalg.norm(b)
        assert np.all(result.contact_wrenches[:, 3:] == 0.0)  # exact: no moment unknowns, zeros as written
        residual = dynamics_residual_with_wrenches(
            solo12, q, v, a, result.joint_torques, frames, result.contact_wrenches, result.root_residual
        )
        assert residual < 1e-8
        if len(frames) == 1:
            assert np.max(np.abs(single.contact_wrench - result.contact_wrench)) < 1e-12


def test_contact_inverse_then_forward_returns_the_acceleration(talos, rng):
    q, v = random_state(talos, rng)
    data = talos.create_data()
    talos.compute_all_terms(data, q, v)
    J = np.vstack([talos.frame_jacobian_local(data, f) for f in TALOS_FEET])
    drift = np.concatenate([talos.frame_acceleration(data, f).vector for f in TALOS_FEET])
    a = -np.linalg.pinv(J) @ drift + scipy.linalg.null_space(J) @ rng.standard_normal(talos.nv - 12)
    inverse = multi_contact_inverse_dynamics(talos, q, v, a, TALOS_FEET)
    forward = contact_forward_dynamics(talos, q, v, inverse.joint_torques, TALOS_FEET)
    assert np.max(np.abs(forward.accelerations - a)) < 1e-9
    assert np.max(np.abs(forward.contact_wrenches - inverse.contact_wrenches)) < 1e-7


@pytest.mark.parametrize(("name", "frame"), [("talos", "leg_left_sole_fix_joint"), ("romeo", "r_sole")])
def test_single_contact_root_residual_vanishes(name, frame, request, rng):
    robot = request.getfixturevalue(name)
    for _ in range(5):
        q, v = random_state(robot, rng)
        a = rng.standard_normal(robot.nv)
        result = contact_inverse_dynamics(robot, q, v, a, frame)
        assert np.max(np.abs(result.root_residual)) < 1e-9
        residual = dynamics_residual_with_wrenches(
            robot, q, v, a, result.joint_torques, [frame], [result.contact_wrench]
        )
        assert residual < 1e-8


def test_multi_contact_without_guesses_is_the_weighted_least_norm(talos, rng):
    q, v = random_state(talos, rng)
    a = rng.standard_normal(talos.nv)
    result = multi_contact_inverse_dynamics(
        talos, q, v, a, TALOS_FEET, force_weight=1e-3, min_torque_weight=1.0
    )
    assert np.max(np.abs(result.root_residual)) < 1e-9
    w = result.contact_wrenches.reshape(-1)
    weights = np.tile([1e-3] * 3 + [1.0] * 3, 2)
    data = talos.create_data()
    pin.forwardKinematics(talos.model, data, q)
    null = scipy.linalg.null_space(root_wrench_matrix(talos, data, [talos.frame_id(f) for f in TALOS_FEET]))
    gradient = null.T @ (weights * w)  # optimality: the cost gradient is orthogonal to the balancing set
    assert np.max(np.abs(gradient)) < 1e-9 * max(1.0, np.max(np.abs(weights * w)))


def test_limits_hold_when_feasible(talos):
    q = talos.default_configuration()
    v = talos.zero_velocity()
    a = np.zeros(talos.nv)
    a[1] = 1.0  # sideways base acceleration [m/s^2]
    limits = ContactLimits(mu=0.3, sole=talos.spec.sole, min_normal_force=5.0)
    result = multi_contact_inverse_dynamics(talos, q, v, a, TALOS_FEET, limits=limits)
    assert result.feasible
    assert np.max(np.abs(result.root_residual)) < 1e-8
    C, d = limits.inequalities()
    for w in result.contact_wrenches:
        assert np.all(C @ w >= d - 1e-8)
        cop = np.array([-w[4], w[3]]) / w[2]
        assert -0.1 - 1e-9 <= cop[0] <= 0.1 + 1e-9 and -0.065 - 1e-9 <= cop[1] <= 0.065 + 1e-9


def test_infeasible_motion_reports_the_residual_root_wrench(talos):
    q = talos.default_configuration()
    v = talos.zero_velocity()
    a = np.zeros(talos.nv)
    a[2] = -2.0 * 9.81  # falling faster than gravity: only pulling on the ground could do it
    b = pin.rnea(talos.model, talos.create_data(), q, v, a)[:6]
    result = multi_contact_inverse_dynamics(
        talos, q, v, a, TALOS_FEET, limits=ContactLimits(mu=0.5, sole=talos.spec.sole)
    )
    assert not result.feasible
    # No admissible push helps: zero forces, zero tilting moments (only the free torsion m_z is used).
    assert np.max(np.abs(result.contact_wrenches[:, :5])) < 1e-6
    assert np.max(np.abs(result.root_residual[:3] - b[:3])) < 1e-6
    assert np.linalg.norm(result.root_residual) <= np.linalg.norm(b)
    assert np.linalg.norm(result.root_residual[:3]) > talos.total_mass * 9.81 * 0.9


# ------------------------------------------------------------------ over time
def test_over_time_matches_per_frame_solutions(talos):
    dt = 0.002
    q = smooth_motion(talos, 30, dt)
    v, a = velocities_and_accelerations(talos, q, dt)
    single = multi_contact_inverse_dynamics_over_time(talos, q, TALOS_FEET[:1], dt)
    double = multi_contact_inverse_dynamics_over_time(talos, q, TALOS_FEET, dt, smoothing_weight=0.0)
    for t in (0, 11, 29):
        one = contact_inverse_dynamics(talos, q[t], v[t], a[t], TALOS_FEET[0])
        assert np.max(np.abs(single.contact_wrenches[t, 0] - one.contact_wrench)) < 1e-8
        assert np.max(np.abs(single.joint_torques[t] - one.joint_torques)) < 1e-8
        two = multi_contact_inverse_dynamics(talos, q[t], v[t], a[t], TALOS_FEET)
        assert np.max(np.abs(double.contact_wrenches[t] - two.contact_wrenches)) < 1e-7
    assert np.max(np.abs(double.root_residual)) < 1e-9


def test_over_time_point_contacts_match_per_frame_solutions(solo12):
    """Solo12 on point feet: four, then three (a foot lifts), then two (diagonal trot): rank 6, 6, 5."""
    dt, T = 0.002, 24
    q = smooth_motion(solo12, T, dt, seed=6)
    schedule = np.ones((T, 4), dtype=bool)
    schedule[8:16, 0] = False
    schedule[16:, [0, 3]] = False
    v, a = velocities_and_accelerations(solo12, q, dt)
    per_frame = multi_contact_inverse_dynamics_over_time(
        solo12, q, SOLO_FEET, dt, smoothing_weight=0.0, contact_schedule=schedule, point_contacts=True
    )
    smoothed = multi_contact_inverse_dynamics_over_time(
        solo12, q, SOLO_FEET, dt, smoothing_weight=1e-2, contact_schedule=schedule, point_contacts=True
    )
    for t in (3, 12, 20):
        feet = [f for f, down in zip(SOLO_FEET, schedule[t], strict=True) if down]
        one = multi_contact_inverse_dynamics(solo12, q[t], v[t], a[t], feet, point_contacts=True)
        assert np.max(np.abs(per_frame.contact_wrenches[t, schedule[t]] - one.contact_wrenches)) < 1e-8
        assert np.max(np.abs(per_frame.joint_torques[t] - one.joint_torques)) < 1e-8
        # The root residual is what the active points cannot balance, whatever the smoothing.
        assert np.max(np.abs(smoothed.root_residual[t] - one.root_residual)) < 1e-9
    for result in (per_frame, smoothed):
        assert np.all(result.contact_wrenches[:, :, 3:] == 0.0)  # exact: not unknowns, zero rows of p and N
        assert np.max(np.abs(result.root_residual[:16])) < 1e-9
        assert np.min(np.linalg.norm(result.root_residual[16:], axis=1)) > 1e-4
        assert np.array_equal(result.feasible, np.arange(T) < 16)  # exact: booleans


def test_over_time_limits_match_per_frame_qps(talos):
    """A normal force >= 600 N per foot: one foot can carry Talos (~916 N), two cannot pull down."""
    dt, T = 0.002, 12
    q = smooth_motion(talos, T, dt, seed=9)
    schedule = np.ones((T, 2), dtype=bool)
    schedule[6:, 1] = False
    limits = ContactLimits(mu=0.3, min_normal_force=600.0)  # no CoP limit: the CoM is not over one foot
    result = multi_contact_inverse_dynamics_over_time(
        talos, q, TALOS_FEET, dt, smoothing_weight=0.0, contact_schedule=schedule, limits=limits
    )
    v, a = velocities_and_accelerations(talos, q, dt)
    C, d = limits.inequalities()
    for t in range(T):
        feet = [f for f, down in zip(TALOS_FEET, schedule[t], strict=True) if down]
        one = multi_contact_inverse_dynamics(talos, q[t], v[t], a[t], feet, limits=limits)
        assert result.feasible[t] == one.feasible == (t >= 6)
        # Unexplainable frames go through the least-squares slack, regularized at 1e-9 of its scale.
        tolerance = 1e-8 if one.feasible else 1e-4  # [N, N m]
        assert np.max(np.abs(result.contact_wrenches[t, schedule[t]] - one.contact_wrenches)) < tolerance
        assert np.max(np.abs(result.root_residual[t] - one.root_residual)) < tolerance
        for w in result.contact_wrenches[t, schedule[t]]:
            assert np.all(C @ w >= d - 1e-6)  # quadprog's tolerance on forces of ~600 N
    assert np.max(np.abs(result.root_residual[6:])) < 1e-8
    assert np.all(np.abs(result.root_residual[:6, 2]) > 100.0)  # [N] the unpushable excess of 1200 N


def test_over_time_banded_solve_equals_a_dense_solve(talos):
    """The smoothed problem with guesses, solved densely (KKT over all frames), gives the same wrenches."""
    dt, T, s = 0.002, 12, 1e-2
    q = smooth_motion(talos, T, dt, seed=3)
    schedule = np.ones((T, 2), dtype=bool)
    schedule[5:8, 1] = False  # the left foot lifts for three frames
    guesses = 100.0 * np.random.default_rng(5).standard_normal((T, 2, 6))
    result = multi_contact_inverse_dynamics_over_time(
        talos,
        q,
        TALOS_FEET,
        dt,
        smoothing_weight=s,
        min_torque_weight=1.0,
        contact_schedule=schedule,
        wrench_guesses=guesses,
    )
    v, a = velocities_and_accelerations(talos, q, dt)
    ids = [talos.frame_id(f) for f in TALOS_FEET]
    weights = np.tile([1e-3] * 3 + [1.0] * 3, 2)
    n = 12 * T
    H = np.zeros((n, n))
    rows, rhs = [], []
    data = talos.create_data()
    for t in range(T):
        block = slice(12 * t, 12 * t + 12)
        H[block, block] += np.diag(weights)
        b = pin.rnea(talos.model, data, q[t], v[t], a[t])[:6]
        pin.forwardKinematics(talos.model, data, q[t])
        A = np.zeros((6, n))
        A[:, block] = root_wrench_matrix(talos, data, ids)
        rows.append(A)
        rhs.append(b)
        for c in range(2):
            if not schedule[t, c]:
                pin_row = np.zeros((6, n))
                pin_row[:, 12 * t + 6 * c : 12 * t + 6 * c + 6] = np.eye(6)
                rows.append(pin_row)
                rhs.append(np.zeros(6))
            elif t + 1 < T and schedule[t + 1, c]:
                D = np.zeros((6, n))
                D[:, 12 * t + 6 * c : 12 * t + 6 * c + 6] = -np.eye(6)
                D[:, 12 * t + 12 + 6 * c : 12 * t + 18 + 6 * c] = np.eye(6)
                H += s * D.T @ D
    E = np.vstack(rows)
    kkt = np.block([[2 * H, E.T], [E, np.zeros((E.shape[0], E.shape[0]))]])
    gradient_rhs = 2 * np.tile(weights, T) * guesses.reshape(-1)
    solution = np.linalg.lstsq(kkt, np.concatenate([gradient_rhs, np.concatenate(rhs)]), rcond=None)[0]
    assert np.max(np.abs(result.contact_wrenches.reshape(-1) - solution[:n])) < 1e-6
    assert np.all(result.contact_wrenches[5:8, 1] == 0.0)  # exact: a contact off the schedule is set to 0


def test_over_time_frames_without_contact_report_their_root_wrench(talos):
    dt, T = 0.002, 10
    q = smooth_motion(talos, T, dt, seed=1)
    schedule = np.ones((T, 2), dtype=bool)
    schedule[4] = False
    result = multi_contact_inverse_dynamics_over_time(talos, q, TALOS_FEET, dt, contact_schedule=schedule)
    v, a = velocities_and_accelerations(talos, q, dt)
    b = pin.rnea(talos.model, talos.create_data(), q[4], v[4], a[4])[:6]
    assert np.max(np.abs(result.root_residual[4] - b)) < 1e-9
    assert np.max(np.abs(np.delete(result.root_residual, 4, axis=0))) < 1e-9


def test_smoothing_reduces_wrench_variation(talos):
    dt = 0.002
    q = smooth_motion(talos, 40, dt, seed=2)
    q += np.random.default_rng(0).normal(0.0, 1e-6, q.shape) * (np.arange(talos.nq) >= 7)  # sensor noise
    rough = multi_contact_inverse_dynamics_over_time(talos, q, TALOS_FEET, dt, smoothing_weight=0.0)
    smooth = multi_contact_inverse_dynamics_over_time(talos, q, TALOS_FEET, dt, smoothing_weight=1.0)
    variation = lambda r: np.sum(np.abs(np.diff(r.contact_wrenches, axis=0)))  # noqa: E731
    assert variation(smooth) < 0.5 * variation(rough)
    assert np.max(np.abs(smooth.total_contact_wrench - rough.total_contact_wrench)) < 1e-6


# ------------------------------------------------------------------ force-to-torque map
def test_force_torque_map_against_finite_differences(talos, rng):
    q, v = random_state(talos, rng)
    tau = 10.0 * rng.standard_normal(talos.na)
    hips = ["leg_right_1_joint", "leg_right_2_joint", "leg_right_3_joint", "leg_right_4_joint"]
    mapping = force_torque_map(talos, q, v, "leg_right_sole_fix_joint", hips, tau)
    assert mapping.selected_joints == tuple(hips)
    index = [talos.model.joints[talos.model.getJointId(j)].idx_v - 6 for j in hips]

    def wrench(selected: np.ndarray) -> np.ndarray:
        full = tau.copy()
        full[index] = selected
        return contact_forward_dynamics(talos, q, v, full, ["leg_right_sole_fix_joint"]).contact_wrenches[0]

    assert np.max(np.abs(mapping.offset - wrench(np.zeros(4)))) < 1e-8
    eps = 1e-3
    for k in range(4):
        step = np.zeros(4)
        step[k] = eps
        column = (wrench(tau[index] + step) - wrench(tau[index] - step)) / (2 * eps)
        assert np.max(np.abs(mapping.matrix[:, k] - column)) < 1e-6
    assert np.max(np.abs(mapping.wrenches(tau[index])[0] - wrench(tau[index]))) < 1e-8


def test_force_torque_map_of_a_point_foot_against_finite_differences(solo12, rng):
    """Solo12 on four point feet: the front-left leg's three torques to its foot force."""
    q, v = random_state(solo12, rng)
    tau = rng.standard_normal(solo12.na)
    leg = ["FL_HAA", "FL_HFE", "FL_KFE"]
    mapping = force_torque_map(solo12, q, v, SOLO_FEET, leg, tau, point_contacts=True)
    index = [solo12.model.joints[solo12.model.getJointId(j)].idx_v - 6 for j in leg]

    def forces(selected: np.ndarray) -> np.ndarray:
        full = tau.copy()
        full[index] = selected
        return contact_forward_dynamics(solo12, q, v, full, SOLO_FEET, point_contacts=True).contact_wrenches

    assert mapping.matrix.shape == (24, 3)
    assert np.all(mapping.matrix.reshape(4, 6, 3)[:, 3:] == 0.0)  # exact: rows never written
    eps = 1e-3
    for k in range(3):
        step = np.zeros(3)
        step[k] = eps
        column = (forces(tau[index] + step) - forces(tau[index] - step)) / (2 * eps)
        assert np.max(np.abs(mapping.matrix[:, k] - column.reshape(-1))) < 1e-6
    assert np.max(np.abs(mapping.wrenches(tau[index]) - forces(tau[index]))) < 1e-8


# ------------------------------------------------------------------ planar chain
def test_planar_chain_closed_form_matches_pinocchio(planar_chain, rng):
    chain = default_planar_chain()
    data = planar_chain.create_data()
    for _ in range(5):
        q, v = rng.uniform(-2.5, 2.5, 4), rng.standard_normal(4)
        planar_chain.compute_all_terms(data, q, v)
        M = np.triu(planar_chain.mass(data))
        M = M + np.triu(M, 1).T
        assert np.max(np.abs(M - chain.mass_matrix(q))) < 1e-12
        assert np.max(np.abs(planar_chain.nonlinear_effects(data) - chain.bias(q, v))) < 1e-12


def test_planar_chain_urdf_in_robots_is_the_generated_one():
    assert (Path(specs_dir()) / "planar_chain.urdf").read_text() == default_planar_chain().urdf()


# ------------------------------------------------------------------ bad input
@pytest.fixture(scope="module")
def bad(talos, ur5, solo12) -> SimpleNamespace:
    """Robots and valid inputs that the bad calls below spoil one at a time."""
    q = talos.default_configuration()
    positions = np.tile(q, (6, 1))
    zero_quaternion = positions.copy()
    zero_quaternion[2, 3:7] = 0.0
    return SimpleNamespace(
        talos=talos,
        ur5=ur5,
        solo12=solo12,
        q=q,
        v=talos.zero_velocity(),
        a=np.zeros(talos.nv),
        positions=positions,
        zero_quaternion=zero_quaternion,
    )


def _multi(b: SimpleNamespace, frames=TALOS_FEET, **options):
    return multi_contact_inverse_dynamics(b.talos, b.q, b.v, b.a, frames, **options)


def _over_time(b: SimpleNamespace, positions=None, frames=TALOS_FEET, dt=0.01, **options):
    positions = b.positions if positions is None else positions
    return multi_contact_inverse_dynamics_over_time(b.talos, positions, frames, dt, **options)


# name: (call on the fixture ``bad``, error class, fragment of the message)
BAD_CALLS = {
    "id a size": (
        lambda b: inverse_dynamics(b.talos, b.q, b.v, np.zeros(3)),
        tsid.errors.DimensionError,
        "a must have",
    ),
    "id a NaN": (
        lambda b: inverse_dynamics(b.talos, b.q, b.v, b.a * np.nan),
        tsid.errors.NonFiniteError,
        "a contains",
    ),
    "cid fixed base": (
        lambda b: contact_inverse_dynamics(b.ur5, np.zeros(6), np.zeros(6), np.zeros(6), "ee_fixed_joint"),
        tsid.errors.UnsupportedProblemError,
        "floating-base",
    ),
    "cid unknown frame": (
        lambda b: contact_inverse_dynamics(b.talos, b.q, b.v, b.a, "left_foot"),
        tsid.errors.UnknownFrameError,
        "left_foot",
    ),
    "multi no frame": (
        lambda b: _multi(b, frames=[]),
        tsid.errors.InvalidParameterError,
        "at least one frame",
    ),
    "multi frame twice": (
        lambda b: _multi(b, frames=TALOS_FEET[:1] * 2),
        tsid.errors.DuplicateNameError,
        "twice",
    ),
    "multi zero weight": (lambda b: _multi(b, force_weight=0.0), tsid.errors.InvalidParameterError, "> 0"),
    "multi weight size": (lambda b: _multi(b, force_weight=[1.0, 2.0]), tsid.errors.DimensionError, "size 3"),
    "multi guesses shape": (
        lambda b: _multi(b, wrench_guesses=np.zeros((3, 6))),
        tsid.errors.DimensionError,
        "2x6",
    ),
    "multi guesses NaN": (
        lambda b: _multi(b, wrench_guesses=np.full((2, 6), np.nan)),
        tsid.errors.NonFiniteError,
        "wrench_guesses",
    ),
    "multi limits count": (
        lambda b: _multi(b, limits=[ContactLimits()]),
        tsid.errors.DimensionError,
        "2 of them",
    ),
    "multi limits type": (
        lambda b: _multi(b, limits=[0.3, 0.3]),
        tsid.errors.InvalidParameterError,
        "ContactLimits",
    ),
    "multi point stranger": (
        lambda b: _multi(b, point_contacts=["base_link"]),
        tsid.errors.InvalidParameterError,
        "not contact frames",
    ),
    "multi point with sole": (
        lambda b: _multi(b, point_contacts=True, limits=ContactLimits(sole=b.talos.spec.sole)),
        tsid.errors.InvalidParameterError,
        "no centre of pressure",
    ),
    "limits mu": (lambda b: ContactLimits(mu=0.0), tsid.errors.InvalidParameterError, "mu must be > 0"),
    "limits NaN": (
        lambda b: ContactLimits(min_normal_force=np.nan),
        tsid.errors.NonFiniteError,
        "min_normal_force",
    ),
    "over time 3 frames": (
        lambda b: _over_time(b, b.positions[:3]),
        tsid.errors.DimensionError,
        "at least 4",
    ),
    "over time nq": (lambda b: _over_time(b, b.positions[:, :-1]), tsid.errors.DimensionError, "*x39"),
    "over time NaN": (lambda b: _over_time(b, b.positions * np.nan), tsid.errors.NonFiniteError, "positions"),
    "over time quaternion": (
        lambda b: _over_time(b, b.zero_quaternion),
        tsid.errors.InvalidParameterError,
        "row 2 has norm 0",
    ),
    "over time dt 0": (lambda b: _over_time(b, dt=0.0), tsid.errors.InvalidParameterError, "dt must be > 0"),
    "over time dt NaN": (lambda b: _over_time(b, dt=np.nan), tsid.errors.NonFiniteError, "dt must be finite"),
    "over time smoothing": (
        lambda b: _over_time(b, smoothing_weight=-1.0),
        tsid.errors.InvalidParameterError,
        ">= 0",
    ),
    "over time schedule shape": (
        lambda b: _over_time(b, contact_schedule=np.ones((6, 3))),
        tsid.errors.DimensionError,
        "(6, 2)",
    ),
    "over time schedule values": (
        lambda b: _over_time(b, contact_schedule=np.full((6, 2), 2)),
        tsid.errors.InvalidParameterError,
        "0/1",
    ),
    "over time guesses shape": (
        lambda b: _over_time(b, wrench_guesses=np.zeros((6, 2, 3))),
        tsid.errors.DimensionError,
        "(6, 2, 6)",
    ),
    "over time guesses NaN": (
        lambda b: _over_time(b, wrench_guesses=np.full((6, 2, 6), np.nan)),
        tsid.errors.NonFiniteError,
        "wrench_guesses",
    ),
    "over time limits smoothed": (
        lambda b: _over_time(b, limits=ContactLimits(mu=0.3), smoothing_weight=1e-4),
        tsid.errors.UnsupportedProblemError,
        "smoothing_weight=0",
    ),
    "over time velocities": (
        lambda b: _over_time(b, velocities=np.zeros((5, b.talos.nv))),
        tsid.errors.DimensionError,
        "6x38",
    ),
    "over time unknown frame": (
        lambda b: _over_time(b, frames=["foot"]),
        tsid.errors.UnknownFrameError,
        "foot",
    ),
    "finite differences dt": (
        lambda b: velocities_and_accelerations(b.talos, b.positions, -1.0),
        tsid.errors.InvalidParameterError,
        "dt",
    ),
    "fd tau size": (
        lambda b: forward_dynamics(b.talos, b.q, b.v, np.zeros(5)),
        tsid.errors.DimensionError,
        "na = 32",
    ),
    "fd wrench frame": (
        lambda b: forward_dynamics(b.talos, b.q, b.v, np.zeros(32), {"foot": np.zeros(6)}),
        tsid.errors.UnknownFrameError,
        "foot",
    ),
    "fd wrench size": (
        lambda b: forward_dynamics(b.talos, b.q, b.v, np.zeros(32), {TALOS_FEET[0]: np.zeros(3)}),
        tsid.errors.DimensionError,
        "size 6",
    ),
    "fd wrenches not a mapping": (
        lambda b: forward_dynamics(b.talos, b.q, b.v, np.zeros(32), [np.zeros(6)]),
        tsid.errors.InvalidParameterError,
        "map frames",
    ),
    "cfd redundant contacts": (
        lambda b: contact_forward_dynamics(
            b.solo12, b.solo12.default_configuration(), b.solo12.zero_velocity(), np.zeros(12), SOLO_FEET
        ),
        tsid.errors.UnsupportedProblemError,
        "redundant",
    ),
    "ftm root joint": (
        lambda b: force_torque_map(b.talos, b.q, b.v, TALOS_FEET[0], ["root_joint"]),
        tsid.errors.InvalidParameterError,
        "one-degree-of-freedom",
    ),
    "ftm unknown joint": (
        lambda b: force_torque_map(b.talos, b.q, b.v, TALOS_FEET[0], ["hip"]),
        tsid.errors.UnknownFrameError,
        "hip",
    ),
    "ftm joint twice": (
        lambda b: force_torque_map(b.talos, b.q, b.v, TALOS_FEET[0], ["leg_right_1_joint"] * 2),
        tsid.errors.DuplicateNameError,
        "twice",
    ),
    "planar chain mass": (
        lambda b: PlanarChain(np.ones(2), -np.ones(2), np.ones(2), np.ones(2)),
        tsid.errors.InvalidParameterError,
        "masses",
    ),
}


@pytest.mark.parametrize("case", BAD_CALLS)
def test_bad_input_raises_a_tsid_error_naming_the_problem(case, bad):
    call, error, fragment = BAD_CALLS[case]
    with pytest.raises(error, match=re.escape(fragment)):
        call(bad)


def test_slightly_unnormalized_quaternions_are_normalized(talos):
    q = smooth_motion(talos, 8, 0.01, seed=7)
    scaled = q.copy()
    scaled[:, 3:7] *= 1.0 + 5e-4
    reference = multi_contact_inverse_dynamics_over_time(talos, q, TALOS_FEET, 0.01)
    result = multi_contact_inverse_dynamics_over_time(talos, scaled, TALOS_FEET, 0.01)
    assert np.max(np.abs(result.joint_torques - reference.joint_torques)) < 1e-9


# ------------------------------------------------------------------ CLI
@pytest.mark.slow
def test_cli_analyze_writes_json_outputs_and_plots(tmp_path, capsys, talos):
    import matplotlib.image

    from tsid_py import cli

    motion = tmp_path / "motion.npz"
    q = smooth_motion(talos, 20, 0.01, seed=4)
    schedule = np.ones((20, 2), dtype=bool)
    schedule[10:, 1] = False
    np.savez(motion, q=q, t=0.01 * np.arange(20), contact_schedule=schedule)
    out_npz, out_csv = tmp_path / "out" / "result.npz", tmp_path / "result.csv"
    args = ["analyze", str(motion), "--robot", "talos", "--contacts", ",".join(TALOS_FEET), "--json"]
    assert cli.main([*args, "--out", str(out_npz), "--plot", str(tmp_path / "plots")]) == 0
    summary = json.loads(capsys.readouterr().out)
    expected = multi_contact_inverse_dynamics_over_time(talos, q, TALOS_FEET, 0.01, contact_schedule=schedule)
    assert summary["robot"] == "talos" and summary["contacts"] == TALOS_FEET
    assert summary["frames"] == 20 and summary["dt_s"] == pytest.approx(0.01)
    assert summary["duration_s"] == pytest.approx(0.19) and summary["frames_without_contact"] == 0
    assert summary["root_residual_max"] < 1e-9 and summary["unexplained_frames"] == 0
    assert summary["joint_torque_max_nm"] == pytest.approx(np.max(np.abs(expected.joint_torques)))
    normal = expected.contact_wrenches[:, :, 2]
    assert summary["normal_force_min_n"] == pytest.approx(np.min(normal[schedule]))
    assert summary["normal_force_max_n"] == pytest.approx(np.max(normal))
    assert summary["analysis_time_s"] > 0.0 and summary["time_per_frame_us"] > 0.0
    with np.load(out_npz) as result:
        assert list(result["contact_frames"]) == TALOS_FEET
        assert len(result["joint_names"]) == talos.na
        assert np.all(result["contact_wrenches"][10:, 1] == 0.0)  # exact: off the schedule, set to 0
        for name in (
            "t",
            "joint_torques",
            "contact_wrenches",
            "total_contact_wrench",
            "root_residual",
            "v",
            "a",
        ):
            assert np.max(np.abs(result[name] - getattr(expected, name))) < 1e-9, name
    for name in ("contact_forces", "contact_moments", "joint_torques"):
        image = matplotlib.image.imread(tmp_path / "plots" / f"{name}.png")
        assert image.ndim == 3 and image.shape[0] >= 300 and image.shape[1] >= 600
        assert np.std(image[..., :3]) > 0.05  # curves, axes and labels, not a blank canvas
    assert cli.main([*args, "--out", str(out_csv)]) == 0
    table = np.loadtxt(out_csv, delimiter=",", skiprows=1)
    header = out_csv.read_text().splitlines()[0].split(",")
    assert table.shape == (20, 1 + talos.na + 12) and len(header) == table.shape[1]
    assert header[1] == "tau/leg_left_1_joint" and header[-1] == "w/leg_left_sole_fix_joint/mz"
    tolerance = 1e-8 * max(1.0, np.max(np.abs(table)))  # written with 9 significant digits
    assert np.max(np.abs(table[:, 1 : 1 + talos.na] - expected.joint_torques)) < tolerance
    assert np.max(np.abs(table[:, 1 + talos.na :] - expected.contact_wrenches.reshape(20, 12))) < tolerance


def test_cli_analyze_point_contacts(tmp_path, capsys, solo12):
    from tsid_py import cli

    motion = tmp_path / "trot.npz"
    q = smooth_motion(solo12, 12, 0.01, seed=8)
    np.savez(motion, q=q, dt=0.01)
    out = tmp_path / "result.npz"
    assert (
        cli.main(
            ["analyze", str(motion), "--robot", "solo12", "--point-contacts", "--json", "--out", str(out)]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["contacts"] == SOLO_FEET and summary["root_residual_max"] < 1e-9
    expected = multi_contact_inverse_dynamics_over_time(solo12, q, SOLO_FEET, 0.01, point_contacts=True)
    with np.load(out) as result:
        assert np.max(np.abs(result["contact_wrenches"] - expected.contact_wrenches)) < 1e-9
        assert np.all(result["contact_wrenches"][:, :, 3:] == 0.0)  # exact: not unknowns, zeros


def test_cli_analyze_with_limits(tmp_path, capsys, talos):
    from tsid_py import cli

    motion, out = tmp_path / "motion.npz", tmp_path / "result.npz"
    q = smooth_motion(talos, 12, 0.002, seed=9)
    schedule = np.ones((12, 2), dtype=bool)
    schedule[6:, 1] = False
    np.savez(motion, q=q, dt=0.002, contact_schedule=schedule)
    limits = ["--mu", "0.3", "--min-normal-force", "600"]
    assert cli.main(["analyze", str(motion), *limits, "--json", "--out", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["unexplained_frames"] == 6  # two feet pushing >= 600 N each exceed Talos' weight
    expected = multi_contact_inverse_dynamics_over_time(
        talos,
        q,
        TALOS_FEET,
        0.002,
        smoothing_weight=0.0,
        contact_schedule=schedule,
        limits=ContactLimits(mu=0.3, min_normal_force=600.0),
    )
    with np.load(out) as result:
        assert np.array_equal(result["feasible"], expected.feasible)  # exact: booleans
        assert np.max(np.abs(result["contact_wrenches"] - expected.contact_wrenches)) < 1e-9


def test_cli_analyze_help(capsys):
    from tsid_py import cli

    with pytest.raises(SystemExit) as exit_:
        cli.main(["analyze", "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    for option in (
        "--robot",
        "--contacts",
        "--dt",
        "--smoothing",
        "--point-contacts",
        "--json",
        "--plot",
        "--out",
    ):
        assert option in text
    assert "analyze" in cli.usage()


STANDING = "five frames of Talos standing"  # stands for q until the robot is loaded


@pytest.mark.parametrize(
    ("arrays", "options", "message"),
    [
        (None, [], "motion file not found"),
        ({"positions": np.zeros((5, 39))}, [], "no array 'q'"),
        ({"q": np.zeros((5, 39))}, [], "neither 'dt' nor 't'"),
        ({"q": np.zeros((5, 39)), "dt": np.array([0.01, 0.02])}, [], "dt must be a number"),
        ({"q": np.zeros((5, 39)), "t": np.array([0.0, 0.1, 0.3])}, [], "uniformly spaced"),
        ({"q": np.zeros((5, 39)), "dt": 0.01}, ["--out", "result.txt"], "--out must end with .npz or .csv"),
        ({"q": np.zeros((5, 38)), "dt": 0.01}, [], "positions must be a *x39 matrix"),
        ({"q": np.full((5, 39), "x"), "dt": 0.01}, [], "not real numbers"),
        ({"q": STANDING, "dt": 0.01}, ["--contacts", "left_foot"], "unknown frame 'left_foot'"),
        ({"q": STANDING, "dt": 0.01, "contact_schedule": np.ones((5, 3))}, [], "must have shape (5, 2)"),
        ({"q": STANDING, "dt": 0.01}, ["--robot", "ur5"], "needs a floating-base robot"),
        ({"q": STANDING, "dt": 0.01}, ["--robot", "solo12", "--cop"], "--cop needs a sole rectangle"),
        ({"q": STANDING, "dt": 0.01}, ["--mu", "0.3", "--smoothing", "1e-4"], "smoothing_weight=0"),
        ({"q": STANDING, "dt": 0.01}, ["--mu", "-1"], "mu must be > 0"),
    ],
)
def test_cli_analyze_reports_bad_input(arrays, options, message, tmp_path, capsys, talos):
    from tsid_py import cli

    motion = tmp_path / "motion.npz"
    if arrays is not None:
        if arrays.get("q") is STANDING:
            arrays = {**arrays, "q": np.tile(talos.default_configuration(), (5, 1))}
        np.savez(motion, **arrays)
    assert cli.main(["analyze", str(motion), "--json", *options]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and "Traceback" not in captured.err and captured.out == ""


@pytest.mark.slow
def test_demo_records_then_analyzes(tmp_path):
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "demos/inverse_dynamics_from_motion.py",
            "--duration",
            "0.1",
            "--out-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    summary, comparison = (json.loads(line) for line in done.stdout.splitlines())
    assert summary["frames"] == 50 and summary["root_residual_max"] < 1e-9
    assert comparison["vertical_force_difference_max_n"] < 1.0
    assert (tmp_path / "joint_torques.png").is_file()
