"""Push recovery: the capture point's math, the step chooser on constructed states, the recovery's
decisions inside a biped controller, and closed-loop recoveries on MuJoCo."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

import tsid_py as tp
from tsid_py.controllers.biped import BipedController
from tsid_py.controllers.strategies.push_recovery import PushRecovery, RecoveryParams, _Feet
from tsid_py.geometry import GRAVITY, SupportPolygon, clamp_into_polygon, convex_hull, polygon_margin
from tsid_py.loop.plant import PlantState
from tsid_py.planning.capture import (
    StepLimits,
    capture_point,
    capture_point_after,
    choose_step,
    dcm_feedback,
    pendulum_frequency,
)
from tsid_py.planning.support import sole_center, sole_polygon

SQUARE = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])


# ------------------------------------------------------------------ the pendulum
def test_the_capture_point_runs_away_from_the_cmp_as_the_pendulum_does():
    """xi(T) = r + (xi - r) e^(omega T) against the pendulum c'' = omega^2 (c - r) integrated."""
    omega, r = pendulum_frequency(0.8), np.array([0.05, -0.02])
    assert omega == pytest.approx(math.sqrt(GRAVITY / 0.8))
    c, dc, dt = np.array([0.0, 0.0]), np.array([0.3, 0.1]), 1e-5
    xi0 = capture_point(np.append(c, 0.8), np.append(dc, 0.0), omega)
    for _ in range(int(0.4 / dt)):  # semi-implicit Euler, fine steps
        dc = dc + dt * omega**2 * (c - r)
        c = c + dt * dc
    np.testing.assert_allclose(capture_point_after(xi0, r, omega, 0.4), c + dc / omega, atol=2e-4)
    with pytest.raises(tp.errors.InvalidParameterError, match="above the ground"):
        pendulum_frequency(0.0)


def test_dcm_feedback_asks_for_the_cmp_that_brings_the_capture_point_to_rest():
    omega, k = 3.0, 2.0
    com, xi, rest = np.array([0.5, 0.5]), np.array([0.6, 0.5]), np.array([0.5, 0.5])
    command = dcm_feedback(com, xi, omega, rest, k)
    np.testing.assert_allclose(command.cmp, xi + k / omega * (xi - rest), atol=1e-15)
    np.testing.assert_allclose(command.com_acceleration, omega**2 * (com - command.cmp), atol=1e-15)
    # the capture point's error decays at k: xi_dot = omega (xi - r) = -k (xi - rest)
    np.testing.assert_allclose(omega * (xi - command.cmp), -k * (xi - rest), atol=1e-15)
    same = dcm_feedback(com, xi, omega, (0.5, 0.5), k)  # a rest point as floats
    np.testing.assert_allclose(same.com_acceleration, command.com_acceleration, atol=1e-15)


def test_clamp_into_a_shrunk_or_grown_polygon():
    assert clamp_into_polygon([0.5, 0.5], SQUARE, 0.1) == pytest.approx([0.5, 0.5])
    assert clamp_into_polygon([2.0, 2.0], SQUARE, 0.1) == pytest.approx([0.9, 0.9])
    assert clamp_into_polygon([2.0, 2.0], SQUARE, -0.1) == pytest.approx([1.1, 1.1])
    assert clamp_into_polygon([2.0, 0.3], SQUARE, 0.6) == pytest.approx([0.5, 0.5])  # shrunk to nothing


def test_a_support_polygon_kept_gives_the_margins_and_clamps_of_the_functions():
    rng = np.random.default_rng(3)
    points = rng.normal(size=(12, 2))
    hull = convex_hull(points)
    polygon = SupportPolygon(points)
    np.testing.assert_allclose(polygon.hull, hull, atol=0.0)  # exact: the same corners
    with pytest.raises(ValueError, match="read-only"):
        polygon.hull[0, 0] = 1.0
    for point in rng.normal(scale=1.5, size=(50, 2)):
        assert polygon.margin(point) == pytest.approx(polygon_margin(point, hull), abs=1e-12)
        clamped = polygon.clamp(point, 0.05)
        assert clamped is not point
        if polygon_margin(point, hull) >= 0.05:
            np.testing.assert_allclose(clamped, point, atol=0.0)  # exact: inside, as it was
        else:
            assert polygon_margin(clamped, hull) == pytest.approx(0.05, abs=1e-9)
    square = SupportPolygon(SQUARE)
    assert square.reach([0.5, 0.5], [1.0, 0.0]) == pytest.approx(0.5)
    assert square.reach([0.25, 0.5], [-3.0, 0.0]) == pytest.approx(
        0.25
    )  # the direction's length does not count
    assert square.reach([0.5, 0.5], [1.0, 1.0]) == pytest.approx(0.5 * math.sqrt(2.0))


# ------------------------------------------------------------------ the step chooser
@pytest.fixture(scope="module")
def standing(talos):
    """Talos's feet as the chooser takes them, standing."""
    controller = BipedController(talos)
    feet = {side: controller.foot_placement(side) for side in ("right", "left")}
    sole = talos.spec.sole
    return {
        side: (convex_hull(sole_polygon(sole, placement)), sole_center(sole, placement)[:2], 0.0)
        for side, placement in feet.items()
    }


