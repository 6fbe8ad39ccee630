"""Gains and weights: the CoM sway over a grid of CoM / posture gains and of CoM / posture weights.

The TSID course asks: "change the CoM and posture gains and weights and see the effect". The CoM
task and the posture task are both costs of level 1, and they disagree: a CoM that sways needs the
joints to leave the reference posture. Each run sways the CoM as ``com-sinusoid`` (a = 0.05 m,
f = 0.5 Hz) for ``--duration`` seconds, on two grids:

- gains: Kp of the CoM (``--kp-com``) times the scale of the posture gains of the robot spec
  (``--kp-posture``), at the default weights;
- weights: the CoM task's weight (``--w-com``) times the posture task's (``--w-posture``), at the
  default gains.

At each point the summary gives the CoM tracking error (rms and max, [m]) and the posture error
(the rms over the actuated joints of q - q_ref, its rms and max over time, [rad]); the figure draws
both as heat maps. A stiffer or heavier CoM task tracks better and leaves the posture further; a
stiffer or heavier posture task the other way round. The weights count against each other and
against the costs that stay fixed (the angular momentum task, 1e-3, the force regularisation,
1e-5): scaling both by 10 is not the same problem.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tsid_py.controllers.biped import BipedController, BipedParams
from tsid_py.loop.control_loop import StepHooks
from tsid_py.loop.controller import ControlOutput
from tsid_py.loop.measured import MeasuredState
from tsid_py.robot_specs import load_robot
from tsid_py.scenarios.course.common import (
    Balance,
    Chain,
    CourseResult,
    Runs,
    new_log,
    positive_values,
    run_loop,
    sway,
    values_param,
)
from tsid_py.scenarios.parameters import simulated_time
from tsid_py.scenarios.runner import summary_header
from tsid_py.scenarios.scenario import RunOptions, Scenario
from tsid_py.scenarios.sway import SwayParams
from tsid_py.solvers import make_solver
from tsid_py.viz.style import new_figure

NAME = "gains-weights"
KP_COM = (1.0, 10.0, 100.0)  # [1/s^2]
KP_POSTURE = (0.1, 1.0, 10.0)  # times the spec's posture gains
W_COM = (0.1, 1.0, 10.0)
W_POSTURE = (0.01, 0.1, 1.0)
GRIDS = {  # grid: (its two BipedParams fields, their labels)
    "gains": (("kp_com", "kp_posture_scale"), ("CoM Kp [1/s^2]", "posture gain scale")),
    "weights": (("w_com", "w_posture"), ("CoM weight", "posture weight")),
}


class _Posture(StepHooks):
    """The posture error of each step: the rms over the actuated joints of q - q_ref [rad]."""

    def __init__(self, controller: BipedController) -> None:
        robot = controller.robot
        self.first = robot.nq - robot.nq_actuated
        self.reference = controller.q0[self.first :]
        self.squares, self.worst, self.steps = 0.0, 0.0, 0

    def after_step(self, state: MeasuredState, out: ControlOutput) -> None:
        error = float(np.sqrt(np.mean((state.q[self.first :] - self.reference) ** 2)))
        self.squares += error * error
        self.worst = max(self.worst, error)
        self.steps += 1

    def summary(self) -> dict[str, float]:
        return {
            "posture_error_rms_rad": float(np.sqrt(self.squares / max(self.steps, 1))),
            "posture_error_max_rad": self.worst,
        }


@dataclass(frozen=True)
class GainsWeightsParams(SwayParams):
    """The CoM sway of ``com-sinusoid`` over a grid of gains and one of weights."""

    duration: float = simulated_time(4.0)
    kp_com: tuple[float, ...] = values_param(KP_COM, "CoM gains Kp", unit="1/s^2")
    kp_posture: tuple[float, ...] = values_param(KP_POSTURE, "scales of the spec's posture gains")
    w_com: tuple[float, ...] = values_param(W_COM, "CoM task weights")
    w_posture: tuple[float, ...] = values_param(W_POSTURE, "posture task weights")


def simulate(p: GainsWeightsParams, options: RunOptions) -> CourseResult:
    """Sway the CoM for ``duration`` [s] at every point of the gains grid (``kp_com`` [1/s^2] x
    ``kp_posture``, a scale of the spec's posture gains) and of the weights grid (``w_com`` x
    ``w_posture``); the log and controller kept are those of the robot's default parameters when
    a grid holds them, else of the first run."""
    setup = options.setup
    axes = {
        "gains": (positive_values("kp_com", p.kp_com), positive_values("kp_posture", p.kp_posture)),
        "weights": (positive_values("w_com", p.w_com), positive_values("w_posture", p.w_posture)),
    }
    model = load_robot(p.robot)
    defaults = BipedParams.for_robot(model)
    runs, points = Runs(), []
    kept = None
    for grid, ((first, second), _) in GRIDS.items():
        for a in axes[grid][0]:
            for b in axes[grid][1]:
                params = replace(defaults, **{first: a, second: b})
                controller = BipedController(model, params, solver=make_solver(p.backend))
                log = new_log(controller, setup)
                balance = Balance(controller, sway(controller, p.amplitude, p.frequency), log)
                posture = _Posture(controller)
                outcome = run_loop(
                    controller,
                    p.duration,
                    p.dt,
                    Chain(balance, posture),
                    log,
                    options,
                    f"{NAME} {first}={a:g} {second}={b:g}",
                )
                common = runs.add(outcome)
                points.append(
                    {
                        "grid": grid,
                        first: a,
                        second: b,
                        "com_error_rms_m": balance.summary()["com_error_rms_m"],
                        "com_error_max_m": balance.com_error_max,
                        **posture.summary(),
                        "qp_failure": common["qp_failure"],
                    }
                )
                if kept is None or (params == defaults and kept[2] != defaults):
                    kept = (log, controller, params)
    log, controller, _ = kept
    summary = {
        **summary_header(controller, NAME, p.dt, p.duration),
        "amplitude_m": p.amplitude,
        "frequency_hz": p.frequency,
        "defaults": {name: getattr(defaults, name) for (fields, _) in GRIDS.values() for name in fields},
        "points": points,
        **setup.summary(),
        **runs.summary(failures_count=False),  # a point whose QP failed is an answer: see its row
    }
    result = CourseResult(summary, log, controller)
    result.outcome_figure = lambda: _figure(summary, axes)
    return result


def grid_matrix(
    points: list[dict], grid: str, key: str, rows: list[float], columns: list[float]
) -> np.ndarray:
    """The values of ``key`` over a grid as a matrix, rows the first axis, columns the second (NaN
    where a run failed)."""
    (first, second), _ = GRIDS[grid]
    out = np.full((len(rows), len(columns)), np.nan)
    for point in points:
        if point["grid"] == grid and point["qp_failure"] is None:
            out[rows.index(point[first]), columns.index(point[second])] = point[key]
    return out


def _figure(summary: dict, axes_values: dict):
    """Heat maps: the CoM error and the posture error (rms) over each grid."""
    from matplotlib.colors import LogNorm

    figure, axes = new_figure(
        2,
        2,
        f"{summary['robot']}, {NAME}: CoM sway, a = {summary['amplitude_m']:g} m, "
        f"f = {summary['frequency_hz']:g} Hz",
        10.0,
        3.6,
    )
    for i, (grid, (_, labels)) in enumerate(GRIDS.items()):
        rows, columns = axes_values[grid]
        for j, (key, title, scale, unit) in enumerate(
            (
                ("com_error_rms_m", "CoM error, rms", 1e3, "mm"),
                ("posture_error_rms_rad", "posture error, rms", 1e3, "mrad"),
            )
        ):
            ax = axes[i, j]
            values = scale * grid_matrix(summary["points"], grid, key, rows, columns)
            finite = values[np.isfinite(values) & (values > 0)]
            norm = (
                LogNorm(finite.min(), finite.max()) if finite.size and finite.min() < finite.max() else None
            )
            image = ax.imshow(values, origin="lower", cmap="viridis", norm=norm, aspect="auto")
            for (r, c), value in np.ndenumerate(values):
                red, green, blue, _ = image.cmap(image.norm(value)) if np.isfinite(value) else (1, 1, 1, 1)
                ink = "k" if 0.299 * red + 0.587 * green + 0.114 * blue > 0.5 else "w"
                text = f"{value:.3g}" if np.isfinite(value) else "failed"
                ax.text(c, r, text, ha="center", va="center", color=ink, fontsize="small")
            ax.set_xticks(range(len(columns)), [f"{v:g}" for v in columns])
            ax.set_yticks(range(len(rows)), [f"{v:g}" for v in rows])
            ax.set_xlabel(labels[1])
            ax.set_ylabel(labels[0])
            ax.set_title(f"{title} [{unit}], {grid}")
            figure.colorbar(image, ax=ax)
    return figure


SCENARIO = Scenario(NAME, GainsWeightsParams, simulate, BipedController, __doc__)
run, main = SCENARIO.run, SCENARIO.main
