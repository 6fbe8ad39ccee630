"""The largest lateral push Talos recovers from while walking in MuJoCo, at four phases of a step,
with and without the walk's recovery (``tsid-py walk --recovery step``), by bisection.

    python benchmarks/walk_push_recovery.py [--recovery none,step] [--phases double,early,mid,late]
                                            [--toward swing,stance] [--footstep 3]
                                            [--range 0 800] [--resolution 10] [--jobs 2]
                                            [--out FILE]

The walk is the default one (8 swings of 0.8 s, double supports of 0.3 s, the first from the right
foot); the push lasts 0.1 s, on the base, along the world's y axis, at one phase of swing
``--footstep`` (the 3rd: the right foot swings from 3.0 s to 3.8 s, the left one stands):

- ``double``: a third into the double support before it (2.8 s);
- ``early``: 0.05 s after its lift-off (3.05 s);
- ``mid``: centred on the middle of the swing (3.35 s);
- ``late``: ending 0.1 s before its touch-down (3.6 s).

``--toward swing`` pushes toward the side of the swinging foot (a right swing: -y), where a step
can catch it; ``stance`` toward the standing foot (+y), where the swinging foot would have to
cross the other's leg. Each run goes on until its verdict is decided from the plant's measured
state (:mod:`tsid_py.loop.verdict`), every 10th step checked against the physics; a force is
recovered when the verdict is ``recovered``. Bisection as ``benchmarks/push_recovery.py`` (it
assumes the outcome changes once with the force). Prints one JSON object (and writes it to
``--out``): per direction, phase and mode the largest recovered force, the smallest not
recovered and its verdict, the ratio of step's over none's, and every run. Needs ``[sim]``.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402

from machine import describe, emit  # noqa: E402
from push_recovery import bisect_limit, run_record  # noqa: E402

from tsid_py.loop import Push  # noqa: E402
from tsid_py.scenarios import walk  # noqa: E402

T_START, DOUBLE, SINGLE, PUSH = 0.5, 0.3, 0.8, 0.1  # the default walk's timeline and the push [s]
PHASES = ("double", "early", "mid", "late")


def phase_times(footstep: int) -> dict[str, float]:
    """When the push starts at each phase of swing ``footstep`` (1-based) of the default walk [s]."""
    lift = T_START + footstep * DOUBLE + (footstep - 1) * SINGLE
    land = lift + SINGLE
    return {
        "double": lift - DOUBLE + DOUBLE / 3,
        "early": lift + 0.05,
        "mid": lift + SINGLE / 2 - PUSH / 2,
        "late": land - 0.1 - PUSH,
    }


def run_one(force: float, at: float, sign: float, recovery: str, runs: list[dict]) -> bool:
    """One walk pushed with ``force`` [N] along ``sign`` y at ``at`` [s]; True when recovered."""
    started = time.perf_counter()
    summary = walk.run(
        plant="mujoco",
        mode="torque",
        push=Push((0.0, sign * force, 0.0), at, PUSH),
        check_every=10,
        recovery=recovery,
    ).summary
    runs.append(
        run_record(
            summary,
            force,
            started,
            footsteps_landed=summary["footsteps_landed"],
            moved_landings=summary.get("recovery_moves", 0),
            waited_s=summary.get("recovery_waited_s", 0.0),
        )
    )
    # recovered, and the walk done: a walk held back past its end has not walked its plan
    return summary["verdict"] == "recovered" and summary["footsteps_landed"] == summary["footsteps"]


def limit(task: tuple[str, str, str, float, float, tuple[float, float], float]) -> tuple[str, str, str, dict]:
    toward, phase, recovery, at, sign, force_range, resolution = task
    result = bisect_limit(lambda f, runs: run_one(f, at, sign, recovery, runs), force_range, resolution)
    return toward, phase, recovery, {"push_at_s": at, **result}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recovery", default="none,step", help="the walk's modes, comma separated")
    parser.add_argument("--phases", default=",".join(PHASES))
    parser.add_argument("--toward", default="swing,stance", help="swing, stance or both")
    parser.add_argument("--footstep", type=int, default=3, help="which swing (1-based, odd: the right foot)")
    parser.add_argument("--range", type=float, nargs=2, default=(0.0, 800.0), metavar=("LOW", "HIGH"))
    parser.add_argument("--resolution", type=float, default=10.0, help="[N]")
    parser.add_argument("--jobs", type=int, default=2, help="processes")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    modes = [m.strip() for m in args.recovery.split(",")]
    phases = [p.strip() for p in args.phases.split(",")]
    towards = [d.strip() for d in args.toward.split(",")]
    if any(p not in PHASES for p in phases) or any(d not in ("swing", "stance") for d in towards):
        parser.error(f"--phases takes {', '.join(PHASES)}; --toward takes swing, stance")
    if not 1 <= args.footstep <= 7:
        parser.error("--footstep must be 1 to 7 (the last swing closes the feet)")
    times = phase_times(args.footstep)
    right = args.footstep % 2 == 1  # the right foot swings (its side is -y)
    tasks = [
        (
            toward,
            phase,
            mode,
            times[phase],
            (-1.0 if right else 1.0) * (1.0 if toward == "swing" else -1.0),
            tuple(args.range),
            args.resolution,
        )
        for toward in towards
        for phase in phases
        for mode in modes
    ]
    started = time.perf_counter()
    out: dict[str, object] = {
        "machine": describe(),
        "robot": "talos",
        "plant": "mujoco",
        "mode": "torque",
        "footstep": args.footstep,
        "push": {"duration_s": PUSH, "axis": "y", "resolution_n": args.resolution},
        "jobs": args.jobs,
    }
    results: dict = {}
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for toward, phase, mode, result in pool.map(limit, tasks):
            results.setdefault(toward, {}).setdefault(phase, {})[mode] = result
    for by_phase in results.values():
        for by_mode in by_phase.values():
            base = by_mode.get(modes[0], {}).get("largest_recovered_n")
            for mode in modes[1:]:
                this = by_mode[mode]["largest_recovered_n"]
                by_mode[mode]["ratio_to_" + modes[0]] = this / base if base and this is not None else None
    out["toward"] = results
    out["wall_s"] = time.perf_counter() - started
    emit(out, args.out)


if __name__ == "__main__":
    main()
