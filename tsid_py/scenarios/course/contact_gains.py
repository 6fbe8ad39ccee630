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

import argparse
from array import array
from dataclasses import replace

import numpy as np
import pinocchio as pin

from tsid_py.controllers.biped import BipedController, BipedParams
from tsid_py.loop.control_loop import Observer, StepHooks
from tsid_py.loop.controller import ControlOutput
from tsid_py.robot_specs import load_robot
from tsid_py.scenarios.cli_support import (
    add_common_arguments,
    add_plant_arguments,
    add_sway_arguments,
    loop_setup,
    scenario_main,
)
from tsid_py.scenarios.course.common import (
    Balance,
    Chain,
    CourseResult,
    Runs,
    header,
    new_figure,
    new_log,
    run_loop,
    sway,
)
from tsid_py.scenarios.runner import LoopSetup
from tsid_py.solvers import make_solver
from tsid_py.validation import as_scalar

NAME = "contact-gains"
CONTROLLER = BipedController  # what it runs (a sweep checks its robots with check_spec)


class _Rotation(StepHooks):
    """The largest rotation of a foot from its initial orientation [rad], after each step."""

    def __init__(self, controller: BipedController) -> None:
        self.controller = controller
        self.start = {key: c.reference.rotation for key, c in controller.contacts.items()}
        self.angle = array("d")

    def after_step(self, t: float, q: np.ndarray, v: np.ndarray, out: ControlOutput) -> None:
        self.angle.append(
            max(
                float(np.linalg.norm(pin.log3(start.T @ self.controller.foot_placement(key).rotation)))
                for key, start in self.start.items()
            )
        )


def run(
    robot: str = "talos",
    duration: float = 10.0,
    dt: float = 0.002,
    amplitude: float = 0.05,
    frequency: float = 0.5,
    kp_contact: float = 10.0,
    backend: str = "quadprog",
    progress: bool = False,
    observer: Observer | None = None,
    setup: LoopSetup | None = None,
) -> CourseResult:
    """Sway the CoM for ``duration`` [s] twice, with the contact gain Kp = 0 and Kp = ``kp_contact``
    [1/s^2] (> 0; Kd = 2 sqrt(Kp) in both); the log and controller kept are those of Kp = 0."""
    kp_contact = as_scalar("kp_contact", kp_contact, minimum=0.0, strict=True)
    setup = setup or LoopSetup()
    model = load_robot(robot)
    runs, results = Runs(), {}
    kept = None
    for kp in (0.0, kp_contact):
        params = replace(BipedParams.for_robot(model), kp_contact=kp)
        controller = BipedController(model, params, solver=make_solver(backend))
        log = new_log(controller, setup)
        balance = Balance(controller, sway(controller, amplitude, frequency), log, per_step=True)
        rotation = _Rotation(controller)
        outcome = run_loop(
            controller,
            duration,
            dt,
            Chain(balance, rotation),
            log,
            setup,
            f"{NAME} kp={kp:g}",
            progress,
            observer,
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
        **header(kept[1], NAME, dt, duration),
        "amplitude_m": amplitude,
        "frequency_hz": frequency,
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
        ax.grid(True, alpha=0.3, which="both")
        ax.legend(loc="best", fontsize="small")
    return figure


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(parser, robot="talos", duration=10.0)
    add_sway_arguments(parser, amplitude=0.05, frequency=0.5)
    parser.add_argument(
        "--kp-contact",
        type=float,
        default=10.0,
        help="contact gain Kp of the second run [1/s^2] (> 0; the first has 0) (default: 10)",
    )
    add_plant_arguments(parser)


def run_from_args(args: argparse.Namespace, observer: Observer | None = None) -> CourseResult:
    return run(
        args.robot,
        args.duration,
        args.dt,
        args.amplitude,
        args.frequency,
        args.kp_contact,
        args.backend,
        not args.json,
        observer,
        loop_setup(args),
    )


def main(argv: list[str] | None = None) -> int:
    return scenario_main(NAME, add_arguments, run_from_args, __doc__.splitlines()[0], argv)
