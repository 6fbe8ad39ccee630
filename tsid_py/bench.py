"""Time the control step of every scenario with every installed QP backend.

tsid-py bench [--scenario balance reach ...] [--backend quadprog daqp] [--duration 1] [--json]

Each scenario runs headless with its own defaults (``--duration`` caps the ones that take a
duration; step and walk run their whole plan); a control step is what ``controller.compute``
costs (references, problem, solve, accessors), not the physics checks around it. A time that was
not measured (no step solved) is null in the JSON and "-" in the table. Bad input (a duration
shorter than a scenario's control period, say) is one line and exit 2, before any run. The
comparison with the C++ TSID lives in ``benchmarks/step_time.py`` of the source tree (it needs the
oracle).
"""

from __future__ import annotations

import json
import math
import platform

import numpy as np
import pinocchio as pin

from tsid_py.command import EXIT_OK, SECONDS, Parser, run_command
from tsid_py.loop.control_loop import control_steps
from tsid_py.scenarios import SCENARIOS
from tsid_py.scenarios.scenario import Scenario
from tsid_py.solvers import installed_backends
from tsid_py.threads import limit_blas_threads


def bench(
    scenarios: list[str], backends: list[str], duration: float
) -> dict[str, dict[str, dict[str, float | int | None]]]:
    """{scenario: {backend: {median_us, p99_us, steps, qp_failures}}}; a time not measured is None.

    Raises:
        InvalidParameterError: a ``duration`` that a scenario taking one cannot run (shorter than
            its control period, say), before any run.
    """
    keywords = {name: _capped(SCENARIOS[name].SCENARIO, duration) for name in scenarios}
    results: dict[str, dict[str, dict[str, float | int | None]]] = {}
    for name in scenarios:
        results[name] = {}
        for backend in backends:
            summary = SCENARIOS[name].SCENARIO.run(backend=backend, **keywords[name]).summary
            results[name][backend] = {
                "median_us": _microseconds(summary["step_time_median_us"]),
                "p99_us": _microseconds(summary["step_time_p99_us"]),
                "steps": summary["steps"],
                "qp_failures": summary["qp_failures"],
            }
    return results


def _capped(scenario: Scenario, duration: float) -> dict[str, float]:
    """``run``'s keywords for a bench of ``scenario``: ``duration``, checked at its default period,
    where it takes one (not step and walk: their plan sets their length)."""
    defaults = {p.name: p.default for p in scenario.parameters()}
    if "duration" not in defaults:
        return {}
    control_steps(duration, defaults["dt"])
    return {"duration": duration}


def _microseconds(value: float) -> float | None:
    """A step time [us] to 0.1 us; None for one not measured (NaN: no step solved)."""
    return round(value, 1) if math.isfinite(value) else None


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="tsid-py bench", description=__doc__.splitlines()[0])
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
    return run_command(parser.prog, lambda: _bench(args.scenario, args.backend, args.duration, args.json))


def _bench(scenarios: list[str], backends: list[str], duration: float, as_json: bool) -> int:
    limit_blas_threads()
    results = bench(scenarios, backends, duration)
    if as_json:
        machine = {"python": platform.python_version(), "numpy": np.__version__, "pinocchio": pin.__version__}
        print(json.dumps({"machine": machine, "step_time": results}, allow_nan=False))
        return EXIT_OK
    print(f"{'scenario':<14} {'backend':<10} {'median [us]':>12} {'p99 [us]':>10} {'steps':>7}")
    for name, per_backend in results.items():
        for backend, r in per_backend.items():
            median, p99 = (_shown(r[key]) for key in ("median_us", "p99_us"))
            print(f"{name:<14} {backend:<10} {median:>12} {p99:>10} {r['steps']:>7}")
    return EXIT_OK


def _shown(value: float | int | None) -> str:
    """A time of the table: "-" for one not measured."""
    return "-" if value is None else f"{value:.1f}"
