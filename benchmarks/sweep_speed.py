"""Speed-up of a sweep on Ray over the serial engine; prints one JSON object (and writes it with --out).

    python benchmarks/sweep_speed.py [--points 200] [--duration 0.05] [--workers 2] [--rounds 3]

The sweep: ``--points`` seeded random points of com-sinusoid (amplitude 5-50 mm, frequency
0.1-2 Hz, ``--duration`` s each) on Talos. One local Ray with ``--workers`` CPUs is started once
(its start-up time is reported apart), its workers are warmed up by a first small sweep (they
import tsid_py once), then the serial sweep and the Ray sweep are run in turns, ``--rounds`` times
each, into fresh tables; the tables of both are checked equal (bitwise, the wall-time column
apart). Reported: the median wall times [s], the speed-up of the medians, every round, how busy
the Ray workers were (the runs' own wall times over workers x the sweep's: what scheduling and
the driver leave to the runs) and the load average before and after (the speed-up is only
meaningful on otherwise idle cores), with the machine's own ``parallel_capacity`` before and after:
how much faster ``--workers`` plain processes spinning a fixed loop finish than one doing all
their loops (``--workers`` on idle cores; about 1 when other jobs leave one core free). A sweep
cannot beat it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=200)
    parser.add_argument("--duration", type=float, default=0.05, help="simulated time of each run [s]")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    args = parser.parse_args(argv)

    import ray

    from tsid_py.sweep import ScenarioJob, parse_param, read_table, run_sweep, sample_points

    axes = [
        parse_param("amplitude=0.005:0.05"),
        parse_param("frequency=0.1:2"),
        parse_param(f"duration={args.duration}"),
    ]
    points = sample_points(axes, args.points, args.seed)
    job = ScenarioJob("com-sinusoid")
    load_before, capacity_before = os.getloadavg(), parallel_capacity(args.workers)
    start = time.perf_counter()
    ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
    ray_init = time.perf_counter() - start
    serial_times, ray_times, busy = [], [], []
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        run_sweep(job, points[: 2 * args.workers], Path(folder, "warm.parquet"), workers=args.workers)
        warm_up = time.perf_counter() - start
        for k in range(args.rounds):
            order = ("serial", "ray") if k % 2 == 0 else ("ray", "serial")
            for backend in order:
                table = Path(folder, f"{backend}{k}.parquet")
                start = time.perf_counter()
                run_sweep(job, points, table, workers=1 if backend == "serial" else args.workers)
                (serial_times if backend == "serial" else ray_times).append(time.perf_counter() - start)
            rows = read_table(Path(folder, f"ray{k}.parquet"))[0]
            busy.append(sum(row["seconds"] for row in rows) / (args.workers * ray_times[-1]))
            same = tables_equal(read_table(Path(folder, f"serial{k}.parquet"))[0], rows)
            if not same:
                print("the Ray table differs from the serial one", file=sys.stderr)
                return 1
    ray.shutdown()
    serial, on_ray = statistics.median(serial_times), statistics.median(ray_times)
    result = {
        "scenario": "com-sinusoid",
        "points": args.points,
        "duration_s": args.duration,
        "workers": args.workers,
        "rounds": args.rounds,
        "serial_median_s": round(serial, 3),
        "ray_median_s": round(on_ray, 3),
        "speedup": round(serial / on_ray, 3),
        "serial_s": [round(t, 3) for t in serial_times],
        "ray_s": [round(t, 3) for t in ray_times],
        "run_median_ms": round(1e3 * serial / args.points, 2),
        "ray_workers_busy": round(statistics.median(busy), 3),
        "ray_init_s": round(ray_init, 2),
        "ray_warm_up_s": round(warm_up, 2),
        "tables_equal": True,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "parallel_capacity_before": round(capacity_before, 2),
        "parallel_capacity_after": round(parallel_capacity(args.workers), 2),
        "cpus": os.cpu_count(),
        "machine": platform.processor() or platform.machine(),
        "ray": ray.__version__,
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0


def _spin(loops: int) -> None:
    total = 0
    for k in range(loops):
        total += k * k


def parallel_capacity(workers: int, loops: int = 4_000_000) -> float:
    """(time of one process spinning ``workers`` x ``loops``) / (time of ``workers`` processes
    spinning ``loops`` each, at once)."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    times = []
    for count, each in ((1, workers * loops), (workers, loops)):
        processes = [context.Process(target=_spin, args=(each,)) for _ in range(count)]
        start = time.perf_counter()
        for process in processes:
            process.start()
        for process in processes:
            process.join()
        times.append(time.perf_counter() - start)
    return times[0] / times[1]


def tables_equal(a: list[dict[str, object]], b: list[dict[str, object]]) -> bool:
    """Equal row by row, floats bit for bit, the ``seconds`` column apart."""
    if len(a) != len(b):
        return False
    for left, right in zip(a, b, strict=True):
        if left.keys() != right.keys():
            return False
        for name in left:
            x, y = left[name], right[name]
            if name == "seconds":
                continue
            if isinstance(x, float) and isinstance(y, float):
                if np.float64(x).view(np.int64) != np.float64(y).view(np.int64):
                    return False
            elif x != y:
                return False
    return True


if __name__ == "__main__":
    sys.exit(main())
