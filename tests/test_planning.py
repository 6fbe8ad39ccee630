"""Walking plans: swing-foot trajectories, footsteps, support polygons and the LIPM preview plan."""

import numpy as np
import pinocchio as pin
import pytest

import tsid_py as tsid
from tsid_py.planning import (
    LipmPlan,
    TrajectorySE3SwingFoot,
    ZmpPreviewController,
    convex_hull,
    plan_com_from_zmp,
    plan_straight_walk,
    polygon_margin,
    sole_polygon,
)
from tsid_py.planning.lipm import cart_table_model, solve_dare
from tsid_py.planning.support import sole_center
from tsid_py.robot_specs import SoleGeometry
from tsid_py.trajectories import vector_to_se3

TALOS_SOLE = SoleGeometry(0.10, 0.10, 0.065, 0.065, 0.0)
ROMEO_SOLE = SoleGeometry(0.10, 0.05, 0.05, 0.05, 0.07)


@pytest.fixture
def swing(rng):
    start = pin.SE3(pin.exp3(0.1 * rng.standard_normal(3)), np.array([0.0, -0.085, 0.0]))
    end = pin.SE3(pin.exp3(0.1 * rng.standard_normal(3)), np.array([0.3, -0.08, 0.02]))
    return TrajectorySE3SwingFoot("swing", start, end, t0=1.0, duration=0.8, height=0.1)


def test_swing_foot_ends_at_rest_on_its_placements(swing):
    for t, placement in ((0.5, swing.start), (1.0, swing.start), (1.8, swing.end), (3.0, swing.end)):
        sample = swing.sample(t)
        assert vector_to_se3(sample.pos).isApprox(placement, 1e-12)
        np.testing.assert_allclose(sample.vel, 0.0, atol=1e-12)
        np.testing.assert_allclose(sample.acc, 0.0, atol=1e-12)


def test_swing_foot_rises_its_height_at_mid_swing(swing):
    middle = swing.sample(1.4).pos[:3]
    straight = (swing.start.translation + swing.end.translation) / 2
    np.testing.assert_allclose(middle - straight, [0.0, 0.0, 0.1], atol=1e-12)
    heights = [swing.sample(t).pos[2] for t in np.linspace(1.0, 1.8, 81)]
    assert max(heights) < 0.02 + 0.1 + 1e-9


def test_swing_foot_velocity_and_acceleration_are_the_derivatives_of_the_placement(swing):
    h = 1e-6
    for t in np.linspace(1.01, 1.79, 9):
        before, now, after = (swing.sample(t + d) for d in (-h, 0.0, h))
        M_before, M, M_after = (vector_to_se3(s.pos) for s in (before, now, after))
        linear = (M_after.translation - M_before.translation) / (2 * h)
        angular = M.rotation @ pin.log3(M_before.rotation.T @ M_after.rotation) / (2 * h)
        np.testing.assert_allclose(now.vel, np.concatenate([linear, angular]), atol=1e-6)
        np.testing.assert_allclose(now.acc, (after.vel - before.vel) / (2 * h), atol=1e-5)