LIMITS = StepLimits(reach=0.41, min_width=0.17, max_width=0.45)


def test_pushed_left_the_left_foot_steps_outward(standing):
    left_centre = standing["left"][1]
    xi = left_centre + np.array([0.0, 0.1])  # beyond the left sole's outer edge
    choice = choose_step(xi, 3.35, 0.38, standing, LIMITS)
    assert choice.side == "left" and choice.landing[1] > left_centre[1] + 0.1
    assert choice.predicted[1] > xi[1]  # it ran on during the swing
    right_centre = standing["right"][1]
    right = choose_step(right_centre + np.array([0.0, -0.1]), 3.35, 0.38, standing, LIMITS)  # pushed right
    assert right.side == "right" and right.landing[1] < right_centre[1] - 0.1


def test_pushed_forward_a_foot_steps_ahead_within_reach(standing):
    centre = 0.5 * (standing["left"][1] + standing["right"][1])
    choice = choose_step(centre + np.array([0.2, 0.0]), 3.35, 0.38, standing, LIMITS)
    stance = "left" if choice.side == "right" else "right"
    ahead = choice.landing[0] - standing[stance][1][0]
    assert 0.2 < ahead <= LIMITS.reach + 1e-12 and choice.miss > 0.0  # the reach cut it short
    sideways = abs(choice.landing[1] - standing[stance][1][1])
    assert LIMITS.min_width - 1e-12 <= sideways <= LIMITS.max_width + 1e-12  # clear of the other foot


def test_limits_keep_a_foot_on_its_side():
    assert LIMITS.clip(np.array([0.6, -0.3]), 1.0) == pytest.approx([0.41, 0.17])  # left: never crosses
    assert LIMITS.clip(np.array([-0.1, -0.3]), -1.0) == pytest.approx([-0.1, -0.3])
    with pytest.raises(tp.errors.InvalidParameterError, match="min_width <= max_width"):
        StepLimits(reach=0.4, min_width=0.5, max_width=0.3)


# ------------------------------------------------------------------ the recovery's decisions
def _update(controller, t, q, v):
    """The controller's decisions at the measured state (t, q, v): its recovery's among them."""
    controller.observe(PlantState(t, q, v))


def _moving(talos, q0, velocity):
    """q0 with the base (and the whole robot) moving at ``velocity`` [m/s] in world axes."""
    v = talos.zero_velocity()
    rotation = pin.Quaternion(q0[6], *q0[3:6]).toRotationMatrix()
    v[:3] = rotation.T @ np.asarray(velocity, dtype=float)
    return v


def test_a_capture_point_inside_takes_no_step_and_one_outside_does(talos):
    controller = BipedController(talos, recovery="step")
    recovery = controller.recovery
    assert isinstance(recovery, PushRecovery)
    assert controller.params.kp_foot == 100.0  # exact: a parameter as set (for stepping)

    q0 = controller.q0
    _update(controller, 0.5, q0, _moving(talos, q0, (0.05, 0.0, 0.0)))
    assert recovery.stepping_side is None and not controller.lifted()  # inside: the ankles do it
    _update(controller, 0.502, q0, _moving(talos, q0, (0.05, 0.0, 0.0)))
    q_fast = q0.copy()
    _update(controller, 0.504, q_fast, _moving(talos, q0, (0.0, 0.6, 0.0)))  # pushed left, hard
    assert recovery.stepping_side == "left" and controller.lifted() == {"left"}
    assert controller.feet.phase("left") == "unloading" and not controller.stepping  # it answers a loss
    landing = controller.feet.request("left").trajectory.end
    assert landing.translation[1] > controller.foot_placement("left").translation[1] + 0.05


