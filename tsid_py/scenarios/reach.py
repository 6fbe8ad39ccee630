"""Reach: a UR5 arm (fixed base) moves its end effector to a target or along a circle.

TSID's manipulator exercise (exercizes/ex_1_ur5.py with ur5_reaching_conf.py / ur5_conf.py):
q0 = (0, -1, 0.7, 0, 0, 0), end effector ``ee_fixed_joint``, position-only task in world axes.

- ``--mode target`` (default): reach p_0 + offset (offset (0.1, 0, 0) m as in TSID), kp_ee = 100.
- ``--mode sinusoid``: track p(t) = c + a sin(2 pi f t + phi) with TSID's a = (0, 0.1, 0.1) m,
  f = (1.4, 0.7, 0.7) Hz, phi = (0, pi/2, 0), kp_ee = 5. TSID centres it on p_0, so its reference
  jumps 0.1 m at t = 0; we centre it on c = p_0 - (0, 0.1, 0) so that it starts at p_0.

The summary reports the end-effector error |p - p_ref| (max, rms, final) next to the torque and
equation-of-motion checks of every step.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tsid_py.controllers.arm import ArmController, ArmParams
from tsid_py.errors import InvalidParameterError
from tsid_py.loop.control_loop import ControlLoop, Observer, StepHooks
from tsid_py.loop.controller import ControlOutput
from tsid_py.loop.log import RunLog
from tsid_py.robot_specs import load_robot
from tsid_py.scenarios.cli_support import add_common_arguments, scenario_main
from tsid_py.scenarios.runner import RunResult
from tsid_py.solvers import make_solver
from tsid_py.trajectories import TrajectoryEuclidianConstant, TrajectoryEuclidianSinusoid, TrajectorySample
from tsid_py.validation import as_scalar, as_vector

MODES = ("target", "sinusoid")
KP_EE = {"target": 100.0, "sinusoid": 5.0}
SINUSOID_AMPLITUDE = np.array([0.0, 0.1, 0.1])  # [m]
SINUSOID_FREQUENCY = np.array([1.4, 0.7, 0.7])  # [Hz]
SINUSOID_PHASE = np.array([0.0, 0.5 * np.pi, 0.0])  # [rad]
SUMMARY_KEYS = (
    "steps",
    "qp_failures",
    "max_torque_ratio",
    "dynamics_residual_max",
    "step_time_median_us",
    "step_time_p99_us",
)  # of the loop's summary: an arm has no contacts


@dataclass
class ArmRunLog(RunLog):
    """A :class:`RunLog` with the end-effector position and its reference (steps, 3) [m]."""

    ee: list[np.ndarray] = field(default_factory=list)
    ee_ref: list[np.ndarray] = field(default_factory=list)

    def arrays(self) -> dict[str, np.ndarray]:
        out = super().arrays()
        out.update(ee=np.array(self.ee), ee_ref=np.array(self.ee_ref))
        return out


def ee_reference(mode: str, start: np.ndarray, offset: np.ndarray) -> Callable[[float], TrajectorySample]:
    """The end-effector reference of a mode, as a function of time [s] -> position sample [m]."""
    if mode == "target":
        return TrajectoryEuclidianConstant("ee", start + offset).sample
    if mode == "sinusoid":
        center = start - SINUSOID_AMPLITUDE * np.sin(SINUSOID_PHASE)
        return TrajectoryEuclidianSinusoid(
            "ee", center, SINUSOID_AMPLITUDE, SINUSOID_FREQUENCY, SINUSOID_PHASE
        ).sample
    raise InvalidParameterError(f"mode must be one of {MODES}, got {mode!r}")


def run(
    robot: str = "ur5",
    duration: float = 2.0,
    dt: float = 0.002,
    mode: str = "target",
    offset: object = (0.1, 0.0, 0.0),
    backend: str = "quadprog",
    progress: bool = False,
    observer: Observer | None = None,
) -> RunResult:
    """Run the arm for ``duration`` seconds; ``offset`` [m] is the target relative to p_0 (mode target)."""
    if mode not in MODES:
        raise InvalidParameterError(f"mode must be one of {MODES}, got {mode!r}")
    duration = as_scalar("duration", duration, minimum=0.0, strict=True)
    dt = as_scalar("dt", dt, minimum=0.0, strict=True)
    offset = as_vector("offset", offset, 3)
    controller = ArmController(load_robot(robot), dt, ArmParams(kp_ee=KP_EE[mode]), make_solver(backend))
    log = ArmRunLog()
    hooks = _Reach(controller, ee_reference(mode, controller.ee_initial, offset), log)
    outcome = ControlLoop(controller, dt, log=log).run(
        int(round(duration / dt)), hooks, progress, "reach", observer
    )
    error = log.distances("ee", "ee_ref") if log.ee else np.full(1, np.nan)
    velocity_ratio = np.max(np.abs(np.array(log.v)) / controller.v_max) if log.v else float("nan")
    common = outcome.summary()
    summary = {
        "robot": controller.robot.name,
        "scenario": f"reach-{mode}",
        "dt_s": dt,
        "duration_s": duration,
        "ee_error_max_m": float(error.max()),
        "ee_error_rms_m": float(np.sqrt(np.mean(error**2))),
        "ee_error_final_m": float(error[-1]),
        "max_velocity_ratio": float(velocity_ratio),
        **{key: common[key] for key in SUMMARY_KEYS},
    }
    if mode == "target":
        summary["ee_target_distance_m"] = float(np.linalg.norm(offset))
    return RunResult(summary, log, controller)


class _Reach(StepHooks):
    """Set the end-effector reference before each step; record the end effector and its reference after."""

    def __init__(
        self, controller: ArmController, reference: Callable[[float], TrajectorySample], log: ArmRunLog
    ) -> None:
        self.controller, self.reference, self.log = controller, reference, log
        self.sample: TrajectorySample | None = None

    def before_step(self, t: float, q: np.ndarray, v: np.ndarray) -> None:
        self.sample = self.reference(t)
        self.controller.set_ee_reference(self.sample)

    def after_step(self, t: float, q: np.ndarray, v: np.ndarray, out: ControlOutput) -> None:
        self.log.ee.append(self.controller.ee_placement().translation)
        self.log.ee_ref.append(self.sample.pos)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(parser, robot="ur5", duration=2.0)
    parser.add_argument(
        "--mode",
        choices=MODES,
        default="target",
        help="reach a fixed target or track a circle (default: target)",
    )
    parser.add_argument(
        "--offset",
        type=float,
        nargs=3,
        default=(0.1, 0.0, 0.0),
        metavar=("DX", "DY", "DZ"),
        help="target relative to the initial end-effector position [m] (default: 0.1 0 0)",
    )


def run_from_args(args: argparse.Namespace, observer: Observer | None = None) -> RunResult:
    return run(
        args.robot, args.duration, args.dt, args.mode, args.offset, args.backend, not args.json, observer
    )


def main(argv: list[str] | None = None) -> int:
    return scenario_main("reach", add_arguments, run_from_args, __doc__.splitlines()[0], argv)
