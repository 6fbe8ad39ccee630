"""Closed-loop runs of a legged controller holding or moving its CoM, and their JSON summary.

The loop is :class:`~tsid_py.loop.ControlLoop` (compute the references, solve, step the plant,
repeat); this module adds what a balance run sets and measures: the CoM reference at every step,
the CoM and its reference, each contact's forces and the drift of the feet from where they are
held.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np

from tsid_py.controllers.biped import BipedController
from tsid_py.controllers.quadruped import QuadrupedController
from tsid_py.errors import InvalidParameterError
from tsid_py.geometry import SupportPolygon
from tsid_py.loop.control_loop import ControlLoop, Observer, StepHooks, control_steps
from tsid_py.loop.controller import ControlOutput
from tsid_py.loop.log import RunLog
from tsid_py.loop.measured import MeasuredState
from tsid_py.loop.plant import Push
from tsid_py.loop.plants import make_plant
from tsid_py.loop.sensing import SENSINGS
from tsid_py.loop.verdict import VerdictLimits
from tsid_py.planning.terrain import Terrain
from tsid_py.trajectories import TrajectoryEuclidianSinusoid, TrajectorySample
from tsid_py.validation import as_count, as_scalar

L = TypeVar("L", bound=RunLog)


@dataclass(frozen=True)
class LoopSetup:
    """How a scenario's loop runs: the plant (a name of :data:`~tsid_py.loop.plants.PLANTS`), the
    command mode ("torque" or "position"), pushes on the base, and where its log goes
    (:class:`RunLog`): all of it in memory (the default), the last ``log_window`` steps only, or
    streamed into an unnamed file in the directory ``log_dir`` (the whole run, memory flat in
    long runs); how often the physics checks the controller's solutions (``check_every``), the
    verdicts' thresholds (``limits``) and whether a pushed run goes on until its verdict is
    decided (``extend``): see :class:`~tsid_py.loop.ControlLoop` (``check_every`` None: every step
    on the integrator, every 10th on a simulator)."""

    plant: str = "integrator"
    mode: str = "torque"
    pushes: tuple[Push, ...] = ()
    log_window: int | None = None
    log_dir: str | Path | None = None
    check_every: int | None = None  # None: the plant's default (Plant.check_every)
    limits: VerdictLimits | None = None
    extend: bool = True
    sensing: str = "truth"
    estimator: str = "kinematic-inertial"
    terrain: Terrain | None = None  # the plant's ground: the floor, or blocks on it (MuJoCo)

    def __post_init__(self) -> None:
        if self.check_every is not None:  # refused here, before a log or a plant is made
            as_count("check_every", self.check_every)
        if self.sensing not in SENSINGS:
            raise InvalidParameterError(f"sensing must be one of {', '.join(SENSINGS)}, got {self.sensing!r}")

    def loop(self, controller, dt: float, log: RunLog) -> ControlLoop:
        """The closed loop of ``controller`` on a new plant of this kind."""
        plant = make_plant(self.plant, controller.robot, self.terrain)
        return ControlLoop(
            controller,
            dt,
            plant,
            log,
            self.mode,
            self.pushes,
            self.check_every,
            self.limits,
            self.extend,
            sensing=self.sensing,
            estimator=self.estimator,
            terrain=self.terrain,
        )

    def new_log(self, kind: type[L] = RunLog, **series: Any) -> L:  # type: ignore[assignment]
        """A new log of class ``kind`` with the given ``series``, kept as this setup says."""
        return kind(**series, window=self.log_window, stream_dir=self.log_dir)

    def summary(self) -> dict[str, object]:
        return {
            "plant": self.plant,
            "mode": self.mode,
            "pushes": [p.text() for p in self.pushes],
            "sensing": self.sensing,
        }


@dataclass
class RunResult:
    """The JSON summary, the per-step log and the controller that ran (for viewers and plots)."""

    summary: dict[str, object]
    log: RunLog
    controller: object | None = None


class BalanceHooks(StepHooks):
    """Set the CoM reference before each step; after it, log the CoM, its reference and each
    contact's planned forces, and keep the CoM error and the feet's drift (measured: each foot
    frame from where it stood at the start) as the run goes. ``step_error`` and ``step_drift`` are
    the last step's [m]; :meth:`summary` the run's.

    With a push recovery (``controller.recovery``) the reference is the CoM it rests over (the
    nominal one moved with the feet) and a foot's drift is from where it last landed, a swinging
    foot's not counted: a step is not a drift."""

    def __init__(self, controller, com_reference: Callable[[float], TrajectorySample], log: RunLog) -> None:
        self.controller, self.com_reference, self.log = controller, com_reference, log
        self.recovery = controller.recovery if isinstance(controller, BipedController) else None
        self.feet_start = {key: c.reference.translation for key, c in controller.contacts.items()}
        self.force_sizes = {name: c.n_force for name, c in controller.formulation.contacts.items()}
        self.com_error_max, self.com_error_squares, self.foot_drift_max, self.steps = 0.0, 0.0, 0.0, 0
        self.step_error = self.step_drift = 0.0
        self.reference: TrajectorySample | None = None

    def before_step(self, state: MeasuredState) -> None:
        self.reference = self.com_reference(state.t)
        self.controller.set_com_reference(self.reference)

    def after_step(self, state: MeasuredState, out: ControlOutput) -> None:
        log, reference, com = self.log, cast(TrajectorySample, self.reference), state.com
        recovery = self.recovery
        target = reference.pos if recovery is None else recovery.resting_com()
        log.com.append(com)
        log.com_ref.append(target)
        log.record_forces(out.forces, self.force_sizes)
        self.step_error = error = math.dist(com, target)
        self.com_error_max = max(self.com_error_max, error)
        self.com_error_squares += error * error
        self.steps += 1
        feet = self.feet_start if recovery is None else recovery.standing_feet(self.feet_start)
        self.step_drift = max(
            (math.dist(state.feet[key].placement.translation, at) for key, at in feet.items()),
            default=0.0,
        )
        self.foot_drift_max = max(self.foot_drift_max, self.step_drift)

    def summary(self) -> dict[str, float]:
        """The CoM error's max and rms and the feet's largest drift over the run [m]."""
        return {
            "com_error_max_m": self.com_error_max,
            "com_error_rms_m": float(np.sqrt(self.com_error_squares / max(self.steps, 1))),
            "foot_drift_max_m": self.foot_drift_max,
        }


