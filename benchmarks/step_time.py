"""Step time of tsid_py against the C++ TSID, interleaved in one run: tables, and the JSON of it all.

    python benchmarks/step_time.py [--rounds 5] [--scenario talos-balance ...] [--out step_time.json]

A control step is: set the references, compute the problem, solve it, read tau. For each
scenario of tests/oracle_problems.py (UR5 reaching; Solo12, Talos and Romeo balancing and
following a CoM sinusoid; Talos and Romeo walking, with contact switches), tsid_py's closed loop is
run once to record the states (t, q, v) it goes through; then tsid_py with every installed QP backend and
the C++ TSID (``SolverHQuadProgFast``, where it is importable: ``make oracle``) solve the step at
every recorded state, in turns (the order alternates from one state to the next), for
``--rounds`` passes after one warm-up pass. The ratio is tsid_py's time over TSID's measured in
the same pass, so that the machine's load moves both.

Reported per scenario: the median (p50), p99 and p99.9 of each, the ratios, and the split of
tsid_py's step with its default backend: one more tsid_py controller takes its turn in the same
passes with clocks between its stages (medians over the states): Pinocchio (every call of a
``pinocchio`` function, wherever it is made; the clock's own cost per call is measured and taken
out), tasks and assembly (the rest of ``compute_problem_data``), QP stacking (forming H and g,
timed apart), QP solve, and the Python rest (setting the references, reading tau). Then the
ratios per scenario and their geometric mean per robot, against issue 22's goals.

With ``--out FILE`` the JSON goes to FILE and the tables to stdout; without it the JSON goes to
stdout (what CI keeps) and the tables to stderr. OpenMP (TSID links libgomp) and OpenBLAS (NumPy)
run on one thread unless the environment says otherwise.
"""

from __future__ import annotations

import os

# One thread for OpenMP (TSID links libgomp) and OpenBLAS (NumPy): small problems only lose to
# threading, and spinning threads make timings erratic on a loaded machine. Set them to override.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Iterator, Sequence  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402
from types import SimpleNamespace  # noqa: E402
from typing import Any, Protocol, TextIO  # noqa: E402

import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from machine import describe  # noqa: E402
from oracle_problems import (  # noqa: E402
    PROBLEMS,
    Controller,
    Problem,
    build_oracle,
    build_tsid_py,
    initial_state,
    integrate,
)

import tsid_py as tp  # noqa: E402
from tsid_py.contacts import ContactWrench  # noqa: E402
from tsid_py.solvers import installed_backends, make_solver  # noqa: E402

try:  # the QP's stacking alone (H and g); without it the split gives stacking and solve together
    from tsid_py.solvers.dense_qp import dense_qp
except ImportError:  # pragma: no cover - a refactored package
    dense_qp = None

try:
    import tsid
except ImportError:
    tsid = None

State = tuple[float, np.ndarray, np.ndarray]

ROBOTS = ("ur5", "solo12", "talos", "romeo")  # by nv: 6, 18, 38, 61
KINDS = ("reaching", "balance", "com-sinusoid", "walking")
# Issue 22's goals: tsid_py's median step time over the C++ TSID's, per robot, at most.
GOALS = {"ur5": 2.0, "solo12": 1.0, "talos": 0.5, "romeo": 0.35}
STAGES = ("pinocchio", "tasks_and_assembly", "qp_stacking", "qp_solve", "python_rest")


def scenario_order(names: Sequence[str]) -> list[str]:
    """The scenarios by robot size, then balance, CoM sinusoid, walking."""

    def key(name: str) -> tuple[int, int, str]:
        problem = PROBLEMS[name]
        kind = name.removeprefix(f"{problem.robot}-")
        return (
            ROBOTS.index(problem.robot) if problem.robot in ROBOTS else len(ROBOTS),
            KINDS.index(kind) if kind in KINDS else len(KINDS),
            name,
        )

    return sorted(names, key=key)


