"""Sinusoid sweep: the CoM sways at rising frequencies until tracking gets bad, and which limit binds.

The TSID course asks: "increase the CoM frequency until tracking gets bad: why?" The CoM tracks
c(t) = c_0 + a sin(2 pi f t) e_y (a = 0.05 m, as ``com-sinusoid``) at each frequency f of
``--frequencies`` (0.1 to 3 Hz by default): its amplitude rises smoothly from 0 over the first
period (at most 1 s; ``com-sinusoid`` starts the reference at full speed, a velocity jump that
alone loads the contacts to their limits above 0.7 Hz), then ``--cycles`` periods follow. At each
frequency the summary gives the CoM tracking error (max and rms), the peak torque ratio
max |tau| / tau_max, the smallest normal force (of a foot, and of a sole corner), the friction
ratio, and which limits bound (:class:`~tsid_py.scenarios.course.common.Limits`): the torque
bounds, friction (a foot's resultant on its pyramid), the normal force (a corner unloaded: the
centre of pressure on the edge of a sole; or a foot at its f_min), or the QP failing.

The acceleration of the reference grows as a (2 pi f)^2; the centre of pressure it needs,
c - c_z / g * c'' (the linear inverted pendulum), leaves the support polygon near
f = sqrt(g / c_z * (y_edge / a - 1)) / (2 pi), about 0.75 Hz for Talos at a = 5 cm: from there the
weight swings from foot to foot, the unloaded foot reaches its friction pyramid and a corner of a
sole lifts, yet the QP still tracks; at 1.5 Hz a foot is down to its f_min, the CoM task (a cost)
gives way and the error doubles (docs/course.md has the table).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tsid_py.controllers.biped import BipedController
from tsid_py.robot_specs import load_robot
from tsid_py.scenarios.course.common import (
    Balance,
    CourseResult,
    Runs,
    new_log,
    positive_values,
    run_loop,
    smooth_sway,
    values_param,
)
from tsid_py.scenarios.parameters import ScenarioParams, param, robot_spec
from tsid_py.scenarios.runner import summary_header
from tsid_py.scenarios.scenario import RunOptions, Scenario
from tsid_py.solvers import make_solver
from tsid_py.validation import as_scalar
from tsid_py.viz.style import finish, new_figure

NAME = "sinusoid-sweep"
MAX_RAMP = 1.0  # [s] the amplitude rises over one period, at most this long
FREQUENCIES = (0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)  # [Hz]
LIMIT_COLOURS = {
    "torque": "tab:red",
    "friction": "tab:orange",
    "normal force": "tab:purple",
    "QP failure": "k",
}


@dataclass(frozen=True)
class SinusoidSweepParams(ScenarioParams):
    """The CoM sway at each of ``frequencies`` (their periods set the length)."""

    robot: str = robot_spec("talos")
    frequencies: tuple[float, ...] = values_param(FREQUENCIES, "sway frequencies", unit="Hz")
    amplitude: float = param(0.05, "sway amplitude along y", unit="m")
    cycles: float = param(2.0, "periods at each frequency after the ramp")


def simulate(p: SinusoidSweepParams, options: RunOptions) -> CourseResult:
    """Sway the CoM at each of ``frequencies`` [Hz] with ``amplitude`` [m]: one period (at most
    1 s) raising the amplitude, then ``cycles`` periods. The log and controller kept are those of
    the first frequency at which a limit bound (else the last)."""
    frequencies = sorted(positive_values("frequencies", p.frequencies))
    amplitude = as_scalar("amplitude", p.amplitude, minimum=0.0)
    cycles = as_scalar("cycles", p.cycles, minimum=0.0, strict=True)
    dt = as_scalar("dt", p.dt, minimum=0.0, strict=True)
    setup = options.setup
    model = load_robot(p.robot)
    rows, runs = [], Runs()
    kept = last = None
    for frequency in frequencies:
        controller = BipedController(model, solver=make_solver(p.backend))
        log = new_log(controller, setup)
        ramp = min(1.0 / frequency, MAX_RAMP)
        balance = Balance(controller, smooth_sway(controller, amplitude, frequency, ramp), log)
        duration = ramp + cycles / frequency
        outcome = run_loop(controller, duration, dt, balance, log, options, f"{NAME} {frequency:g} Hz")
        common = runs.add(outcome)
        limits = balance.limits
        if outcome.qp_failures:
            limits.bound.setdefault("QP failure", log.t[-1] + dt if log.t else 0.0)
        first, first_at = limits.first()
        rows.append(
            {
                "frequency_hz": frequency,
                "duration_s": duration,
                "steps": common["steps"],
                **balance.summary(),
                "min_normal_force_n": common["min_normal_force_n"],
                **limits.summary(),
                "limit": first,
                "limit_time_s": first_at,
                "qp_failure": common["qp_failure"],
            }
        )
        last = (log, controller)
        if kept is None and first is not None:
            kept = last
    bound = next((row for row in rows if row["limit"] is not None), None)
    log, controller = kept or last
    summary = {
        **summary_header(controller, NAME, dt, sum(row["duration_s"] for row in rows)),
        "amplitude_m": amplitude,
        "cycles": cycles,
        "first_limit_frequency_hz": None if bound is None else bound["frequency_hz"],
        "first_limit": None if bound is None else bound["limit"],
        "frequencies": rows,
        **setup.summary(),
        "com_error_max_m": max(row["com_error_max_m"] for row in rows),
        "max_torque_ratio": max(row["max_torque_ratio"] for row in rows),
        **runs.summary(failures_count=False),  # a frequency whose QP failed is an answer: see its row
    }
    result = CourseResult(summary, log, controller)
    result.outcome_figure = lambda: _figure(summary)
    return result


def _figure(summary: dict):
    """CoM error, the torque and friction ratios and the smallest corner force against frequency."""
    rows = summary["frequencies"]
    f = np.array([row["frequency_hz"] for row in rows])
    figure, axes = new_figure(
        3,
        1,
        f"{summary['robot']}, {NAME}: a = {summary['amplitude_m']:g} m, {summary['cycles']:g} cycles",
        8.0,
        2.4,
    )
    error, ratios, forces = axes[:, 0]
    error.semilogy(f, [row["com_error_max_m"] for row in rows], "o-", label="CoM error, max")
    error.semilogy(f, [row["com_error_rms_m"] for row in rows], "s-", label="CoM error, rms")
    error.set_ylabel("CoM error [m]")
    ratios.plot(
        f, [row["max_torque_ratio"] for row in rows], "o-", color="tab:red", label="max |tau| / tau_max"
    )
    ratios.plot(
        f,
        [row["max_foot_friction_ratio"] for row in rows],
        "s-",
        color="tab:orange",
        label="friction ratio (a foot)",
    )
    ratios.axhline(1.0, color="k", linestyle=":", linewidth=1)
    ratios.set_ylabel("ratio to the limit [-]")
    corner = [np.nan if row["min_corner_force_n"] is None else row["min_corner_force_n"] for row in rows]
    forces.plot(f, corner, "o-", color="tab:purple", label="smallest corner normal force")
    forces.plot(
        f,
        [row["min_normal_force_n"] for row in rows],
        "s-",
        color="tab:green",
        label="smallest foot normal force",
    )
    forces.set_yscale("symlog", linthresh=10.0)
    forces.axhline(0.0, color="k", linestyle=":", linewidth=1)
    forces.set_ylabel("normal force [N]")
    forces.set_xlabel("frequency [Hz]")
    for row in rows:
        if row["limit"] is not None:
            for ax in axes[:, 0]:
                ax.axvline(row["frequency_hz"], color=LIMIT_COLOURS[row["limit"]], alpha=0.15, linewidth=6)
    if summary["first_limit"] is not None:
        error.annotate(
            f"first limit: {summary['first_limit']} at {summary['first_limit_frequency_hz']:g} Hz",
            xy=(0.02, 0.9),
            xycoords="axes fraction",
        )
    finish(axes[:, 0], loc="lower right")
    return figure


SCENARIO = Scenario(
    NAME,
    SinusoidSweepParams,
    simulate,
    BipedController,
    __doc__,
    plan="choose --frequencies and --cycles",
    positional=4,
)
run, main = SCENARIO.run, SCENARIO.main
