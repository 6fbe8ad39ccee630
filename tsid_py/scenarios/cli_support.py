"""Command-line plumbing shared by every scenario: common flags, JSON or readable output."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from tsid_py.scenarios.runner import RunResult

SUMMARY_LABELS = {
    "steps": ("control steps", ""),
    "qp_failures": ("QP failures", ""),
    "com_error_max_m": ("CoM error, max", "m"),
    "com_error_rms_m": ("CoM error, rms", "m"),
    "foot_drift_max_m": ("foot drift, max", "m"),
    "min_normal_force_n": ("normal force, min", "N"),
    "max_friction_ratio": ("|f_t| / (mu f_n), max", ""),
    "max_torque_ratio": ("|tau| / tau_max, max", ""),
    "dynamics_residual_max": ("dynamics residual, max (relative)", ""),
    "step_time_median_us": ("step time, median", "us"),
    "fell": ("fell", ""),
    "touchdown_error_right_m": ("touch-down error, right foot", "m"),
    "touchdown_error_left_m": ("touch-down error, left foot", "m"),
    "swing_height_max_m": ("swing height, max", "m"),
    "zmp_margin_min_m": ("ZMP margin in the support, min", "m"),
    "com_margin_min_m": ("CoM margin in the support, min", "m"),
    "max_force_jump_n": ("contact-force jump per step, max", "N"),
}


def add_common_arguments(parser: argparse.ArgumentParser, robot: str, duration: float | None) -> None:
    """--robot, --duration (unless None: the scenario's plan sets it), --dt, --json."""
    parser.add_argument("--robot", default=robot, help=f"robot spec name (default: {robot})")
    if duration is not None:
        parser.add_argument(
            "--duration", type=float, default=duration, help=f"simulated time [s] (default: {duration})"
        )
    parser.add_argument("--dt", type=float, default=0.002, help="control period [s] (default: 0.002)")
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object instead of the readable summary"
    )


def report(result: RunResult, as_json: bool) -> str:
    """The run's summary as JSON, or as an aligned table for people."""
    summary = result.summary
    if as_json:
        return json.dumps(summary)
    lines = [
        f"{summary['scenario']} on {summary['robot']}: {summary['duration_s']} s at dt = {summary['dt_s']} s"
    ]
    for key, (label, unit) in SUMMARY_LABELS.items():
        if summary.get(key) is None:
            continue
        value = summary[key]
        text = f"{value:.3g}" if isinstance(value, float) else str(value)
        lines.append(f"  {label:<36} {text} {unit}".rstrip())
    return "\n".join(lines)


def scenario_main(
    build_parser: Callable[[argparse.ArgumentParser], None],
    run: Callable[[argparse.Namespace], RunResult],
    description: str,
    argv: list[str] | None = None,
) -> int:
    """Parse the arguments, run the scenario, print the summary; exit code 1 on a QP failure."""
    parser = argparse.ArgumentParser(description=description)
    build_parser(parser)
    args = parser.parse_args(argv)
    result = run(args)
    print(report(result, args.json))
    return 1 if result.summary["qp_failures"] else 0