def test_the_ankle_mode_never_steps(talos):
    controller = BipedController(talos, recovery="ankle")
    q0 = controller.q0
    _update(controller, 0.5, q0, _moving(talos, q0, (0.0, 0.6, 0.0)))
    _update(controller, 0.502, q0, _moving(talos, q0, (0.0, 0.6, 0.0)))
    assert controller.recovery.stepping_side is None and not controller.lifted()


@pytest.mark.slow
def test_a_foot_put_back_down_is_no_step_that_answers_a_lost_balance():
    """250 N sideways in ankle mode: the push lifts a foot, the recovery puts it back down (no step
    it chose); the capture point between the feet while it is in the air is no loss of balance."""
    _mujoco()
    from tsid_py.loop.plant import Push
    from tsid_py.scenarios import balance

    push = Push((0.0, 250.0, 0.0), 1.0, 0.1)
    s = balance.run(duration=2.5, plant="mujoco", push=push, recovery="ankle").summary
    assert s["steps_taken"] and not any(step["chosen"] for step in s["steps_taken"])
    assert s["verdict"] == "recovered" and s["lost_balance_at_s"] is None
    assert s["recovered_at_s"] >= max(step["t_land_s"] for step in s["steps_taken"]) - 1e-9


def test_a_foot_rolled_on_an_edge_is_put_down_flat_again(talos):
    """A foot in contact tilted by more than ``tilt`` does not stand: it is lifted and goes down
    flat (here where it stood: the capture point between the feet needs it back); a foot tilted
    less stands."""

    controller = BipedController(talos, recovery="step")
    recovery, q = controller.recovery, controller.q0.copy()
    ankle_roll = talos.model.joints[talos.model.getJointId("leg_left_6_joint")].idx_q
    q[ankle_roll] += 0.5 * recovery.params.tilt  # within: it stands
    _update(controller, 0.5, q, talos.zero_velocity())
    assert recovery.last.standing == ["right", "left"] and not controller.lifted()
    q[ankle_roll] += recovery.params.tilt  # 1.5 tilt: it rolled
    _update(controller, 0.502, q, talos.zero_velocity())
    swing = controller.feet.request("left")
    assert recovery.last.rolled == ["left"] and recovery.last.standing == ["right"]
    assert swing is not None and controller.lifted() == {"left"}

    landing = swing.trajectory.end
    np.testing.assert_allclose(landing.rotation[2], [0.0, 0.0, 1.0], atol=1e-12)  # flat
    start = controller.foot_placement("left").translation
    assert abs(landing.translation[1] - start[1]) < 0.01  # where it stood


def test_a_foot_put_back_steps_instead_when_a_new_push_sends_the_capture_point_out(talos):
    """A rolled foot goes back beside the other while the two feet will hold the capture point; a
    push during its swing that sends the capture point past them turns it into a chosen step."""
    controller = BipedController(talos, recovery="step")
    recovery, q = controller.recovery, controller.q0.copy()
    ankle_roll = talos.model.joints[talos.model.getJointId("leg_left_6_joint")].idx_q
    q[ankle_roll] += 1.5 * recovery.params.tilt
    over_right = _moving(talos, q, (0.0, -0.28, 0.0))  # the capture point on the right sole
    _update(controller, 0.5, q, over_right)
    swing = controller.feet.request("left")
    assert swing is not None and recovery.stepping_side is None  # put back: the right foot holds it
    assert swing.planned and controller.stepping  # a foot put back is a planned step: the verdict waits
    beside = swing.trajectory.end
    _update(controller, 0.6, q, over_right)  # nothing new: it goes back
    assert controller.feet.request("left") is swing and recovery.stepping_side is None

    _update(controller, 0.62, q, _moving(talos, q, (0.0, 0.6, 0.0)))  # pushed left, hard
    chosen = controller.feet.request("left")
    assert recovery.stepping_side == "left" and not chosen.planned  # now a step that answers a loss
    assert chosen.trajectory.t0 == swing.trajectory.t0  # the same swing, retargeted
    assert chosen.trajectory.end.translation[1] > beside.translation[1] + 0.05  # outward, to catch it


