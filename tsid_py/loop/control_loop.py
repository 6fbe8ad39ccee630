"""ControlLoop: the one closed loop of every scenario, demo and the CLI.

    for each control period dt:  t, q, v = plant.state()
                                 hooks.before_step(t, q, v)        (references, contact switches)
                                 out = controller.compute(t, q, v)
                                 physics check of out, log
                                 hooks.after_step(t, q, v, out)     (the scenario's measurements)
                                 plant.apply(Command(out.tau, out.dv)); plant.advance(dt)

The plant is a parameter (:class:`~tsid_py.loop.plant.IntegratorPlant` by default). A QP failure
the controller does not hold through (its ``hold_steps`` policy) ends the run, is counted, and its
cause is kept in the outcome; a held step is counted and the run goes on with the held command.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tsid_py.errors import InvalidParameterError, SolverFailedError
from tsid_py.loop.controller import Controller, ControlOutput
from tsid_py.loop.log import RunLog
from tsid_py.loop.plant import Command, IntegratorPlant, Plant
from tsid_py.physics import SolutionCheck, check_solution, summarize_checks
from tsid_py.progress import progress_bar
from tsid_py.validation import as_scalar

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
    checks: list[SolutionCheck] = field(default_factory=list)
    step_times: list[float] = field(default_factory=list)
    qp_failures: int = 0
    failure: str = ""

    def summary(self) -> dict[str, object]:
        """The entries every scenario's JSON summary shares."""
        return {
            "steps": len(self.log.t),
            "qp_failures": self.qp_failures,
            "qp_failure": self.failure or None,
            **summarize_checks(self.checks),
            **step_time_summary(self.step_times),
        }


class ControlLoop:
    """A controller driving a plant at period ``dt`` [s], every step logged and checked.

    Args:
        controller: Any :class:`~tsid_py.loop.controller.Controller`.
        dt: Control period [s].
        plant: What the commands drive; :class:`IntegratorPlant` of the controller's robot by default.
        log: Where the steps are recorded (a scenario may pass a :class:`RunLog` subclass).
    """

    def __init__(
        self, controller: Controller, dt: float, plant: Plant | None = None, log: RunLog | None = None
    ) -> None:
        self.controller = controller
        self.dt = as_scalar("dt", dt, minimum=0.0, strict=True)
        if self.dt > MAX_DT:
            raise InvalidParameterError(
                f"dt = {self.dt:g} s is above {MAX_DT:g} s: the contact and task PD loops "
                "(kp ~ 10-1000 1/s^2) are not stable at that period; TSID's examples run at 1-2 ms"
            )
        self.plant = IntegratorPlant(controller.robot) if plant is None else plant
        self.log = RunLog() if log is None else log

    def run(
        self,
        steps: int,
        hooks: StepHooks | None = None,
        progress: bool = False,
        label: str = "run",
        observer: Observer | None = None,
    ) -> LoopOutcome:
        """Run ``steps`` control steps from the controller's q0 at rest."""
        controller, plant, dt = self.controller, self.plant, self.dt
        robot = controller.robot
        hooks = StepHooks() if hooks is None else hooks
        outcome = LoopOutcome(self.log)
        check_data = robot.create_data()  # one scratch Data for the checks, not a new one per step
        tau_max = controller.tau_max
        plant.reset(controller.q0, robot.zero_velocity())
        for _ in progress_bar(range(steps), progress, label):
            state = plant.state()
            t, q, v = state.t, state.q, state.v
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
            if not out.held:  # a held command solved another state: nothing to check it against
                contacts = {
                    name: (controller.formulation.contacts[name], f) for name, f in out.forces.items()
                }
                outcome.checks.append(
                    check_solution(robot, q, v, out.dv, out.tau, contacts, tau_max, check_data)
                )
            self.log.record_step(t, q, v, out)
            hooks.after_step(t, q, v, out)
            if observer is not None:
                observer(controller, self.log)
            plant.apply(Command(out.tau.copy(), out.dv.copy()))  # the plant's own: the log keeps out's
            plant.advance(dt)
        return outcome


def step_time_summary(step_times: list[float]) -> dict[str, float]:
    """Median and 99th percentile of the control-step times [us] (solve and accessors, no checks)."""
    if not step_times:
        return {"step_time_median_us": float("nan"), "step_time_p99_us": float("nan")}
    us = 1e6 * np.asarray(step_times)
    return {"step_time_median_us": float(np.median(us)), "step_time_p99_us": float(np.percentile(us, 99))}
