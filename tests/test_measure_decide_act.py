"""One control step as measure -> decide -> act: the measured state (its numbers against Pinocchio
and finite differences), the feet's phases, a strategy of one's own, the kinematics passes a step
makes, and who may switch contacts."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import tsid_py as tsid
from tsid_py.controllers import BipedController, BipedParams, Decision, StepRequest
from tsid_py.geometry import support_margin
from tsid_py.loop import ControlLoop, Measurer, PlantState, Push
from tsid_py.loop.measured import TOUCH_TOLERANCE
from tsid_py.planning.support import sole_center, sole_corners
from tsid_py.planning.swing_foot import TrajectorySE3SwingFoot
from tsid_py.trajectories import TrajectorySample

PACKAGE = Path(__file__).resolve().parents[1] / "tsid_py"
DT = 0.002


def _moving_state(talos, rng, t=0.5):
    """Talos standing (its feet at q0) with a random velocity: a state to measure."""
    q = BipedController(talos).q0
    return PlantState(t, q, 0.3 * rng.standard_normal(talos.nv))


# ------------------------------------------------------------------ the measured state
def test_the_measured_state_is_pinocchios_kinematics_at_the_state(talos, rng):
    state = _moving_state(talos, rng)
    measured = Measurer(talos, state.q).measure(state)
    data = talos.create_data()
    pin.centerOfMass(talos.model, data, state.q, state.v)
    np.testing.assert_allclose(measured.com, data.com[0], atol=1e-12)
    np.testing.assert_allclose(measured.com_velocity, data.vcom[0], atol=1e-12)
    omega = math.sqrt(tsid.geometry.GRAVITY / data.com[0][2])
    assert measured.omega == pytest.approx(omega, rel=1e-12)
    np.testing.assert_allclose(measured.capture_point, data.com[0][:2] + data.vcom[0][:2] / omega, atol=1e-12)
    pin.forwardKinematics(talos.model, data, state.q)
    for key, frame in talos.spec.feet.items():
        placement = pin.updateFramePlacement(talos.model, data, talos.frame_id(frame))
        foot = measured.feet[key]
        np.testing.assert_allclose(foot.placement.homogeneous, placement.homogeneous, atol=1e-12)
        np.testing.assert_allclose(foot.corners, sole_corners(talos.spec.sole, placement), atol=1e-12)
        assert foot.touching and foot.lowest <= TOUCH_TOLERANCE  # the integrator measures none: geometry
    assert measured.touching == ("right", "left")
    assert measured.margin == pytest.approx(
        support_margin(measured.capture_point, measured.support), abs=1e-12
    )
    assert measured.tilt == pytest.approx(0.0, abs=1e-12) and measured.base_height == state.q[2]


def test_a_foots_measured_velocity_is_the_rate_of_its_placement(talos, rng):
    """The feet's velocities (world axes at the frame) against a finite difference of placements."""
    state = _moving_state(talos, rng)
    measurer, h = Measurer(talos), 1e-7
    after = PlantState(state.t + h, pin.integrate(talos.model, state.q, h * state.v), state.v)
    now, later = measurer.measure(state).feet["left"], measurer.measure(after).feet["left"]
    linear = (later.placement.translation - now.placement.translation) / h
    angular = pin.log3(now.placement.rotation.T @ later.placement.rotation) / h
    np.testing.assert_allclose(now.velocity[:3], linear, atol=1e-5)
    np.testing.assert_allclose(now.velocity[3:], now.placement.rotation @ angular, atol=1e-5)


def test_the_measured_state_is_read_only_and_its_own(talos, rng):
    state = _moving_state(talos, rng)
    measured = Measurer(talos).measure(state)
    state.q[0] += 1.0  # the plant's arrays are the caller's: the measured state kept a copy
    assert measured.q[0] == pytest.approx(0.0, abs=1e-12)
    for array in (
        measured.q,
        measured.v,
        measured.com,
        measured.capture_point,
        measured.feet["right"].corners,
    ):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 0.0
    with pytest.raises(TypeError):
        measured.feet["extra"] = measured.feet["right"]  # type: ignore[index]


