"""What the benchmarks report of the machine they ran on (imported by the scripts beside it)."""

from __future__ import annotations

import platform
from pathlib import Path


def cpu_name() -> str:
    """The CPU's model name and how many logical CPUs (from /proc/cpuinfo), else platform's guess."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        lines = cpuinfo.read_text().splitlines()
        names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
        if names:
            return f"{names[0]} x {len(names)}"
    return platform.processor() or platform.machine()