def recorded_states(problem: Problem, ours: Controller) -> list[State]:
    """The (t, q, v) of tsid_py's closed loop over the scenario's duration."""
    q, v = initial_state(problem)
    states = []
    for i in range(int(round(problem.duration / problem.dt))):
        t = i * problem.dt
        states.append((t, q.copy(), v.copy()))
        step = ours.step(t, q, v)
        if not step.ok:
            raise RuntimeError(f"{problem.name}: the QP failed at t = {t:.3f} s")
        q, v = integrate(ours.model, q, v, step.dv, problem.dt)
    return states


def _with_backend(problem: Problem, q0: np.ndarray, backend: str) -> Controller:
    return build_tsid_py(problem, q0, make_solver(backend))


def _with_wrench_contacts(problem: Problem, q0: np.ndarray, backend: str) -> Controller:
    """tsid_py's build of ``problem`` with every Contact6d replaced by a ContactWrench (6 variables,
    the contact wrench cone) of the same sole, gains and reference."""
    ours = build_tsid_py(problem, q0, make_solver(backend))
    form = ours.formulation
    for spec, contact in zip(problem.contacts, list(form.contacts.values()), strict=True):
        wrench = ContactWrench(
            contact.name, form.robot, contact.frame_name, contact.contact_points, [0, 0, 1],
            contact.mu, contact.min_normal_force, contact.max_normal_force,
        )  # fmt: skip
        wrench.kp = contact.kp
        wrench.set_reference(contact.reference)
        form.remove_rigid_contact(contact.name)
        form.add_rigid_contact(wrench, spec.force_reg_weight, spec.motion_weight, spec.motion_priority)
    ours.sizes = (form.n_var, form.n_eq, form.n_in)
    return ours


def summary(seconds: Sequence[float]) -> dict[str, float]:
    """The median (p50), p99 and p99.9 [us] of step times [s]."""
    us = 1e6 * np.asarray(seconds)
    return {
        "median_us": round(float(np.median(us)), 1),
        "p99_us": round(float(np.percentile(us, 99)), 1),
        "p99.9_us": round(float(np.percentile(us, 99.9)), 1),
    }


def add_ratios(entry: dict[str, Any]) -> None:
    """``ratio_median``, ``ratio_p99``, ``ratio_p99.9``: each backend's statistic over TSID's."""
    theirs = entry["tsid"]
    for key in theirs:
        entry[f"ratio_{key.removesuffix('_us')}"] = {
            backend: round(stats[key] / theirs[key], 3) for backend, stats in entry["tsid_py"].items()
        }


class Stepper(Protocol):
    """What the interleaved passes time: ``control(t, q, v)`` (a :class:`Controller` is one)."""

    control: Callable[[float, np.ndarray, np.ndarray], object]


def interleaved(
    builders: Sequence[Callable[[], Stepper]], states: Sequence[State], rounds: int
) -> list[list[float]]:
    """Times of each control step at every state, in turns (the order alternates from one state to
    the next), after a warm-up pass; the steps are built anew for every pass (a walk's contact
    switches start over); each is kept for its pass (the oracle's objects live in its controller)."""
    times: list[list[float]] = [[] for _ in builders]
    clock = time.perf_counter
    for round_index in range(rounds + 1):
        steps = [build() for build in builders]
        for k, (t, q, v) in enumerate(states):
            order = range(len(steps)) if k % 2 == 0 else reversed(range(len(steps)))
            for c in order:
                start = clock()
                steps[c].control(t, q, v)
                elapsed = clock() - start
                if round_index > 0:
                    times[c].append(elapsed)
    return times