def test_the_support_follows_a_foot_that_moved_and_is_kept_while_none_did(talos):
    """The recovery's support polygon and the feet's shift (kept between steps) against the ones
    made from scratch: kept for a foot that moved less than MOVED, made again for more."""
    sole, controller = talos.spec.sole, BipedController(talos)
    feet = {side: controller.foot_placement(side) for side in ("right", "left")}
    both = ["right", "left"]
    kept = _Feet(sole, feet).at(feet, both)
    polygon = kept.polygon
    assert kept.moved == pytest.approx((0.0, 0.0), abs=1e-15)

    def shifted(dx: float) -> dict[str, pin.SE3]:
        left = feet["left"]
        return {**feet, "left": pin.SE3(left.rotation, left.translation + np.array([dx, 0.0, 0.0]))}

    assert kept.at(shifted(0.6 * _Feet.MOVED), list(both)).polygon is polygon  # has not moved
    crept = kept.at(shifted(1.2 * _Feet.MOVED), list(both)).polygon  # 0.6 more: from where it was made
    assert crept is not polygon and crept is not None
    np.testing.assert_allclose(kept.moved, (0.6 * _Feet.MOVED, 0.0), atol=1e-12)
    moved = shifted(0.1)
    kept.at(moved, list(both))
    fresh = SupportPolygon(np.vstack([sole_polygon(sole, p) for p in moved.values()]))
    assert kept.polygon is not None and kept.polygon is not polygon
    np.testing.assert_allclose(kept.polygon.hull, fresh.hull, atol=1e-12)
    assert kept.moved == pytest.approx((0.05, 0.0), abs=1e-12)  # the middle of the soles: half
    right = kept.at(moved, ["right"]).polygon  # the feet that stand changed
    assert right is not None
    np.testing.assert_allclose(right.hull, convex_hull(sole_polygon(sole, feet["right"])), atol=1e-12)
    assert kept.at(moved, []).polygon is None


def test_recovery_refuses_nonsense(talos):

    with pytest.raises(tp.errors.InvalidParameterError, match="recovery must be one of"):
        BipedController(talos, recovery="jump")
    with pytest.raises(tp.errors.InvalidParameterError, match="swing_time must be > 0"):
        RecoveryParams(swing_time=0.0)


# ------------------------------------------------------------------ in MuJoCo
def _mujoco():
    return pytest.importorskip("mujoco", reason="the [sim] extra (mujoco) is not installed")


def _feet_apart(result) -> float:
    """The smallest distance between the two feet's collision geometries over the run [m]."""
    robot = result.controller.robot
    geometry = robot.load_collision_model()
    joints = [robot.model.frames[robot.frame_id(f)].parentJoint for f in robot.spec.feet.values()]
    shapes = [[i for i, o in enumerate(geometry.geometryObjects) if o.parentJoint == j] for j in joints]
    for a in shapes[0]:
        for b in shapes[1]:
            geometry.addCollisionPair(pin.CollisionPair(a, b))
    geometry_data, data = pin.GeometryData(geometry), robot.create_data()
    closest = np.inf
    for q in list(result.log.q)[::5]:
        pin.forwardKinematics(robot.model, data, q)
        pin.updateGeometryPlacements(robot.model, data, geometry, geometry_data)
        pin.computeDistances(geometry, geometry_data)
        closest = min(closest, min(r.min_distance for r in geometry_data.distanceResults))
    return closest


