"""The sweep engine: run a function at every point, stream the results into a table.

A job is a picklable function of one point's values (a dict) returning a summary (a dict, or an
object with a ``.summary`` dict such as a scenario's ``RunResult``). :func:`run_sweep` runs it at
every point not yet in the table, serially in this process, in a pool of processes on this
machine (:mod:`tsid_py.sweep.local_runner`) or on a Ray cluster (:mod:`tsid_py.sweep.ray_runner`),
and adds one row per run as runs finish:

- the fields of the summary to keep (``keep``; by default every scalar field but those that
  measure the machine rather than the run, :data:`~tsid_py.sweep.job.MACHINE_FIELDS`),
- ``error``: a run that raises, or whose controller or plant failed, is recorded with its
  one-line error and the sweep goes on,
- ``seconds``: the run's wall time.

The table is written atomically every ``checkpoint`` seconds, at the end, and when the sweep is
stopped (an error, SIGINT, SIGTERM); a restarted sweep skips the points already in its table.
The rows are sorted by point before every write and each run is deterministic, so the same sweep
gives the same table (``seconds`` apart) whatever the number of workers.
"""

from __future__ import annotations

import importlib.util
import itertools
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tsid_py.errors import InvalidParameterError
from tsid_py.outputs import check_output_file
from tsid_py.progress import progress_bar
from tsid_py.sweep.job import Job, JobRunner, Outcome
from tsid_py.sweep.table import RESERVED, check_table_path, read_table, write_table

logger = logging.getLogger("tsid_py")

CHECKPOINT = 5.0  # [s] between two writes of the table while runs finish
# [s] of serial work (estimated from the first run) below which a sweep whose --workers was not
# given stays serial: a pool of local workers is ready in about 1 s on a 2-core machine
# (docs/sweeps.md), which 2 workers win back from about 3 s of runs
SERIAL_BELOW = 3.0
MAX_RETRIES = 3  # times a point runs again after its worker died


@dataclass
class SweepReport:
    """What a sweep did: its table, its points, those already in the table, those run now and how
    many of them raised, the rows of the table that hold an error (those of earlier runs too: a
    sweep is done without errors only when none does), its wall time [s] and its backend
    ("serial", "processes" or "ray"; "none" when every point was already in the table)."""

    table: Path
    points: int
    skipped: int
    ran: int
    raised: int
    errors: int
    seconds: float
    backend: str
    rows: list[dict[str, object]] = field(default_factory=list, repr=False)

    def summary(self) -> dict[str, object]:
        return {
            "table": str(self.table),
            "points": self.points,
            "skipped": self.skipped,
            "ran": self.ran,
            "raised": self.raised,
            "errors": self.errors,
            "seconds": self.seconds,
            "backend": self.backend,
        }

    def line(self, what: str, items: str = "points", ran: str = "run") -> str:
        """The sweep in one line for people, e.g. ``sweep balance: 6 points, 0 already in t.csv, 6
        run (1 failed) in 2.1 s (serial)``, and the rows of earlier runs that hold an error."""
        earlier = self.errors - self.raised
        return (
            f"{what}: {self.points} {items}, {self.skipped} already in {self.table}, {self.ran} {ran} "
            f"({self.raised} failed) in {self.seconds:.1f} s ({self.backend})"
        ) + (f"; {earlier} of the runs already in the table failed" if earlier else "")


def prepare_table(
    path: Path,
    points: list[dict[str, object]],
    retry_errors: bool = False,
    force: bool = False,
    keep: tuple[str, ...] | None = None,
    defaults: dict[str, object] | None = None,
) -> tuple[dict[int, dict[str, object]], list[int]]:
    """The rows already in the table at ``path``, by the index of their point in this sweep, and
    the points still to run (a row of a point to run again stays in the table until its new run
    replaces it: a sweep stopped before then loses nothing).

    A row belongs to the point with the same input values (so a grid may be extended, or files
    added to a batch, and the runs done are kept). A table that holds another sweep (other
    inputs, or a run that is no point of this sweep) is refused, or with ``force`` replaced. A
    run without an error whose row lacks a field of ``keep`` (a table of another ``--keep``) is
    not done: it runs again.

    A Parquet table records its inputs; a CSV table's columns start with them (``point``, the
    inputs, then the kept fields: :func:`~tsid_py.sweep.table.columns_of`). Its first columns must
    be this sweep's inputs, and those right after them that name a parameter of the job's
    ``defaults`` (its parameters' defaults by name, a push's None) may be inputs of another sweep:
    each must hold its default in every row (a summary echoes some parameters, e.g. ``plant``,
    at their default), else the table holds another sweep.
    """
    path = Path(path)
    check_table_path(path)
    check_output_file(path, force=True, option="--out")  # a file can be written there
    inputs = list(points[0]) if points else []
    done: dict[int, dict[str, object]] = {}
    if path.exists():
        try:
            done = _match_rows(path, *read_table(path), inputs, points, defaults)
        except InvalidParameterError:
            if not force:
                raise
            logger.info("%s holds another sweep: --force replaces it", path)

    def finished(row: dict[str, object]) -> bool:
        if row.get("error"):
            return not retry_errors
        return not keep or set(keep) <= set(row)

    return done, [point for point in range(len(points)) if point not in done or not finished(done[point])]


