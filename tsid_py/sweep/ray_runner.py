"""Sweeps on Ray: the same runs as the serial engine, one Ray task per point.

Where Ray runs:

- a Ray already started in this process (``ray.init`` by the caller) is used as it is;
- ``address`` (``--address``, else ``RAY_ADDRESS``): a running cluster (``ray start --head`` on
  one machine, ``ray start --address HEAD:6379`` on the others), e.g. "auto" on one of its nodes
  or "ray://HEAD:10001" from outside;
- otherwise (a job only Ray's cloudpickle can send: a local sweep's runs otherwise go to
  :mod:`tsid_py.sweep.local_runner`) a new local Ray with ``workers`` CPUs (default: every
  core), stopped at the end; its start-up notices (token authentication) are not printed unless
  ``--log-level debug``.


A run that raises is recorded by :class:`~tsid_py.sweep.job.JobRunner` itself; a worker process that
dies (a crash, a kill, a lost node) is retried by Ray (``max_retries``), and when the retries are
spent its point is recorded with the error. At most two tasks per CPU are in flight, so results
stream back while the rest waits, and a stopped sweep cancels the tasks it started.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from tsid_py.sweep.job import JobRunner, Outcome

logger = logging.getLogger("tsid_py")

IN_FLIGHT_PER_CPU = 2
WAIT = 1.0  # [s] at most between two looks for finished runs
# Ray's logger of the token-authentication notice it prints when a local Ray starts (Ray 2.5x):
# shown only with --log-level debug, for the Ray a sweep starts for itself
LOCAL_START_NOTICES = "ray._private.authentication.authentication_token_setup"


def _execute(runner: JobRunner, point: int, values: dict[str, object]) -> Outcome:
    return runner(point, values)


def run_on_ray(
    runner: JobRunner,
    items: list[tuple[int, dict[str, object]]],
    workers: int | None,
    address: str | None,
    max_retries: int,
) -> Iterator[Outcome]:
    """The outcomes of ``runner`` at every (point, values) of ``items``, as they finish."""
    import ray

    started = False
    if not ray.is_initialized():
        options = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING}
        if address is not None:
            ray.init(address=address, **options)
        else:  # a Ray of the sweep's own, stopped after it: its start-up notices are not the user's
            notices = logging.getLogger(LOCAL_START_NOTICES)
            level = notices.level
            if not logging.getLogger("tsid_py").isEnabledFor(logging.DEBUG):
                notices.setLevel(logging.ERROR)
            try:
                ray.init(address="local", num_cpus=workers, **options)
            finally:
                notices.setLevel(level)

        started = True
    pending: dict[object, tuple[int, dict[str, object]]] = {}
    try:
        cpus = int(ray.cluster_resources().get("CPU", 1))
        window = IN_FLIGHT_PER_CPU * max(1, min(cpus, workers or cpus))
        remote = ray.remote(num_cpus=1, max_retries=max_retries)(_execute)
        runner_ref = ray.put(runner)
        queue = iter(items)
        while True:
            while len(pending) < window and (item := next(queue, None)) is not None:
                pending[remote.remote(runner_ref, *item)] = item
            if not pending:
                break
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=WAIT)  # signals are seen between waits
            for ref in ready:
                point, values = pending.pop(ref)
                yield _outcome(ray, ref, point, values)
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
        if started:
            ray.shutdown()


def _outcome(ray, ref, point: int, values: dict[str, object]) -> Outcome:
    """The task's outcome, or its point with the error when Ray could not run it (worker died
    more than ``max_retries`` times, node lost)."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayError as exc:
        lines = str(exc).strip().splitlines()
        error = f"{type(exc).__name__}: {' '.join(lines[0].split())}" if lines else type(exc).__name__
        logger.warning("point %d: %s", point, error)
        return Outcome(point, values, {}, error[:300], 0.0)
