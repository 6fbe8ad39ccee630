"""What the course scenarios share: the support polygon, a balance run with its measurements, the
limits that bind, a result that carries its own figure, and the figure helpers.

A course scenario answers one question of the TSID course with numbers (its JSON summary) and a
picture (its ``outcome`` figure, written by ``--plot`` beside the usual ones).
"""

from __future__ import annotations

import argparse
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tsid_py.contacts.contact_base import tangent_directions
from tsid_py.errors import InvalidParameterError
from tsid_py.geometry import convex_hull, polygon_margin
from tsid_py.loop.control_loop import LoopOutcome, StepHooks, control_steps, step_time_summary
from tsid_py.loop.controller import ControlOutput
from tsid_py.loop.log import RunLog
from tsid_py.loop.measured import MeasuredState
from tsid_py.planning.support import sole_polygon
from tsid_py.scenarios.parameters import param
from tsid_py.scenarios.runner import BalanceHooks, LoopSetup, RunResult
from tsid_py.scenarios.scenario import RunOptions
from tsid_py.trajectories import TrajectoryEuclidianSinusoid, TrajectorySample
from tsid_py.validation import as_scalar

TORQUE_BINDS = 1.0 - 1e-6  # |tau| / tau_max at or above this: the torque bound is active
FRICTION_BINDS = 1.0 - 1e-6  # a foot's |F.t_k| / (mu F_n) at or above this: friction binds
FORCE_BINDS = 1e-3  # [N] a corner's normal force at or below this (the CoP on the sole's edge), or a
#                     foot's total within this of its f_min: the normal-force limit binds
LOADED = 1.0  # [N] corners carrying less take no part in the friction check (their ratio is noise)
LIMITS = ("torque", "friction", "normal force", "QP failure")


@dataclass
class CourseResult(RunResult):
    """A :class:`RunResult` that draws its own figure of the outcome (``--plot`` writes it as
    ``<scenario>_outcome.png``): a sweep's error against its parameter, a heat map, a top view."""

    outcome_figure: Callable[[], object] | None = None


# ------------------------------------------------------------------ the support polygon
def support_polygon(controller) -> np.ndarray:
    """The convex hull of the soles of a biped's feet at their contact references, x-y (k x 2) [m]."""
    sole = controller.robot.spec.sole
    return convex_hull(np.vstack([sole_polygon(sole, c.reference) for c in controller.contacts.values()]))


def distance_outside(point: object, hull: np.ndarray) -> float:
    """How far the x-y of ``point`` is outside the convex polygon ``hull`` [m] (0 inside): the
    Euclidean distance to its nearest edge."""
    p = np.asarray(point, dtype=float)[:2]
    if polygon_margin(p, hull) >= 0.0:
        return 0.0
    a, b = hull, np.roll(hull, -1, axis=0)
    ab = b - a
    s = np.clip(np.einsum("ij,ij->i", p - a, ab) / np.einsum("ij,ij->i", ab, ab), 0.0, 1.0)
    return float(np.min(np.linalg.norm(a + s[:, None] * ab - p, axis=1)))


# ------------------------------------------------------------------ limits that bind
class Limits:
    """The worst of each limit over a run and when each first bound.

    - torque: max |tau| / tau_max reaches 1;
    - friction: a foot's resultant reaches its pyramid, max_k |F.t_k| / (mu F_n) = 1 with F the sum
      of its corner forces (every loaded corner on the same face: the foot is about to slide). A
      single corner on a face of its pyramid (``max_friction_edge_ratio``, corners above 1 N) is
      reported but does not count: a corner being unloaded reaches its pyramid first;
    - normal force: a corner's normal force reaches 0 (the foot's centre of pressure on the edge of
      its sole: the foot is about to tip) or a foot's total reaches its f_min.
    """

    def __init__(self, tau_max: np.ndarray) -> None:
        self.tau_max = np.asarray(tau_max, dtype=float)
        self.limited = np.isfinite(self.tau_max) & (self.tau_max > 0)
        self.torque_ratio = 0.0
        self.friction_ratio = 0.0  # per corner, along the pyramid's edges
        self.foot_friction_ratio = 0.0  # of a foot's resultant
        self.corner_force_min = np.inf
        self.total_force_margin_min = np.inf  # total normal force - f_min [N]
        self.bound: dict[str, float] = {}  # limit -> first time it bound [s]

    def update(self, t: float, out: ControlOutput, contacts: dict[str, object]) -> None:
        torque = float(np.max(np.abs(out.tau[self.limited]) / self.tau_max[self.limited], initial=0.0))
        self.torque_ratio = max(self.torque_ratio, torque)
        binding = {"torque": torque >= TORQUE_BINDS}
        for name, forces in out.forces.items():
            contact = contacts.get(name)
            if contact is None or not contact.unilateral or getattr(contact, "n_points", 0) < 1:
                continue
            points = np.asarray(forces).reshape(-1, 3)
            normal = contact.contact_normal
            t1, t2 = tangent_directions(normal)
            f_n = points @ normal
            loaded = f_n > LOADED
            edge = np.maximum(np.abs(points @ t1), np.abs(points @ t2))
            friction = float(np.max(edge[loaded] / (contact.mu * f_n[loaded]), initial=0.0))
            total = points.sum(axis=0)
            total_normal = float(f_n.sum())
            foot = (
                max(abs(total @ t1), abs(total @ t2)) / (contact.mu * total_normal)
                if total_normal > LOADED
                else 0.0
            )
            corner = float(f_n.min())
            margin = total_normal - contact.min_normal_force
            self.friction_ratio = max(self.friction_ratio, friction)
            self.foot_friction_ratio = max(self.foot_friction_ratio, foot)
            self.corner_force_min = min(self.corner_force_min, corner)
            self.total_force_margin_min = min(self.total_force_margin_min, margin)
            binding["friction"] = binding.get("friction", False) or foot >= FRICTION_BINDS
            binding["normal force"] = (
                binding.get("normal force", False) or corner <= FORCE_BINDS or margin <= FORCE_BINDS
            )
        for limit, binds in binding.items():
            if binds and limit not in self.bound:
                self.bound[limit] = t

    def first(self) -> tuple[str | None, float | None]:
        """The limit that bound first and when [s], or (None, None)."""
        if not self.bound:
            return None, None
        limit = min(self.bound, key=lambda name: (self.bound[name], LIMITS.index(name)))
        return limit, self.bound[limit]

    def summary(self) -> dict[str, object]:
        return {
            "max_torque_ratio": self.torque_ratio,
            "max_foot_friction_ratio": self.foot_friction_ratio,
            "max_friction_edge_ratio": self.friction_ratio,
            "min_corner_force_n": finite_or_none(self.corner_force_min),
            "limits_bound": dict(sorted(self.bound.items(), key=lambda item: item[1])),  # name: first [s]
        }


