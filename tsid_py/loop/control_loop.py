"""ControlLoop: the one closed loop of every scenario, demo and the CLI.

    for each control period dt:  state = plant.state(); t, q, v = state.t, state.q, state.v
                                 pushes due at t go to the plant
                                 controller.observe(state)         (contact feedback)
                                 hooks.before_step(t, q, v)        (references, contact switches)
                                 out = controller.compute(t, q, v)
                                 physics check of out, log
                                 hooks.after_step(t, q, v, out)     (the scenario's measurements)
                                 plant.apply(command(out)); plant.advance(dt)

The command is the torque (``mode="torque"``), or in ``mode="position"`` the joint targets one
period ahead, v_des = v + dv dt and q_des = q (+) v_des dt on the manifold from the measured state,
with the torque as feed-forward (:class:`~tsid_py.loop.plant.Command`). Integrating the targets
from the measured state, not from the previous targets, keeps them from drifting away from the
robot when the plant does not realise dv exactly (compliant contacts, joint friction): TSID's
issue 137, where targets integrated open loop "do not work in PyBullet".

The run stops when the robot fell, as the plant measures it: the base below half its initial
height, or no foot touching for ``AIRBORNE_TIME`` while the plant measures contacts.

The plant is a parameter (:class:`~tsid_py.loop.plant.IntegratorPlant` by default). A QP failure
the controller does not hold through (its ``hold_steps`` policy) ends the run, is counted, and its
cause is kept in the outcome; a held step is counted and the run goes on with the held command.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tsid_py.errors import InvalidParameterError, SolverFailedError
from tsid_py.integration import integrate
from tsid_py.loop.controller import Controller, ControlOutput, frozen_heap
from tsid_py.loop.log import RunLog
from tsid_py.loop.plant import COMMAND_MODES, Command, IntegratorPlant, Plant, Push
from tsid_py.physics import WorstChecks, check_solution
from tsid_py.progress import progress_bar
from tsid_py.validation import as_count, as_scalar

AIRBORNE_TIME = 0.2  # [s] with no foot touching (as measured) and the robot is considered fallen
MAX_DT = 0.02  # [s] a 50 Hz loop; sqrt(kp) dt < 1 needs dt < 30 ms already at kp = 1000 1/s^2

Observer = Callable[[object, RunLog], None]  # called with (controller, log) after every logged step


class StepHooks:
    """What a scenario does around each control step (nothing by default)."""

    def before_step(self, t: float, q: np.ndarray, v: np.ndarray) -> None:
        """Set references or switch contacts for the step at time t [s] from the state (q, v)."""

    def after_step(self, t: float, q: np.ndarray, v: np.ndarray, out: ControlOutput) -> None:
        """Measure and record what the step did (``out`` solved)."""


@dataclass
class LoopOutcome:
    """What a run of the loop leaves: its log, the physics check of every step, the time of every
    control step [s], the number of QP failures (held ones included) and, when a failure ended
    the run, its cause (one line)."""

    log: RunLog
    checks: WorstChecks = field(default_factory=WorstChecks)
    step_times: array = field(default_factory=lambda: array("d"))  # [s], 8 bytes a step
    qp_failures: int = 0
    failure: str = ""
    fell: bool = False
    steps: int = 0  # control steps logged (the log itself may keep only a window of them)
    simulated_time: float = 0.0
    wall_time: float = 0.0

    def summary(self) -> dict[str, object]:
        """The entries every scenario's JSON summary shares."""
        return {
            "steps": self.steps,
            "qp_failures": self.qp_failures,
            "qp_failure": self.failure or None,
            "fell": self.fell or bool(self.failure),
            "real_time_factor": self.simulated_time / self.wall_time if self.wall_time > 0 else None,
            "physics_checks": self.checks.count,
            **self.checks.summary(),
            **step_time_summary(self.step_times),
        }


