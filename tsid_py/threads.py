"""One BLAS thread for the control step, whatever the caller set.

tsid_py's matrices are small (tens of rows): a multi-threaded BLAS gains nothing on them and
loses badly when another process holds a core, since every product then waits for a thread that
is not running. Measured here on Talos balance with one core busy: 9.5 ms per control step with
OpenBLAS' default two threads, 0.39 ms with one.

So the library's own heavy calls (building a problem, ``InverseDynamicsFormulation.
compute_problem_data``; solving it, ``Solver.solve``; the two together, ``solve_step``) run with
every BLAS library of the process (NumPy's, SciPy's: those loaded when the first step runs) at
one thread, and give the caller's thread counts back when they return: a user's own script gets
the one-thread speed without doing anything, and their NumPy work between steps keeps its threads.
The counts are the process's: NumPy work in another Python thread while a step runs gets one
thread too (for steps in several Python threads at once, call :func:`limit_blas_threads` once).
Setting and restoring costs 2-3 us a call (reading the counts, 0.2 us, when they are already 1).

- :func:`step_blas_threads` ``(None)`` turns this off: the library's calls then run with the
  caller's settings (``step_blas_threads(1)`` turns it back on). ``TSID_PY_STEP_THREADS=caller``
  in the environment does the same from the start.
- :func:`limit_blas_threads` sets the whole process to a number of threads, once (the ``tsid-py``
  command does, for its loops): then there is nothing left to set per call.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

from threadpoolctl import ThreadpoolController, threadpool_limits

from tsid_py.errors import InvalidParameterError

F = TypeVar("F", bound=Callable[..., Any])


class _Blas(NamedTuple):
    """How to read and write one BLAS library's thread count."""

    read: Callable[[], int]
    write: Callable[[int], object]


class _StepThreads:
    """The per-call policy's state: on or off, and the BLAS libraries found."""

    def __init__(self) -> None:
        self.enabled = os.environ.get("TSID_PY_STEP_THREADS", "one") != "caller"
        self.libraries: list[_Blas] | None = None  # found at first use

    @staticmethod
    def find_libraries() -> list[_Blas]:
        """Each BLAS loaded, through OpenBLAS's own C functions where threadpoolctl finds them (a
        read costs 0.1 us against 0.3 through threadpoolctl, and the count is the process's, from
        any Python thread: threadpoolctl's setter acts only from the first thread that used it);
        an OpenMP-built OpenBLAS or another BLAS through threadpoolctl's own methods."""
        found = []
        for library in ThreadpoolController().select(user_api="blas").lib_controllers:
            symbol = getattr(library, "_get_symbol", None)  # threadpoolctl's OpenBLAS symbol lookup
            if symbol is not None and getattr(library, "threading_layer", "") != "openmp":
                read, write = symbol("openblas_get_num_threads"), symbol("openblas_set_num_threads")
                if read is not None and write is not None:
                    found.append(_Blas(read, write))
                    continue
            found.append(_Blas(library.get_num_threads, library.set_num_threads))
        return found


_STATE = _StepThreads()


def step_blas_threads(threads: int | None = 1) -> None:
    """Whether the library's calls run BLAS on one thread (``1``, the default) or with the
    caller's settings (``None``); see the module docstring."""
    if threads is not None and threads != 1:
        raise InvalidParameterError(f"step_blas_threads takes 1 or None, got {threads!r}")
    _STATE.enabled = threads == 1


def one_blas_thread(function: F) -> F:
    """Run ``function`` with every BLAS at one thread, the caller's counts restored after.

    A call that finds every count at 1 already (the caller's own setting, or a library call
    around it) runs as it is, with nothing to restore: a nested call never restores early, and
    the common case costs the reads alone.
    """

    @functools.wraps(function)
    def with_one_thread(*args: Any, **kwargs: Any) -> Any:
        state = _STATE
        if not state.enabled:
            return function(*args, **kwargs)
        libraries = state.libraries
        if libraries is None:
            libraries = state.libraries = state.find_libraries()
        changed = None
        for read, write in libraries:  # each count read once
            threads = read()
            if threads != 1:
                changed = [] if changed is None else changed
                changed.append((write, threads))
        if changed is None:  # every count is 1: the common case, the reads alone
            return function(*args, **kwargs)
        try:
            for write, _ in changed:
                write(1)
            return function(*args, **kwargs)
        finally:
            for write, threads in changed:
                write(threads)

    return with_one_thread  # type: ignore[return-value]


def limit_blas_threads(threads: int = 1) -> None:
    """Limit the BLAS libraries loaded in this process (NumPy's, SciPy's) to ``threads`` threads."""
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InvalidParameterError(f"threads must be a whole number >= 1, got {threads!r}")
    threadpool_limits(limits=threads, user_api="blas")