# ------------------------------------------------------------------ a balance run
class Balance(BalanceHooks):
    """:class:`~tsid_py.scenarios.runner.BalanceHooks` that also keeps the limits the feet and the
    motors reach; ``per_step`` keeps the CoM error and the foot drift of every step (for figures)."""

    def __init__(
        self,
        controller,
        com_reference: Callable[[float], TrajectorySample],
        log: RunLog,
        per_step: bool = False,
    ) -> None:
        super().__init__(controller, com_reference, log)
        self.feet = {c.name: c for c in controller.contacts.values()}  # the limits are the feet's
        self.limits = Limits(controller.tau_max)
        self.per_step = per_step
        self.t, self.com_error, self.foot_drift = array("d"), array("d"), array("d")

    def after_step(self, state: MeasuredState, out: ControlOutput) -> None:
        super().after_step(state, out)
        t = state.t
        self.limits.update(t, out, self.feet)
        if self.per_step:
            self.t.append(t)
            self.com_error.append(self.step_error)
            self.foot_drift.append(self.step_drift)


class Chain(StepHooks):
    """Several hooks, called in order."""

    def __init__(self, *hooks: StepHooks) -> None:
        self.hooks = hooks

    def before_step(self, state: MeasuredState) -> None:
        for hook in self.hooks:
            hook.before_step(state)

    def after_step(self, state: MeasuredState, out: ControlOutput) -> None:
        for hook in self.hooks:
            hook.after_step(state, out)


class Runs:
    """What several runs of a scenario add up to: their steps, QP failures, verdicts (whether one
    fell, and each run's), step times and the worst of the physics checks of every solution."""

    CHECKS = ("dynamics_residual_max", "max_pyramid_violation_n", "max_normal_bound_violation_n")

    def __init__(self) -> None:
        self.steps, self.qp_failures, self.fell = 0, 0, False
        self.verdicts: list[str | None] = []
        self.failure: str | None = None
        self.step_times: list[float] = []
        self.checks: dict[str, float] = {}

    def add(self, outcome: LoopOutcome) -> dict[str, object]:
        """Count one run in; returns its own summary (:meth:`LoopOutcome.summary`)."""
        common = outcome.summary()
        self.steps += common["steps"]
        self.qp_failures += common["qp_failures"]
        self.fell = self.fell or bool(common["fell"])
        self.verdicts.append(common["verdict"])  # type: ignore[arg-type]
        self.failure = self.failure or common["qp_failure"]
        self.step_times.extend(outcome.step_times)
        for key in self.CHECKS:
            if np.isfinite(common[key]):
                self.checks[key] = max(self.checks.get(key, 0.0), common[key])
        return common

    def summary(self, failures_count: bool = True) -> dict[str, object]:
        """The loop's summary keys over every run; with ``failures_count`` False a QP failure is an
        answer of the scenario (a sweep reaching its limit), reported in its row, not a failure of
        the command: ``qp_failures`` is then 0 and ``runs_qp_failed`` counts them."""
        out: dict[str, object] = {"steps": self.steps}
        if failures_count:
            out.update(
                qp_failures=self.qp_failures, qp_failure=self.failure, fell=self.fell, verdicts=self.verdicts
            )
        else:
            out.update(qp_failures=0, runs_qp_failed=self.qp_failures)
        out.update(self.checks)
        out.update(step_time_summary(self.step_times))
        return out


