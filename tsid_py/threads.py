"""One BLAS thread for the control step, whatever the caller set.

tsid_py's matrices are small (tens of rows): a multi-threaded BLAS gains nothing on them and
loses badly when another process holds a core, since every product then waits for a thread that
is not running. Measured here on Talos balance with one core busy: 9.5 ms per control step with
OpenBLAS' default two threads, 0.39 ms with one.

So the library's own heavy calls (building a problem, ``InverseDynamicsFormulation.
compute_problem_data``; solving it, ``Solver.solve``; the two together, ``solve_step``) run with
every BLAS library of the process (NumPy's, SciPy's: those loaded when the first step runs) at
one thread, and give the caller's thread counts back when they return: a user's own script gets
the one-thread speed without doing anything, and their other NumPy work keeps its threads.
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
from typing import Any, TypeVar

from threadpoolctl import ThreadpoolController, threadpool_limits

from tsid_py.errors import InvalidParameterError

F = TypeVar("F", bound=Callable[..., Any])


class _StepThreads:
    """The per-call policy's state: on or off, the BLAS libraries found (each with a function that
    reads its thread count), whether a call is inside."""

    def __init__(self) -> None:
        self.enabled = os.environ.get("TSID_PY_STEP_THREADS", "one") != "caller"
        self.libraries: list[tuple[Any, Callable[[], int]]] | None = None  # found at first use
        self.inside = False

    def find_libraries(self) -> list[tuple[Any, Callable[[], int]]]:
        """threadpoolctl's controller of each BLAS loaded, and its thread count's reader: OpenBLAS's
        own C function where threadpoolctl finds it (0.1 us a read, against its property's 0.3)."""
        found = []
        for library in ThreadpoolController().select(user_api="blas").lib_controllers:
            symbol = getattr(library, "_get_symbol", None)  # threadpoolctl's OpenBLAS lookup
            read = symbol("openblas_get_num_threads") if symbol is not None else None
            found.append((library, read if read is not None else library.get_num_threads))
        return found


_STATE = _StepThreads()


def step_blas_threads(threads: int | None = 1) -> None:
    """Whether the library's calls run BLAS on one thread (``1``, the default) or with the
    caller's settings (``None``); see the module docstring."""
    if threads is not None and threads != 1:
        raise InvalidParameterError(f"step_blas_threads takes 1 or None, got {threads!r}")
    _STATE.enabled = threads == 1


def one_blas_thread(function: F) -> F:
    """Run ``function`` with every BLAS at one thread, the caller's counts restored after (the
    outermost such call sets and restores; nested ones run as they are)."""

    @functools.wraps(function)
    def with_one_thread(*args: Any, **kwargs: Any) -> Any:
        state = _STATE
        if state.inside or not state.enabled:
            return function(*args, **kwargs)
        libraries = state.libraries
        if libraries is None:
            libraries = state.libraries = state.find_libraries()
        changed = []
        for library, read in libraries:
            threads = read()
            if threads != 1:
                library.set_num_threads(1)
                changed.append((library, threads))
        state.inside = True
        try:
            return function(*args, **kwargs)
        finally:
            state.inside = False
            for library, threads in changed:
                library.set_num_threads(threads)

    return with_one_thread  # type: ignore[return-value]


def limit_blas_threads(threads: int = 1) -> None:
    """Limit the BLAS libraries loaded in this process (NumPy's, SciPy's) to ``threads`` threads."""
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InvalidParameterError(f"threads must be a whole number >= 1, got {threads!r}")
    threadpool_limits(limits=threads, user_api="blas")