class PinocchioClock:
    """Adds up the time spent in Pinocchio's functions while installed (``with clock.installed():``).

    Every Boost.Python function of the ``pinocchio`` module is replaced by a timed wrapper, and so
    is every global of a ``tsid_py`` module bound to one, so calls are seen however they are
    written. ``totals`` (seconds, calls) only grow; read them before and after a stage. The
    wrapper costs time of its own: :meth:`calibrate` measures it, so the split can take it out.
    """

    def __init__(self) -> None:
        self.totals = [0.0, 0]  # seconds, calls
        self._patches: list[tuple[Any, str, Any, Any]] | None = None  # (owner, name, original, timed)

    def _wrap(self, function: Callable[..., Any]) -> Callable[..., Any]:
        totals, clock = self.totals, time.perf_counter

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = clock()
            result = function(*args, **kwargs)
            totals[0] += clock() - start
            totals[1] += 1
            return result

        return timed

    def _find_patches(self) -> list[tuple[Any, str, Any, Any]]:
        """What to patch: the module's functions and the tsid_py globals bound to one (found once,
        at the first installation: the controllers are built, their modules imported)."""
        boost_function = type(pin.crba)
        originals = {name: value for name, value in vars(pin).items() if type(value) is boost_function}
        timed = {id(value): (value, self._wrap(value)) for value in originals.values()}
        patches = [(pin, name, value, timed[id(value)][1]) for name, value in originals.items()]
        for module_name, module in list(sys.modules.items()):
            if module_name == "tsid_py" or module_name.startswith("tsid_py."):
                for name, value in list(vars(module).items()):
                    if id(value) in timed and timed[id(value)][0] is value:
                        patches.append((module, name, value, timed[id(value)][1]))
        return patches

    @contextmanager
    def installed(self) -> Iterator[PinocchioClock]:
        """The timed wrappers in place of Pinocchio's functions while the block runs."""
        if self._patches is None:
            self._patches = self._find_patches()
        try:
            for owner, name, _, timed in self._patches:
                setattr(owner, name, timed)
            yield self
        finally:
            for owner, name, original, _ in self._patches:
                setattr(owner, name, original)

    def calibrate(self, calls: int = 20_000) -> tuple[float, float]:
        """(inside, whole) [s per call]: what the wrapper adds to the Pinocchio time it measures,
        and to the time of the stage that makes the call (the best of five tries each)."""
        function = pin.skew
        wrapped = self._wrap(function)
        vector = np.zeros(3)
        clock = time.perf_counter
        inside, whole = math.inf, math.inf
        for _ in range(5):
            start = clock()
            for _ in range(calls):
                function(vector)
            raw = clock() - start
            before = self.totals[0]
            start = clock()
            for _ in range(calls):
                wrapped(vector)
            timed = clock() - start
            measured = self.totals[0] - before
            inside = min(inside, max(measured - raw, 0.0) / calls)
            whole = min(whole, max(timed - raw, 0.0) / calls)
        self.totals[:] = [0.0, 0]
        return inside, whole


