"""A/B step time of two checkouts of tsid_py, timed in turns in one run: JSON on stdout, tables on stderr.

    python benchmarks/ab_step.py BASE_TREE HEAD_TREE [--rounds 5] [--chunk 50] [--scenario ...]

Two versions of one package cannot be imported in one process, so each tree gets a worker process
of its own (``PYTHONPATH=TREE``, this interpreter, OpenMP and OpenBLAS on one thread), driven over
a pipe by this one, which imports no tsid_py. The base worker runs each scenario of
``tests/oracle_problems.py`` (each worker imports its own tree's) once in closed loop to record its states
(t, q, v); both workers then time the control step of ``build_tsid_py`` (set the references,
``compute_problem_data``, solve, read tau: what ``benchmarks/step_time.py`` times) at the same
states. A pass builds a new controller in each worker and goes through the states in chunks of
``--chunk`` states; every chunk is timed by one worker, then by the other, the first alternating
from one chunk to the next (ABBA), so the machine's load moves both alike. Only one worker runs
at a time. One warm-up pass, then ``--rounds`` timed passes.

Reported per scenario: each version's median (and p90) over all timed steps [us], the ratio of
the medians head/base, the median of the paired ratios (same state, same pass), and the range of
the per-pass median ratios (how much the ratio moved from pass to pass); the load average at the
start and the end.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, BinaryIO

HERE = Path(__file__).resolve()
DEFAULT_SCENARIOS = (
    "solo12-balance",
    "solo12-com-sinusoid",
    "talos-balance",
    "talos-com-sinusoid",
    "talos-walking",
    "romeo-balance",
    "romeo-com-sinusoid",
    "ur5-reaching",
)


def _send(stream: BinaryIO, message: object) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(len(data).to_bytes(8, "little") + data)
    stream.flush()


def _receive(stream: BinaryIO) -> Any:
    header = stream.read(8)
    if len(header) < 8:
        raise EOFError("the worker closed its pipe")
    return pickle.loads(stream.read(int.from_bytes(header, "little")))


# --------------------------------------------------------------------------------------- worker


def worker(tree: Path) -> None:
    """Serve commands from stdin: ('record', name), ('load', name, states), ('start',),
    ('chunk', begin, end), ('quit',). Answers on stdout (the real one: prints go to stderr)."""
    pipe_in, pipe_out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr
    sys.path.insert(0, str(tree / "tests"))  # the tree's own build of the problems (its API)
    import oracle_problems as op

    import tsid_py

    clock = time.perf_counter
    _send(pipe_out, ("ready", tsid_py.__file__))
    problem = states = control = None
    while True:
        command = _receive(pipe_in)
        kind = command[0]
        if kind == "quit":
            return
        if kind == "record":
            problem = op.PROBLEMS[command[1]]
            q0, v0 = op.initial_state(problem)
            ours = op.build_tsid_py(problem, q0)
            recorded, q, v = [], q0, v0
            for i in range(int(round(problem.duration / problem.dt))):
                t = i * problem.dt
                recorded.append((t, q.copy(), v.copy()))
                step = ours.step(t, q, v)
                if not step.ok:
                    raise RuntimeError(f"{problem.name}: the QP failed at t = {t:.3f} s")
                q, v = op.integrate(ours.model, q, v, step.dv, problem.dt)
            _send(pipe_out, recorded)
        elif kind == "load":
            problem, states = op.PROBLEMS[command[1]], command[2]
            _send(pipe_out, len(states))
        elif kind == "start":  # a new controller for a pass
            control = op.build_tsid_py(problem, op.initial_state(problem)[0]).control
            _send(pipe_out, True)
        elif kind == "chunk":
            times = []
            for t, q, v in states[command[1] : command[2]]:
                start = clock()
                control(t, q, v)
                times.append(clock() - start)
            _send(pipe_out, times)
        else:
            raise ValueError(f"unknown command {kind!r}")


class Worker:
    def __init__(self, tree: Path) -> None:
        env = dict(os.environ, PYTHONPATH=str(tree), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        self.process = subprocess.Popen(
            [sys.executable, str(HERE), "--worker", str(tree)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        reply = self.ask(None)
        self.package = reply[1]
        if not Path(self.package).resolve().is_relative_to(tree.resolve()):
            raise RuntimeError(f"the worker for {tree} imported {self.package}")

    def ask(self, command: object) -> Any:
        if command is not None:
            _send(self.process.stdin, command)
        return _receive(self.process.stdout)

    def close(self) -> None:
        _send(self.process.stdin, ("quit",))
        self.process.wait(timeout=30)


# --------------------------------------------------------------------------------------- driver


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    return 0.5 * (ordered[(n - 1) // 2] + ordered[n // 2])


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(workers: dict[str, Worker], name: str, rounds: int, chunk: int) -> dict[str, Any]:
    states = workers["base"].ask(("record", name))
    for w in workers.values():
        w.ask(("load", name, states))
    order = list(workers)
    times: dict[str, list[list[float]]] = {label: [] for label in order}  # per pass
    turn = 0
    for round_index in range(rounds + 1):
        for w in workers.values():
            w.ask(("start",))
        passed: dict[str, list[float]] = {label: [] for label in order}
        for begin in range(0, len(states), chunk):
            for label in order if turn % 2 == 0 else reversed(order):
                passed[label] += workers[label].ask(("chunk", begin, begin + chunk))
            turn += 1
        if round_index > 0:  # the first pass warms up
            for label in order:
                times[label].append(passed[label])
    flat = {label: [1e6 * s for p in passes for s in p] for label, passes in times.items()}
    paired = [h / b for h, b in zip(flat["head"], flat["base"], strict=True)]
    per_pass = [_median(h) / _median(b) for h, b in zip(times["head"], times["base"], strict=True)]
    entry: dict[str, Any] = {"states": len(states), "samples": len(flat["base"])}
    for label in order:
        entry[label] = {
            "median_us": round(_median(flat[label]), 1),
            "p90_us": round(_quantile(flat[label], 0.9), 1),
        }
    entry["ratio_median"] = round(entry["head"]["median_us"] / entry["base"]["median_us"], 3)
    entry["ratio_paired_median"] = round(_median(paired), 3)
    entry["ratio_per_pass"] = [round(r, 3) for r in per_pass]
    return entry


def print_tables(result: dict[str, Any], stream: Any) -> None:
    la0, la1 = result["load_average_start"], result["load_average_end"]
    print(
        f"A/B step time [us], base {result['base']} vs head {result['head']}, {result['rounds']} "
        f"round(s), chunks of {result['chunk']} states in turns; load average {la0[0]:.2f} at the "
        f"start, {la1[0]:.2f} at the end ({result['wall_time_s']:.0f} s)",
        file=stream,
    )
    print(
        f"{'scenario':22} {'base p50':>9} {'head p50':>9} {'head/base':>9} {'paired':>7}  "
        f"{'per pass (min..max)':>20}  {'base p90':>9} {'head p90':>9}",
        file=stream,
    )
    for name, e in result["scenarios"].items():
        spread = f"{min(e['ratio_per_pass']):.3f}..{max(e['ratio_per_pass']):.3f}"
        print(
            f"{name:22} {e['base']['median_us']:>9.1f} {e['head']['median_us']:>9.1f} "
            f"{e['ratio_median']:>9.3f} {e['ratio_paired_median']:>7.3f}  {spread:>20}  "
            f"{e['base']['p90_us']:>9.1f} {e['head']['p90_us']:>9.1f}",
            file=stream,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path, help="the tree of the base version (its tsid_py/)")
    parser.add_argument("head", type=Path, help="the tree of the version compared with it")
    parser.add_argument("--rounds", type=int, default=5, help="timed passes (default 5)")
    parser.add_argument("--chunk", type=int, default=50, help="states a worker times per turn (default 50)")
    parser.add_argument("--scenario", nargs="*", default=list(DEFAULT_SCENARIOS))
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.chunk < 1:
        parser.error("--rounds and --chunk must be at least 1")
    started, load_start = time.time(), os.getloadavg()
    workers = {"base": Worker(args.base), "head": Worker(args.head)}
    try:
        scenarios = {name: measure(workers, name, args.rounds, args.chunk) for name in args.scenario}
    finally:
        for w in workers.values():
            w.close()
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M", time.localtime(started)),
        "python": sys.version.split()[0],
        "base": str(args.base),
        "head": str(args.head),
        "packages": {label: w.package for label, w in workers.items()},
        "rounds": args.rounds,
        "chunk": args.chunk,
        "load_average_start": [round(x, 2) for x in load_start],
        "load_average_end": [round(x, 2) for x in os.getloadavg()],
        "wall_time_s": round(time.time() - started, 1),
        "scenarios": scenarios,
    }
    print(json.dumps(result, indent=2))
    print_tables(result, sys.stderr)
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        worker(Path(sys.argv[2]))
    else:
        sys.exit(main())
