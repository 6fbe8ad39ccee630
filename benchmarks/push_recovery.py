"""The largest push Talos recovers from in MuJoCo, by direction: bisection on the run's verdict.

    python benchmarks/push_recovery.py [--directions +x,-x,+y,-y] [--range 0 1000] [--resolution 5]
                                       [--duration 0.1] [--at 1.0] [--mode torque] [--out FILE]

A push of ``--duration`` s at t = ``--at`` s on the base, along each direction; each run goes on
until its verdict is decided (fell, or recovered: at rest again after the push), 5 s after the
push at most (:mod:`tsid_py.loop.verdict`). Bisection keeps a force that was recovered below and
one that was not above, to ``--resolution``; both ends are checked before it starts. Prints one
JSON object (and writes it to ``--out``): per direction the largest recovered force, the smallest
force not recovered and its verdict, and every run's force, verdict and times. Needs ``[sim]``.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from machine import describe  # noqa: E402

from tsid_py.loop import Push  # noqa: E402
from tsid_py.scenarios import balance  # noqa: E402

AXES = {"x": 0, "y": 1}


def push_along(direction: str, force: float, at: float, duration: float) -> Push:
    """A push of ``force`` [N] along ``direction`` (``+x``, ``-y``, ...)."""
    vector = [0.0, 0.0, 0.0]
    vector[AXES[direction[1]]] = force if direction[0] == "+" else -force
    return Push((vector[0], vector[1], vector[2]), at, duration)


def judge(direction: str, force: float, args: argparse.Namespace, runs: list[dict]) -> bool:
    """Run one push; True when its verdict is ``recovered``."""
    started = time.perf_counter()
    summary = balance.run(
        duration=args.at + args.duration + 0.5,
        plant="mujoco",
        mode=args.mode,
        push=push_along(direction, force, args.at, args.duration),
        check_every=0,
    ).summary
    runs.append(
        {
            "force_n": force,
            "verdict": summary["verdict"],
            "lost_balance_at_s": summary["lost_balance_at_s"],
            "fell_at_s": summary["fell_at_s"],
            "recovered_at_s": summary["recovered_at_s"],
            "simulated_s": summary["simulated_time_s"],
            "wall_s": time.perf_counter() - started,
        }
    )
    return summary["verdict"] == "recovered"


def largest_recovered(direction: str, args: argparse.Namespace) -> dict[str, object]:
    runs: list[dict] = []
    low, high = args.range
    if not judge(direction, low, args, runs):
        return {"largest_recovered_n": None, "note": f"{low} N was not recovered", "runs": runs}
    if judge(direction, high, args, runs):
        return {"largest_recovered_n": high, "note": f"{high} N was recovered: raise --range", "runs": runs}
    while high - low > args.resolution:
        middle = 0.5 * (low + high)
        low, high = (middle, high) if judge(direction, middle, args, runs) else (low, middle)
    failed = next(run for run in runs if run["force_n"] == high)
    return {
        "largest_recovered_n": low,
        "smallest_not_recovered_n": high,
        "its_verdict": failed["verdict"],
        "runs": runs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--directions", default="+x,-x,+y,-y")
    parser.add_argument("--range", type=float, nargs=2, default=(0.0, 1000.0), metavar=("LOW", "HIGH"))
    parser.add_argument("--resolution", type=float, default=5.0, help="[N]")
    parser.add_argument("--duration", type=float, default=0.1, help="of the push [s]")
    parser.add_argument("--at", type=float, default=1.0, help="when the push starts [s]")
    parser.add_argument("--mode", choices=("torque", "position"), default="torque")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    directions = [d.strip() for d in args.directions.split(",")]
    for direction in directions:
        if len(direction) != 2 or direction[0] not in "+-" or direction[1] not in AXES:
            parser.error(f"--directions: {direction!r} is not one of +x, -x, +y, -y")
    started = time.perf_counter()
    out: dict[str, object] = {
        "machine": describe(),
        "robot": "talos",
        "plant": "mujoco",
        "mode": args.mode,
        "push": {"duration_s": args.duration, "at_s": args.at, "resolution_n": args.resolution},
        "directions": {direction: largest_recovered(direction, args) for direction in directions},
    }
    out["wall_s"] = time.perf_counter() - started
    text = json.dumps(out, indent=1)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