@pytest.mark.parametrize("duration", [0.4, 2.5])
def test_euclidian_trajectories_velocity_and_acceleration_are_their_derivatives(duration, rng):
    """Central differences of pos and vel against vel and acc, for durations other than 1 s (a
    duration's power wrong in a derivative shows only there), and the ends held at rest."""
    start, end = rng.standard_normal(3), rng.standard_normal(3)
    trajectories = [
        tsid.TrajectoryEuclidianMinJerk("jerk", start, end, t0=0.3, duration=duration),
        tsid.TrajectoryEuclidianSinusoid("sine", start, end, 1.0 / duration),
    ]
    h = 1e-6
    for trajectory in trajectories:
        for t in 0.3 + duration * np.linspace(0.05, 0.95, 7):
            before, now, after = (trajectory.sample(t + d) for d in (-h, 0.0, h))
            np.testing.assert_allclose(now.vel, (after.pos - before.pos) / (2 * h), rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(now.acc, (after.vel - before.vel) / (2 * h), rtol=1e-5, atol=1e-5)
    jerk = trajectories[0]
    for t, point in ((0.3, start), (0.3 + duration, end)):
        sample = jerk.sample(t)
        np.testing.assert_allclose(sample.pos, point, atol=1e-12)
        np.testing.assert_allclose([sample.vel, sample.acc], 0.0, atol=1e-12)


@pytest.mark.parametrize(
    ("t", "error", "message"),
    [
        (float("nan"), "NonFiniteError", "t must be finite, got nan"),
        (None, "InvalidParameterError", "t must be a number, got None"),
    ],
)
def test_trajectories_refuse_a_time_that_is_no_finite_number(swing, t, error, message):
    """sample(nan) gave an all-NaN sample, sample(None) a TypeError."""
    trajectories = [
        swing,
        tsid.TrajectoryEuclidianMinJerk("jerk", [0.0], [1.0], 0.0, 1.0),
        tsid.TrajectoryEuclidianSinusoid("sine", [0.0, 0.9], [0.05, 0.0], 0.5),
        tsid.TrajectoryEuclidianConstant("constant", [0.0]),
    ]
    for trajectory in trajectories:
        with pytest.raises(getattr(tsid.errors, error), match=message):
            trajectory.sample(t)
    assert trajectories[1].sample(np.float64(0.5)).pos[0] == pytest.approx(0.5)  # a numpy time is a time


def test_trajectory_parameters_are_checked_when_set_too(swing):
    jerk = tsid.TrajectoryEuclidianMinJerk("jerk", [0.0], [1.0], 0.0, 1.0)
    for trajectory in (jerk, swing):
        with pytest.raises(tsid.errors.InvalidParameterError, match="duration must be > 0.0, got 0.0"):
            trajectory.duration = 0.0
        with pytest.raises(tsid.errors.NonFiniteError, match="t0 must be finite"):
            trajectory.t0 = float("inf")
    jerk.duration, jerk.t0 = 2.0, 1.0
    assert (jerk.end_time, jerk.sample(2.0).pos[0]) == pytest.approx((3.0, 0.5))
    with pytest.raises(tsid.errors.DimensionError, match="amplitude must have size 3, got size 2"):
        tsid.TrajectoryEuclidianSinusoid("sine", [0.0, 0.0, 0.9], [1.0, 2.0], 1.0)
    sine = tsid.TrajectoryEuclidianSinusoid("sine", [0.0, 0.0], 0.1, [0.25, 0.5], phase=np.pi / 2)
    np.testing.assert_allclose(sine.sample(1.0).pos, [0.0, -0.1], atol=1e-15)  # 0.1 sin(pi), 0.1 sin(3 pi/2)


def test_swing_foot_is_a_task_se3_reference(talos, swing):

    task = tsid.TaskSE3Equality("foot", talos, "leg_right_sole_fix_joint")
    task.set_reference(swing.sample(1.3))
    assert task.reference.pos.shape == (12,) and task.reference.vel.shape == (6,)


def test_convex_hull_and_margins_known_answers():
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5], [1, 0]], dtype=float)
    hull = convex_hull(square)
    (x1, y1), (x2, y2) = hull[1] - hull[0], hull[2] - hull[1]
    assert len(hull) == 4 and x1 * y2 - y1 * x2 == pytest.approx(1.0)  # counter-clockwise
    assert polygon_margin([0.5, 0.5], hull) == pytest.approx(0.5)
    assert polygon_margin([0.9, 0.5], hull) == pytest.approx(0.1)
    assert polygon_margin([1.2, 0.5], hull) == pytest.approx(-0.2)
    with pytest.raises(tsid.errors.InvalidParameterError):
        convex_hull([[0, 0], [1, 1]])


def test_sole_polygon_and_centre_account_for_the_sole_depth():
    ankle = pin.SE3(np.eye(3), np.array([1.0, 2.0, 0.07]))
    np.testing.assert_allclose(sole_center(ROMEO_SOLE, ankle), [1.025, 2.0, 0.0], atol=1e-15)  # z: R p + t
    corners = sole_polygon(ROMEO_SOLE, ankle)
    np.testing.assert_allclose(corners.min(axis=0), [0.95, 1.95])
    np.testing.assert_allclose(corners.max(axis=0), [1.10, 2.05])


def feet(y=0.085):
    return pin.SE3(np.eye(3), np.array([0.0, -y, 0.0])), pin.SE3(np.eye(3), np.array([0.0, y, 0.0]))


def test_straight_walk_footsteps_alternate_and_close():
    right, left = feet()
    plan = plan_straight_walk(
        TALOS_SOLE, right, left, [0.0, 0.0], 4, 0.2, 0.8, 0.3, t_start=0.5, t_settle=1.0
    )
    assert [s.side for s in plan.steps] == ["right", "left", "right", "left"]
    np.testing.assert_allclose([s.target.translation[0] for s in plan.steps], [0.2, 0.4, 0.6, 0.6])
    np.testing.assert_allclose([s.target.translation[1] for s in plan.steps], [-0.085, 0.085] * 2)
    np.testing.assert_allclose([s.t_lift for s in plan.steps], [0.8, 1.9, 3.0, 4.1])
    np.testing.assert_allclose([s.t_land - s.t_lift for s in plan.steps], 0.8)
    assert plan.t_end == pytest.approx(4.9 + 0.3 + 1.0)
    assert plan.swinging(2.0).side == "left" and plan.swinging(1.7) is None
    assert plan.placements(5.0)["right"].translation[0] == pytest.approx(0.6)
    # single support: the ZMP reference is the stance sole's centre
    np.testing.assert_allclose(plan.zmp_reference(1.0), [0.0, 0.085], atol=1e-15)  # x: a sole centre
    np.testing.assert_allclose(plan.zmp_reference(2.3), [0.2, -0.085])
    np.testing.assert_allclose(plan.zmp_reference(plan.t_end), [0.6, 0.0], atol=1e-15)  # y: between the feet
    with pytest.raises(tsid.errors.InvalidParameterError):
        plan_straight_walk(TALOS_SOLE, right, left, [0.0, 0.0], 1, 0.2)


