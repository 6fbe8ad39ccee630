"""Scripts that set no thread count, with one other core busy: as fast as with one BLAS thread?

    python benchmarks/blas_threads.py [--rounds 3] [--out FILE]

Two unchanged user scripts, each run in a fresh process while another process spins on a core:

- ``readme``: the README's example (its runnable block: 250 steps of Talos's CoM sinusoid, built
  and solved by hand), timed from its first line after the imports;
- ``compat ex_2``: TSID's course exercise 2 through ``tsid_py.compat`` (``tests/tsid_upstream.py``,
  which needs TSID's source package: skipped without it), timed whole; ``import`` times a process
  that only imports ``tsid_py.compat``, which ex_2's time includes: NumPy's and SciPy's OpenBLAS
  start their thread pools when they are loaded, before any code of the library runs.

Each runs three ways, interleaved in every round: as a user would (no thread variable set), with
``OPENBLAS_NUM_THREADS=1`` (the reference) and with ``TSID_PY_STEP_THREADS=caller`` (the
library's one-thread steps turned off: what users got before). Per case and way, the median over
rounds [s] and the ratio to the reference. Prints one JSON object and writes it to ``--out``.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import describe, emit

ROOT = Path(__file__).resolve().parents[1]
WAYS = {  # name: the environment's changes
    "as a user runs it": {},
    "OPENBLAS_NUM_THREADS=1": {"OPENBLAS_NUM_THREADS": "1"},
    "library steps off (before)": {"TSID_PY_STEP_THREADS": "caller"},
}
HARNESS = """
import re, sys, time
text = open(sys.argv[1]).read()
code = re.search(r"<!-- runnable -->\\n```python\\n(.*?)```", text, re.S).group(1)
imports = "\\n".join(line for line in code.splitlines() if line.startswith(("import ", "from ")))
exec(imports)
start = time.perf_counter()
exec(code)
print(f"TIMED {time.perf_counter() - start}")
"""


def run_readme(env: dict[str, str]) -> float:
    done = subprocess.run(
        [sys.executable, "-c", HARNESS, str(ROOT / "README.md")],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(re.search(r"TIMED (\S+)", done.stdout).group(1))  # type: ignore[union-attr]


def run_ex_2(env: dict[str, str]) -> float:
    with tempfile.TemporaryDirectory() as scratch:
        command = [
            sys.executable,
            str(ROOT / "tests" / "tsid_upstream.py"),
            "exercise",
            "ex_2",
            "--impl",
            "compat",
        ]
        started = time.perf_counter()
        subprocess.run(
            [*command, "--out", str(Path(scratch) / "ex_2.npz")], env=env, capture_output=True, check=True
        )
        return time.perf_counter() - started


def run_import(env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import tsid_py.compat"], env=env, check=True)
    return time.perf_counter() - started


def ex_2_available() -> bool:
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        import tsid_upstream

        tsid_upstream.sdist_root()
        return True
    except Exception:  # noqa: BLE001  any reason it is not there: the case is skipped
        return False
    finally:
        sys.path.pop(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    base["MPLBACKEND"] = "Agg"
    cases = {"readme": run_readme}
    if ex_2_available():
        cases["compat ex_2"], cases["import"] = run_ex_2, run_import
    times: dict[str, dict[str, list[float]]] = {case: {way: [] for way in WAYS} for case in cases}
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])  # one other core busy
    load_start = os.getloadavg()
    try:
        time.sleep(1.0)
        for _ in range(args.rounds):
            for case, run in cases.items():
                for way, changes in WAYS.items():
                    times[case][way].append(run({**base, **changes}))
    finally:
        busy.kill()
    reference = "OPENBLAS_NUM_THREADS=1"
    out = {
        "machine": describe(),
        "rounds": args.rounds,
        "load_average_start": [round(x, 2) for x in load_start],
        "cases": {
            case: {
                way: {
                    "median_s": statistics.median(runs),
                    "ratio_to_one_thread": statistics.median(runs) / statistics.median(by_way[reference]),
                    "runs_s": runs,
                }
                for way, runs in by_way.items()
            }
            for case, by_way in times.items()
        },
    }
    if "compat ex_2" not in cases:
        out["skipped"] = "compat ex_2: TSID's source package is not available (tests/tsid_upstream.py)"
    emit(out, args.out)


if __name__ == "__main__":
    main()
