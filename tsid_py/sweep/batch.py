"""``tsid-py analyze --batch 'recordings/*.npz' --out results/``: one motion analysis per file.

Each file matched by the pattern is analysed as ``tsid-py analyze FILE`` would with the same
options, on the sweep engine (serially, or on Ray with ``--workers``/``--address``): its torques and
wrenches go to ``results/<name>.npz``, its summary to one row of ``results/summary.parquet``
(``summary.csv`` without pyarrow), keyed by the ``file`` column. A file that cannot be analysed is
recorded with its error; a restarted batch skips the files already in the table, and files added
to the folder since are analysed. On a cluster the recordings and ``--out`` must be on a
filesystem every node sees at the same path.

The analysis command sits below the sweep engine in the package's layers, so it does not import
it: importing :mod:`tsid_py.sweep` (as the ``tsid-py`` command does) registers
:func:`run_batch` with it (:func:`register`).
"""

from __future__ import annotations

import argparse
import glob
import json
from dataclasses import dataclass
from pathlib import Path

from tsid_py.analysis import cli as analysis_cli
from tsid_py.command import EXIT_CONTROLLER_FAILED, EXIT_OK
from tsid_py.errors import InvalidParameterError
from tsid_py.outputs import check_output_dir
from tsid_py.robot_specs import load_robot
from tsid_py.sweep.engine import run_sweep
from tsid_py.sweep.table import has_pyarrow

OPTIONS = (
    "robot",
    "contacts",
    "dt",
    "smoothing",
    "min_torque_weight",
    "force_weight",
    "point_contacts",
    "mu",
    "min_normal_force",
    "cop",
)  # the options of `tsid-py analyze` that shape one analysis


@dataclass(frozen=True)
class AnalysisJob:
    """Analyse the motion file of a point (``values["file"]``) with the options of ``tsid-py analyze``;
    write its arrays into ``out_dir`` (when given) and return its summary."""

    options: dict[str, object]
    out_dir: str | None = None

    def __call__(self, values: dict[str, object]) -> dict[str, object]:
        args = argparse.Namespace(**self.options)
        path = Path(str(values["file"]))
        robot, result, _, seconds = analysis_cli.analyse_motion(args, path)
        if self.out_dir is not None:
            analysis_cli.write_output(
                result, analysis_cli.actuated_joint_names(robot), Path(self.out_dir) / f"{path.stem}.npz"
            )
        return analysis_cli.summary(result, robot, seconds)


def run_batch(args: argparse.Namespace) -> int:
    """The ``--batch`` mode of ``tsid-py analyze`` (its parsed arguments); exit code 0, or 3 when a
    file raised (its error is in the table) without ``--allow-errors``."""
    if args.motion is not None:
        raise InvalidParameterError(f"give one MOTION file or --batch PATTERN, not both ({args.motion})")
    if args.plot is not None:
        raise InvalidParameterError("--plot draws one motion: not with --batch")
    if args.out is None:
        raise InvalidParameterError("--batch needs --out DIR (the summary table and one NPZ per motion)")
    files = sorted(glob.glob(args.batch, recursive=True))
    if not files:
        raise InvalidParameterError(f"--batch {args.batch!r} matches no file")
    stems: dict[str, str] = {}
    for name in files:
        other = stems.setdefault(Path(name).stem, name)
        if other != name:
            raise InvalidParameterError(f"--batch: {other} and {name} would both write {Path(name).stem}.npz")
    load_robot(args.robot)  # a bad robot name is one error, not one per file
    out = Path(args.out)
    table = out / ("summary.parquet" if has_pyarrow() else "summary.csv")
    if not table.exists():  # a new batch; a restarted one rewrites the arrays of the files it runs
        check_output_dir(out, [table.name, *(f"{stem}.npz" for stem in stems)], args.force, "--out")
    options = {name: getattr(args, name) for name in OPTIONS}
    report = run_sweep(
        AnalysisJob(options, str(out)),
        [{"file": name} for name in files],
        table,
        workers=args.workers,
        address=args.address,
        force=args.force,
        progress=not args.json,
    )
    print(json.dumps(report.summary()) if args.json else report.line("analyze --batch", "files", "analysed"))
    if report.errors and not args.allow_errors:  # this run's, and those of the files already in the table
        return EXIT_CONTROLLER_FAILED
    return EXIT_OK
