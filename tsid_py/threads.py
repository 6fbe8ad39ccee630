"""One BLAS thread for control loops.

tsid_py's matrices are small (tens of rows): a multi-threaded BLAS gains nothing on them and
loses badly when another process holds a core, since every product then waits for a thread that
is not running. Measured here on Talos balance with one core busy: 9.5 ms per control step with
OpenBLAS' default two threads, 0.39 ms with one. The ``tsid-py`` command and the demos call
:func:`limit_blas_threads`; call it at the start of your own control loop too (or set
``OPENBLAS_NUM_THREADS=1`` before Python starts).
"""

from __future__ import annotations

from threadpoolctl import threadpool_limits

from tsid_py.errors import InvalidParameterError


def limit_blas_threads(threads: int = 1) -> None:
    """Limit the BLAS libraries loaded in this process (NumPy's, SciPy's) to ``threads`` threads."""
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InvalidParameterError(f"threads must be a whole number >= 1, got {threads!r}")
    threadpool_limits(limits=threads, user_api="blas")