def test_a_foot_above_the_touch_tolerance_does_not_touch_and_the_plants_word_wins(talos):
    controller = BipedController(talos)
    measurer = Measurer(talos, controller.q0)
    standing = measurer.measure(PlantState(0.0, controller.q0, talos.zero_velocity()))
    assert standing.touching == ("right", "left") and abs(standing.ground_height) < 1e-3
    q, rising = controller.q0, talos.zero_velocity()
    q[2] += 2 * TOUCH_TOLERANCE  # both soles 1 cm up, and moving up: not standing on anything
    rising[2] = 0.1
    up = measurer.measure(PlantState(0.01, q, rising))
    assert up.touching == () and up.margin == -math.inf and up.ground_height == standing.ground_height
    contact = tsid.loop.ContactMeasurement(np.zeros(6), True)  # the plant says the right one touches
    told = measurer.measure(PlantState(0.0, q, rising, {talos.spec.feet["right"]: contact}))
    assert told.touching == ("right",) and told.feet["left"].measurement is None


def test_feet_standing_still_above_z_0_show_where_the_ground_is(talos):
    """A model whose soles stand 9 mm above where the spec puts them (a box under each sole): for a
    measurer that learns the ground (a controller's), the still feet are the ground, so they touch
    and the capture point is inside their support; the judge's (z = 0) sees them in the air. Feet
    moving at 2 cm/s do not show the ground, at 5 mm/s they do."""
    controller = BipedController(talos)
    at_q0 = Measurer(talos).measure(PlantState(0.0, controller.q0, talos.zero_velocity()))
    flat = min(foot.lowest for foot in at_q0.feet.values())  # the soles' lowest corner in q0
    q = controller.q0
    q[2] += 0.009
    drifting = talos.zero_velocity()
    drifting[0] = 0.02  # the whole robot sliding forward at 2 cm/s
    assert controller.measurer.measure(PlantState(0.0, q, drifting)).touching == ()
    drifting[0] = 0.005
    held = controller.measurer.measure(PlantState(0.0, q, drifting))
    assert held.ground_height == pytest.approx(flat + 0.009, abs=1e-9)
    assert held.touching == ("right", "left") and held.margin > 0.05
    judged = Measurer(talos, controller.q0).measure(PlantState(0.0, q, talos.zero_velocity()))
    assert judged.ground_height == 0.0 and judged.touching == ()  # exact: z = 0, never learned
    q[2] += 2 * TOUCH_TOLERANCE  # then lifted 1 cm more, moving: above that ground
    rising = talos.zero_velocity()
    rising[2] = 0.1
    lifted = controller.measurer.measure(PlantState(0.01, q, rising))
    assert lifted.touching == () and lifted.ground_height == held.ground_height


def test_the_pendulum_stands_on_the_ground_the_feet_touch(talos):
    """Feet on a step 40 cm up (a measurer that learns the ground there): omega is the pendulum's
    over the step, sqrt(g / (c_z - 0.4)), not over z = 0 (17 % lower); lifted off, the last
    ground the feet touched stays the pendulum's."""
    controller = BipedController(talos)
    measurer = Measurer(talos, controller.q0, learn_ground=True)
    at_q0 = measurer.measure(PlantState(0.0, controller.q0, talos.zero_velocity()))
    floor = float(np.mean(at_q0.support[:, 2]))
    assert at_q0.omega == pytest.approx(math.sqrt(9.81 / (at_q0.com[2] - floor)), rel=1e-9)
    q = controller.q0
    q[2] += 0.4
    up = measurer.measure(PlantState(0.0, q, talos.zero_velocity()))
    assert up.touching == ("right", "left")
    assert up.omega == pytest.approx(math.sqrt(9.81 / (up.com[2] - 0.4 - floor)), rel=1e-6)
    assert up.omega > 1.15 * math.sqrt(9.81 / up.com[2])
    q[2] += 0.05
    rising = talos.zero_velocity()
    rising[2] = 0.3
    lifted = measurer.measure(PlantState(0.1, q, rising))
    assert lifted.touching == ()
    assert lifted.omega == pytest.approx(math.sqrt(9.81 / (lifted.com[2] - 0.4 - floor)), rel=1e-6)