def _match_rows(
    path: Path,
    rows: list[dict[str, object]],
    recorded: list[str] | None,
    inputs: list[str],
    points: list[dict[str, object]],
    defaults: dict[str, object] | None = None,
) -> dict[int, dict[str, object]]:
    other = f"{path} holds another sweep"
    advice = "(--force replaces it; or choose another --out)"
    if recorded is not None and recorded != inputs:
        raise InvalidParameterError(f"{other}, over {', '.join(recorded) or 'nothing'} {advice}")
    if rows and not set(rows[0]) >= {*RESERVED, *inputs}:
        absent = sorted({*RESERVED, *inputs} - set(rows[0]))
        raise InvalidParameterError(f"{other}: it has no column {absent[0]!r} {advice}")
    if recorded is None and rows:  # a CSV table: its inputs are its first columns
        _check_csv_inputs(rows, inputs, defaults or {}, other, advice)
    free: dict[tuple, list[int]] = {}
    for index, point in enumerate(points):
        free.setdefault(_key(point, inputs), []).append(index)
    done = {}
    for row in rows:
        indices = free.get(_key(row, inputs))
        if not indices:
            values = ", ".join(f"{name}={row[name]!r}" for name in inputs)
            raise InvalidParameterError(f"{other}: its run at {values} is no point of this sweep {advice}")
        index = indices.pop(0)
        done[index] = {**row, "point": index}
    return done


def _check_csv_inputs(
    rows: list[dict[str, object]], inputs: list[str], defaults: dict[str, object], other: str, advice: str
) -> None:
    """The first columns of a CSV table (after ``point``) are this sweep's inputs, and those right
    after them that name a parameter in ``defaults`` hold its default, or nothing (a row of this
    sweep, whose summary does not echo it), in every row (see :func:`prepare_table`)."""
    columns = list(rows[0])[1:]
    if columns[: len(inputs)] != inputs:
        head = ", ".join(columns[: len(inputs)])
        raise InvalidParameterError(
            f"{other}: its first columns are {head}, not {', '.join(inputs)} {advice}"
        )
    for name in itertools.takewhile(defaults.__contains__, columns[len(inputs) :]):
        default = _key(defaults, [name])
        for row in rows:
            if row[name] is not None and _key(row, [name]) != default:
                raise InvalidParameterError(
                    f"{other}: its column {name} holds {row[name]!r}, and this sweep runs {name} at "
                    f"its default {defaults[name]!r} {advice}"
                )


def _key(values: dict[str, object], inputs: list[str]) -> tuple:
    """The input values of a point or a row, comparable (a float and an equal int are one key)."""
    return tuple(
        float(values[name]) if isinstance(values[name], int | float) else values[name] for name in inputs
    )