def summary_header(controller, scenario: str, dt: float, duration: float) -> dict[str, object]:
    """The first keys of every scenario's summary (what the readable report's first line reads):
    the robot, the scenario, dt and the requested duration [s], as plain floats."""
    name = controller.robot.name
    return {"robot": name, "scenario": scenario, "dt_s": float(dt), "duration_s": float(duration)}


def run_biped(
    controller: BipedController | QuadrupedController,
    duration: float,
    dt: float,
    com_reference: Callable[[float], TrajectorySample],
    scenario: str,
    progress: bool = False,
    observer: Observer | None = None,
    setup: LoopSetup | None = None,
) -> RunResult:
    """Run a legged controller in closed loop for ``duration`` seconds at period ``dt``.

    Args:
        controller: A biped, or any controller with its interface (e.g. the quadruped's).
        com_reference: CoM reference as a function of time.
        scenario: Name reported in the summary.
        progress: Show a progress bar on stderr.
        observer: Called with (controller, log) after every logged step (e.g. a live viewer).
        setup: The plant, the command mode and the pushes (the integrator in torque mode by default).
    """
    steps = control_steps(duration, dt)
    setup = setup or LoopSetup()
    log = setup.new_log(RunLog, forces={c.name: [] for c in controller.contacts.values()})
    hooks = BalanceHooks(controller, com_reference, log)
    outcome = setup.loop(controller, dt, log).run(steps, hooks, progress, scenario, observer)
    summary = {
        **summary_header(controller, scenario, dt, duration),
        **hooks.summary(),
        "com_drift_max_m": hooks.com_error_max,
        **setup.summary(),
        **outcome.summary(),
    }
    if hooks.recovery is not None:
        summary.update(hooks.recovery.summary())
    return RunResult(summary, log, controller)


def run_sway(
    controller: BipedController | QuadrupedController,
    duration: float,
    dt: float,
    amplitude: float,
    frequency: float,
    scenario: str,
    progress: bool = False,
    observer: Observer | None = None,
    setup: LoopSetup | None = None,
) -> RunResult:
    """Sway the CoM along y, c(t) = c0 + a sin(2 pi f t) e_y (a [m], f [Hz]), with :func:`run_biped`.

    An amplitude that takes the CoM beyond the support polygon of the feet is refused: a sway
    no standing robot can do (a value meant in centimetres, say)."""
    amplitude = as_scalar("amplitude", amplitude)
    reach = _sideways_reach(controller)
    if reach <= 0.0:
        raise InvalidParameterError(
            "the CoM does not start over the support polygon of its feet: no sway from there"
        )

    if abs(amplitude) > reach:
        raise InvalidParameterError(
            f"amplitude = {amplitude:g} m would take the CoM beyond its support polygon, which reaches "
            f"{reach:.3f} m to each side of it (the amplitude is in metres)"
        )
    sway = TrajectoryEuclidianSinusoid(
        "com", controller.com_initial, [0.0, amplitude, 0.0], [0.0, frequency, 0.0]
    )
    return run_biped(controller, duration, dt, sway.sample, scenario, progress, observer, setup)


def _sideways_reach(controller: BipedController | QuadrupedController) -> float:
    """How far the initial CoM can move along y, either way, and stay over the support polygon of
    the controller's contacts (their points where the contacts hold them) [m]."""
    points = [
        (c.reference.rotation @ c.local_points() + c.reference.translation[:, None])[:2].T
        for c in controller.contacts.values()
    ]
    polygon = SupportPolygon(np.vstack(points))
    com = controller.com_initial
    return min(polygon.reach(com, np.array([0.0, 1.0])), polygon.reach(com, np.array([0.0, -1.0])))