def new_log(controller, setup: LoopSetup) -> RunLog:
    """A log with a force series per contact of the formulation, kept as ``setup`` says."""
    return setup.new_log(RunLog, forces={name: [] for name in controller.formulation.contacts})


def run_loop(
    controller, duration: float, dt: float, hooks: StepHooks, log: RunLog, options: RunOptions, label: str
) -> LoopOutcome:
    """``duration`` seconds of ``controller`` in closed loop at period ``dt`` on the plant of
    ``options.setup``, shown as ``label`` in the progress bar."""
    steps = control_steps(duration, dt)
    loop = options.setup.loop(controller, dt, log)
    return loop.run(steps, hooks, options.progress, label, options.observer)


def sway(controller, amplitude: float, frequency: float) -> Callable[[float], TrajectorySample]:
    """c(t) = c_0 + a sin(2 pi f t) e_y around the controller's initial CoM (a [m], f [Hz])."""
    amplitude = as_scalar("amplitude", amplitude, minimum=0.0)
    frequency = as_scalar("frequency", frequency, minimum=0.0, strict=True)
    return TrajectoryEuclidianSinusoid(
        "com", controller.com_initial, [0.0, amplitude, 0.0], [0.0, frequency, 0.0]
    ).sample


def smooth_sway(
    controller, amplitude: float, frequency: float, ramp: float
) -> Callable[[float], TrajectorySample]:
    """c(t) = c_0 + a s(t) sin(2 pi f t) e_y, its amplitude raised from 0 over ``ramp`` [s] by the
    quintic s(x) = 10 x^3 - 15 x^4 + 6 x^5 (x = t / ramp; s' = s'' = 0 at both ends), with its exact
    velocity and acceleration: the reference starts at rest with the robot, so no velocity jump
    at t = 0 loads the contacts before the sway does."""
    amplitude = as_scalar("amplitude", amplitude, minimum=0.0)
    frequency = as_scalar("frequency", frequency, minimum=0.0, strict=True)
    ramp = as_scalar("ramp", ramp, minimum=0.0, strict=True)
    c0, w = controller.com_initial, 2.0 * np.pi * frequency
    axis = np.array([0.0, 1.0, 0.0])

    def sample(t: float) -> TrajectorySample:
        x = min(max(t / ramp, 0.0), 1.0)
        s = x**3 * (10.0 - 15.0 * x + 6.0 * x * x)
        ds = 30.0 * x * x * (1.0 - x) ** 2 / ramp
        dds = 60.0 * x * (1.0 - x) * (1.0 - 2.0 * x) / ramp**2
        sin, cos = np.sin(w * t), np.cos(w * t)
        y = amplitude * s * sin
        dy = amplitude * (ds * sin + s * w * cos)
        ddy = amplitude * (dds * sin + 2.0 * ds * w * cos - s * w * w * sin)
        return TrajectorySample(c0 + y * axis, dy * axis, ddy * axis)

    return sample


def finite_or_none(value: float) -> float | None:
    """``value``, or None when it is not finite (JSON has no infinity)."""
    return float(value) if np.isfinite(value) else None


# ------------------------------------------------------------------ command-line values
def float_list(text: str) -> list[float]:
    """Parse ``A,B,C`` or ``START:STOP:COUNT`` (COUNT evenly spaced values, both ends included)."""
    try:
        if ":" in text:
            start, stop, count = text.split(":")
            n = int(count)
            if n < 1:
                raise ValueError
            values = np.linspace(float(start), float(stop), n).tolist()
        else:
            values = [float(item) for item in text.split(",") if item.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected numbers A,B,C or START:STOP:COUNT, got {text!r}"
        ) from None
    if not values or not all(np.isfinite(values)):
        raise argparse.ArgumentTypeError(f"expected finite numbers, got {text!r}")
    return values


def values_param(default: tuple[float, ...], help: str, unit: str = "") -> Any:
    """A field of several numbers (:func:`~tsid_py.scenarios.parameters.param`), written on the
    command line ``A,B,...`` or ``START:STOP:COUNT`` (:func:`float_list`)."""
    return param(default, help, unit=unit, parse=float_list, metavar="A,B,... | START:STOP:COUNT")


def positive_values(name: str, values: object) -> list[float]:
    """``values`` as a list of finite numbers > 0 (an :class:`InvalidParameterError` naming ``name``
    otherwise)."""
    out = [as_scalar(name, v, minimum=0.0, strict=True) for v in np.atleast_1d(np.asarray(values, float))]
    if not out:
        raise InvalidParameterError(f"{name}: give at least one value")
    return out


# ------------------------------------------------------------------ figures
def draw_polygon(ax, hull: np.ndarray, **style) -> None:
    """The closed outline of the polygon ``hull`` (k x 2) on ``ax``, in ``style``."""
    closed = np.vstack([hull, hull[:1]])
    ax.plot(closed[:, 0], closed[:, 1], **style)
