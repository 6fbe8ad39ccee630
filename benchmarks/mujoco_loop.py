"""Talos in MuJoCo: the real-time factor of the closed loop.

    python benchmarks/mujoco_loop.py [--duration 10]

Prints one JSON object: for balance in torque and position mode, the real-time factor of the
whole loop (controller, MuJoCo at 1 kHz, the verdicts, logging; the physics checks of the
controller's solutions every step, every 10th and never) at a 2 ms control period, its CoM drift
and its verdict. The largest pushes recovered: ``benchmarks/push_recovery.py``. Needs ``[sim]``.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import json  # noqa: E402

from machine import cpu_name  # noqa: E402

from tsid_py.scenarios import balance  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=10.0)
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
                    "verdict",
                )
            }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
