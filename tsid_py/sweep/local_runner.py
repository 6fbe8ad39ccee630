"""Sweeps on this machine's cores, without Ray: the same runs as the serial engine, in a pool of
worker processes.

The workers are forks of a server process that imported tsid_py once (the multiprocessing
"forkserver" start method, with tsid_py preloaded), so a pool of N workers is ready in about a
second, where a local Ray takes 4 s to start and stop (docs/sweeps.md). Each worker takes one
point at a time; at most IN_FLIGHT_PER_WORKER points per worker are queued, so results stream
back while the rest waits.

A run that raises is recorded by :class:`~tsid_py.sweep.job.JobRunner` itself. A worker process that
dies (a crash, a kill, the OOM killer) breaks the pool, and every point then in flight fails with
it: those points are run again, one at a time in a new pool until each has finished or died, so
that a death is charged to the point that caused it; a point whose worker died more than
``max_retries`` times running it alone is recorded with the error. A stopped sweep (the generator
closed: an error, SIGINT, SIGTERM) cancels its queued points and terminates its workers.
"""

from __future__ import annotations

import concurrent.futures as futures
import logging
import multiprocessing
import os
import pickle
import sys
from collections import deque
from collections.abc import Iterator
from concurrent.futures.process import BrokenProcessPool

from tsid_py.errors import InvalidParameterError
from tsid_py.sweep.job import JobRunner, Outcome

logger = logging.getLogger("tsid_py")

IN_FLIGHT_PER_WORKER = 2
WAIT = 1.0  # [s] at most between two looks for finished runs (signals are seen between them)
PRELOAD = ["tsid_py.sweep.job", "tsid_py.scenarios"]  # imported once, in the server the workers fork


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def picklable(runner: JobRunner) -> bool:
    """Whether ``runner`` can go to a worker process, which loads it by reference: not a lambda or
    a local function, nor a function of a ``__main__`` without a file (a notebook, a REPL): Ray's
    cloudpickle can send those."""
    try:
        data = pickle.dumps(runner)
    except (pickle.PicklingError, AttributeError, TypeError):
        return False
    return b"__main__" not in data or hasattr(sys.modules["__main__"], "__file__")


def run_on_processes(
    runner: JobRunner, items: list[tuple[int, dict[str, object]]], workers: int | None, max_retries: int
) -> Iterator[Outcome]:
    """The outcomes of ``runner`` at every (point, values) of ``items``, as they finish, on
    ``workers`` processes (default: :func:`usable_cores`).

    Raises:
        InvalidParameterError: The workers cannot start, or cannot load the job (a script whose
            top level runs the sweep without ``if __name__ == "__main__":``).
    """
    workers = max(1, min(workers or usable_cores(), len(items)))
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    queue = deque(items)
    deaths = {point: 0 for point, _ in items}
    suspects: set[int] = set()  # points in flight when a worker died: run alone until cleared
    pending: dict[futures.Future, tuple[int, dict[str, object]]] = {}
    others = set(multiprocessing.active_children())  # processes that are not this sweep's workers
    pool = _started_pool(workers, context, runner)
    finished = False
    try:
        while queue or pending:
            window = 1 if suspects else IN_FLIGHT_PER_WORKER * workers
            broken = []
            while queue and len(pending) < window:
                item = queue.popleft()
                try:
                    pending[pool.submit(runner, *item)] = item
                except BrokenProcessPool:  # a worker died since the last look: the pool is gone
                    broken.append(item)
                    break
            if not broken:
                done, _ = futures.wait(pending, timeout=WAIT, return_when=futures.FIRST_COMPLETED)
                for future in done:
                    item = pending.pop(future)
                    try:
                        outcome = future.result()
                    except BrokenProcessPool:
                        broken.append(item)
                        continue
                    suspects.discard(item[0])
                    yield outcome
            if broken:  # every point in flight went with the pool
                broken += list(pending.values())
                pending.clear()
                pool.shutdown(wait=True, cancel_futures=True)
                pool = _started_pool(workers, context, runner)
                alone = len(broken) == 1 and broken[0][0] in suspects  # it died by its own doing
                for point, values in reversed(broken):
                    deaths[point] += alone
                    if deaths[point] > max_retries:
                        suspects.discard(point)
                        error = f"WorkerDied: its worker process died {deaths[point]} times running it"
                        logger.warning("point %d: %s", point, error)
                        yield Outcome(point, values, {}, error, 0.0)
                    else:  # run again, alone until it finishes or dies
                        suspects.add(point)
                        queue.appendleft((point, values))
        finished = True
    finally:
        pool.shutdown(wait=finished, cancel_futures=True)
        if not finished:  # stopped: the runs in flight are not waited for
            workers_left = set(multiprocessing.active_children()) - others
            for worker in workers_left:
                worker.terminate()
            for worker in workers_left:
                worker.join(timeout=5.0)


def _started_pool(workers: int, context, runner: JobRunner) -> futures.ProcessPoolExecutor:
    """A pool whose workers started and loaded the job (one of them, once: a quick round trip)."""
    pool = futures.ProcessPoolExecutor(workers, mp_context=context)
    try:
        pool.submit(_load, pickle.dumps(runner)).result()
    except BrokenProcessPool:
        pool.shutdown(wait=False, cancel_futures=True)
        raise InvalidParameterError(
            "the sweep's worker processes died as they started: a script that runs a sweep on "
            'several workers needs its top level under `if __name__ == "__main__":` (the workers '
            "import it), or workers=1"
        ) from None
    except Exception as error:
        pool.shutdown(wait=False, cancel_futures=True)
        raise InvalidParameterError(
            f"the sweep's worker processes cannot load its job ({type(error).__name__}: {error}): "
            "define the job in a module they can import, or use workers=1"
        ) from None
    return pool


def _load(data: bytes) -> None:
    """In a worker: load the job as every run will (its module imported)."""
    pickle.loads(data)
