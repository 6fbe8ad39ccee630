"""ControlLoop: the one closed loop of every scenario, demo and the CLI.

    for each control period dt:  truth = measurer.measure(plant.state())       (one kinematics pass)
                                 measured = truth, or with sensing="robot" the measured state of
                                     estimator.update(sensors.read(plant's state))
                                 pushes due at t go to the plant
                                 judge.observe(truth)              (the verdict, from the plant)
                                 hooks.before_step(truth)          (the scenario's references)
                                 controller.observe(measured)      (decide: feedback, strategies, feet)
                                 out = controller.compute(t, q, v) (act: the QP, the command; the
                                                                    measured t, q, v)
                                 physics check of out, log
                                 hooks.after_step(measured, out)   (the scenario's measurements)
                                 plant.apply(motors.take(command(out))); plant.advance(dt)

Every part of the step reads the one :class:`~tsid_py.loop.measured.MeasuredState` (CoM, capture
point, feet, which touch, the support polygon), built once from what the plant measured. With
``sensing="robot"`` (:mod:`tsid_py.loop.sensing`) the controller's is built from what the robot's
sensors read, through an estimator (:mod:`tsid_py.loop.estimation`), and its commands reach the
plant ``SensorParams.latency`` periods later, through the motors' torque lag
(:class:`~tsid_py.loop.motors.Motors`); the truth goes to the judge, the scenario's hooks, the log
and nowhere else.

The command is the torque (``mode="torque"``), or in ``mode="position"`` the joint targets one
period ahead, v_des = v + dv dt and q_des = q (+) v_des dt on the manifold from the measured state,
with the torque as feed-forward (:class:`~tsid_py.loop.plant.Command`). Integrating the targets
from the measured state, not from the previous targets, keeps them from drifting away from the
robot when the plant does not realise dv exactly (compliant contacts, joint friction): TSID's
issue 137, where targets integrated open loop "do not work in PyBullet".

A legged robot's run is judged from the plant's measured state by a
:class:`~tsid_py.loop.verdict.BalanceJudge`: lost balance, fell, recovered or undecided. The run
stops when the robot fell. A run with pushes goes on past its requested steps until its verdict
is decided (fell, or recovered after the last push), for at most ``settle_time`` after the last
push ends (``extend=False`` turns this off: the verdict may then be ``undecided``).

The plant is a parameter (:class:`~tsid_py.loop.plant.IntegratorPlant` by default). A QP failure
the controller does not hold through (its ``hold_steps`` policy) ends the run, is counted, and its
cause is kept in the outcome; a held step is counted and the run goes on with the held command.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from tsid_py.errors import InvalidParameterError, SimulationDivergedError, SolverFailedError
from tsid_py.integration import integrate
from tsid_py.loop.controller import Controller, ControlOutput, frozen_heap
from tsid_py.loop.estimation import ESTIMATORS, EstimateErrors, KinematicInertialEstimator
from tsid_py.loop.log import RunLog
from tsid_py.loop.measured import MeasuredState, Measurer
from tsid_py.loop.motors import Motors
from tsid_py.loop.plant import Command, IntegratorPlant, Plant, Push, check_mode
from tsid_py.loop.sensing import SENSINGS, RobotSensors, SensorParams
from tsid_py.loop.verdict import BalanceJudge, Verdict, VerdictLimits
from tsid_py.physics import SolutionChecker, WorstChecks
from tsid_py.planning.terrain import Terrain
from tsid_py.progress import progress_bar
from tsid_py.validation import as_count, as_scalar

MAX_DT = 0.02  # [s] a 50 Hz loop; sqrt(kp) dt < 1 needs dt < 30 ms already at kp = 1000 1/s^2
MILLISECONDS_HINT = 100.0  # [s] a push time or duration this large was likely meant in milliseconds
MAX_STEPS = 10**8  # control steps of one run: a day simulated at 1 kHz, hours of computing

Observer = Callable[[object, RunLog], None]  # called with (controller, log) after every logged step


class StepHooks:
    """What a scenario does around each control step (nothing by default). Both read the step's
    :class:`~tsid_py.loop.measured.MeasuredState` (t, q, v, the CoM, the feet, ...)."""

    def before_step(self, state: MeasuredState) -> None:
        """Set references or switch contacts for the step at ``state.t`` [s]."""

    def after_step(self, state: MeasuredState, out: ControlOutput) -> None:
        """Measure and record what the step did (``out`` solved)."""


def failure_of(summary: Mapping[str, object]) -> SimulationDivergedError | SolverFailedError | None:
    """The failure a run's summary records, as the error it was: the simulation diverged
    (``plant_failure``), or a QP did not solve (``qp_failures`` > 0, the first cause in
    ``qp_failure``); None for a run whose controller and plant did not fail. A scenario's command
    exits 3 for it, and a sweep writes it in the run's ``error`` column: its verdict, if any, is
    no outcome of the physics."""
    if summary.get("plant_failure"):
        return SimulationDivergedError(str(summary["plant_failure"]))
    if summary.get("qp_failures"):
        return SolverFailedError(str(summary.get("qp_failure") or "a QP did not solve"))
    return None


@dataclass
class LoopOutcome:
    """What a run of the loop leaves: its log, the physics check of every step, the time of every
    control step [s], the number of QP failures (held ones included) and, when a failure ended the
    run, its cause (one line; ``plant_failure`` when the simulation diverged); for a legged robot,
    its verdict (``verdict``, with one per push in ``push_verdicts``) and the contacts held that
    did not touch (frame: every (from, for) [s] it was in the air)."""

    log: RunLog
    checks: WorstChecks = field(default_factory=WorstChecks)
    step_times: array = field(default_factory=lambda: array("d"))  # [s], 8 bytes a step
    qp_failures: int = 0
    failure: str = ""
    plant_failure: str = ""  # the simulation diverged: why (one line)

    steps: int = 0  # control steps logged (the log itself may keep only a window of them)
    simulated_time: float = 0.0
    requested_time: float = 0.0
    wall_time: float = 0.0
    verdict: Verdict | None = None
    push_verdicts: list[Verdict] = field(default_factory=list)
    contacts_not_touching: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    sensing: str = "truth"
    estimate: dict[str, object] = field(default_factory=dict)  # with robot sensing: its errors

    @property
    def fell(self) -> bool:
        """Whether the robot fell, as the plant measured it."""
        return self.verdict is not None and self.verdict.verdict == "fell"

    @property
    def extended(self) -> bool:
        """Whether the run went on past the requested time to decide its verdict."""
        return self.simulated_time > self.requested_time + 1e-9

    def summary(self) -> dict[str, object]:
        """The entries every scenario's JSON summary shares."""
        verdict = self.verdict
        return {
            "steps": self.steps,
            "simulated_time_s": self.simulated_time,
            "extended_to_s": self.simulated_time if self.extended else None,
            "qp_failures": self.qp_failures,
            "qp_failure": self.failure or None,
            "plant_failure": self.plant_failure or None,
            **verdict_summary(verdict),
            "push_verdicts": [v.verdict for v in self.push_verdicts],
            "contacts_not_touching": [
                {"frame": frame, "from_s": since, "for_s": duration}
                for frame, episodes in sorted(self.contacts_not_touching.items())
                for since, duration in episodes
            ],
            "sensing": self.sensing,
            **self.estimate,
            "real_time_factor": self.simulated_time / self.wall_time if self.wall_time > 0 else None,
            "physics_checks": self.checks.count,
            **self.checks.summary(),
            **step_time_summary(self.step_times),
        }


