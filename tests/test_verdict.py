"""The verdicts of a run (tsid_py.loop.verdict) on constructed states: the capture point just
inside and just outside the support, a tilted base, a knee on the floor, rest after a push."""

import math

import numpy as np
import pinocchio as pin
import pytest

import tsid_py as tp
from tsid_py.controllers.biped import BipedController
from tsid_py.geometry import (
    GRAVITY,
    HullTracker,
    convex_hull,
    convex_hull_indices,
    polygon_margin,
    support_margin,
)
from tsid_py.loop import ContactMeasurement, PlantState
from tsid_py.loop.verdict import BalanceJudge, VerdictLimits

DT = 0.002


@pytest.fixture(scope="module")
def standing(talos):
    """Talos's starting configuration, feet on the ground."""
    return BipedController(talos).q0


def _state(
    talos, q0, t, base_velocity=(0.0, 0.0, 0.0), touching=(True, True), ground_bodies=None, q=None, shift=0.0
):
    """A measured state: q0 (or q) with the base moving at ``base_velocity`` (world axes, m/s), each
    foot standing on a 0.2 x 0.1 m rectangle around its frame moved by ``shift`` along x [m]
    (points given by the plant)."""
    q = q0.copy() if q is None else q
    v = talos.zero_velocity()
    rotation = pin.Quaternion(q[6], *q[3:6]).toRotationMatrix()
    v[:3] = rotation.T @ np.asarray(base_velocity)
    data = talos.create_data()
    pin.framesForwardKinematics(talos.model, data, q)
    contacts = {}
    for frame, touches in zip(talos.spec.feet.values(), touching, strict=True):
        x, y, _ = data.oMf[talos.frame_id(frame)].translation + np.array([shift, 0.0, 0.0])
        rectangle = np.array([[x + dx, y + dy, 0.0] for dx in (-0.1, 0.1) for dy in (-0.05, 0.05)])
        contacts[frame] = ContactMeasurement(np.zeros(6), touches, points=rectangle if touches else None)
    return PlantState(t, q, v, contacts, ground_bodies)


def _front_edge(talos, q0):
    data = talos.create_data()
    pin.framesForwardKinematics(talos.model, data, q0)
    return max(data.oMf[talos.frame_id(f)].translation[0] for f in talos.spec.feet.values()) + 0.1


def _speed_to_capture_point_at(talos, q0, x):
    """The forward base speed [m/s] that puts the capture point at x [m] (the CoM moves with the base)."""
    com = pin.centerOfMass(talos.model, talos.create_data(), q0)
    omega = math.sqrt(GRAVITY / com[2])
    return (x - com[0]) * omega


def _judge_for(talos, q0, seconds, **state) -> BalanceJudge:
    """A judge that observed the same state every DT from 0 to ``seconds``."""
    judge = BalanceJudge(talos, q0)
    for k in range(int(round(seconds / DT)) + 1):
        judge.observe(_state(talos, q0, k * DT, **state))
    return judge


@pytest.mark.parametrize("beyond, lost", [(0.019, False), (0.021, True)])
def test_a_capture_point_outside_the_support_by_more_than_the_margin_loses_balance(
    talos, standing, beyond, lost
):
    edge = _front_edge(talos, standing)
    speed = _speed_to_capture_point_at(talos, standing, edge + beyond)
    judge = _judge_for(talos, standing, 0.2, base_velocity=(speed, 0.0, 0.0))
    sample = judge.last
    assert sample.margin == pytest.approx(-beyond, abs=1e-6)
    verdict = judge.verdict()
    assert (verdict.verdict == "lost") is lost
    assert verdict.lost_balance_at == (0.0 if lost else None)  # exact: the time of the first state given
    if lost:
        assert "capture point" in verdict.reason
    else:  # 1.9 cm out: within the margin, but outside the support: never at rest either
        assert verdict.verdict == "undecided" and verdict.recovered_at is None


def test_persistence_waits_before_balance_is_lost(talos, standing):
    edge = _front_edge(talos, standing)
    speed = _speed_to_capture_point_at(talos, standing, edge + 0.05)
    judge = _judge_for(talos, standing, 0.04, base_velocity=(speed, 0.0, 0.0))  # 40 ms < 50 ms
    assert judge.verdict().verdict == "undecided"
    judge.observe(_state(talos, standing, 0.05, base_velocity=(speed, 0.0, 0.0)))
    assert judge.verdict().verdict == "lost"
    assert judge.verdict().lost_balance_at == 0.0  # exact: the time of the first state given


def test_a_planned_step_defers_capturability_to_the_touch_down(talos, standing):
    edge = _front_edge(talos, standing)
    speed = _speed_to_capture_point_at(talos, standing, edge + 0.1)
    judge = BalanceJudge(talos, standing)
    for k in range(100):
        judge.observe(_state(talos, standing, k * DT, base_velocity=(speed, 0.0, 0.0)), stepping=True)
    assert judge.verdict().verdict == "undecided"