def test_a_foot_held_still_in_the_air_is_not_the_ground(talos):
    """The left foot lifted 5 cm by its knee and held still, the right one on the ground and
    sliding: the ground stays where it was (the lowest foot moves), and the left foot does not
    touch."""
    controller = BipedController(talos)
    measurer = Measurer(talos, controller.q0, learn_ground=True)
    standing = measurer.measure(PlantState(0.0, controller.q0, talos.zero_velocity()))
    q = controller.q0
    knee = talos.model.joints[talos.model.getJointId("leg_left_4_joint")].idx_q
    q[knee] += 0.5
    q[knee - 1] -= 0.25  # hip and ankle share the knee's bend: the foot comes up, about level
    q[knee + 1] -= 0.25
    v = talos.zero_velocity()
    hip = talos.model.joints[talos.model.getJointId("leg_right_2_joint")].idx_v
    v[hip] = 0.05  # the right foot swings out
    raised = measurer.measure(PlantState(0.01, q, v))
    left, right = raised.feet["left"], raised.feet["right"]
    assert left.lowest > 0.03 and np.linalg.norm(left.velocity[:3]) < 1e-9  # up and still
    assert np.linalg.norm(right.velocity[:3]) > 0.01  # moving: not still
    assert raised.ground_height == standing.ground_height and raised.touching == ("right",)


def test_bad_input_to_measure_is_refused(talos):
    with pytest.raises(tsid.errors.InvalidParameterError, match="PlantState"):
        Measurer(talos).measure((0.0, talos.neutral_configuration(), talos.zero_velocity()))
    with pytest.raises(tsid.errors.NonFiniteError):
        Measurer(talos).measure(PlantState(0.0, np.full(talos.nq, np.nan), talos.zero_velocity()))


def test_the_judge_reads_the_loops_measured_state_as_it_reads_a_plants(talos, rng):
    state = _moving_state(talos, rng)
    measured = Measurer(talos, state.q).measure(state)
    by_state, by_measured = (tsid.loop.BalanceJudge(talos, state.q) for _ in range(2))
    by_state.observe(state)
    by_measured.observe(measured)
    assert by_measured.last is measured
    assert by_state.last.margin == pytest.approx(measured.margin, abs=1e-15)
    np.testing.assert_allclose(by_state.last.capture_point, measured.capture_point, atol=1e-15)


# ------------------------------------------------------------------ the feet's phases
def _sideways(placement: pin.SE3, dy: float) -> pin.SE3:
    moved = pin.SE3(placement)
    moved.translation = placement.translation + np.array([0.0, dy, 0.0])
    return moved


class SideStep:
    """A toy strategy of one's own: the CoM over the right foot, and at ``at`` [s] the left foot
    steps ``dy`` [m] outward; after it lands, the CoM back between the feet. It reads only the
    measured state and the feet's public queries."""

    def __init__(self, at: float, dy: float) -> None:
        self.at, self.dy, self.asked, self.landed_at = at, dy, False, None

    def decide(self, state, feet, com):
        right, left = state.feet["right"], state.feet["left"]
        sole = tsid.load_robot("talos").spec.sole
        steps = ()
        if not self.asked and state.t >= self.at:
            start = left.placement
            swing = TrajectorySE3SwingFoot("side", start, _sideways(start, self.dy), state.t + 0.1, 0.4, 0.03)
            steps, self.asked = (StepRequest("left", swing, unload=0.1, load=0.1),), True
        if self.asked and self.landed_at is None and feet.landings:
            self.landed_at = feet.landings[-1].t
        over = (
            sole_center(sole, right.placement)
            if self.landed_at is None
            else (sole_center(sole, right.placement) + sole_center(sole, left.placement)) / 2
        )
        target = np.array([over[0], over[1], com.pos[2]])
        return Decision(TrajectorySample(target), steps)


