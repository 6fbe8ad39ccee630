"""Talos in MuJoCo: the real-time factor of the closed loop, and what the loop itself costs.

    python benchmarks/mujoco_loop.py [--duration 10] [--rounds 3] [--out FILE]

Prints one JSON object. For the balance (in torque and position mode) and the 8-step walk (torque
mode) at a 2 ms control period, MuJoCo at 1 kHz, the physics checks of the controller's solutions
at the plant's default rate (every 10th step on MuJoCo), every step and never: the real-time
factor of the whole loop (median over the rounds), the controller's median step time, the CoM
drift and the verdict. At the default rate, the loop's own cost part by part, each as the mean
over the steps [us] (a part that runs one step in ten counts a tenth of its cost) and as a
fraction of the controller's mean step:

- ``plant_state``: the plant's state read (q, v, the contacts measured);
- ``measure``: the measured state built from it (its one kinematics pass);
- ``mujoco_step``: MuJoCo stepping the physics (the simulator, not the loop: not in the sum);
- ``verdict``: the balance judge reading the measured state;
- ``decide``: the controller taking in the measured state (contact feedback, its strategies, the
  feet's steps);
- ``check``: the physics check of the solution;
- ``logging``: the log's record of the step;
- ``scenario``: the scenario's hooks (its references before the step, its measurements after);
- ``rest``: the rest of the loop (the position targets, the command; the step minus the parts).

``loop_own_fraction`` sums all but ``mujoco_step``: the loop's own cost, at most 0.25 of the
controller's step (issue 40). ``real_time_limit`` is the real-time factor of the controller's
step and MuJoCo's alone. The largest pushes recovered: ``benchmarks/push_recovery.py``. Needs
``[sim]``.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from machine import describe, emit  # noqa: E402

from tsid_py.loop import control_loop  # noqa: E402
from tsid_py.loop.measured import Measurer  # noqa: E402
from tsid_py.loop.verdict import BalanceJudge  # noqa: E402
from tsid_py.physics import SolutionChecker  # noqa: E402
from tsid_py.scenarios import balance, walk  # noqa: E402
from tsid_py.scenarios.runner import LoopSetup  # noqa: E402

DT = 0.002  # [s] the scenarios' control period
KEYS = ("real_time_factor", "step_time_median_us", "com_drift_max_m", "foot_drift_max_m", "verdict")
PARTS = (
    "plant_state",
    "measure",
    "mujoco_step",
    "verdict",
    "decide",
    "check",
    "logging",
    "scenario",
    "rest",
)


class _Clock:
    """Per-step times [s] of the loop's parts, from wrappers put around them for one run."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {name: [] for name in (*PARTS, "controller", "step")}
        self._step: dict[str, float] = {}

    def timed(self, part: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self._step[part] = self._step.get(part, 0.0) + time.perf_counter() - start

        return wrapper

    def close_step(self, total: float) -> None:
        if "controller" not in self._step:  # the step ended before the controller ran
            self._step.clear()
            return
        for part in self.times:
            self.times[part].append(self._step.get(part, 0.0))
        self.times["step"][-1] = total
        parts = sum(self._step.get(part, 0.0) for part in PARTS if part != "rest")
        self.times["rest"][-1] = total - parts - self._step["controller"]
        self._step.clear()

    def breakdown(self, dt: float) -> dict[str, object]:
        controller = float(np.mean(self.times["controller"]))
        means = {part: float(np.mean(self.times[part])) for part in PARTS}
        own = sum(value for part, value in means.items() if part != "mujoco_step")
        return {
            "controller_step_us": 1e6 * controller,
            **{f"{part}_us": 1e6 * value for part, value in means.items()},
            **{f"{part}_fraction": value / controller for part, value in means.items()},
            "loop_own_us": 1e6 * own,
            "loop_own_fraction": own / controller,
            "real_time_factor": dt / float(np.mean(self.times["step"])),
            "real_time_limit": dt / (controller + means["mujoco_step"]),
        }


@contextmanager
def clocked(clock: _Clock):
    """Time the parts of the loops run inside (wrappers on the run's own objects, and on the
    judge's and the check's functions, taken off after)."""
    run_class, loop_run = control_loop._Run, control_loop.ControlLoop.run
    step, observe, check = run_class.step, BalanceJudge.observe, SolutionChecker.check
    measure = Measurer.measure

    def run(loop, steps, hooks=None, *args, **kwargs):
        controller, plant, log = loop.controller, loop.plant, loop.log
        controller.compute = clock.timed("controller", controller.compute)
        controller.observe = clock.timed("decide", controller.observe)
        plant.state = clock.timed("plant_state", plant.state)
        plant.advance = clock.timed("mujoco_step", plant.advance)
        log.record_step = clock.timed("logging", log.record_step)
        if hooks is not None:
            hooks.before_step = clock.timed("scenario", hooks.before_step)
            hooks.after_step = clock.timed("scenario", hooks.after_step)
        return loop_run(loop, steps, hooks, *args, **kwargs)

    def timed_step(self):
        start = time.perf_counter()
        result = step(self)
        clock.close_step(time.perf_counter() - start)
        return result

    control_loop.ControlLoop.run = run
    run_class.step = timed_step
    BalanceJudge.observe = clock.timed("verdict", observe)
    SolutionChecker.check = clock.timed("check", check)
    Measurer.measure = clock.timed("measure", measure)
    try:
        yield clock
    finally:
        control_loop.ControlLoop.run, run_class.step = loop_run, step
        BalanceJudge.observe, SolutionChecker.check, Measurer.measure = observe, check, measure


def run_scenario(name: str, duration: float, mode: str, check_every: int | None) -> dict[str, Any]:
    if name == "balance":
        return balance.run(duration=duration, plant="mujoco", mode=mode, check_every=check_every).summary
    return walk.run(setup=LoopSetup("mujoco", mode=mode, check_every=check_every)).summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=10.0, help="of the balance runs [s]")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each case (medians reported)")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    args = parser.parse_args()
    out: dict[str, object] = {"machine": describe(), "load_average_before": os.getloadavg()}
    cases = [("balance", "torque"), ("balance", "position"), ("walk", "torque")]
    for name, mode in cases:
        for check_every in (None, 1, 0):  # the physics checks: the plant's default (10), every step, none
            runs = [run_scenario(name, args.duration, mode, check_every) for _ in range(args.rounds)]
            result = {key: runs[-1].get(key) for key in KEYS}  # (the walk has no CoM drift)
            for key in ("real_time_factor", "step_time_median_us"):
                result[key] = float(np.median([run[key] for run in runs]))
            out[f"{name}_{mode}_check_every_{'default' if check_every is None else check_every}"] = result
        breakdowns = []
        for _ in range(args.rounds):
            with clocked(_Clock()) as clock:
                run_scenario(name, args.duration, mode, None)
            breakdowns.append(clock.breakdown(DT))
        out[f"{name}_{mode}_breakdown"] = {
            key: float(np.median([b[key] for b in breakdowns])) for key in breakdowns[0]
        }
    out["load_average_after"] = os.getloadavg()
    emit(out, args.out)


if __name__ == "__main__":
    main()
