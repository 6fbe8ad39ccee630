"""The closed loop: the plant is a parameter, its measured state drives the controller."""

from __future__ import annotations

import numpy as np
import pytest

import tsid_py as tsid
from tsid_py.controllers import BipedController
from tsid_py.loop import Command, ControlLoop, IntegratorPlant, Plant, PlantState, StepHooks
from tsid_py.loop.control_loop import control_steps

DT = 0.002


def test_the_integrator_plant_integrates_dv_and_keeps_exact_time(talos, rng):
    plant = IntegratorPlant(talos)
    q0, v0 = talos.default_configuration(), 0.1 * rng.standard_normal(talos.nv)
    plant.reset(q0, v0, t=1.0)
    dv = rng.standard_normal(talos.nv)
    plant.apply(Command(np.zeros(talos.na), dv))
    plant.advance(DT)
    q1, v1 = tsid.integrate(talos, q0, v0, dv, DT)
    state = plant.state()
    np.testing.assert_array_equal(state.q, q1)  # exact: tsid.integrate, the same inputs
    np.testing.assert_array_equal(state.v, v1)  # exact: tsid.integrate, the same inputs
    state.q[:] = 0.0  # the caller's copy
    assert plant.state().q[2] == q1[2]  # exact: untouched by the write
    for _ in range(9999):
        plant.advance(DT)
    assert plant.state().t == 1.0 + 10000 * DT  # exact: t0 + n dt, no sum of rounding errors


class Recording(Plant):
    """A plant of one's own: an integrator that lags the command by one step, and records the calls."""

    def __init__(self, robot: tsid.RobotWrapper) -> None:
        self.inner, self.calls, self.pending = IntegratorPlant(robot), [], None

    def reset(self, q, v, t=0.0):
        self.calls.append("reset")
        self.inner.reset(q, v, t + 10.0)  # a clock of its own

    def apply(self, command):
        self.calls.append("apply")
        previous, self.pending = self.pending, command
        self.inner.apply(previous or Command(command.tau, np.zeros_like(command.dv)))

    def advance(self, dt):
        self.calls.append("advance")
        self.inner.advance(dt)

    def state(self) -> PlantState:
        self.calls.append("state")
        return self.inner.state()


class Times(StepHooks):
    def __init__(self) -> None:
        self.seen = []

    def before_step(self, state):
        t = state.t
        self.seen.append(t)


def test_the_loop_drives_any_plant_and_reads_its_state(talos):
    controller = BipedController(talos)
    plant, hooks = Recording(talos), Times()
    outcome = ControlLoop(controller, DT, plant).run(5, hooks)
    assert plant.calls == ["reset"] + ["state", "apply", "advance"] * 5
    assert hooks.seen == [10.0 + i * DT for i in range(5)]  # exact: the plant's t0 + n dt, not the loop's
    assert outcome.log.t == hooks.seen
    np.testing.assert_array_equal(outcome.log.q[1], controller.q0)  # exact: the lagging plant did not move


def test_the_physics_checks_can_be_spaced_out(talos, monkeypatch):
    """check_every = k checks steps 0, k, 2k, ... (the summary counts them; 0: none, NaN worsts);
    the worst residual over the checked steps is that of checking every step at those steps."""
    from tsid_py.physics import SolutionChecker

    controller = BipedController(talos)
    every = ControlLoop(controller, DT).run(12).summary()
    assert every["physics_checks"] == 12 and every["dynamics_residual_max"] < 1e-8
    checked_states, check = [], SolutionChecker.check

    def recording_check(checker, q, v, *args):
        checked_states.append(q.copy())
        return check(checker, q, v, *args)

    monkeypatch.setattr(SolutionChecker, "check", recording_check)
    outcome = ControlLoop(BipedController(talos), DT, check_every=5).run(12)
    spaced = outcome.summary()
    assert spaced["physics_checks"] == 3  # steps 0, 5, 10, and those exactly
    for step, q in zip((0, 5, 10), checked_states, strict=True):
        np.testing.assert_array_equal(q, outcome.log.q[step])  # exact: copies
    assert 0 < spaced["dynamics_residual_max"] <= every["dynamics_residual_max"]
    unchecked = ControlLoop(BipedController(talos), DT, check_every=0).run(12)
    never = unchecked.summary()
    assert never["physics_checks"] == 0 and np.isnan(never["dynamics_residual_max"])
    # the torque ratio is an outcome of every step, whatever the check's rate
    tau_max = BipedController(talos).tau_max
    limited = np.isfinite(tau_max)
    worst = max(float(np.max(np.abs(tau[limited]) / tau_max[limited])) for tau in unchecked.log.tau)
    assert never["max_torque_ratio"] == pytest.approx(worst, rel=1e-12) and worst > 0.0
    assert never["max_torque_ratio"] == pytest.approx(every["max_torque_ratio"], rel=1e-9)
    assert never["steps"] == spaced["steps"] == 12
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(tsid.errors.InvalidParameterError, match="check_every"):
            ControlLoop(controller, DT, check_every=bad)


class Commands(IntegratorPlant):
    """An integrator that keeps every command and the state each was computed from."""

    def __init__(self, robot: tsid.RobotWrapper) -> None:
        super().__init__(robot)
        self.commands: list[tuple[PlantState, Command]] = []
        self._state: PlantState | None = None

    def state(self) -> PlantState:
        self._state = super().state()
        return self._state

    def apply(self, command: Command) -> None:
        self.commands.append((self._state, command))
        super().apply(command)


def test_position_mode_sends_the_state_integrated_one_period_ahead(ur5):
    """q_des = q (+) (v + dv dt / 2) dt and v_des = v + dv dt from the measured state, with tau as the
    feed-forward: the targets lead the measured state by a period (not the measured q itself)."""
    from tsid_py.controllers import ArmController
    from tsid_py.integration import integrate

    arm = ArmController(ur5, DT)
    target = arm.ee_placement().translation + np.array([0.1, 0.0, 0.0])
    arm.set_ee_reference(tsid.TrajectorySample(target))
    plant = Commands(ur5)
    ControlLoop(arm, DT, plant, mode="position").run(40)
    led = 0.0
    for state, command in plant.commands:
        assert command.mode == "position"
        q_des, v_des = integrate(ur5, state.q, state.v, command.dv, DT)
        np.testing.assert_allclose(command.q_des, q_des, rtol=0.0, atol=1e-12)
        np.testing.assert_allclose(command.v_des, v_des, rtol=0.0, atol=1e-12)
        led = max(led, float(np.abs(command.q_des - state.q).max()))
    assert led > 1e-4  # the arm moved: a target equal to the measured q would differ by this


def test_a_loop_runs_once(talos):
    """A second run would start from the state the first left in the controller (and append to
    its log): refused, not a different run under the same name."""
    loop = ControlLoop(BipedController(talos), DT)
    first = loop.run(3)
    with pytest.raises(tsid.errors.InvalidParameterError, match="has run already"):
        loop.run(3)
    assert first.steps == 3 and len(loop.log.t) == 3  # the log holds the first run's steps only


def test_a_run_has_at_least_one_control_step_and_at_most_max_steps():
    assert control_steps(0.002, 0.002) == 1
    assert control_steps(1.0, 0.002) == 500
    with pytest.raises(tsid.errors.InvalidParameterError, match="shorter than one control period"):
        control_steps(0.001, 0.002)
    with pytest.raises(tsid.errors.InvalidParameterError, match="the most a run may take"):
        control_steps(1e308, 0.002)
    with pytest.raises(tsid.errors.InvalidParameterError, match="duration must be > 0"):
        control_steps(0.0, 0.002)