class ControlLoop:
    """A controller driving a plant at period ``dt`` [s], every step logged and checked.

    Args:
        controller: Any :class:`~tsid_py.loop.controller.Controller`.
        dt: Control period [s].
        plant: What the commands drive; :class:`IntegratorPlant` of the controller's robot by default.
        log: Where the steps are recorded (a scenario may pass a :class:`RunLog` subclass).
        mode: "torque" or "position" (see the module docstring).
        pushes: Forces on the base the plant applies during the run (:class:`Push`).
        check_every: Check the controller's solution against the physics
            (:func:`~tsid_py.physics.check_solution`: RNEA residual, contact forces, torque
            limits) every ``check_every`` steps, 0 never. Every step by default; a check costs
            about half a Talos control step, so a loop that runs against the clock on a simulator,
            which measures the physics itself, may space them out. Steps 0, N, 2N, ... are
            checked; a held command (a failed solve) on one of them is not checked.
    """

    def __init__(
        self,
        controller: Controller,
        dt: float,
        plant: Plant | None = None,
        log: RunLog | None = None,
        mode: str = "torque",
        pushes: tuple[Push, ...] = (),
        check_every: int = 1,
    ) -> None:
        self.controller = controller
        self.check_every = as_count("check_every", check_every, minimum=0)
        self.dt = as_scalar("dt", dt, minimum=0.0, strict=True)
        if self.dt > MAX_DT:
            raise InvalidParameterError(
                f"dt = {self.dt:g} s is above {MAX_DT:g} s: the contact and task PD loops "
                "(kp ~ 10-1000 1/s^2) are not stable at that period; TSID's examples run at 1-2 ms"
            )
        self.plant = IntegratorPlant(controller.robot) if plant is None else plant
        self.log = RunLog() if log is None else log
        if mode not in COMMAND_MODES:
            raise InvalidParameterError(f"mode must be one of {COMMAND_MODES}, got {mode!r}")
        self.mode = mode
        self.pushes = tuple(sorted(pushes, key=lambda push: push.t))

    def run(
        self,
        steps: int,
        hooks: StepHooks | None = None,
        progress: bool = False,
        label: str = "run",
        observer: Observer | None = None,
    ) -> LoopOutcome:
        """Run ``steps`` control steps from the controller's q0 at rest (the objects made before,
        out of the garbage collector's sight: :func:`~tsid_py.loop.controller.frozen_heap`)."""
        with frozen_heap():
            return self._run(steps, hooks, progress, label, observer)

    def _run(
        self, steps: int, hooks: StepHooks | None, progress: bool, label: str, observer: Observer | None
    ) -> LoopOutcome:
        controller, plant, dt = self.controller, self.plant, self.dt
        robot = controller.robot
        hooks = StepHooks() if hooks is None else hooks
        outcome = LoopOutcome(self.log)
        check_data = robot.create_data()  # one scratch Data for the checks, not a new one per step
        tau_max = controller.tau_max
        q0 = controller.q0
        plant.reset(q0, robot.zero_velocity())
        pushes, airborne, started = list(self.pushes), 0.0, time.perf_counter()
        for _ in progress_bar(range(steps), progress, label):
            state = plant.state()
            t, q, v = state.t, state.q, state.v
            if outcome.steps == 0:
                t_start = t
            outcome.simulated_time = t - t_start
            while pushes and pushes[0].t <= t + 1e-9:
                push = pushes.pop(0)
                plant.push(np.array(push.force), push.duration)
            airborne = (
                airborne + dt
                if state.contacts and not any(c.touching for c in state.contacts.values())
                else 0.0
            )
            if (not robot.is_fixed_base and q[2] < 0.5 * q0[2]) or airborne >= AIRBORNE_TIME:
                outcome.fell = True
                break
            controller.observe(state)
            hooks.before_step(t, q, v)
            start = time.perf_counter()
            try:
                out = controller.compute(t, q, v)
            except SolverFailedError as error:
                outcome.qp_failures += 1
                outcome.failure = str(error)
                break
            outcome.step_times.append(time.perf_counter() - start)
            outcome.qp_failures += out.held
            # every check_every-th step (a held command solved another state: nothing to check)
            if not out.held and self.check_every and outcome.steps % self.check_every == 0:
                contacts = {
                    name: (controller.formulation.contacts[name], f) for name, f in out.forces.items()
                }
                external = _measured_joint_forces(controller)
                outcome.checks.add(
                    check_solution(robot, q, v, out.dv, out.tau, contacts, tau_max, check_data, external)
                )
            q_des, v_des = integrate(robot, q, v, out.dv, dt)  # the plan for t + dt: logged, position targets
            self.log.record_step(t, q, v, out, state.contacts, q_des)
            outcome.steps += 1
            hooks.after_step(t, q, v, out)
            if observer is not None:
                observer(controller, self.log)
            if self.mode == "torque":
                command = Command(out.tau.copy(), out.dv.copy())  # the plant's own: the log keeps out's
            else:
                command = Command(
                    out.tau.copy(),
                    out.dv.copy(),
                    q_des[robot.nq - robot.nq_actuated :],
                    v_des[robot.nv - robot.na :],
                )
            plant.apply(command)
            plant.advance(dt)
        outcome.wall_time = time.perf_counter() - started
        return outcome


def _measured_joint_forces(controller: Controller) -> np.ndarray | None:
    """sum J^T w of the formulation's measured or prescribed wrenches at this step (None if none),
    from the controller's data, filled at this step's state."""
    measured = controller.formulation.measured_forces
    if not measured:
        return None
    return sum(m.compute_joint_torques(controller.data) for m in measured.values())


def step_time_summary(step_times: array | list[float]) -> dict[str, float]:
    """Median and 99th percentile of the control-step times [us] (solve and accessors, no checks)."""
    if not step_times:
        return {"step_time_median_us": float("nan"), "step_time_p99_us": float("nan")}
    us = 1e6 * np.asarray(step_times)
    return {"step_time_median_us": float(np.median(us)), "step_time_p99_us": float(np.percentile(us, 99))}