@pytest.mark.slow
def test_a_strategy_of_ones_own_steps_sideways_on_a_timer(talos):
    """The toy strategy in a closed loop: the left foot goes through unloading, swing and stance,
    lands 5 cm out (as measured), and the robot comes to rest (the verdict, from the plant)."""
    controller = BipedController(talos, BipedParams.for_stepping(talos))  # a stiff swing foot
    start = controller.foot_placement("left").translation
    toy = SideStep(at=1.5, dy=0.05)
    controller.add_strategy(toy)
    phases = []

    class Phases(tsid.loop.StepHooks):
        def after_step(self, state, out):
            phases.append(controller.feet.phase("left"))

    outcome = ControlLoop(controller, DT).run(2000, Phases())
    assert [p for k, p in enumerate(phases) if k == 0 or p != phases[k - 1]] == [
        "stance",
        "unloading",
        "swing",
        "stance",
    ]
    landed = outcome.log.q[-1]
    measured = Measurer(talos).measure(PlantState(0.0, landed, talos.zero_velocity()))
    moved = measured.feet["left"].placement.translation - start
    assert moved[1] == pytest.approx(0.05, abs=2e-3) and abs(moved[0]) < 2e-3 and abs(moved[2]) < 2e-3
    assert toy.landed_at == pytest.approx(1.5 + 0.5, abs=DT)
    assert outcome.verdict.verdict == "recovered" and outcome.summary()["qp_failures"] == 0


def test_a_step_request_is_checked(talos):
    start = BipedController(talos).foot_placement("left")
    swing = TrajectorySE3SwingFoot("s", start, start, 0.1, 0.4, 0.03)
    with pytest.raises(tsid.errors.InvalidParameterError, match="TrajectorySE3SwingFoot"):
        StepRequest("left", start, 0.1)  # type: ignore[arg-type]
    with pytest.raises(tsid.errors.InvalidParameterError, match="unload"):
        StepRequest("left", swing, unload=-0.1)
    controller = BipedController(talos)
    measured = controller.measurer.measure(PlantState(0.0, controller.q0, talos.zero_velocity()))
    with pytest.raises(tsid.errors.UnknownNameError, match="foot"):
        controller.feet.request_step(StepRequest("middle", swing), measured)
    controller.remove_contact("left", 0.1)  # lifted by hand: no step over it
    with pytest.raises(tsid.errors.InvalidParameterError, match="lifted by hand"):
        controller.feet.request_step(StepRequest("left", swing), measured)


def test_a_strategy_that_returns_no_decision_is_named(talos):
    class Wrong:
        def decide(self, state, feet, com):
            return None

    controller = BipedController(talos)
    controller.add_strategy(Wrong())
    with pytest.raises(tsid.errors.InvalidParameterError, match="Wrong.decide returned NoneType"):
        controller.compute(0.0, controller.q0, talos.zero_velocity())
    with pytest.raises(tsid.errors.InvalidParameterError, match="decide"):
        controller.add_strategy(object())  # type: ignore[arg-type]


# ------------------------------------------------------------------ kinematics passes
PLACING = ("forwardKinematics", "computeAllTerms", "centerOfMass", "rnea", "nonLinearEffects")


