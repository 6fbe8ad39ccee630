"""Memory of a CLI run against its length, with the plots asked: the log streams to disk.

    python benchmarks/log_memory.py [--durations 20 200] [--scenario balance] [--plant integrator]

Runs ``tsid-py SCENARIO --duration D --plot DIR --json`` once per duration, each in a fresh
interpreter, and prints one JSON object: per duration, the largest resident set size of that
process (``resource.getrusage(RUSAGE_SELF).ru_maxrss``) [MB], the control steps, the wall time
[s] and the plot files written; then the growth of the longest run over the shortest [MB]. With
``--plot`` the log streams to an unnamed file in the plot directory and the figures read back at
most ``PLOT_STEPS`` steps, so the growth stays flat (issue 17 asks for < 20 MB from 20 s to 200 s
of balance). ``--no-plot`` measures the bounded-window log instead.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from machine import cpu_name  # noqa: E402

CHILD = """
import json, resource, sys
from tsid_py import cli
code = cli.main(sys.argv[1:])
print(json.dumps({"exit": code, "max_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}),
      file=sys.stderr)
"""


def measure(scenario: str, duration: float, plant: str, plot: bool) -> dict[str, object]:
    """One run in a fresh interpreter: its peak RSS [MB], steps, wall time [s] and plot files."""
    with tempfile.TemporaryDirectory() as directory:
        args = [scenario, "--duration", f"{duration:g}", "--plant", plant, "--json"]
        if plot:
            args += ["--plot", str(Path(directory) / "plots")]
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", CHILD, *args], capture_output=True, text=True, check=False
        )
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"tsid-py {' '.join(args)} failed:\n{done.stderr}")
        child = json.loads(done.stderr.strip().splitlines()[-1])
        summary = json.loads(done.stdout.strip().splitlines()[-1])
        plots = sorted(p.name for p in (Path(directory) / "plots").glob("*.png")) if plot else []
        leftovers = sorted(p.name for p in Path(directory).rglob("*") if p.suffix != ".png" and p.is_file())
    return {
        "duration_s": duration,
        "steps": summary["steps"],
        "max_rss_mb": child["max_rss_kb"] / 1024.0,
        "wall_s": wall,
        "plots": plots,
        "other_files_left": leftovers,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--durations", type=float, nargs="+", default=(20.0, 200.0))
    parser.add_argument("--scenario", default="balance")
    parser.add_argument("--plant", default="integrator")
    parser.add_argument("--no-plot", action="store_true", help="no outputs: the bounded-window log")
    args = parser.parse_args()
    runs = [measure(args.scenario, d, args.plant, not args.no_plot) for d in args.durations]
    shortest, longest = min(runs, key=lambda r: r["duration_s"]), max(runs, key=lambda r: r["duration_s"])
    out = {
        "machine": cpu_name(),
        "python": platform.python_version(),
        "scenario": args.scenario,
        "plant": args.plant,
        "plot": not args.no_plot,
        "runs": runs,
        "rss_growth_mb": longest["max_rss_mb"] - shortest["max_rss_mb"],  # type: ignore[operator]
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