@pytest.mark.parametrize("r", [1e-4, 1e-6, 1e-8])
def test_riccati_solution_satisfies_its_equation(r):
    A, B, C = cart_table_model(0.88, 0.01)
    B, Q, R = B[:, None], np.outer(C, C), np.array([[r]])
    P = solve_dare(A, B, Q, R)
    gain = np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)
    residual = Q + A.T @ P @ A - A.T @ P @ B @ gain - P
    assert np.max(np.abs(residual)) < 1e-9 * np.max(np.abs(P))
    assert np.all(np.linalg.eigvalsh(P) > 0)


def test_preview_control_gains_stabilize_the_cart_table():
    controller = ZmpPreviewController(0.88, dt=0.01)
    closed_loop = controller.A - np.outer(controller.B, controller.K)
    assert np.max(np.abs(np.linalg.eigvals(closed_loop))) < 1.0
    assert controller.preview_gains.shape == (160,)
    assert controller.preview_gains.sum() == pytest.approx(controller.K[0], rel=1e-12)  # held reference
    states, _ = controller.run(np.r_[np.zeros(50), np.full(1000, 1.5)], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(states[-1], [1.5, 0.0, 0.0], atol=1e-6)  # rests above the final ZMP


@pytest.mark.parametrize(
    ("sole", "y", "height", "length"), [(TALOS_SOLE, 0.085, 0.88, 0.2), (ROMEO_SOLE, 0.096, 0.58, 0.1)]
)
@pytest.mark.slow
def test_lipm_plan_keeps_its_zmp_on_the_planned_support(sole, y, height, length):
    right, left = feet(y)
    if sole.lz:
        right.translation[2] = left.translation[2] = sole.lz
    plan = plan_straight_walk(sole, right, left, [0.0, 0.0], 6, length)
    lipm = plan_com_from_zmp(plan.zmp_reference, plan.t_end, np.array([0.0, 0.0, height]))
    assert isinstance(lipm, LipmPlan) and lipm.com_height == pytest.approx(height)
    times = np.arange(0.0, plan.t_end, 0.002)
    for t in times:
        swinging = plan.swinging(t)
        placements = plan.placements(t)
        support = [placements[s] for s in ("right", "left") if swinging is None or s != swinging.side]
        hull = convex_hull(np.vstack([sole_polygon(sole, p) for p in support]))
        assert polygon_margin(lipm.zmp(t), hull) > 0.02
    errors = np.linalg.norm([lipm.zmp(t) - plan.zmp_reference(t) for t in times], axis=1)
    assert errors.max() < 0.03 and np.sqrt(np.mean(errors**2)) < 0.005
    final = lipm.sample(plan.t_end)
    np.testing.assert_allclose(final.pos[:2], plan.zmp_reference(plan.t_end), atol=0.02)
    assert final.pos[2] == height and np.all(final.vel[2:] == 0)  # exact: the height and 0 are set


def test_lipm_plan_samples_are_consistent_between_planning_instants():
    right, left = feet()
    plan = plan_straight_walk(TALOS_SOLE, right, left, [0.0, 0.0], 3, 0.2)
    lipm = plan_com_from_zmp(plan.zmp_reference, plan.t_end, np.array([0.0, 0.0, 0.88]))
    h = 1e-5
    for t in np.linspace(0.6, 3.0, 37):
        before, now, after = lipm.sample(t - h), lipm.sample(t), lipm.sample(t + h)
        np.testing.assert_allclose(now.vel, (after.pos - before.pos) / (2 * h), atol=1e-7)
        np.testing.assert_allclose(now.acc, (after.vel - before.vel) / (2 * h), atol=1e-4)
        np.testing.assert_allclose(lipm.zmp(t), now.pos[:2] - 0.88 / 9.81 * now.acc[:2], atol=1e-12)


def test_plans_and_samples_refuse_bad_values_and_changes(talos):
    from tsid_py.planning import Footstep

    right = pin.SE3.Identity()
    with pytest.raises(tsid.errors.UnknownNameError):
        Footstep(["right"], right, right, 0.0, 1.0)
    with pytest.raises(tsid.errors.InvalidParameterError, match="tangent_size"):
        tsid.TrajectorySample(np.zeros(3), tangent_size=-1)
    from tsid_py.controllers import BipedController

    controller = BipedController(talos)
    with pytest.raises(tsid.errors.DimensionError):
        controller.contacts["right"].corner_forces(np.zeros(5))
    plan = plan_straight_walk(
        talos.spec.sole, controller.foot_placement("right"), controller.foot_placement("left"),
        controller.com_initial, 2, 0.1,
    )  # fmt: skip
    for name in ("t_end", "steps", "sole"):
        with pytest.raises(AttributeError):
            setattr(plan, name, None)
