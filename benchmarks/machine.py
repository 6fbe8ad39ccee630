"""What the benchmarks report of the machine they ran on, and how they report (imported by the
scripts beside it)."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

import numpy as np

import tsid_py


def cpu_name() -> str:
    """The CPU's model name and how many logical CPUs (from /proc/cpuinfo), else platform's guess."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        lines = cpuinfo.read_text().splitlines()
        names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
        if names:
            return f"{names[0]} x {len(names)}"
    return platform.processor() or platform.machine()


def describe() -> dict[str, object]:
    """The CPU, the Python, NumPy and tsid_py versions and the thread settings (OpenMP, OpenBLAS)."""
    return {
        "cpu": cpu_name(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "tsid_py": tsid_py.__version__,
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "unset"),
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "unset"),
    }


def emit(result: dict[str, object], out: Path | None) -> None:
    """Print a benchmark's JSON result, and write it to ``out`` when given."""
    text = json.dumps(result, indent=1)
    if out:
        out.write_text(text + "\n")
    print(text)