def verdict_summary(verdict: Verdict | None) -> dict[str, object]:
    """A verdict's summary keys (None values for a robot that is not judged: a fixed base)."""
    return {
        "verdict": None if verdict is None else verdict.verdict,
        "verdict_reason": None if verdict is None else verdict.reason,
        "lost_balance_at_s": None if verdict is None else verdict.lost_balance_at,
        "fell_at_s": None if verdict is None else verdict.fell_at,
        "recovered_at_s": None if verdict is None else verdict.recovered_at,
        "fell": verdict is not None and verdict.verdict == "fell",
    }


class ControlLoop:
    """A controller driving a plant at period ``dt`` [s], every step logged, checked and judged.

    Args:
        controller: Any :class:`~tsid_py.loop.controller.Controller`.
        dt: Control period [s].
        plant: What the commands drive; :class:`IntegratorPlant` of the controller's robot by default.
        log: Where the steps are recorded (a scenario may pass a :class:`RunLog` subclass).
        mode: "torque" or "position" (see the module docstring).
        pushes: Forces on the base the plant applies during the run (:class:`Push`).
        check_every: Check the controller's solution against the physics
            (:func:`~tsid_py.physics.check_solution`: RNEA residual, contact forces, torque
            limits) every ``check_every`` steps, 0 never; None: the plant's default
            (:attr:`~tsid_py.loop.plant.Plant.check_every`: every step on the integrator, whose
            robot does what was planned, so the check is the only witness of the physics; every
            10th on a simulator, which measures the physics itself). A check
            (:class:`~tsid_py.physics.SolutionChecker`, kept for the run) costs about half a
            Talos control step. Steps 0, N, 2N, ... are checked; a held command (a failed solve)
            on one of them is not checked.
        limits: The thresholds of the verdicts (:class:`~tsid_py.loop.verdict.VerdictLimits`).
        extend: Run past the requested steps until a pushed run's verdict is decided, for at most
            ``limits.settle_time`` after the last push ends.
        sensing: "truth" (the controller gets the plant's state, as TSID's exercises do) or
            "robot" (what a robot has: encoders, an IMU and the feet's force/torque sensors read
            through :class:`~tsid_py.loop.estimation.KinematicInertialEstimator`, and commands a
            latency late; :mod:`tsid_py.loop.sensing`).
        sensors: The sensors' numbers with robot sensing (the spec's ``[sensors]`` by default).
        estimator: The base-state estimator of robot sensing (one of
            :data:`~tsid_py.loop.estimation.ESTIMATORS`).
        terrain: The blocks on the floor the plant has (:class:`~tsid_py.planning.terrain.Terrain`),
            for robot sensing's estimator: a foot touching down presses on their surface.
    """

    def __init__(
        self,
        controller: Controller,
        dt: float,
        plant: Plant | None = None,
        log: RunLog | None = None,
        mode: str = "torque",
        pushes: tuple[Push, ...] = (),
        check_every: int | None = None,
        limits: VerdictLimits | None = None,
        extend: bool = True,
        sensing: str = "truth",
        sensors: SensorParams | None = None,
        estimator: str = "kinematic-inertial",
        terrain: Terrain | None = None,
    ) -> None:
        self.controller = controller
        if terrain is not None and not isinstance(terrain, Terrain):
            raise InvalidParameterError(f"terrain must be a Terrain, got {type(terrain).__name__}")
        self.terrain = terrain
        if check_every is not None:
            check_every = as_count("check_every", check_every, minimum=0)
        self.dt = as_scalar("dt", dt, minimum=0.0, strict=True)
        if self.dt > MAX_DT:
            raise InvalidParameterError(
                f"dt = {self.dt:g} s is above {MAX_DT:g} s: the contact and task PD loops "
                "(kp ~ 10-1000 1/s^2) are not stable at that period; TSID's examples run at 1-2 ms"
            )
        self.plant = IntegratorPlant(controller.robot) if plant is None else plant
        self.check_every = self.plant.check_every if check_every is None else check_every
        self.log = RunLog() if log is None else log
        check_mode(mode)
        self.mode = mode
        self.pushes = tuple(sorted(pushes, key=lambda push: push.t))
        if limits is not None and not isinstance(limits, VerdictLimits):
            raise InvalidParameterError(f"limits must be a VerdictLimits, got {type(limits).__name__}")
        self.limits = limits or VerdictLimits()
        self.extend = bool(extend)
        if sensing not in SENSINGS:
            raise InvalidParameterError(f"sensing must be one of {', '.join(SENSINGS)}, got {sensing!r}")
        if sensing == "robot" and isinstance(self.plant, IntegratorPlant):
            raise InvalidParameterError(
                "robot sensing needs a plant with physics that measures the feet's forces (pinocchio, "
                "mujoco): the integrator's robot does what was planned"
            )
        if sensors is not None and not isinstance(sensors, SensorParams):
            raise InvalidParameterError(f"sensors must be a SensorParams, got {type(sensors).__name__}")
        if estimator not in ESTIMATORS:
            raise InvalidParameterError(
                f"estimator must be one of {', '.join(ESTIMATORS)}, got {estimator!r}"
            )
        self.sensing, self.estimator = sensing, estimator
        self.sensors = (
            sensors if sensors is not None or sensing == "truth" else SensorParams.for_robot(controller.robot)
        )
        self._ran = False

    def run(
        self,
        steps: int,
        hooks: StepHooks | None = None,
        progress: bool = False,
        label: str = "run",
        observer: Observer | None = None,
    ) -> LoopOutcome:
        """Run ``steps`` control steps from the controller's q0 at rest (the objects made before,
        out of the garbage collector's sight: :func:`~tsid_py.loop.controller.frozen_heap`), and
        more while a pushed run's verdict is undecided (see the class). Pushes that start after
        the requested steps are refused. A loop runs once: its controller and log keep what the
        run left (re-anchored contacts, a recovery's state, the steps logged), so a second run
        would not start where the first did."""
        steps = as_count("steps", steps)
        check_pushes(self.pushes, steps * self.dt)
        if self._ran:
            raise InvalidParameterError(
                "this ControlLoop has run already, and its controller and log keep what that run "
                "left: make a new controller and loop for another run"
            )
        with frozen_heap():
            run = _Run(self, hooks or StepHooks(), observer)  # the plant reset: nothing ran yet
            self._ran = True
            return run.run(steps, progress, label)


