"""A local sweep on worker processes against the serial engine: the push map of Talos on MuJoCo.

    python benchmarks/sweep_local.py [--rounds 1] [--workers 2] [--out FILE]

The sweep of docs/sweeps.md: ``balance`` on the MuJoCo plant, push_fy 100-600 N by 50, push_t
0.5-1.5 s by 0.25 (55 runs of about 0.8 s), as ``tsid-py sweep`` runs it, start-up included.
Rounds alternate serial and ``--workers`` processes into fresh tables; the tables are checked
equal (the wall-time column apart). Reported: every round's wall times [s], the medians and their
ratio, with the load average before and after. Needs ``[sim]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from machine import describe, emit

from tsid_py.sweep import ScenarioJob, grid_points, parse_param, run_sweep

AXES = ["plant=mujoco", "push_fy=100:600:50", "push_t=0.5:1.5:0.25", "duration=2"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    points = grid_points([parse_param(axis) for axis in AXES])
    load_start = os.getloadavg()
    times: dict[str, list[float]] = {"serial": [], "processes": []}
    with tempfile.TemporaryDirectory() as folder:
        for k in range(args.rounds):
            tables = {}
            for name, workers in (("serial", 1), ("processes", args.workers)):
                start = time.perf_counter()
                report = run_sweep(
                    ScenarioJob("balance"), points, Path(folder) / f"{name}{k}.csv", workers=workers
                )
                times[name].append(time.perf_counter() - start)
                assert report.backend == name and report.errors == 0, report.summary()
                tables[name] = [{f: v for f, v in row.items() if f != "seconds"} for row in report.rows]
            assert tables["serial"] == tables["processes"], "the tables differ"
    medians = {name: statistics.median(values) for name, values in times.items()}
    emit(
        {
            "machine": describe(),
            "points": len(points),
            "workers": args.workers,
            "rounds_s": times,
            "median_s": medians,
            "speed_up": medians["serial"] / medians["processes"],
            "load_average_start": [round(x, 2) for x in load_start],
            "load_average_end": [round(x, 2) for x in os.getloadavg()],
        },
        args.out,
    )


if __name__ == "__main__":
    main()
