"""Time the control step of every scenario with every installed QP backend.

tsid-py bench [--scenario balance reach ...] [--backend quadprog daqp] [--duration 1] [--json]

Each scenario runs headless with its own defaults (``--duration`` caps the ones that take a
duration; step and walk run their whole plan); a control step is what ``controller.compute``
costs (references, problem, solve, accessors), not the physics checks around it. The comparison
with the C++ TSID lives in ``benchmarks/step_time.py`` of the source tree (it needs the oracle).
"""

from __future__ import annotations

import argparse
import json
import platform

import numpy as np
import pinocchio as pin

from tsid_py.command import SECONDS
from tsid_py.scenarios import SCENARIOS
from tsid_py.solvers import installed_backends
from tsid_py.threads import limit_blas_threads


def bench(
    scenarios: list[str], backends: list[str], duration: float
) -> dict[str, dict[str, dict[str, float]]]:
    """{scenario: {backend: {median_us, p99_us, steps, qp_failures}}}."""
    results: dict[str, dict[str, dict[str, float]]] = {}
    for name in scenarios:
        scenario = SCENARIOS[name].SCENARIO
        takes_duration = any(p.name == "duration" for p in scenario.parameters())  # not step and walk
        results[name] = {}
        for backend in backends:
            capped = {"duration": duration} if takes_duration else {}
            summary = scenario.run(backend=backend, **capped).summary
            results[name][backend] = {
                "median_us": round(summary["step_time_median_us"], 1),
                "p99_us": round(summary["step_time_p99_us"], 1),
                "steps": summary["steps"],
                "qp_failures": summary["qp_failures"],
            }
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tsid-py bench", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--scenario",
        nargs="+",
        choices=sorted(SCENARIOS),
        default=["balance", "com-sinusoid", "reach", "quadruped"],
    )
    parser.add_argument("--backend", nargs="+", choices=installed_backends(), default=installed_backends())
    parser.add_argument(
        "--duration", type=SECONDS, default=1.0, help="simulated time per run [s] (default: 1)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    limit_blas_threads()
    results = bench(args.scenario, args.backend, args.duration)
    if args.json:
        machine = {"python": platform.python_version(), "numpy": np.__version__, "pinocchio": pin.__version__}
        print(json.dumps({"machine": machine, "step_time": results}))
        return 0
    print(f"{'scenario':<14} {'backend':<10} {'median [us]':>12} {'p99 [us]':>10} {'steps':>7}")
    for name, per_backend in results.items():
        for backend, r in per_backend.items():
            print(f"{name:<14} {backend:<10} {r['median_us']:>12.1f} {r['p99_us']:>10.1f} {r['steps']:>7}")
    return 0
