"""Contact gains: the same CoM sway with the contact feedback gains at 0 and above 0; the feet's drift.

The TSID course asks: "set the contact feedback gains to zero: what happens?" A contact's motion
constraint is J dv + dJ v = -Kp e - Kd J v (e the foot's displacement from its reference; Kd =
2 sqrt(Kp)). With Kp = Kd = 0 it only asks for zero acceleration: nothing brings a foot back once
it moved, so the errors of the numerical integration (on the integrator plant, the explicit
step q+ = q (+) dt v+ of a contact that must not move) accumulate into a drift. With Kp > 0 the
feedback pulls each foot back to its reference and the drift stays bounded. On a simulator
(``--plant mujoco`` where MuJoCo is installed) the drift is physical: the soles slide and sink
into the ground, and the controller re-anchors its contacts where the plant measures the feet.

Both runs sway the CoM as ``com-sinusoid`` (a = 0.05 m, f = 0.5 Hz, 10 s); the summary gives the
largest and the final drift of the feet (position and rotation) in each.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin

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
    run_loop,
    sway,
)
from tsid_py.scenarios.parameters import param
from tsid_py.scenarios.runner import summary_header
from tsid_py.scenarios.scenario import RunOptions, Scenario
from tsid_py.scenarios.sway import SwayParams
from tsid_py.solvers import make_solver
from tsid_py.validation import as_scalar
from tsid_py.viz.style import finish, new_figure

NAME = "contact-gains"


class _Rotation(StepHooks):
    """The largest rotation of a foot from its initial orientation [rad], after each step."""

    def __init__(self, controller: BipedController) -> None:
        self.controller = controller
        self.start = {key: c.reference.rotation for key, c in controller.contacts.items()}
        self.angle = array("d")

    def after_step(self, state: MeasuredState, out: ControlOutput) -> None:
        self.angle.append(
            max(
                float(np.linalg.norm(pin.log3(start.T @ state.feet[key].placement.rotation)))
                for key, start in self.start.items()
            )
        )


@dataclass(frozen=True)
class ContactGainsParams(SwayParams):
    """The CoM sway of ``com-sinusoid``, twice: contact gain Kp = 0, then ``kp_contact``."""

    kp_contact: float = param(10.0, "contact gain Kp of the second run, > 0 (the first has 0)", unit="1/s^2")


def simulate(p: ContactGainsParams, options: RunOptions) -> CourseResult:
    """Sway the CoM for ``duration`` [s] twice, with the contact gain Kp = 0 and Kp = ``kp_contact``
    [1/s^2] (> 0; Kd = 2 sqrt(Kp) in both); the log and controller kept are those of Kp = 0."""
    kp_contact = as_scalar("kp_contact", p.kp_contact, minimum=0.0, strict=True)
    setup = options.setup
    model = load_robot(p.robot)
    runs, results = Runs(), {}
    kept = None
    for kp in (0.0, kp_contact):
        params = replace(BipedParams.for_robot(model), kp_contact=kp)
        controller = BipedController(model, params, solver=make_solver(p.backend))
        log = new_log(controller, setup)
        balance = Balance(controller, sway(controller, p.amplitude, p.frequency), log, per_step=True)
        rotation = _Rotation(controller)
        outcome = run_loop(
            controller, p.duration, p.dt, Chain(balance, rotation), log, options, f"{NAME} kp={kp:g}"
        )
        common = runs.add(outcome)
        drift = np.array(balance.foot_drift)
        results[kp] = {
            "kp_contact": kp,
            "foot_drift_max_m": balance.foot_drift_max,
            "foot_drift_final_m": float(drift[-1]) if drift.size else None,
            "foot_rotation_max_rad": max(rotation.angle, default=0.0),
            "com_error_max_m": balance.com_error_max,
            "steps": common["steps"],
            "qp_failure": common["qp_failure"],
            "fell": common["fell"],
            "t": np.array(balance.t),
            "drift": drift,
            "rotation": np.array(rotation.angle),
        }
        if kept is None:
            kept = (log, controller)
    zero, gain = results[0.0], results[kp_contact]
    summary = {
        **summary_header(kept[1], NAME, p.dt, p.duration),
        "amplitude_m": p.amplitude,
        "frequency_hz": p.frequency,
        "kp_contact": kp_contact,
        "foot_drift_kp0_m": zero["foot_drift_max_m"],
        "foot_drift_kp_m": gain["foot_drift_max_m"],
        "foot_drift_final_kp0_m": zero["foot_drift_final_m"],
        "foot_drift_final_kp_m": gain["foot_drift_final_m"],
        "foot_rotation_kp0_rad": zero["foot_rotation_max_rad"],
        "foot_rotation_kp_rad": gain["foot_rotation_max_rad"],
        "drift_ratio": zero["foot_drift_max_m"] / gain["foot_drift_max_m"]
        if gain["foot_drift_max_m"] > 0
        else None,
        "runs": [
            {k: v for k, v in r.items() if k not in ("t", "drift", "rotation")} for r in results.values()
        ],
        **setup.summary(),
        **runs.summary(),
    }
    result = CourseResult(summary, *kept)
    result.outcome_figure = lambda: _figure(summary, results)
    return result


def _figure(summary: dict, results: dict):
    """The feet's drift (position, rotation) against time, with Kp = 0 and Kp > 0, log scale."""
    figure, axes = new_figure(
        2, 1, f"{summary['robot']}, {NAME}: drift of the feet ({summary['plant']} plant)", 8.0, 2.6
    )
    position, rotation = axes[:, 0]
    for run in results.values():
        label = f"contact Kp = {run['kp_contact']:g}"
        position.semilogy(run["t"], np.maximum(run["drift"], 1e-16), label=label)
        rotation.semilogy(run["t"], np.maximum(run["rotation"], 1e-16), label=label)
    position.set_ylabel("largest foot drift [m]")
    rotation.set_ylabel("largest foot rotation [rad]")
    rotation.set_xlabel("time [s]")
    for ax in axes[:, 0]:
        ax.set_ylim(bottom=1e-10)
    finish(axes[:, 0], which="both")
    return figure


SCENARIO = Scenario(NAME, ContactGainsParams, simulate, BipedController, __doc__)
run, main = SCENARIO.run, SCENARIO.main
