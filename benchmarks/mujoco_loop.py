"""Talos in MuJoCo: the real-time factor of the closed loop and the largest lateral push survived.

    python benchmarks/mujoco_loop.py [--duration 10] [--push-range 100 600] [--resolution 10]

Prints one JSON object: for balance in torque and position mode, the real-time factor of the
whole loop (controller, MuJoCo at 1 kHz, logging; the physics checks of the controller's solutions
every step, every 10th and never) at a 2 ms control period and its CoM drift;
then, by bisection on the force of a lateral push (world y) of 0.1 s at t = 1 s, the largest
push survived, with and without contact feedback. Needs the ``[sim]`` extra.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import json  # noqa: E402

from machine import cpu_name  # noqa: E402

from tsid_py.controllers.biped import BipedController  # noqa: E402
from tsid_py.loop import Push  # noqa: E402
from tsid_py.scenarios import balance  # noqa: E402


def survives(force: float, feedback: bool) -> bool:
    """Whether Talos on MuJoCo stays up 1.5 s after a push of ``force`` [N] along y at t = 1 s."""
    observe = BipedController.observe
    if not feedback:  # the controller as the C++ TSID runs it: two rigid contacts, whatever happens
        BipedController.observe = lambda self, state: None
    try:
        run = balance.run(duration=2.5, plant="mujoco", push=Push((0.0, force, 0.0), 1.0, 0.1))
    finally:
        BipedController.observe = observe
    return not run.summary["fell"]


def largest_push(low: float, high: float, resolution: float, feedback: bool) -> float:
    """Bisection between a push survived (``low``) and one not (``high``) [N]."""
    if not survives(low, feedback):
        return float("nan")
    while high - low > resolution:
        middle = 0.5 * (low + high)
        low, high = (middle, high) if survives(middle, feedback) else (low, middle)
    return low


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--push-range", type=float, nargs=2, default=(100.0, 600.0))
    parser.add_argument("--resolution", type=float, default=10.0)
    args = parser.parse_args()
    out: dict[str, object] = {"machine": cpu_name()}
    for mode in ("torque", "position"):
        for check_every in (1, 10, 0):  # the loop's physics checks: every step, every 10th, none
            s = balance.run(
                duration=args.duration, plant="mujoco", mode=mode, check_every=check_every
            ).summary
            out[f"balance_{mode}_check_every_{check_every}"] = {
                key: s[key]
                for key in (
                    "real_time_factor",
                    "step_time_median_us",
                    "com_drift_max_m",
                    "foot_drift_max_m",
                    "fell",
                )
            }
    low, high = args.push_range
    out["largest_push_survived_n"] = {
        "with_contact_feedback": largest_push(low, high, args.resolution, True),
        "without_contact_feedback": largest_push(low, high, args.resolution, False),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
