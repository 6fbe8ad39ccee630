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
    q = controller.q0
    q[2] += 2 * TOUCH_TOLERANCE  # both soles 1 cm up
    measurer = Measurer(talos, controller.q0)
    up = measurer.measure(PlantState(0.0, q, talos.zero_velocity()))
    assert up.touching == () and up.margin == -math.inf
    contact = tsid.loop.ContactMeasurement(np.zeros(6), True)  # the plant says the right one touches
    told = measurer.measure(PlantState(0.0, q, talos.zero_velocity(), {talos.spec.feet["right"]: contact}))
    assert told.touching == ("right",) and told.feet["left"].measurement is None


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