@pytest.mark.slow
def test_a_loss_recovered_from_before_the_last_push_is_no_verdict_of_that_push(talos, standing):
    """Lost at 0 s, at rest again from 0.1 s (recovered at 0.6 s); then a small push over
    1.0-1.1 s and the run ends at 1.3 s: the robot is not lost, and not yet seen at rest after
    the push: undecided, for the run and for the second push; the first push recovered."""
    edge = _front_edge(talos, standing)
    speed = _speed_to_capture_point_at(talos, standing, edge + 0.1)
    judge = BalanceJudge(talos, standing, disturbances=[(0.0, 0.01), (1.0, 1.1)])
    for k in range(651):
        t = k * DT
        moving = t < 0.1 - 1e-9
        judge.observe(_state(talos, standing, t, base_velocity=(speed if moving else 0.0, 0.0, 0.0)))
    verdict = judge.verdict()
    assert verdict.lost_balance_at == 0.0  # exact: the time of the first state given
    assert verdict.verdict == "undecided" and "at rest" in verdict.reason
    assert [v.verdict for v in judge.push_verdicts()] == ["recovered", "undecided"]
    assert judge.verdict(until=0.3).verdict == "lost"  # before its rest was long enough: still lost


def test_a_base_tilted_past_the_lost_tilt_never_rests(talos, standing):
    """A still base pitched 50 deg (past lost_tilt, short of fallen_tilt), its CoM over a wide
    measured support: lost, and no rest however long it stays so."""
    q = standing.copy()
    q[3:7] = pin.Quaternion(pin.utils.rpyToMatrix(0.0, math.radians(50.0), 0.0)).coeffs()
    com = pin.centerOfMass(talos.model, talos.create_data(), q)
    square = np.array([[com[0] + a, com[1] + b, 0.0] for a in (-0.2, 0.2) for b in (-0.2, 0.2)])
    feet = talos.spec.feet.values()
    contacts = {frame: ContactMeasurement(np.zeros(6), True, points=square) for frame in feet}
    judge = BalanceJudge(talos, standing)
    for k in range(400):
        judge.observe(PlantState(k * DT, q, talos.zero_velocity(), contacts, frozenset()))
    verdict = judge.verdict()
    assert judge.last.margin >= 0.0 and verdict.verdict == "lost" and verdict.recovered_at is None
    assert "tilted past 45 deg" in verdict.reason and not judge.decided()


@pytest.mark.slow
def test_a_capture_point_inside_and_a_slow_com_recover_after_rest_time(talos, standing):
    judge = _judge_for(talos, standing, 0.49, base_velocity=(0.04, 0.0, 0.0))
    assert judge.verdict().verdict == "undecided"  # at rest for 0.49 s only
    judge.observe(_state(talos, standing, 0.5, base_velocity=(0.04, 0.0, 0.0)))
    verdict = judge.verdict()
    assert verdict.verdict == "recovered"
    assert verdict.recovered_at == 0.0  # exact: the time of the first state given
    fast = _judge_for(talos, standing, 1.0, base_velocity=(0.06, 0.0, 0.0))  # above rest_speed
    assert fast.verdict().verdict == "undecided" and "0.06 m/s" in fast.verdict().reason


@pytest.mark.slow
def test_a_run_that_ends_on_its_way_out_is_undecided_not_recovered(talos, standing):
    """Recovered at rest first; then the capture point leaves the support by less than the margin
    (not yet lost) when the run ends: the survival was not seen to the end."""
    judge = _judge_for(talos, standing, 0.6)
    assert judge.verdict().verdict == "recovered"
    speed = _speed_to_capture_point_at(talos, standing, _front_edge(talos, standing) + 0.01)
    judge.observe(_state(talos, standing, 0.602, base_velocity=(speed, 0.0, 0.0)))
    verdict = judge.verdict()
    assert verdict.verdict == "undecided" and verdict.recovered_at == pytest.approx(0.0)
    assert "outside the support when the run ended" in verdict.reason
    judge.observe(_state(talos, standing, 0.604))  # back inside: recovered again
    assert judge.verdict().verdict == "recovered"


