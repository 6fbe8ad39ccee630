"""Sweep: run a scenario over a grid or random samples of its parameters, on Ray or serially.

tsid-py sweep SCENARIO --param NAME=START:STOP:STEP [--param ...] [--samples N --seed S]
    [--robot NAME] [--duration S] [--dt S] [--backend NAME] [--keep FIELD,...]
    --out TABLE.parquet|TABLE.csv [--workers N] [--address ADDR] [--retry-errors]
    [--plot FILE.png] [--plot-metric FIELD] [--force] [--allow-errors] [--json]

e.g. tsid-py sweep com-sinusoid --param amplitude=0.01:0.05:0.01 --param frequency=0.25:1:0.25 \\
         --duration 2 --workers 2 --out sway.parquet --plot sway.png
     tsid-py sweep balance --robot talos --param push_fy=100:600:50 --param push_t=0.5:1.5:0.25 \\
         --workers 2 --out pushes.parquet --plot pushes.png
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

from tsid_py.command import EXIT_CONTROLLER_FAILED, EXIT_OK, SECONDS, Parser, run_command
from tsid_py.errors import InvalidParameterError
from tsid_py.outputs import check_output_file
from tsid_py.sweep.engine import run_sweep
from tsid_py.sweep.plots import check_columns, check_plottable, plot_sweep, varying
from tsid_py.sweep.scenario_jobs import ScenarioJob, check_keywords, parameter_space
from tsid_py.sweep.space import PUSH_NAMES, Axis, grid_points, parse_param, sample_points
from tsid_py.sweep.table import RESERVED

SHORTCUTS = ("robot", "duration", "dt", "backend")  # options that fix one keyword of the scenario


class SweepParser(Parser):
    """The sweep's parser: a scenario's option given as a sweep's (``--plant mujoco``) is
    answered with the ``--param`` that sets it."""

    def hint(self, option: str, value: str | None, parsed: argparse.Namespace) -> str | None:
        name = option.lstrip("-").replace("-", "_")
        try:
            keywords = parameter_space(parsed.scenario)
        except InvalidParameterError:  # an unknown scenario: said once its options are read
            keywords = {}
        if keywords is None or name in keywords or name in PUSH_NAMES:
            return f"a sweep sets {parsed.scenario}'s {name} with --param {name}={value or 'VALUE'}"
        return super().hint(option, value, parsed)


def build_parser() -> argparse.ArgumentParser:
    """The options of ``tsid-py sweep``."""
    parser = SweepParser(prog="tsid-py sweep", description=__doc__.splitlines()[0])
    parser.add_argument("scenario", help="a tsid-py scenario (balance, com-sinusoid, ...) or module:function")
    what = parser.add_argument_group("the points")
    what.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=SPEC",
        help="a keyword of the scenario: START:STOP:STEP (floats, STOP included), V1,V2,... or one VALUE; "
        "pushes: push_fx, push_fy, push_fz or push_force, push_angle [deg], with push_t, push_duration",
    )
    what.add_argument(
        "--samples", type=int, default=None, metavar="N", help="N random points, uniform in each range"
    )
    what.add_argument(
        "--seed", type=int, default=0, metavar="S", help="seed of the random points (default: 0)"
    )
    what.add_argument("--robot", default=None, help="robot spec (default: the scenario's)")
    what.add_argument(
        "--duration", type=SECONDS, default=None, help="simulated time [s] (default: the scenario's)"
    )
    what.add_argument("--dt", type=SECONDS, default=None, help="control period [s] (default: the scenario's)")
    what.add_argument("--backend", default=None, help="QP backend (default: quadprog)")
    out = parser.add_argument_group("the table")
    out.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="TABLE",
        help="the table: TABLE.parquet (pyarrow) or TABLE.csv",
    )
    out.add_argument(
        "--keep",
        default=None,
        metavar="FIELD,...",
        help="summary fields to keep (default: every scalar field but the timings)",
    )
    out.add_argument(
        "--retry-errors", action="store_true", help="run again the points whose row has an error"
    )
    out.add_argument(
        "--allow-errors",
        action="store_true",
        help="exit 0 when runs failed (their errors are in the table); without it, exit 3",
    )
    out.add_argument("--plot", type=Path, default=None, metavar="FILE.png", help="a picture of the table")
    out.add_argument(
        "--plot-metric",
        default=None,
        metavar="FIELD",
        help="the field a metric map shows (default: CoM error)",
    )
    out.add_argument(
        "--force", action="store_true", help="overwrite --plot, and replace a table that holds another sweep"
    )
    run = parser.add_argument_group("where it runs")
    run.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="processes: 1 runs serially here; more run in worker processes on this machine "
        "(default: one per core, or serially when the first run shows the sweep is under 3 s of work)",
    )
    run.add_argument(
        "--address",
        default=None,
        metavar="ADDR",
        help="a Ray cluster (default: $RAY_ADDRESS, else this machine's cores)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object (and no progress bar)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``tsid-py sweep``; exit codes as :mod:`tsid_py.command` (2 with one line on bad input)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    return run_command(parser.prog, lambda: _sweep(args))


def points_of(args: argparse.Namespace) -> tuple[list[Axis], list[dict[str, object]]]:
    """The axes of --param and of the shortcut options, checked against the scenario, and the points."""
    space = parameter_space(args.scenario) or {}
    whole = {name for name, parameter in space.items() if parameter.kind == "whole"}
    axes = [parse_param(text, whole=text.partition("=")[0].strip() in whole) for text in args.param]
    if not axes:
        raise InvalidParameterError("a sweep needs at least one --param NAME=START:STOP:STEP")
    for name in SHORTCUTS:
        value = getattr(args, name)
        if value is not None:
            if any(axis.name == name for axis in axes):
                raise InvalidParameterError(f"--{name} and --param {name}: give it once")
            axes.append(Axis(name, (value,)))
    axes = check_keywords(args.scenario, axes)
    if args.samples is None:
        return axes, grid_points(axes)
    return axes, sample_points(axes, args.samples, args.seed)


def _sweep(args: argparse.Namespace) -> int:
    axes, points = points_of(args)
    inputs = [axis.name for axis in axes]
    keep = [name.strip() for name in args.keep.split(",") if name.strip()] if args.keep else None
    check_row: Callable[[dict[str, object]], None] | None = None
    if args.plot is not None:
        if args.plot.suffix != ".png":
            raise InvalidParameterError(f"--plot must end with .png, got {args.plot.name}")
        check_output_file(args.plot, args.force, "--plot")
        check_plottable(points, inputs)
        check = partial(check_columns, names=varying(points, inputs), metric=args.plot_metric)
        if keep is None:  # the table's columns are the summary's: checked on the first run's row
            check_row = check
        else:  # the table's columns, known before the runs
            check({*RESERVED, *inputs, *keep})
    report = run_sweep(
        ScenarioJob(args.scenario),
        points,
        args.out,
        keep=keep,
        workers=args.workers,
        address=args.address,
        retry_errors=args.retry_errors,
        force=args.force,
        progress=not args.json,
        check_row=check_row,
    )
    if args.plot is not None:
        held = [name for name in inputs if name not in varying(report.rows, inputs)]
        fixed = ", ".join(f"{name}={report.rows[0][name]}" for name in held if report.rows)
        title = f"{args.scenario}: {len(report.rows)} runs" + (f", {fixed}" if fixed else "")

        plot_sweep(report.rows, inputs, args.plot, args.plot_metric, title)
    print(json.dumps(report.summary()) if args.json else report.line(f"sweep {args.scenario}"))
    if report.errors:  # this run's, and those of the runs already in the table
        print(
            f"tsid-py sweep: {report.errors} runs failed: their error is in the table "
            "(--retry-errors runs them again)",
            file=sys.stderr,
        )
        return EXIT_OK if args.allow_errors else EXIT_CONTROLLER_FAILED
    return EXIT_OK