def control_steps(duration: float, dt: float) -> int:
    """The control steps of a run of ``duration`` [s] at period ``dt`` [s], round(duration / dt):
    every scenario's count, checked before its run.

    Raises:
        InvalidParameterError: a duration or a period that is not > 0, a duration shorter than one
            period (a run of no step, whose summary would measure nothing), or more than
            :data:`MAX_STEPS` steps.
    """
    duration = as_scalar("duration", duration, minimum=0.0, strict=True)
    dt = as_scalar("dt", dt, minimum=0.0, strict=True)
    ratio = duration / dt
    if ratio < 1.0 - 1e-9:
        raise InvalidParameterError(
            f"duration = {duration:g} s is shorter than one control period (dt = {dt:g} s): a run "
            "needs duration >= dt"
        )
    if ratio > MAX_STEPS:
        raise InvalidParameterError(
            f"duration = {duration:g} s is more than {MAX_STEPS:.0e} control steps of dt = {dt:g} s, the "
            f"most a run may take ({MAX_STEPS * dt:g} s)"
        )
    return round(ratio)


def check_pushes(pushes: tuple[Push, ...], duration: float) -> None:
    """Refuse, in one line, a push that starts after a run of ``duration`` [s] ends, whose
    numbers look like milliseconds, or that starts before the one before it has ended (a plant
    holds one push at a time: the second would end the first)."""
    ordered = sorted(pushes, key=lambda push: push.t)
    for earlier, later in zip(ordered, ordered[1:], strict=False):
        if later.t < earlier.t + earlier.duration - 1e-9:
            raise InvalidParameterError(
                f"push {later.text()} starts before push {earlier.text()} has ended: pushes may not "
                "overlap (give their sum as one push over the time they share)"
            )
    for push in pushes:
        text = push.text()
        if push.t >= MILLISECONDS_HINT or push.duration >= MILLISECONDS_HINT:
            raise InvalidParameterError(
                f"push {text}: times are in seconds, and {max(push.t, push.duration):g} s looks like "
                "milliseconds (0.1 s is written +0.1)"
            )
        if push.t >= duration - 1e-9:
            raise InvalidParameterError(
                f"push {text} starts at {push.t:g} s, when the {duration:g} s run has ended"
            )