class SplitStep:
    """tsid_py's control step with clocks between its stages, a turn of its own in the interleaved
    passes (so the machine's load moves it as it moves the others): references, the problem
    (Pinocchio timed apart by a :class:`PinocchioClock` installed for the step), the QP's stacking
    alone (once more, apart), the solve, tau. Every step appends one row of stage times [s]."""

    def __init__(self, build: Callable[[], Controller]) -> None:
        self.build = build
        self.clock = PinocchioClock()
        self.inside, self.whole = self.clock.calibrate()
        self.rows: list[list[float]] = []
        self.calls: list[int] = []
        self.hits: list[bool] = []

    def builder(self) -> Stepper:
        """A new controller's instrumented step (one per pass)."""
        ours = self.build()
        form, solver, references = ours.formulation, ours.solver, ours.references
        totals, now, installed = self.clock.totals, time.perf_counter, self.clock.installed

        def step(t: float, q: np.ndarray, v: np.ndarray) -> None:
            with installed():
                marks = [(now(), totals[0], totals[1])]
                for update in references:  # references and contact switches
                    update(t)
                marks.append((now(), totals[0], totals[1]))
                hqp = form.compute_problem_data(t, q, v)
                marks.append((now(), totals[0], totals[1]))
                if dense_qp is not None:
                    dense_qp(hqp)
                marks.append((now(), totals[0], totals[1]))
                sol = solver.solve(hqp)
                marks.append((now(), totals[0], totals[1]))
                form.get_actuator_forces(sol)
                marks.append((now(), totals[0], totals[1]))
            self._record(marks, sol.iterations == 0)

        return SimpleNamespace(control=step, controller=ours)

    def _record(self, marks: list[tuple[float, float, int]], hit: bool) -> None:
        pinocchio, own = [], []
        for (t0, p0, c0), (t1, p1, c1) in zip(marks[:-1], marks[1:], strict=True):
            in_pinocchio = (p1 - p0) - (c1 - c0) * self.inside
            pinocchio.append(in_pinocchio)
            own.append((t1 - t0) - (c1 - c0) * self.whole - in_pinocchio)
        references_s, problem_s, stacking_s, solve_s, tau_s = own
        self.rows.append(
            [
                pinocchio[0] + pinocchio[1] + pinocchio[3] + pinocchio[4],  # not the stacking's copy
                problem_s,
                stacking_s,
                solve_s - stacking_s,
                references_s + tau_s,
            ]
        )
        self.calls.append(marks[-1][2] - marks[0][2] - (marks[3][2] - marks[2][2]))
        self.hits.append(hit)

    def result(self, skip: int) -> dict[str, object]:
        """Medians of the stages [us] after the first ``skip`` steps (the warm-up pass), the
        Pinocchio calls per step and how often the warm start was confirmed (no QP iteration)."""
        table = 1e6 * np.asarray(self.rows[skip:])
        medians = dict(zip(STAGES, np.median(table, axis=0), strict=True))
        result: dict[str, object] = {
            f"{stage}_us": round(float(value), 1) for stage, value in medians.items()
        }
        result["total_us"] = round(float(np.median(table.sum(axis=1))), 1)
        if dense_qp is None:
            result["qp_stacking_us"] = None  # inside qp_solve_us
        result["pinocchio_calls_per_step"] = int(np.median(self.calls[skip:]))
        result["warm_start_hits"] = round(float(np.mean(self.hits[skip:])), 3)
        result["clock_overhead_per_pinocchio_call_us"] = round(1e6 * self.whole, 3)
        return result


def scenario_entry(problem: Problem, states: Sequence[State], rounds: int) -> dict[str, Any]:
    """One scenario: sizes, step-time statistics per library and backend, ratios, the split."""
    q0, _ = initial_state(problem)
    ours = build_tsid_py(problem, q0)
    backends = installed_backends()
    builders = [partial(_with_backend, problem, q0, backend) for backend in backends]
    if tsid is not None:
        builders.append(partial(build_oracle, problem, q0, tsid))
    split = SplitStep(partial(_with_backend, problem, q0, backends[0]))
    times = interleaved([*builders, split.builder], states, rounds)[: len(builders)]
    robot = tp.load_robot(problem.robot)
    entry: dict[str, Any] = {
        "robot": problem.robot,
        "nv": robot.nv,
        "kind": problem.name.removeprefix(f"{problem.robot}-"),
        "sizes": dict(zip(("n_var", "n_eq", "n_in"), ours.sizes, strict=True)),
        "duration_s": problem.duration,
        "states": len(states),
        "samples": rounds * len(states),
        "tsid_py": {backend: summary(t) for backend, t in zip(backends, times, strict=False)},
        "tsid": summary(times[-1]) if tsid is not None else None,
    }
    if entry["tsid"] is not None:
        add_ratios(entry)
    entry["tsid_py_breakdown"] = {"backend": backends[0], **split.result(skip=len(states))}
    return entry