@pytest.mark.slow
def test_a_run_with_no_push_whose_com_moves_on_after_a_rest_is_undecided(talos, standing):
    """A CoM sinusoid rests at its start, then sways: moving when the run ends, it is undecided
    (whatever the robot); at rest again for the rest time, recovered."""
    judge = _judge_for(talos, standing, 0.6)
    assert judge.verdict().verdict == "recovered"
    for k in range(1, 200):  # swaying at 0.1 m/s, the capture point inside the support
        judge.observe(
            _state(talos, standing, 0.6 + k * DT, base_velocity=(0.1 * (-1) ** (k // 50), 0.0, 0.0))
        )
    verdict = judge.verdict()
    assert verdict.verdict == "undecided" and verdict.recovered_at == pytest.approx(0.0)
    assert "CoM moved again after its rest: 0.10 m/s" in verdict.reason
    start = 0.6 + 200 * DT
    for k in range(int(round(0.5 / DT)) + 1):
        judge.observe(_state(talos, standing, start + k * DT))
    verdict = judge.verdict()
    assert verdict.verdict == "recovered" and verdict.recovered_at == pytest.approx(start)


@pytest.mark.slow
def test_a_com_at_rest_over_the_edge_is_not_recovered(talos, standing):
    com_x = pin.centerOfMass(talos.model, talos.create_data(), standing)[0]
    shift = com_x - 0.01 - _front_edge(talos, standing)  # the support's front edge 1 cm behind the CoM
    judge = _judge_for(talos, standing, 1.0, shift=shift)
    assert judge.last.margin == pytest.approx(-0.01, abs=1e-9)
    assert judge.verdict().verdict == "undecided"  # within the margin: not lost, not at rest either


@pytest.mark.slow
def test_recovery_counts_only_after_the_last_push_ends(talos, standing):
    judge = BalanceJudge(talos, standing, disturbances=[(0.5, 0.6)])
    for k in range(int(1.0 / DT) + 1):
        judge.observe(_state(talos, standing, k * DT))
    assert judge.verdict().verdict == "undecided"  # at rest since 0.6 s: 0.4 s only
    for k in range(int(1.0 / DT) + 1, int(1.2 / DT) + 1):
        judge.observe(_state(talos, standing, k * DT))
    verdict = judge.verdict()
    assert verdict.verdict == "recovered" and verdict.recovered_at == pytest.approx(0.6, abs=DT)
    assert [v.verdict for v in judge.push_verdicts()] == ["recovered"]


@pytest.mark.slow
def test_each_push_has_its_verdict(talos, standing):
    """At rest between two pushes: the first is recovered in its window, the run after the second."""
    judge = BalanceJudge(talos, standing, disturbances=[(0.2, 0.3), (1.2, 1.3)])
    for k in range(int(2.0 / DT) + 1):
        moving = 0.2 <= k * DT < 0.35 or 1.2 <= k * DT < 1.35
        judge.observe(_state(talos, standing, k * DT, base_velocity=(0.1 if moving else 0.0, 0.0, 0.0)))
    assert [v.verdict for v in judge.push_verdicts()] == ["recovered", "recovered"]
    assert judge.push_verdicts()[0].recovered_at == pytest.approx(0.35, abs=DT)
    assert judge.verdict().recovered_at == pytest.approx(1.35, abs=DT)


def _tilted(q0, degrees):

    q = q0.copy()
    tilt = pin.utils.rotate("x", math.radians(degrees))
    rotation = tilt @ pin.Quaternion(q[6], *q[3:6]).toRotationMatrix()
    q[3:7] = pin.Quaternion(rotation).coeffs()
    return q


@pytest.mark.parametrize("degrees, verdict", [(40.0, "undecided"), (50.0, "lost"), (65.0, "fell")])
def test_a_tilted_base_loses_balance_then_falls(talos, standing, degrees, verdict):
    q = _tilted(standing, degrees)
    judge = BalanceJudge(talos, standing)
    judge.observe(_state(talos, standing, 0.0, q=q))
    assert judge.last.tilt == pytest.approx(math.radians(degrees), abs=1e-9)
    assert judge.verdict().verdict == verdict


def test_a_knee_on_the_floor_is_a_fall_and_the_feet_are_not(talos, standing):
    feet = {
        talos.model.names[talos.model.frames[talos.frame_id(f)].parentJoint] for f in talos.spec.feet.values()
    }
    judge = BalanceJudge(talos, standing)
    judge.observe(_state(talos, standing, 0.0, ground_bodies=frozenset(feet)))
    assert judge.verdict().verdict == "undecided"
    judge.observe(_state(talos, standing, DT, ground_bodies=frozenset({*feet, "leg_left_4_joint"})))
    verdict = judge.verdict()
    assert verdict.verdict == "fell" and verdict.fell_at == DT and "leg_left_4_joint" in verdict.reason


def test_a_low_base_is_a_fall(talos, standing):
    q = standing.copy()
    q[2] *= 0.49
    judge = BalanceJudge(talos, standing)
    judge.observe(_state(talos, standing, 0.0, q=q))
    assert judge.verdict().verdict == "fell" and "49%" in judge.verdict().reason


def test_no_support_at_all_loses_balance(talos, standing):
    judge = _judge_for(talos, standing, 0.1, touching=(False, False))
    assert judge.last.margin == -math.inf
    assert judge.verdict().verdict == "lost" and "no contact" in judge.verdict().reason


def test_a_held_contact_that_does_not_touch_is_reported(talos, standing):
    judge = BalanceJudge(talos, standing)
    right, left = talos.spec.feet["right"], talos.spec.feet["left"]
    for k in range(60):
        judge.observe(_state(talos, standing, k * DT, touching=(False, True)), held_frames=(right, left))
    [(since, duration)] = judge.contacts_not_touching[right]
    assert since == 0.0  # exact: the time of the first state given
    assert duration == pytest.approx(59 * DT) and left not in judge.contacts_not_touching


@pytest.mark.slow
def test_every_episode_of_a_held_contact_in_the_air_is_reported(talos, standing):
    """In the air over 0.1-0.3 s and again from 0.5 s to the end: both episodes, each its length."""
    judge = BalanceJudge(talos, standing)
    right, left = talos.spec.feet["right"], talos.spec.feet["left"]
    for k in range(500):
        t = k * DT
        in_air = 0.1 - 1e-9 <= t < 0.3 - 1e-9 or t >= 0.5 - 1e-9
        judge.observe(_state(talos, standing, t, touching=(not in_air, True)), held_frames=(right, left))
    episodes = judge.contacts_not_touching[right]
    assert [since for since, _ in episodes] == pytest.approx([0.1, 0.5])
    assert [duration for _, duration in episodes] == pytest.approx([0.2 - DT, 0.5 - DT])


def test_support_margin_of_degenerate_supports():
    assert support_margin([0.0, 1.0], [[0.0, 0.0], [2.0, 0.0]]) == pytest.approx(-1.0)  # a segment
    assert support_margin([3.0, 4.0], [[0.0, 0.0, 0.0]]) == pytest.approx(-5.0)  # a point
    assert support_margin([0.0, 0.0], np.zeros((0, 3))) == -math.inf
    assert support_margin([0.5, 0.5], [[0, 0], [1, 0], [0, 1], [1, 1], [0.5, 0.2]]) == pytest.approx(0.5)
    with pytest.raises(tp.errors.InvalidParameterError, match="k x 2 or k x 3"):
        support_margin([0.0, 0.0], np.zeros((3, 4)))


def test_a_hull_tracker_gives_the_hull_of_each_set_as_it_moves():
    """Kept while every point stays inside, computed again when one leaves: each step's hull and
    margin equal those computed from scratch, over a support that jitters, grows and shrinks."""
    rng = np.random.default_rng(3)
    base = rng.uniform(-0.1, 0.1, size=(30, 2))
    tracker, recomputed, previous = HullTracker(), 0, None
    for step in range(200):
        points = base + 1e-5 * rng.standard_normal(base.shape)  # the feet's points, jittering
        if step % 50 == 25:
            points = np.vstack([points, [[0.3, 0.0]]])  # a new point outside: the hull grows
        if step % 50 == 40:
            points = points[:10]  # fewer points: some corners go
        indices = tracker.indices(points)
        recomputed += indices is not previous  # a new array: the hull was computed again
        previous = indices
        assert set(indices.tolist()) == set(convex_hull_indices(points).tolist())
        for point in rng.uniform(-0.2, 0.2, size=(2, 2)):  # two margins in one support: the second reuses it
            assert support_margin(point, points, tracker) == pytest.approx(
                polygon_margin(point, convex_hull(points)), abs=1e-12
            )
    assert recomputed < 200 / 2  # it does keep the hull: jitter alone seldom moves a corner

    tracker = HullTracker()  # two kept corners that became one point: an edge of no length
    square = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    support_margin([0.5, 0.5], square, tracker)
    merged = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    assert support_margin([0.3, 0.5], merged, tracker) == pytest.approx(support_margin([0.3, 0.5], merged))
    moved = square.copy()  # the same array shape, other values: not the last margin's polygon
    support_margin([0.5, 0.5], moved, tracker)
    moved[:, 0] += 2.0
    assert support_margin([0.5, 0.5], moved, tracker) == pytest.approx(-1.5, abs=1e-15)


def test_limits_refuse_nonsense():

    with pytest.raises(tp.errors.InvalidParameterError, match="rest_speed"):
        VerdictLimits(rest_speed=0.0)
    with pytest.raises(tp.errors.InvalidParameterError, match="fallen_tilt"):
        VerdictLimits(lost_tilt=1.0, fallen_tilt=0.5)
    with pytest.raises(tp.errors.InvalidParameterError, match="balance is judged"):
        BalanceJudge(tp.load_robot("ur5"), np.zeros(6))