class _Run:
    """One run of a :class:`ControlLoop`: the state that lives for the run, and one control step."""

    def __init__(self, loop: ControlLoop, hooks: StepHooks, observer: Observer | None) -> None:
        self.loop, self.hooks, self.observer = loop, hooks, observer
        controller = loop.controller
        robot = self.robot = controller.robot
        self.outcome = LoopOutcome(loop.log)
        self.checker = SolutionChecker(robot, controller.tau_max)  # its own scratch Data, for the run
        q0 = controller.q0
        self.pushes = list(loop.pushes)
        windows = [(push.t, push.t + push.duration) for push in loop.pushes]
        legged = not robot.is_fixed_base and bool(getattr(getattr(robot, "spec", None), "feet", None))
        self.judge = BalanceJudge(robot, q0, loop.limits, windows) if legged else None
        self.measurer = Measurer(robot, q0)
        self.calm_from = max((end for _, end in windows), default=0.0)
        self.sensors: RobotSensors | None = None
        if loop.sensing == "robot":  # the controller's state from the robot's sensors, estimated
            self.sensors = RobotSensors(robot, loop.dt, loop.sensors)
            self.estimator = KinematicInertialEstimator(
                robot, q0, loop.dt, self.sensors.params, terrain=loop.terrain
            )
            self.controller_measurer = Measurer(robot, q0)
            self.errors = EstimateErrors()
        params = self.sensors.params if self.sensors is not None else None  # (truth: taken at once)
        self.motors = (
            Motors(params.latency, params.torque_bandwidth, loop.dt) if params else Motors(0, 0.0, loop.dt)
        )
        loop.plant.reset(q0, robot.zero_velocity())
        self.t_start: float | None = None

    def run(self, steps: int, progress: bool, label: str) -> LoopOutcome:
        outcome, loop = self.outcome, self.loop
        outcome.requested_time = steps * loop.dt
        started = time.perf_counter()
        for _ in progress_bar(range(steps), progress, label):
            if not self.step():
                break
        else:
            while self.undecided() and self.step():
                pass
        outcome.wall_time = time.perf_counter() - started
        if self.judge is not None:
            outcome.verdict = self.judge.verdict()
            outcome.push_verdicts = self.judge.push_verdicts()
            outcome.contacts_not_touching = {
                frame: list(episodes) for frame, episodes in self.judge.contacts_not_touching.items()
            }
        outcome.sensing = self.loop.sensing
        if self.sensors is not None:
            outcome.estimate = self.errors.summary(self.estimator.name)
        return outcome

    def undecided(self) -> bool:
        """Whether a pushed run should go on to decide its verdict (within the cap)."""
        judge, loop = self.judge, self.loop
        if judge is None or not loop.extend or not loop.pushes or judge.decided():
            return False
        return judge.t_end + loop.dt < self.calm_from + loop.limits.settle_time + 1e-9

    def step(self) -> bool:
        """One control step; False when the run ends here (the robot fell, or a QP failed)."""
        loop, outcome, robot, controller = self.loop, self.outcome, self.robot, self.loop.controller
        plant_state = loop.plant.state()
        state = self.measurer.measure(plant_state)  # measure: the kinematics once (the truth)
        measured = state  # what the controller gets
        if self.sensors is not None:  # what the robot's sensors read, estimated
            estimate = self.estimator.update(self.sensors.read(state, plant_state.imu))
            measured = self.controller_measurer.measure(estimate)
            self.errors.add(state, measured)
        t, q, v = measured.t, measured.q, measured.v
        if self.t_start is None:
            self.t_start = t
        outcome.simulated_time = t - self.t_start
        while self.pushes and self.pushes[0].t <= t + 1e-9:
            push = self.pushes.pop(0)
            loop.plant.push(np.array(push.force), push.duration)
        if self.judge is not None:  # the truth: the plant's state
            self.judge.observe(state, controller.held_contact_frames(), controller.stepping)
            if self.judge.fell:
                return False
        self.hooks.before_step(state)  # the scenario's references (its inputs to the controller)
        controller.observe(measured)  # decide: contact feedback, the strategies, the feet
        start = time.perf_counter()
        try:
            out = controller.compute(t, q, v)
        except SolverFailedError as error:
            outcome.qp_failures += 1
            outcome.failure = str(error)
            return False
        outcome.step_times.append(time.perf_counter() - start)
        outcome.qp_failures += out.held
        if not out.held:  # the torque ratio at every step: an outcome, whatever the check's rate
            outcome.checks.torque(self.checker.torque_ratio(out.tau))
        # every check_every-th step (a held command solved another state: nothing to check), at the
        # state the controller solved at: the check witnesses the controller's own numbers
        if not out.held and loop.check_every and outcome.steps % loop.check_every == 0:
            active = controller.formulation.contacts
            contacts = {name: (active[name], f) for name, f in out.forces.items()}
            external = _measured_joint_forces(controller)
            outcome.checks.add(self.checker.check(q, v, out.dv, out.tau, contacts, external))
        q_des, v_des = integrate(
            robot, q, v, out.dv, loop.dt
        )  # the plan for t + dt: logged, position targets
        loop.log.record_step(state.t, state.q, state.v, out, plant_state.contacts, q_des)  # the truth
        if self.judge is not None:  # what the verdict saw, for plots and replays
            loop.log.capture_point.append(state.capture_point)
            loop.log.capture_margin.append(state.margin)
        if self.sensors is not None:  # what the controller was given, beside the truth
            loop.log.q_estimate.append(q)
            loop.log.v_estimate.append(v)

        outcome.steps += 1
        outcome.simulated_time = t + loop.dt - self.t_start
        self.hooks.after_step(state, out)
        if self.observer is not None:
            self.observer(controller, loop.log)
        loop.plant.apply(self.motors.take(_command(loop.mode, robot, out, q_des, v_des)))  # late, lagged
        try:
            loop.plant.advance(loop.dt)
        except SimulationDivergedError as error:
            outcome.plant_failure = str(error)
            return False
        return True


def _command(mode: str, robot, out: ControlOutput, q_des: np.ndarray, v_des: np.ndarray) -> Command:
    """The plant's command of a step (its own arrays: the log keeps out's)."""
    if mode == "torque":
        return Command(out.tau.copy(), out.dv.copy())
    return Command(
        out.tau.copy(), out.dv.copy(), q_des[robot.nq - robot.nq_actuated :], v_des[robot.nv - robot.na :]
    )


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