def _passes_per_step(monkeypatch, run) -> list[int]:
    """The Pinocchio calls that place the joints for a q (centerOfMass given q), per control step of
    ``run`` (a step starts where the loop reads the plant's state)."""
    counts: list[int] = [0]

    def counting(function):
        def wrapper(*args, **kwargs):
            if function.__name__ != "centerOfMass" or len(args) > 2:
                counts[-1] += 1
            return function(*args, **kwargs)

        return wrapper

    for name in PLACING:
        monkeypatch.setattr(pin, name, counting(getattr(pin, name)))
    from tsid_py.loop import mujoco_plant

    state = mujoco_plant.MujocoPlant.state

    def new_step(plant):
        counts.append(0)
        return state(plant)

    monkeypatch.setattr(mujoco_plant.MujocoPlant, "state", new_step)
    run()
    return counts[2:]  # (before the first: the set-up; the first: the controller's first problem)


@pytest.mark.slow
@pytest.mark.parametrize("recovery", ["none", "step"])
def test_a_mujoco_step_places_the_joints_at_most_three_times(monkeypatch, recovery):
    """One pass for the measured state and one for the controller's problem at every step; the
    physics check at its default rate (every 10th step on MuJoCo) adds two (RNEA, and the
    nonlinear effects that scale its residual): 2.2 a step on average, the same while the recovery
    steps (it reads the measured state)."""
    pytest.importorskip("mujoco", reason="the [sim] extra (mujoco) is not installed")
    from tsid_py.scenarios import balance
    from tsid_py.scenarios.runner import LoopSetup

    pushes = (Push((0.0, 300.0, 0.0), 0.2, 0.1),) if recovery == "step" else ()
    setup = LoopSetup("mujoco", pushes=pushes, extend=False)
    summaries = []
    passes = _passes_per_step(
        monkeypatch,
        lambda: summaries.append(balance.run(duration=0.8, recovery=recovery, setup=setup).summary),
    )
    assert len(passes) > 300 and set(passes) == {2, 4}
    checked = [k for k, count in enumerate(passes) if count == 4]
    assert set(np.diff(checked).tolist()) == {10}  # exact: step indices, every 10th checked
    assert sum(passes) / len(passes) == pytest.approx(2.2, abs=0.01) and sum(passes) / len(passes) <= 3
    if recovery == "step":
        assert summaries[0]["steps_taken"]  # it stepped within the counted steps


# ------------------------------------------------------------------ who acts
def _calls(paths, names):
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in names
            ):
                yield f"{path.relative_to(PACKAGE)}:{node.lineno} {node.func.attr}"


@pytest.mark.slow
def test_only_the_controllers_switch_a_controllers_contacts():
    """No module outside controllers/ adds or removes a controller's contact (the formulation and
    problem/ have add_contact and remove_contact of their own, on the problem's structure)."""
    outside = [
        p
        for p in PACKAGE.rglob("*.py")
        if p.relative_to(PACKAGE).parts[0] not in ("controllers", "problem", "formulation.py")
    ]
    assert list(_calls(outside, {"add_contact", "remove_contact", "set_foot_reference"})) == []


def test_no_strategy_reads_a_private_name():
    strategies = list((PACKAGE / "controllers" / "strategies").glob("*.py"))
    assert len(strategies) >= 3
    private = []
    for path in strategies:
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id == "self")
            ):
                private.append(f"{path.name}:{node.lineno} .{node.attr}")
    assert private == []


# ------------------------------------------------------------------ the feet, step by step
def _at(controller, t, q=None, contacts=None):
    """The controller's measured state at t (q0 at rest by default; contacts as a plant says)."""
    robot = controller.robot
    q = controller.q0 if q is None else q
    return controller.measurer.measure(PlantState(t, q, robot.zero_velocity(), contacts or {}))


def _swing(controller, t0=0.1, duration=0.4, dy=0.05):
    start = controller.foot_placement("left")
    return TrajectorySE3SwingFoot("s", start, _sideways(start, dy), t0, duration, 0.03)


