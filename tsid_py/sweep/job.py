"""What a worker runs at one point: the job, its summary's kept fields, its error, its time.

A job is a picklable function of one point's values (a dict) returning a summary (a dict, or an
object with a ``.summary`` dict such as a scenario's ``RunResult``). :class:`JobRunner` runs it and
gives back an :class:`Outcome`: the kept fields (:func:`select`); the one-line error of a run
that raised, or whose controller or plant failed (its summary says so,
:func:`~tsid_py.loop.control_loop.failure_of`); and the run's wall time. The first run of a
worker process limits BLAS to one thread: the runs are small, and the workers are the
parallelism.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from tsid_py.loop.control_loop import failure_of
from tsid_py.sweep.table import RESERVED
from tsid_py.threads import limit_blas_threads

# Fields that measure the machine (its speed, its load), not the run: kept only when asked for.
MACHINE_FIELDS = frozenset(
    {"real_time_factor", "step_time_median_us", "step_time_p99_us", "analysis_time_s", "time_per_frame_us"}
)
Job = Callable[[dict[str, object]], object]


@dataclass
class Outcome:
    """What one run gives back to the driver: the point, its kept fields, its error, its time [s],
    and (with ``keep``) the kept fields its summary lacked, with the fields it has."""

    point: int
    values: dict[str, object]
    fields: dict[str, object]
    error: str
    seconds: float
    missing: tuple[str, ...] = ()
    available: tuple[str, ...] = ()

    def row(self) -> dict[str, object]:
        return {
            "point": self.point,
            **self.values,
            **self.fields,
            "error": self.error,
            "seconds": self.seconds,
        }


@dataclass(frozen=True)
class JobRunner:
    """A job and the fields to keep: what a worker runs at a point (:meth:`__call__`)."""

    job: Job
    keep: tuple[str, ...] | None = None

    def __call__(self, point: int, values: dict[str, object]) -> Outcome:
        _setup_worker()
        start = time.perf_counter()
        try:
            result = self.job(dict(values))
            summary = getattr(result, "summary", result)
            if not isinstance(summary, dict):
                raise TypeError(f"the job returned {type(summary).__name__}, not a summary dict")
        except Exception as exc:  # a run that raises is recorded and the sweep goes on
            return Outcome(point, values, {}, one_line(exc), time.perf_counter() - start)
        seconds = time.perf_counter() - start
        fields = select(summary, self.keep, exclude=set(values) | set(RESERVED))
        missing = tuple(name for name in self.keep or () if name not in summary)
        failure = failure_of(summary)  # the controller or the plant failed: an error, not an outcome
        error = "" if failure is None else one_line(failure)
        return Outcome(point, values, fields, error, seconds, missing, tuple(summary) if missing else ())


_worker_ready = False


def _setup_worker() -> None:
    """Once per process: one BLAS thread (runs are small; the workers are the parallelism)."""
    global _worker_ready
    if not _worker_ready:
        limit_blas_threads()
        _worker_ready = True


def one_line(error: BaseException) -> str:
    """``Type: message`` on one line."""
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def select(summary: dict[str, object], keep: tuple[str, ...] | None, exclude: set[str]) -> dict[str, object]:
    """The kept fields of a summary: ``keep`` (those it has), or every scalar field (numbers,
    booleans, text, null) but :data:`MACHINE_FIELDS`; never a name in ``exclude``."""
    if keep is not None:
        return {name: summary[name] for name in keep if name in summary and name not in exclude}
    scalar = (bool, int, float, str, type(None))
    return {
        name: value
        for name, value in summary.items()
        if isinstance(value, scalar) and name not in MACHINE_FIELDS and name not in exclude
    }
