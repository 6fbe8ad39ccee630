"""Jitter of a control step: every step of a long Talos balance run, timed; prints (or writes) JSON.

    python benchmarks/jitter.py [--steps 100000] [--gc freeze default disable] [--out jitter.json]

In a 1 kHz loop the slow steps matter as much as the median. This runs ``BipedController.compute``
on Talos balance in closed loop (the controller's own dv integrated, as the default plant does)
for ``--steps`` steps after ``--warmup`` untimed ones, times each call, and reports the median,
the 99th, 99.9th and 99.99th percentiles and the worst step, with the garbage collector's
collections during the timed loop (through ``gc.callbacks``: each one's generation and pause, and
whether it fell inside a timed call or in the integration between two) and how many of the 100
slowest steps had one.

``--gc`` says what is done with the garbage collector after the set-up, one run per mode given:
``freeze`` (the default, what :class:`~tsid_py.loop.ControlLoop` does:
``tsid_py.loop.controller.frozen_heap``) moves every object made so far out of the collector's
sight (``gc.freeze()``), so a collection only looks at what the steps make; ``default`` leaves it
as Python starts; ``disable`` turns it off (for comparison only: cycles would then never be freed).
OpenBLAS and OpenMP run on one thread unless the environment says otherwise. On a shared machine
the tail is mostly the other processes': the load average is recorded at the start and the end.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from machine import describe  # noqa: E402

import tsid_py as tsid  # noqa: E402
from tsid_py.controllers.biped import BipedController  # noqa: E402
from tsid_py.loop.controller import frozen_heap  # noqa: E402

GC_MODES = ("freeze", "default", "disable")


class GcWatch:
    """The collections that happen while ``active``: (step, generation, pause [s], inside a timed
    call). Installed in ``gc.callbacks``; the loop sets ``step`` and ``inside``."""

    def __init__(self) -> None:
        self.active = False
        self.inside = False
        self.step = 0
        self.collections: list[tuple[int, int, float, bool]] = []
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        elif self.active:
            pause = time.perf_counter() - self._start
            self.collections.append((self.step, info["generation"], pause, self.inside))


def run(steps: int, warmup: int, gc_mode: str, dt: float = 0.002) -> dict[str, object]:
    """One timed run of Talos balance with the collector in ``gc_mode``; its statistics."""
    robot = tsid.load_robot("talos")
    controller = BipedController(robot)
    com_reference = controller.com_initial
    controller.set_com_reference(tsid.TrajectoryEuclidianConstant("com", com_reference).compute_next())
    q, v = controller.q0, robot.zero_velocity()
    times = np.empty(steps)
    watch = GcWatch()
    gc.callbacks.append(watch)
    try:
        for i in range(warmup):
            out = controller.compute(i * dt, q, v)
            q, v = tsid.integrate(robot, q, v, out.dv, dt)
        gc.collect()
        if gc_mode == "disable":
            gc.disable()
        with frozen_heap() if gc_mode == "freeze" else contextlib.nullcontext():
            watch.active = True
            clock = time.perf_counter
            for i in range(steps):
                watch.step = i
                t = (warmup + i) * dt
                watch.inside = True
                start = clock()
                out = controller.compute(t, q, v)
                times[i] = clock() - start
                watch.inside = False
                q, v = tsid.integrate(robot, q, v, out.dv, dt)
            watch.active = False
    finally:
        gc.callbacks.remove(watch)
        gc.enable()
    data = robot.create_data()
    robot.compute_all_terms(data, q, v)
    com_error = float(np.linalg.norm(robot.com(data) - com_reference))
    us = 1e6 * times
    median = float(np.median(us))
    slowest = np.argsort(us)[::-1][:100]
    gc_steps = {step for step, _, _, inside in watch.collections if inside}
    pauses = [1e6 * pause for _, _, pause, _ in watch.collections]
    return {
        "gc": gc_mode,
        "steps": steps,
        "warmup": warmup,
        "median_us": round(median, 1),
        "p99_us": round(float(np.percentile(us, 99)), 1),
        "p99.9_us": round(float(np.percentile(us, 99.9)), 1),
        "p99.99_us": round(float(np.percentile(us, 99.99)), 1),
        "worst_us": round(float(us.max()), 1),
        "p99.9_over_median": round(float(np.percentile(us, 99.9)) / median, 2),
        "worst_over_median": round(float(us.max()) / median, 2),
        "steps_over_2x_median": int((us > 2 * median).sum()),
        "steps_over_1ms": int((us > 1000.0).sum()),
        "gc_collections": len(watch.collections),
        "gc_collections_per_generation": {
            f"gen{g}": sum(1 for _, gen, _, _ in watch.collections if gen == g) for g in range(3)
        },
        "gc_collections_inside_a_step": sum(1 for *_, inside in watch.collections if inside),
        "gc_pause_max_us": round(max(pauses), 1) if pauses else 0.0,
        "gc_pause_total_us": round(sum(pauses), 1),
        "slowest_100_with_a_collection": int(sum(1 for step in slowest if step in gc_steps)),
        "slowest_10_us": [round(float(us[k]), 1) for k in slowest[:10]],
        "com_error_final_m": float(f"{com_error:.3g}"),  # the loop stayed balanced
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000, help="timed control steps (default 100000)")
    parser.add_argument("--warmup", type=int, default=500, help="untimed steps first (default 500)")
    parser.add_argument(
        "--gc", choices=GC_MODES, nargs="+", default=["freeze"], help="one run per mode (default: freeze)"
    )
    parser.add_argument("--out", type=Path, help="write the JSON there too")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.warmup < 0:
        parser.error("--steps must be at least 1 and --warmup at least 0")
    started = time.time()
    load_start = os.getloadavg()
    runs = [run(args.steps, args.warmup, mode) for mode in args.gc]
    results = {
        "machine": describe(),
        "date": time.strftime("%Y-%m-%d %H:%M", time.localtime(started)),
        "scenario": "Talos balance, BipedController.compute, dt = 2 ms, closed loop on its own dv",
        "load_average_start": [round(x, 2) for x in load_start],
        "load_average_end": [round(x, 2) for x in os.getloadavg()],
        "wall_time_s": round(time.time() - started, 1),
        "runs": runs,
    }
    text = json.dumps(results, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