def test_a_step_lands_where_the_foot_is_measured_and_its_strategy_sees_it_at_once(talos):
    """At the planned touch-down the contact comes back where the foot is measured (here 1 cm off
    the plan: the whole robot moved), the Landing says so, and a strategy reads it at that step."""
    controller = BipedController(talos)
    feet = controller.feet
    feet.request_step(StepRequest("left", _swing(controller)), _at(controller, 0.05))  # (no unloading
    assert feet.phase("left") == "unloading" and controller.stepping  # ramp: the contact leaves at once)
    feet.drive(_at(controller, 0.2))
    assert feet.phase("left") == "swing" and feet.landings == ()
    q = controller.q0
    q[1] += 0.01
    landed = _at(controller, 0.5, q)
    (landing,) = feet.land(landed)
    measured = landed.feet["left"].translation
    np.testing.assert_allclose(landing.placement.translation, measured, atol=1e-12)
    assert np.linalg.norm(landing.placement.translation - landing.request.trajectory.end.translation) > 0.009
    assert feet.phase("left") == "stance" and feet.landed == 1 and not controller.stepping
    np.testing.assert_allclose(controller.contacts["left"].reference.translation, measured, atol=1e-12)


def test_a_step_that_lands_on_touch_goes_on_down_and_one_that_does_not_lands_on_time(talos):
    controller = BipedController(talos)
    feet, frame = controller.feet, talos.spec.feet["left"]
    air = {frame: tsid.loop.ContactMeasurement(np.zeros(6), False)}  # the plant: it does not touch
    feet.request_step(StepRequest("left", _swing(controller), land_on_touch=True), _at(controller, 0.1))
    assert feet.land(_at(controller, 0.6, contacts=air)) == ()
    feet.drive(_at(controller, 0.6, contacts=air))
    assert feet.phase("left") == "landing"
    below = controller.foot_tasks["left"].reference_placement.translation[2]
    assert below == pytest.approx(_swing(controller).end.translation[2] - 0.2 * 0.1, abs=1e-12)  # 0.1 s late
    touch = {frame: tsid.loop.ContactMeasurement(np.zeros(6), True)}
    assert len(feet.land(_at(controller, 0.62, contacts=touch))) == 1
    other = BipedController(talos)  # the same step landing on time: down at 0.5 s, touching or not
    other.feet.request_step(StepRequest("left", _swing(other)), _at(other, 0.1))
    assert len(other.feet.land(_at(other, 0.5, contacts=air))) == 1


def test_a_step_that_lands_on_touch_lands_on_an_early_touch_once_it_comes_down(talos):
    """Swing 0.1-0.5 s, the foot measured off the ground at 0.2 s: a touch at 0.31 s with the sole
    tilted 0.1 rad (on an edge) is no landing; a flat one at 0.32 s (the second half of the swing:
    the ground higher than the foot was told) is, where the foot is measured. No early landing for
    a foot never seen off the ground, for a touch the plant does not measure (the height rule), or
    for a step that lands at its planned time."""

    def touch_of(frame, touching):
        return {frame: tsid.loop.ContactMeasurement(np.zeros(6), touching)}

    controller = BipedController(talos)
    feet, frame = controller.feet, talos.spec.feet["left"]
    touch, air = touch_of(frame, True), touch_of(frame, False)
    feet.request_step(StepRequest("left", _swing(controller), land_on_touch=True), _at(controller, 0.1))
    assert feet.land(_at(controller, 0.2, contacts=air)) == ()
    tilted = controller.q0
    tilted[3:7] = pin.Quaternion(pin.rpy.rpyToMatrix(0.0, 0.1, 0.0)).coeffs()  # the whole robot, 0.1 rad
    assert feet.land(_at(controller, 0.31, tilted, contacts=touch)) == ()  # on an edge: it goes on
    moved = controller.q0
    moved[1] += 0.01  # the robot 1 cm aside: the foot is not where its swing ends
    (landing,) = feet.land(_at(controller, 0.32, moved, contacts=touch))
    measured = _at(controller, 0.32, moved).feet["left"].translation
    np.testing.assert_allclose(landing.placement.translation, measured, atol=1e-12)
    assert np.linalg.norm(measured - landing.request.trajectory.end.translation) > 0.009
    assert landing.t == pytest.approx(0.32) and feet.phase("left") == "stance" and not controller.stepping
    for first, then in ((touch, touch), (air, None)):  # never off the ground; a touch not measured
        other = BipedController(talos)
        other.feet.request_step(StepRequest("left", _swing(other), land_on_touch=True), _at(other, 0.1))
        other.feet.land(_at(other, 0.2, contacts=first))
        assert other.feet.land(_at(other, 0.32, contacts=then)) == () and other.stepping
    on_time = BipedController(talos)
    on_time.feet.request_step(StepRequest("left", _swing(on_time)), _at(on_time, 0.1))
    on_time.feet.land(_at(on_time, 0.2, contacts=air))
    assert on_time.feet.land(_at(on_time, 0.32, contacts=touch)) == () and on_time.stepping


