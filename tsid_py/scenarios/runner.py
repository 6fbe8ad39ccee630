"""Closed-loop runs of a controller, their per-step physics checks and the JSON summary.

The loop is the one of TSID's exercises: compute the references, solve, integrate dv on the
manifold (:func:`tsid_py.integrate`), repeat. A QP failure ends the run (the robot is
considered fallen) and is counted in ``qp_failures``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from tsid_py.controllers.biped import BipedController, ControlOutput
from tsid_py.controllers.quadruped import QuadrupedController
from tsid_py.integration import integrate
from tsid_py.physics import check_solution, summarize_checks
from tsid_py.progress import progress_bar
from tsid_py.trajectories import TrajectoryEuclidianSinusoid, TrajectorySample
from tsid_py.validation import as_scalar


@dataclass
class RunLog:
    """Per-step records of a run; arrays are shaped (steps, n)."""

    t: list[float] = field(default_factory=list)
    q: list[np.ndarray] = field(default_factory=list)
    v: list[np.ndarray] = field(default_factory=list)
    dv: list[np.ndarray] = field(default_factory=list)
    tau: list[np.ndarray] = field(default_factory=list)
    com: list[np.ndarray] = field(default_factory=list)
    com_ref: list[np.ndarray] = field(default_factory=list)
    forces: dict[str, list[np.ndarray]] = field(default_factory=dict)

    def record_step(self, t: float, q: np.ndarray, v: np.ndarray, out: ControlOutput) -> None:
        """The state (t [s], q, v) a control step started from and its dv and tau."""
        self.t.append(t)
        self.q.append(q)
        self.v.append(v)
        self.dv.append(out.dv)
        self.tau.append(out.tau)

    def arrays(self) -> dict[str, np.ndarray]:
        """Every series as a NumPy array (forces as ``forces/<contact>``)."""
        out = {name: np.array(getattr(self, name)) for name in ("t", "q", "v", "dv", "tau", "com", "com_ref")}
        out.update({f"forces/{name}": np.array(values) for name, values in self.forces.items()})
        return out


class StepController(Protocol):
    """What a scenario drives: one control step at (t, q, v) (the biped, quadruped and arm controllers)."""

    def compute(self, t: float, q: np.ndarray, v: np.ndarray) -> ControlOutput: ...


Observer = Callable[[object, RunLog], None]  # called with (controller, log) after every logged step


@dataclass
class RunResult:
    """The JSON summary, the per-step log and the controller that ran (for viewers and plots)."""

    summary: dict[str, object]
    log: RunLog
    controller: object | None = None


def run_biped(
    controller: BipedController | QuadrupedController,
    duration: float,
    dt: float,
    com_reference: Callable[[float], TrajectorySample],
    scenario: str,
    progress: bool = False,
    observer: Observer | None = None,
) -> RunResult:
    """Run a legged controller in closed loop for ``duration`` seconds at period ``dt``.

    Args:
        controller: A biped, or any controller with its interface (e.g. the quadruped's).
        com_reference: CoM reference as a function of time.
        scenario: Name reported in the summary.
        progress: Show a progress bar on stderr.
        observer: Called with (controller, log) after every logged step (e.g. a live viewer).
    """
    duration = as_scalar("duration", duration, minimum=0.0, strict=True)
    dt = as_scalar("dt", dt, minimum=0.0, strict=True)
    robot = controller.robot
    steps = int(round(duration / dt))
    q, v = controller.q0.copy(), robot.zero_velocity()
    feet_reference = {side: c.reference.translation.copy() for side, c in controller.contacts.items()}
    log = RunLog(forces={c.name: [] for c in controller.contacts.values()})
    checks, step_times, foot_drift, failures = [], [], 0.0, 0
    check_data = robot.create_data()  # one scratch Data for the checks, not a new one per step
    for i in progress_bar(range(steps), progress, scenario):
        t = i * dt
        reference = com_reference(t)
        controller.set_com_reference(reference)
        out = timed_compute(controller, t, q, v, step_times)
        if not out.solution.ok:
            failures += 1
            break
        contacts = {name: (controller.formulation.contacts[name], f) for name, f in out.forces.items()}
        checks.append(check_solution(robot, q, v, out.dv, out.tau, contacts, controller.tau_max, check_data))
        log.record_step(t, q, v, out)
        log.com.append(robot.com(controller.data).copy())
        log.com_ref.append(reference.pos.copy())
        for name, f in out.forces.items():
            log.forces[name].append(f)
        for side, target in feet_reference.items():
            foot_drift = max(
                foot_drift, float(np.linalg.norm(controller.foot_placement(side).translation - target))
            )
        if observer is not None:
            observer(controller, log)
        q, v = integrate(robot, q, v, out.dv, dt)

    com_error = np.linalg.norm(np.array(log.com) - np.array(log.com_ref), axis=1) if log.com else np.zeros(1)
    summary = {
        "robot": robot.name,
        "scenario": scenario,
        "dt_s": dt,
        "duration_s": duration,
        "steps": len(log.t),
        "qp_failures": failures,
        "com_error_max_m": float(com_error.max()),
        "com_error_rms_m": float(np.sqrt(np.mean(com_error**2))),
        "foot_drift_max_m": foot_drift,
        **summarize_checks(checks),
        **step_time_summary(step_times),
    }
    return RunResult(summary, log, controller)


def run_sway(
    controller: object,
    duration: float,
    dt: float,
    amplitude: float,
    frequency: float,
    scenario: str,
    progress: bool = False,
    observer: Observer | None = None,
) -> RunResult:
    """Sway the CoM along y, c(t) = c0 + a sin(2 pi f t) e_y (a [m], f [Hz]), with :func:`run_biped`."""
    sway = TrajectoryEuclidianSinusoid(
        "com", controller.com_initial, [0.0, amplitude, 0.0], [0.0, frequency, 0.0]
    )
    return run_biped(controller, duration, dt, sway.sample, scenario, progress, observer)


def timed_compute(
    controller: StepController, t: float, q: np.ndarray, v: np.ndarray, step_times: list[float]
) -> ControlOutput:
    """``controller.compute(t, q, v)``, its duration [s] appended to ``step_times``: the control step
    a scenario reports, without the checks and the logging around it."""
    start = time.perf_counter()
    out = controller.compute(t, q, v)
    step_times.append(time.perf_counter() - start)
    return out


def step_time_summary(step_times: list[float]) -> dict[str, float]:
    """Median and 99th percentile of the control-step times [us] (solve and accessors, no checks)."""
    if not step_times:
        return {"step_time_median_us": float("nan"), "step_time_p99_us": float("nan")}
    us = 1e6 * np.asarray(step_times)
    return {"step_time_median_us": float(np.median(us)), "step_time_p99_us": float(np.percentile(us, 99))}