def wrench_contact_entry(problem: Problem, states: Sequence[State], rounds: int) -> dict[str, object]:
    """tsid_py only: Contact6d feet against ContactWrench feet on the same states, per backend."""
    q0, _ = initial_state(problem)
    backends = installed_backends()
    builders = [partial(_with_backend, problem, q0, b) for b in backends]
    builders += [partial(_with_wrench_contacts, problem, q0, b) for b in backends]
    times = interleaved(builders, states, rounds)
    corner, wrench = times[: len(backends)], times[len(backends) :]
    sizes = _with_wrench_contacts(problem, q0, backends[0]).sizes
    return {
        "robot": problem.robot,
        "sizes": dict(zip(("n_var", "n_eq", "n_in"), sizes, strict=True)),
        "states": len(states),
        "contact": "ContactWrench (6-D wrench, contact wrench cone) in place of Contact6d",
        "tsid_py": {b: summary(t) for b, t in zip(backends, wrench, strict=True)},
        "tsid_py_contact6d": {b: summary(t) for b, t in zip(backends, corner, strict=True)},
        "tsid": None,
    }


def geometric_mean(values: Sequence[float]) -> float:
    return float(np.exp(np.mean(np.log(values))))


def ratio_summary(scenarios: dict[str, dict[str, Any]], backend: str) -> dict[str, object]:
    """The median and p99 ratios per scenario (``backend``) and the geometric mean of the median
    ratios per robot, with issue 22's goals."""
    compared = {name: e for name, e in scenarios.items() if e.get("tsid") is not None}
    per_robot: dict[str, list[float]] = {}
    for entry in compared.values():
        per_robot.setdefault(entry["robot"], []).append(entry["ratio_median"][backend])
    return {
        "backend": backend,
        "ratio_median": {name: e["ratio_median"][backend] for name, e in compared.items()},
        "ratio_p99": {name: e["ratio_p99"][backend] for name, e in compared.items()},
        "ratio_p99.9": {name: e["ratio_p99.9"][backend] for name, e in compared.items()},
        "geomean_ratio_median_per_robot": {
            robot: round(geometric_mean(values), 3)
            for robot, values in sorted(per_robot.items(), key=lambda item: ROBOTS.index(item[0]))
        },
        "goal_ratio_median_per_robot": GOALS,
    }


def machine() -> dict[str, object]:
    """The machine (:func:`machine.describe`) with the Pinocchio and C++ TSID versions."""
    return {
        **describe(),
        "pinocchio": pin.__version__,
        "tsid": getattr(tsid, "__version__", "installed") if tsid else "not installed",
    }


def _triple(stats: dict[str, float] | None) -> str:
    if stats is None:
        return "-"
    return f"{stats['median_us']:.0f} / {stats['p99_us']:.0f} / {stats['p99.9_us']:.0f}"