def test_footsteps_count_a_landing_at_the_step_it_happens(talos):
    """The footstep plan's strategy reads a touch-down at its control step (the run's last step
    too), with its distance from the target."""
    from tsid_py.controllers import Footsteps
    from tsid_py.planning.footsteps import Footstep, FootstepPlan

    controller = BipedController(talos)
    start = controller.foot_placement("left")
    right = controller.foot_placement("right")
    steps = [Footstep("left", start, start, 0.2, 0.4)]
    zmp = np.zeros((2, 2))
    plan = FootstepPlan(talos.spec.sole, {"right": right, "left": start}, steps, [0.0, 0.5], zmp, 0.5)
    footsteps = Footsteps(plan, 0.02, 0.0, 0.1)
    controller.add_strategy(footsteps)
    for t in (0.1, 0.2, 0.3):
        controller.observe(_at(controller, t))
    assert footsteps.landed == 0 and controller.feet.phase("left") == "swing"
    controller.observe(_at(controller, 0.4))
    assert footsteps.landed == 1 and footsteps.touchdown_errors["left"] == [pytest.approx(0.0, abs=1e-9)]


def test_a_com_reference_a_strategy_gave_once_gives_way_to_the_callers(talos):
    class Once:
        def __init__(self):
            self.calls = 0

        def decide(self, state, feet, com):
            self.calls += 1
            return Decision(TrajectorySample(com.pos + 0.1) if self.calls == 1 else None)

    controller = BipedController(talos)
    controller.add_strategy(Once())
    nominal = controller.com_initial
    controller.observe(_at(controller, 0.0))
    np.testing.assert_allclose(controller.com_task.reference.pos, nominal + 0.1, atol=1e-12)
    controller.observe(_at(controller, 0.002))
    np.testing.assert_allclose(controller.com_task.reference.pos, nominal, atol=1e-12)


def test_a_chosen_step_follows_the_capture_point_only_early_in_its_swing(talos):
    """Within the first ``replan`` of the swing a chosen step's landing follows the capture point
    (a new request for the same swing); past it, the landing holds."""
    controller = BipedController(talos, recovery="step")
    recovery, q0 = controller.recovery, controller.q0

    def pushed(t, speed):  # the whole robot moving forward at ``speed`` [m/s]
        v = talos.zero_velocity()
        rotation = pin.Quaternion(q0[6], *q0[3:6]).toRotationMatrix()
        v[:3] = rotation.T @ np.array([speed, 0.0, 0.0])
        controller.observe(PlantState(t, q0, v))

    pushed(0.5, 0.4)
    side = recovery.stepping_side
    first = controller.feet.request(side)
    lift, swing = first.t_lift, recovery.params.swing_time
    pushed(lift + 0.3 * swing, 0.7)  # early: it follows a harder push forward
    early = controller.feet.request(side)
    further = early.trajectory.end.translation[0] - first.trajectory.end.translation[0]
    assert early is not first and further > 0.1 and early.trajectory.t0 == first.trajectory.t0  # exact: kept
    pushed(lift + 0.8 * swing, 0.9)  # late: it holds
    assert controller.feet.request(side) is early