@pytest.mark.slow
def test_a_forward_push_the_standing_controller_falls_from_is_recovered_by_a_step():
    """450 N forward for 0.1 s: TSID's controller falls; with stepping, Talos steps forward, closes
    its stance and stands, without a QP failure, within its torque limits, feet apart."""
    _mujoco()
    from tsid_py.loop.plant import Push
    from tsid_py.scenarios import balance

    push = Push((450.0, 0.0, 0.0), 1.0, 0.1)
    standing = balance.run(duration=2.0, plant="mujoco", push=push).summary
    assert standing["verdict"] in ("fell", "lost")
    result = balance.run(duration=2.0, plant="mujoco", push=push, recovery="step")
    s = result.summary
    assert s["verdict"] == "recovered" and s["qp_failures"] == 0 and s["max_torque_ratio"] <= 1.0 + 1e-9
    assert s["recovery_steps"] >= 1 and s["steps_taken"][0]["landing_m"][0] > 0.2  # forward
    # the step answered a lost balance: the measured capture point left the feet before it landed
    assert 1.0 < s["lost_balance_at_s"] < s["steps_taken"][0]["t_land_s"] < s["recovered_at_s"]
    assert s["dynamics_residual_max"] < 1e-8 and _feet_apart(result) > 0.0
    from tsid_py.contacts.contact_base import contacts_of
    from tsid_py.viz.scene import SceneBuilder

    k = int(np.argmin(result.log.capture_margin))  # the replays show the capture point on the ground
    frame = SceneBuilder(result.controller.robot, contacts_of(result.controller)).frame_at(result.log, k)
    np.testing.assert_allclose(frame.points["capture_point"], [*result.log.capture_point[k], 0.0], atol=1e-12)


@pytest.mark.slow
def test_two_pushes_two_seconds_apart_and_no_push_at_all():
    _mujoco()
    from tsid_py.loop.plant import Push
    from tsid_py.scenarios import balance
    from tsid_py.scenarios.runner import LoopSetup

    pushes = (Push((450.0, 0.0, 0.0), 1.0, 0.1), Push((0.0, -300.0, 0.0), 3.0, 0.1))
    result = balance.run("talos", 5.0, setup=LoopSetup("mujoco", pushes=pushes), recovery="step")
    s = result.summary
    assert s["push_verdicts"] == ["recovered", "recovered"] and s["qp_failures"] == 0
    assert s["recovered_at_s"] > 3.1

    assert _feet_apart(result) > 0.0
    for mode in ("ankle", "step"):  # no push: it stands as the TSID controller does
        still = balance.run(duration=10.0, plant="mujoco", recovery=mode, check_every=0).summary
        assert (
            still["verdict"] == "recovered"
            and still["com_drift_max_m"] < 1e-3
            and still["recovery_steps"] == 0
        )


@pytest.mark.slow
def test_in_a_model_built_another_way_the_step_is_no_worse_than_none_without_contact_measurements(talos):
    """Issue 41's other model: MuJoCo's own URDF importer, box feet 1 cm under the soles, no joint
    damping; a user's own loop that passes no contact measurements. 300 N backward: the standing
    controller holds it, and the recovery must too. Before the measured state learned where the
    still feet stand, the soles 9 mm up never touched (the 5 mm rule at z = 0), a foot that rolled
    down looked like the only support and a step was taken that fell (at 2.97 s)."""
    _mujoco()
    from tsid_py.loop import BalanceJudge, Command, Push
    from tsid_py.loop.mujoco_model import build_mujoco_model_from_urdf
    from tsid_py.loop.mujoco_plant import MujocoPlant

    model = build_mujoco_model_from_urdf(talos)
    push, dt = Push((-300.0, 0.0, 0.0), 1.0, 0.1), 0.002
    for recovery in ("none", "step"):
        controller = BipedController(talos, recovery=recovery)
        plant = MujocoPlant(talos, model=model)
        plant.reset(controller.q0, talos.zero_velocity())
        judge = BalanceJudge(talos, controller.q0, disturbances=[(push.t, push.t + push.duration)])
        for k in range(int(6.1 / dt)):
            state = plant.state()
            if k == int(push.t / dt):
                plant.push(push.force, push.duration)
            judge.observe(judge.measure(state), controller.held_contact_frames(), controller.stepping)
            if judge.decided():
                break
            measured = controller.measurer.measure(PlantState(state.t, state.q, state.v))
            if k == int(0.9 / dt):  # standing still before the push: the feet touch, 1 cm up
                assert measured.touching == ("right", "left") and measured.margin > 0.05
                assert measured.ground_height == pytest.approx(0.01, abs=2e-3)
            controller.observe(measured)
            out = controller.compute(state.t, state.q, state.v)
            plant.apply(Command(out.tau, out.dv))
            plant.advance(dt)
        assert judge.verdict().verdict == "recovered", recovery