def run_sweep(
    job: Job,
    points: list[dict[str, object]],
    out: str | Path,
    *,
    keep: list[str] | tuple[str, ...] | None = None,
    workers: int | None = None,
    address: str | None = None,
    retry_errors: bool = False,
    force: bool = False,
    progress: bool = False,
    checkpoint: float = CHECKPOINT,
    max_retries: int = MAX_RETRIES,
    check_row: Callable[[dict[str, object]], None] | None = None,
) -> SweepReport:
    """Run ``job`` at every point not yet in the table ``out`` and write the table.

    Args:
        job: A picklable function of a point's values (a dict) returning a summary.
        points: The points, each a dict of the same input names (:mod:`tsid_py.sweep.space`).
        out: The table, ``.parquet`` (pyarrow) or ``.csv``. Its rows of this sweep are kept and
            their points skipped (see :func:`prepare_table`).
        keep: The summary fields to keep (default: the scalar ones, see :func:`~tsid_py.sweep.job.select`).
        workers: Processes running points: 1 runs them here, serially; more run in a pool of
            worker processes on this machine (:mod:`~tsid_py.sweep.local_runner`; default: one
            per usable core, unless the first run shows the sweep is less than SERIAL_BELOW
            seconds of work: then serially), or on Ray (see :func:`choose_backend`).
        address: A running Ray cluster ("auto", "ray://HOST:10001", ...; default: the
            ``RAY_ADDRESS`` environment variable, else this machine).
        retry_errors: Run again the points whose row records an error.
        force: Replace a table that holds another sweep (a table of this sweep is resumed).
        progress: A progress bar on stderr (when it is a terminal).
        checkpoint: Seconds between two writes of the table while runs finish.
        max_retries: Times a point runs again after its worker died (on the local pool: died
            running alone, see :mod:`~tsid_py.sweep.local_runner`).
        check_row: Called with the row of the first run that neither raised nor failed (e.g. the
            command's check that its picture can be drawn from the table's columns); what it
            raises stops the sweep, the row kept.
    """
    out = Path(out)
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise InvalidParameterError(f"--workers must be a whole number >= 1, got {workers!r}")
    if not points:
        raise InvalidParameterError("a sweep needs at least one point")
    inputs = list(points[0])
    if any(list(point) != inputs for point in points):
        raise InvalidParameterError("every point of a sweep must have the same parameters")
    check = getattr(job, "check", None)  # a job that can check its points does, before any run
    if callable(check):
        check(points)
    keep = tuple(keep) if keep is not None else None
    runner = JobRunner(job, keep)
    defaults = getattr(job, "defaults", None)  # a job that knows its parameters' defaults says them
    done, todo = prepare_table(
        out, points, retry_errors, force, keep, defaults() if callable(defaults) else None
    )
    address = address or os.environ.get("RAY_ADDRESS") or None
    backend = choose_backend(workers, address, runner) if todo else "none"
    rows = dict(done)
    start = time.perf_counter()
    report = SweepReport(out, len(points), len(points) - len(todo), 0, 0, 0, 0.0, backend)
    written = True  # nothing new to write: a sweep that stores no run leaves its table as it was
    last_write = time.monotonic()
    source: Iterator[Outcome] = iter(())
    try:
        first: list[Outcome] = []
        if backend == "processes" and workers is None and todo:
            first.append(runner(todo[0], points[todo[0]]))  # how long a run takes, to choose
            if first[0].seconds * (len(todo) - 1) < SERIAL_BELOW:
                backend = report.backend = "serial"
            todo = todo[1:]
        items = [(point, points[point]) for point in todo]
        if backend == "serial":
            source = (runner(point, values) for point, values in items)
        elif backend == "processes" and items:
            from tsid_py.sweep.local_runner import run_on_processes

            source = run_on_processes(runner, items, workers, max_retries)
        elif items:
            from tsid_py.sweep.ray_runner import run_on_ray

            source = run_on_ray(runner, items, workers, address, max_retries)
        outcomes = _Sized(itertools.chain(first, source), len(first) + len(todo))
        for outcome in progress_bar(outcomes, progress, "sweep", unit="run"):
            if outcome.missing:  # no row without a kept field: the sweep with the right --keep runs it
                raise InvalidParameterError(
                    f"--keep {outcome.missing[0]}: not a field of the summary "
                    f"(it has {', '.join(outcome.available)})"
                )
            rows[outcome.point] = outcome.row()
            report.ran += 1
            report.raised += bool(outcome.error)
            written = False
            if check_row is not None and not outcome.error:
                check_row(rows[outcome.point])
                check_row = None
            if time.monotonic() - last_write > checkpoint:
                write_table(out, list(rows.values()), inputs)
                written, last_write = True, time.monotonic()
    finally:
        close = getattr(source, "close", None)
        if close is not None:  # a generator: stop its runs (cancel them, stop the workers)
            close()
        if not written:
            write_table(out, list(rows.values()), inputs)
        report.seconds = time.perf_counter() - start
    report.rows = sorted(rows.values(), key=lambda row: row["point"])
    report.errors = sum(bool(row.get("error")) for row in report.rows)
    return report


def choose_backend(workers: int | None, address: str | None, runner: JobRunner) -> str:
    """Where the runs go: "serial" with one worker; "ray" on a cluster (``address``) or a Ray this
    process started; else "processes" (a pool on this machine; serial with one usable core).
    A job that cannot be pickled (a lambda, a local function) goes to Ray where it is installed
    (its cloudpickle sends those), else runs serially, with a warning."""
    from tsid_py.sweep.local_runner import picklable, usable_cores

    if workers == 1 and address is None:
        return "serial"
    started = sys.modules.get("ray")  # a Ray this process started was imported first
    if address is not None or (started is not None and started.is_initialized()):
        if not _has_ray():
            raise InvalidParameterError(
                f"--address {address}: running on a Ray cluster needs Ray (pip install tsid_py[cluster])"
            )
        return "ray"
    if workers is None and usable_cores() == 1:
        return "serial"
    if not picklable(runner):
        if _has_ray():
            return "ray"
        logger.warning("the job cannot be pickled to worker processes (a lambda?): running it serially")
        return "serial"
    return "processes"


def _has_ray() -> bool:
    """Whether Ray can be imported (``sys.modules["ray"] = None`` says it cannot, as for import)."""
    if "ray" in sys.modules:
        return sys.modules["ray"] is not None
    return importlib.util.find_spec("ray") is not None


class _Sized:
    """An iterator with a length (the progress bar's total)."""

    def __init__(self, items: Iterator[Outcome], length: int) -> None:
        self.items, self.length = items, length

    def __len__(self) -> int:
        return self.length

    def __iter__(self) -> Iterator[Outcome]:
        return iter(self.items)