def test_the_feet_hand_out_nothing_of_their_own(talos):
    controller = BipedController(talos)
    swing = _swing(controller)
    request = StepRequest("left", swing)
    controller.feet.request_step(request, _at(controller, 0.05))
    swing.duration = 50.0  # the caller's trajectory changes: the step does not
    assert controller.feet.request("left").t_land == pytest.approx(0.5, abs=1e-12)
    (landing,) = controller.feet.land(_at(controller, 0.5))
    landing.placement.translation[0] += 1.0
    assert abs(controller.feet.landings[0].placement.translation[0] - landing.placement.translation[0]) < 1.0
    measured = _at(controller, 0.6)
    measured.feet["left"].placement.translation[0] += 1.0  # a copy
    assert measured.feet["left"].translation[0] == pytest.approx(
        controller.foot_placement("left").translation[0]
    )
    with pytest.raises(ValueError, match="read-only"):
        measured.feet["left"].translation[0] = 0.0


def test_the_measured_state_keeps_its_own_copy_of_the_plants_contacts(talos):
    q0, frame = BipedController(talos).q0, talos.spec.feet["left"]
    points = np.array([[0.0, 0.1, 0.0], [0.1, 0.1, 0.0], [0.1, 0.2, 0.0]])
    contact = tsid.loop.ContactMeasurement(np.ones(6), True, points=points)
    measured = Measurer(talos, q0).measure(PlantState(0.0, q0, talos.zero_velocity(), {frame: contact}))
    points[0, 0], contact.wrench[2] = 5.0, 99.0  # the plant's arrays change: the measured state's do not
    assert measured.feet["left"].ground[0, 0] == pytest.approx(0.0, abs=1e-15)
    assert measured.contacts[frame].wrench[2] == pytest.approx(1.0, abs=1e-15)
    assert points.flags.writeable and contact.wrench.flags.writeable  # the plant's are left as they were


@pytest.mark.parametrize(
    "make, error, words",
    [
        (lambda c: StepRequest(3, _swing(c)), tsid.errors.InvalidParameterError, "side"),
        (
            lambda c: StepRequest("left", _swing(c), planned=None),
            tsid.errors.InvalidParameterError,
            "planned",
        ),
        (
            lambda c: c.add_strategy(type("D", (), {"decide": 3})()),
            tsid.errors.InvalidParameterError,
            "decide",
        ),
        (
            lambda c: c.add_strategy(type("D", (), {"decide": lambda self: 0})()),
            tsid.errors.InvalidParameterError,
            "decide",
        ),
        (lambda c: Measurer(None), tsid.errors.InvalidParameterError, "RobotWrapper"),
        (lambda c: Measurer(c.robot, [1.0, 2.0]), tsid.errors.DimensionError, "q"),
    ],
)
def test_bad_input_to_the_feet_and_strategies_is_named(talos, make, error, words):
    with pytest.raises(error, match=words):
        make(BipedController(talos))


@pytest.mark.slow
def test_a_quadrupeds_feet_take_no_step(solo12):
    controller = tsid.controllers.QuadrupedController(solo12)
    key = next(iter(solo12.spec.feet))
    start = controller.foot_placement(key)
    swing = TrajectorySE3SwingFoot("s", start, start, 0.1, 0.2, 0.02)
    with pytest.raises(tsid.errors.InvalidParameterError, match="no foot task: it stays down"):
        controller.feet.request_step(StepRequest(key, swing), _at(controller, 0.0))