def print_tables(result: dict[str, Any], stream: TextIO) -> None:
    """The run as text: step times and ratios, the ratios per robot, the split."""
    scenarios: dict[str, dict[str, Any]] = result["scenarios"]
    backends = installed_backends()
    default = backends[0]

    def out(line: str = "") -> None:
        print(line, file=stream)

    out(
        f"Step time [us], p50 / p99 / p99.9, tsid_py ({default}) and "
        f"{'the C++ TSID' if tsid is not None else 'no C++ TSID (make oracle)'} interleaved, "
        f"{result['rounds']} round(s); load average {result['load_average_start'][0]:.2f} at the start, "
        f"{result['load_average_end'][0]:.2f} at the end"
    )
    others = [b for b in backends if b != default]
    header = f"{'scenario':22} {'nv':>3} {'vars/eq/in':>10}  {'tsid_py':>18}  {'TSID':>18}"
    header += f"  {'ratio p50':>9} {'p99':>5} {'p99.9':>5}"
    header += "".join(f"  {b + ' p50':>9}" for b in others)
    out(header)
    for name, e in scenarios.items():
        sizes = "/".join(str(s) for s in e["sizes"].values())
        line = f"{name:22} {e.get('nv', ''):>3} {sizes:>10}"
        line += f"  {_triple(e['tsid_py'][default]):>18}  {_triple(e['tsid']):>18}"
        if e.get("tsid") is not None:
            line += f"  {e['ratio_median'][default]:>9.2f} {e['ratio_p99'][default]:>5.2f}"
            line += f" {e['ratio_p99.9'][default]:>5.2f}"
            line += "".join(f"  {e['ratio_median'][b]:>9.2f}" for b in others)
        else:
            line += f"  {'-':>9} {'-':>5} {'-':>5}"
            line += "".join(f"  {e['tsid_py'][b]['median_us']:>7.0f}us" for b in others)
        out(line)
    summary_ = result.get("summary")
    if summary_:
        out()
        out(
            f"tsid_py ({summary_['backend']}) / TSID, median step time, geometric mean per robot "
            "(issue 22's goal: at most)"
        )
        for robot, value in summary_["geomean_ratio_median_per_robot"].items():
            goal = GOALS.get(robot)
            mark = "" if goal is None else ("  met" if value <= goal else "  not met")
            out(f"  {robot:8} {value:6.2f}   ({goal}){mark}")
    out()
    out(f"tsid_py's step split ({default}), medians [us]")
    out(
        f"{'scenario':22} {'pinocchio':>9} {'tasks+asm':>9} {'stacking':>9} {'qp solve':>9} "
        f"{'py rest':>9} {'total':>7} {'pin calls':>9} {'warm':>6}"
    )
    for name, e in scenarios.items():
        s = e.get("tsid_py_breakdown")
        if s is None:
            continue
        stacking = "-" if s["qp_stacking_us"] is None else f"{s['qp_stacking_us']:.1f}"
        out(
            f"{name:22} {s['pinocchio_us']:>9.1f} {s['tasks_and_assembly_us']:>9.1f} {stacking:>9} "
            f"{s['qp_solve_us']:>9.1f} {s['python_rest_us']:>9.1f} {s['total_us']:>7.1f} "
            f"{s['pinocchio_calls_per_step']:>9} {s['warm_start_hits']:>6.3f}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rounds", type=int, default=5, help="timed passes over the recorded states (default 5)"
    )
    parser.add_argument(
        "--scenario",
        nargs="*",
        choices=scenario_order(list(PROBLEMS)),
        default=scenario_order(list(PROBLEMS)),
    )
    parser.add_argument("--out", type=Path, help="write the JSON there (the tables then go to stdout)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    started = time.time()
    load_start = os.getloadavg()
    scenarios: dict[str, dict[str, Any]] = {}
    for name in scenario_order(args.scenario):
        problem = PROBLEMS[name]
        q0, _ = initial_state(problem)
        states = recorded_states(problem, build_tsid_py(problem, q0))
        scenarios[name] = scenario_entry(problem, states, args.rounds)
        if name == "talos-balance":  # the wrench-parametrised feet beside Contact6d (no TSID equivalent)
            scenarios["talos-balance-wrench"] = wrench_contact_entry(problem, states, args.rounds)
    result: dict[str, Any] = {
        "machine": machine(),
        "date": time.strftime("%Y-%m-%d %H:%M", time.localtime(started)),
        "rounds": args.rounds,
        "load_average_start": [round(x, 2) for x in load_start],
        "load_average_end": [round(x, 2) for x in os.getloadavg()],
        "wall_time_s": round(time.time() - started, 1),
        "summary": ratio_summary(scenarios, installed_backends()[0]) if tsid is not None else None,
        "scenarios": scenarios,
    }
    text = json.dumps(result, indent=2)
    if args.out is not None:
        args.out.write_text(text + "\n")
        print_tables(result, sys.stdout)
    else:
        print(text)
        print_tables(result, sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
