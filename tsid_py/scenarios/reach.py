"""Reach: an arm (fixed base; UR5 by default) moves its end effector to a target or along a circle.

TSID's manipulator exercise (exercizes/ex_1_ur5.py with ur5_reaching_conf.py / ur5_conf.py):
q0 = (0, -1, 0.7, 0, 0, 0), end effector ``ee_fixed_joint``, position-only task in world axes.

- ``--motion target`` (default): reach p_0 + offset (offset (0.1, 0, 0) m as in TSID), kp_ee = 100.
- ``--motion sinusoid``: track p(t) = c + a sin(2 pi f t + phi) with TSID's a = (0, 0.1, 0.1) m,
  f = (1.4, 0.7, 0.7) Hz, phi = (0, pi/2, 0), kp_ee = 5. TSID centres it on p_0, so its reference
  jumps 0.1 m at t = 0; we centre it on c = p_0 - (0, 0.1, 0) so that it starts at p_0.

The summary reports the end-effector error |p - p_ref| (max, rms, final) next to the torque and
equation-of-motion checks of every step. ``--plant`` and ``--mode`` (torque or position commands)
choose what the arm drives, as for every scenario.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tsid_py.controllers.arm import ArmController, ArmParams
from tsid_py.errors import InvalidParameterError
from tsid_py.loop.control_loop import StepHooks, control_steps
from tsid_py.loop.controller import ControlOutput
from tsid_py.loop.log import RunLog
from tsid_py.loop.measured import MeasuredState
from tsid_py.robot_specs import load_robot
from tsid_py.scenarios.parameters import ScenarioParams, param, robot_spec, simulated_time
from tsid_py.scenarios.runner import RunResult, summary_header
from tsid_py.scenarios.scenario import RunOptions, Scenario
from tsid_py.solvers import make_solver
from tsid_py.trajectories import TrajectoryEuclidianConstant, TrajectoryEuclidianSinusoid, TrajectorySample
from tsid_py.validation import as_vector

MOTIONS = ("target", "sinusoid")
KP_EE = {"target": 100.0, "sinusoid": 5.0}
SINUSOID_AMPLITUDE = np.array([0.0, 0.1, 0.1])  # [m]
SINUSOID_FREQUENCY = np.array([1.4, 0.7, 0.7])  # [Hz]
SINUSOID_PHASE = np.array([0.0, 0.5 * np.pi, 0.0])  # [rad]
SUMMARY_KEYS = (
    "steps",
    "qp_failures",
    "qp_failure",
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


def ee_reference(motion: str, start: np.ndarray, offset: np.ndarray) -> Callable[[float], TrajectorySample]:
    """The end-effector reference of a motion, as a function of time [s] -> position sample [m]."""
    if motion == "target":
        return TrajectoryEuclidianConstant("ee", start + offset).sample
    if motion == "sinusoid":
        center = start - SINUSOID_AMPLITUDE * np.sin(SINUSOID_PHASE)
        return TrajectoryEuclidianSinusoid(
            "ee", center, SINUSOID_AMPLITUDE, SINUSOID_FREQUENCY, SINUSOID_PHASE
        ).sample
    raise InvalidParameterError(f"motion must be one of {MOTIONS}, got {motion!r}")


@dataclass(frozen=True)
class ReachParams(ScenarioParams):
    """Reach p_0 + ``offset`` (motion target) or track TSID's sinusoid (motion sinusoid)."""

    robot: str = robot_spec("ur5")
    duration: float = simulated_time(2.0)
    motion: str = param("target", "reach a fixed target or track a circle", choices=MOTIONS)
    offset: tuple[float, ...] = param(
        (0.1, 0.0, 0.0),
        "target relative to the initial end-effector position",
        unit="m",
        parse=float,
        nargs=3,
        metavar=("DX", "DY", "DZ"),
        sweep=False,
    )


def simulate(p: ReachParams, options: RunOptions) -> RunResult:
    """Run the arm for ``duration`` seconds towards its target or along its circle."""
    motion, setup = p.motion, options.setup
    if motion not in MOTIONS:
        raise InvalidParameterError(f"motion must be one of {MOTIONS}, got {motion!r}")
    if setup.mode in MOTIONS:
        raise InvalidParameterError(
            f"reach's {setup.mode!r} is its motion: motion={setup.mode!r} (mode is the command mode, "
            "torque or position)"
        )
    steps, dt = control_steps(p.duration, p.dt), p.dt
    offset = as_vector("offset", p.offset, 3)
    controller = ArmController(
        load_robot(p.robot), dt, ArmParams(kp_ee=KP_EE[motion]), make_solver(p.backend)
    )
    if motion == "target":  # refused before the run: one line, with the arm's reach
        controller.check_reachable(controller.ee_initial + offset)
    log = setup.new_log(ArmRunLog)
    hooks = _Reach(controller, ee_reference(motion, controller.ee_initial, offset), log)
    outcome = setup.loop(controller, dt, log).run(steps, hooks, options.progress, "reach", options.observer)
    common = outcome.summary()
    summary = {
        **summary_header(controller, f"reach-{motion}", dt, p.duration),
        **hooks.summary(),
        **{key: common[key] for key in SUMMARY_KEYS},
        **setup.summary(),
    }
    if motion == "target":
        summary["ee_target_distance_m"] = float(np.linalg.norm(offset))
    return RunResult(summary, log, controller)


class _Reach(StepHooks):
    """Set the end-effector reference before each step; after it, record the end effector and its
    reference, and keep the tracking error and the velocity ratio as the run goes (the log may
    keep only its last steps)."""

    def __init__(
        self, controller: ArmController, reference: Callable[[float], TrajectorySample], log: ArmRunLog
    ) -> None:
        self.controller, self.reference, self.log = controller, reference, log
        self.sample: TrajectorySample | None = None
        self.error_max, self.error_squares, self.error, self.steps = 0.0, 0.0, float("nan"), 0
        self.velocity_ratio = float("nan")

    def before_step(self, state: MeasuredState) -> None:
        self.sample = self.reference(state.t)
        self.controller.set_ee_reference(self.sample)

    def after_step(self, state: MeasuredState, out: ControlOutput) -> None:
        ee, reference = self.controller.ee_placement().translation, self.sample.pos  # type: ignore[union-attr]
        self.log.ee.append(ee)
        self.log.ee_ref.append(reference)
        self.error = float(np.linalg.norm(ee - reference))
        self.error_max = max(self.error_max, self.error)
        self.error_squares += self.error**2
        self.steps += 1
        ratio = float(np.max(np.abs(state.v) / self.controller.v_max))
        self.velocity_ratio = ratio if self.steps == 1 else max(self.velocity_ratio, ratio)

    def summary(self) -> dict[str, float]:
        """The end-effector error's max, rms and last value [m], and the largest |v| / v_max."""
        return {
            "ee_error_max_m": self.error_max if self.steps else float("nan"),
            "ee_error_rms_m": float(np.sqrt(self.error_squares / self.steps)) if self.steps else float("nan"),
            "ee_error_final_m": self.error,
            "max_velocity_ratio": self.velocity_ratio,
        }


SCENARIO = Scenario("reach", ReachParams, simulate, ArmController, __doc__)
run, main = SCENARIO.run, SCENARIO.main
