"""What push recovery costs the controller's step: Talos balancing in MuJoCo, per recovery mode.

    python benchmarks/recovery_step_time.py [--rounds 5] [--recovery none,ankle,step] [--out FILE]

Three cases, each a closed-loop run on the MuJoCo plant (torque mode, checks off):

- ``standing``: no push, 2 s;
- ``pushed 150 N``: +x for 0.1 s at 1 s, which every mode recovers at the ankles, 3 s;
- ``pushed 450 N``: the same at 450 N, which only the stepping recovers (the others fall), 3 s.

The step time is the loop's: the controller's ``compute`` (with a recovery: its update, then the
QP), without the plant. Rounds interleave the modes (each round runs every case and mode once);
per case and mode the median over rounds of each run's median step [us], and its ratio to the
first mode's standing median (the plain balance step). Prints one JSON object and writes it to
``--out``. Needs ``[sim]``.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
from pathlib import Path  # noqa: E402

from machine import describe, emit  # noqa: E402

from tsid_py.loop import Push  # noqa: E402
from tsid_py.scenarios import balance  # noqa: E402

CASES = {  # name: (push or None, duration [s])
    "standing": (None, 2.0),
    "pushed 150 N": (Push((150.0, 0.0, 0.0), 1.0, 0.1), 3.0),
    "pushed 450 N": (Push((450.0, 0.0, 0.0), 1.0, 0.1), 3.0),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--recovery", default="none,ankle,step", help="the controller's modes, comma separated"
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    modes = [m.strip() for m in args.recovery.split(",")]
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core: no migrations
    load_start = os.getloadavg()
    medians: dict[str, dict[str, list[float]]] = {case: {mode: [] for mode in modes} for case in CASES}
    verdicts: dict[str, dict[str, str]] = {case: {} for case in CASES}
    for _ in range(args.rounds):
        for case, (push, duration) in CASES.items():
            for mode in modes:
                summary = balance.run(
                    duration=duration, plant="mujoco", push=push, recovery=mode, check_every=0
                ).summary
                medians[case][mode].append(summary["step_time_median_us"])
                verdicts[case][mode] = summary["verdict"]
    plain = statistics.median(medians["standing"][modes[0]])
    out = {
        "machine": describe(),
        "rounds": args.rounds,
        "load_average_start": [round(x, 2) for x in load_start],
        "load_average_end": [round(x, 2) for x in os.getloadavg()],
        "plain_balance_step_us": plain,
        "cases": {
            case: {
                mode: {
                    "median_us": statistics.median(runs),
                    "ratio_to_plain": statistics.median(runs) / plain,
                    "verdict": verdicts[case][mode],
                    "round_medians_us": runs,
                }
                for mode, runs in by_mode.items()
            }
            for case, by_mode in medians.items()
        },
    }
    emit(out, args.out)


if __name__ == "__main__":
    main()
