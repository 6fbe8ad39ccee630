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
Setting and restoring costs 2-3 us a call; when every count is 1 already, the call reads them
without a foreign call where the BLAS exports its count (OpenBLAS on pthreads: NumPy's and SciPy's wheels).

- :func:`step_blas_threads` ``(None)`` turns this off: the library's calls then run with the
  caller's settings (``step_blas_threads(1)`` turns it back on). ``TSID_PY_STEP_THREADS=caller``
  in the environment does the same from the start.
- :func:`limit_blas_threads` sets the whole process to a number of threads, once (the ``tsid-py``
  command does, for its loops): then there is nothing left to set per call.
"""

from __future__ import annotations

import ctypes
import functools
import inspect
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
    counter: ctypes.c_int | None = None  # the count itself, read without a call (see find_libraries)


class _StepThreads:
    """The per-call policy's state: on or off, and the BLAS libraries found."""

    def __init__(self) -> None:
        self.enabled = os.environ.get("TSID_PY_STEP_THREADS", "one") != "caller"
        self.libraries: list[_Blas] | None = None  # found at first use
        # every library's count as a C int, when each has one (the fast path); else None
        self.counts: tuple[ctypes.c_int, ...] | None = None

    def find(self) -> list[_Blas]:
        """Find the libraries (:meth:`find_libraries`) and the fast path's counts."""
        libraries = self.libraries = self.find_libraries()
        counts = [library.counter for library in libraries]
        self.counts = None if None in counts else tuple(counts)  # type: ignore[arg-type]  # checked
        return libraries

    @staticmethod
    def find_libraries() -> list[_Blas]:
        """Each BLAS loaded, through OpenBLAS's own C functions where threadpoolctl finds them (a
        read costs 0.1 us against 0.3 through threadpoolctl, and the count is the process's, from
        any Python thread: threadpoolctl's setter acts only from the first thread that used it);
        an OpenMP-built OpenBLAS or another BLAS through threadpoolctl's own methods.

        An OpenBLAS built on pthreads also exports its count, the C int ``blas_cpu_number`` that
        ``openblas_get_num_threads`` returns and ``openblas_set_num_threads`` sets: read as a
        ``ctypes.c_int``, it costs no foreign call (a call through ctypes took about 1 us inside a
        control step, against 0.1 us in a loop of its own). It is used only where it reads what
        the function returns when found, and dropped if it ever disagrees with a count written.
        """
        found = []
        for library in ThreadpoolController().select(user_api="blas").lib_controllers:
            symbol = getattr(library, "_get_symbol", None)  # threadpoolctl's OpenBLAS symbol lookup
            if symbol is not None and getattr(library, "threading_layer", "") != "openmp":
                read, write = symbol("openblas_get_num_threads"), symbol("openblas_set_num_threads")
                if read is not None and write is not None:
                    found.append(_Blas(read, write, _count_of(library, read)))
                    continue
            found.append(_Blas(library.get_num_threads, library.set_num_threads))
        return found


def _count_of(library: object, read: Callable[[], int]) -> ctypes.c_int | None:
    """OpenBLAS's exported thread count ``blas_cpu_number`` as a C int, if it reads as ``read()``."""
    try:
        count = ctypes.c_int.in_dll(library.dynlib, "blas_cpu_number")  # type: ignore[attr-defined]
    except (AttributeError, ValueError, TypeError):  # not exported, or no dynlib
        return None
    return count if count.value == read() else None


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
    the common case costs the reads alone (the counts read as C ints where every library exports
    one, :meth:`_StepThreads.find_libraries`). A function whose parameters are all plain (no
    default, no ``*args``, no keyword-only: the library's steps) gets a wrapper with the same
    parameters (:func:`_plain_wrapper`), which passes them on in a plain call.
    """
    wrapper = _plain_wrapper(function)
    if wrapper is None:

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            state = _STATE
            counts = state.counts
            if counts is not None and state.enabled:
                for count in counts:
                    if count.value != 1:
                        break
                else:  # every count is 1: the common case
                    return function(*args, **kwargs)
            return _on_one_thread(state, function, args, kwargs)

    return functools.wraps(function)(wrapper)  # type: ignore[return-value]


# one_blas_thread's wrapper of a function with plain parameters, written out for them: a call
# through *args and **kwargs costs about 0.6 us more inside a control step (Python 3.11 does not
# inline it), and the step makes two such calls
_PLAIN_WRAPPER = """
def wrapper({parameters}):
    counts = _state.counts
    if counts is not None and _state.enabled:
        for count in counts:
            if count.value != 1:
                break
        else:
            return _function({parameters})
    return _on_one_thread(_state, _function, ({parameters},), {{}})
"""


def _plain_wrapper(function: Callable[..., Any]) -> Callable[..., Any] | None:
    """:func:`one_blas_thread`'s wrapper with ``function``'s own parameters, or None when they
    are not all plain (or a name is one the wrapper uses)."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None
    names = [p.name for p in parameters]
    if not parameters or any(
        p.kind is not p.POSITIONAL_OR_KEYWORD or p.default is not p.empty for p in parameters
    ):
        return None
    if {"wrapper", "counts", "count"} & set(names) or any(n.startswith("_") for n in names):
        return None
    namespace: dict[str, Any] = {"_state": _STATE, "_function": function, "_on_one_thread": _on_one_thread}
    exec(_PLAIN_WRAPPER.format(parameters=", ".join(names)), namespace)  # noqa: S102 (names from a signature)
    return namespace["wrapper"]


def _on_one_thread(state: _StepThreads, function: Callable[..., Any], args: Any, kwargs: Any) -> Any:
    """:func:`one_blas_thread`'s call, the counts read through each library's functions."""
    if not state.enabled:
        return function(*args, **kwargs)
    libraries = state.libraries
    if libraries is None:
        libraries = state.find()
    changed = None
    for read, write, _ in libraries:  # each count read once
        threads = read()
        if threads != 1:
            changed = [] if changed is None else changed
            changed.append((write, threads))
    if changed is None:  # every count is 1, the reads alone
        return function(*args, **kwargs)
    try:
        for write, _ in changed:
            write(1)
        _check_counts(state)
        return function(*args, **kwargs)
    finally:
        for write, threads in changed:
            write(threads)


def _check_counts(state: _StepThreads) -> None:
    """Drop the fast path if a library's C int does not read what its function does."""
    for library in state.libraries or ():
        if library.counter is not None and library.counter.value != library.read():
            state.counts = None
            return


def limit_blas_threads(threads: int = 1) -> None:
    """Limit the BLAS libraries loaded in this process (NumPy's, SciPy's) to ``threads`` threads."""
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InvalidParameterError(f"threads must be a whole number >= 1, got {threads!r}")
    threadpool_limits(limits=threads, user_api="blas")
