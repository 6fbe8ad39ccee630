"""Step time of tsid_py and of the C++ TSID on the parity scenarios; prints one JSON object.

    python benchmarks/step_time.py [--rounds 5] [--scenario talos-balance ...]

A control step is: set the references, compute the problem, solve it, read tau. For each
scenario of tests/oracle_problems.py, tsid_py's closed loop is run once to record the states
(t, q, v) it goes through; then tsid_py with every installed QP backend, and the C++ TSID
(``SolverHQuadProgFast``, where it is importable: ``make oracle``), solve the step at every
recorded state, in turns (the order alternates), for ``--rounds`` passes after one warm-up pass.

Also reported: tsid_py's breakdown with quadprog (medians over the same states: Pinocchio
terms, tasks and assembly, QP stacking, QP solve, reading tau) and how often the warm start
confirmed the previous active set without a quadprog call.
"""

from __future__ import annotations

import os

# One thread for OpenMP (TSID links libgomp) and OpenBLAS (NumPy): small problems only lose to
# threading, and spinning threads make timings erratic on a loaded machine. Set them to override.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from oracle_problems import PROBLEMS, Controller, build_oracle, build_tsid_py, initial_state, integrate  # noqa: E402

from tsid_py.contacts import ContactWrench  # noqa: E402
from tsid_py.solvers import installed_backends, make_solver  # noqa: E402
from tsid_py.solvers.dense_qp import dense_qp  # noqa: E402

try:
    import tsid
except ImportError:
    tsid = None


def recorded_states(problem, ours: Controller) -> list[tuple[float, np.ndarray, np.ndarray]]:
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


def _with_backend(problem, q0: np.ndarray, backend: str) -> Controller:
    return build_tsid_py(problem, q0, make_solver(backend))


def _with_wrench_contacts(problem, q0: np.ndarray, backend: str) -> Controller:
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


def wrench_contact_entry(problem, states, rounds: int) -> dict[str, object]:
    """tsid_py only: Contact6d feet against ContactWrench feet on the same states, per backend."""
    q0, _ = initial_state(problem)
    backends = installed_backends()
    builders = [partial(_with_backend, problem, q0, b) for b in backends]
    builders += [partial(_with_wrench_contacts, problem, q0, b) for b in backends]
    times = interleaved(builders, states, rounds)
    corner, wrench = times[: len(backends)], times[len(backends) :]
    return {
        "sizes": dict(
            zip(("n_var", "n_eq", "n_in"), _with_wrench_contacts(problem, q0, backends[0]).sizes, strict=True)
        ),
        "states": len(states),
        "contact": "ContactWrench (6-D wrench, contact wrench cone) in place of Contact6d",
        "tsid_py": {b: summary(t) for b, t in zip(backends, wrench, strict=True)},
        "tsid_py_contact6d": {b: summary(t) for b, t in zip(backends, corner, strict=True)},
        "tsid": None,
    }


def summary(seconds: list[float]) -> dict[str, float]:
    us = 1e6 * np.asarray(seconds)
    return {"median_us": round(float(np.median(us)), 1), "p99_us": round(float(np.percentile(us, 99)), 1)}


def interleaved(builders: list[Callable[[], Controller]], states, rounds: int) -> list[list[float]]:
    """Times of each controller's control step at every state, in turns, after a warm-up pass; the
    controllers are built anew for every pass (a walk's contact switches start over)."""
    times: list[list[float]] = [[] for _ in builders]
    for round_index in range(rounds + 1):
        controllers = [build() for build in builders]
        for k, (t, q, v) in enumerate(states):
            order = range(len(controllers)) if k % 2 == 0 else reversed(range(len(controllers)))
            for c in order:
                start = time.perf_counter()
                controllers[c].control(t, q, v)
                elapsed = time.perf_counter() - start
                if round_index > 0:
                    times[c].append(elapsed)
    return times


def breakdown(build: Callable[[], Controller], states, rounds: int) -> dict[str, object]:
    """Medians of tsid_py's stages [us] and the warm-start hit rate."""
    stages: dict[str, list[float]] = {k: [] for k in ("pinocchio", "problem", "stacking", "solve", "tau")}
    hits = 0
    for _ in range(rounds):
        ours = build()
        form, solver = ours.formulation, ours.solver
        robot, data = form.robot, form.data
        for t, q, v in states:
            for update in ours.references:  # references and contact switches, not timed
                update(t)
            marks = [time.perf_counter()]
            robot.compute_all_terms_checked(data, q, v)
            marks.append(time.perf_counter())
            hqp = form.compute_problem_data(t, q, v)
            marks.append(time.perf_counter())
            dense_qp(hqp)
            marks.append(time.perf_counter())
            sol = solver.solve(hqp)
            marks.append(time.perf_counter())
            form.get_actuator_forces(sol)
            marks.append(time.perf_counter())
            for values, begin, end in zip(stages.values(), marks[:-1], marks[1:], strict=True):
                values.append(end - begin)
            hits += sol.iterations == 0
    med = {name: 1e6 * float(np.median(values)) for name, values in stages.items()}
    return {
        "pinocchio_us": round(med["pinocchio"], 1),
        "tasks_and_assembly_us": round(med["problem"] - med["pinocchio"], 1),
        "qp_stacking_us": round(med["stacking"], 1),
        "qp_solve_us": round(med["solve"] - med["stacking"], 1),
        "read_tau_us": round(med["tau"], 1),
        "warm_start_hits": round(hits / (rounds * len(states)), 3),
    }


def machine() -> dict[str, str]:
    cpu = platform.processor()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        names = [
            line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines() if "model name" in line
        ]
        cpu = f"{names[0]} x {len(names)}" if names else cpu
    return {
        "cpu": cpu,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pinocchio": pin.__version__,
        "tsid": getattr(tsid, "__version__", "installed") if tsid else "not installed",
        "OMP_NUM_THREADS": os.environ["OMP_NUM_THREADS"],
        "OPENBLAS_NUM_THREADS": os.environ["OPENBLAS_NUM_THREADS"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="timed passes over the recorded states")
    parser.add_argument("--scenario", nargs="*", choices=sorted(PROBLEMS), default=sorted(PROBLEMS))
    args = parser.parse_args(argv)
    results = {}
    for name in args.scenario:
        problem = PROBLEMS[name]
        q0, _ = initial_state(problem)
        ours = build_tsid_py(problem, q0)
        states = recorded_states(problem, ours)
        backends = installed_backends()
        builders = [partial(_with_backend, problem, q0, backend) for backend in backends]
        if tsid is not None:
            builders.append(partial(build_oracle, problem, q0, tsid))
        times = interleaved(builders, states, args.rounds)
        entry: dict[str, object] = {
            "sizes": dict(zip(("n_var", "n_eq", "n_in"), ours.sizes, strict=True)),
            "states": len(states),
            "tsid_py": {backend: summary(t) for backend, t in zip(backends, times, strict=False)},
            "tsid": summary(times[-1]) if tsid is not None else None,
        }
        if tsid is not None:
            entry["ratio_median"] = {
                backend: round(result["median_us"] / entry["tsid"]["median_us"], 3)
                for backend, result in entry["tsid_py"].items()
            }
            entry["ratio_p99"] = {
                backend: round(result["p99_us"] / entry["tsid"]["p99_us"], 3)
                for backend, result in entry["tsid_py"].items()
            }
        entry["tsid_py_breakdown"] = breakdown(partial(build_tsid_py, problem, q0), states, args.rounds)
        results[name] = entry
        if name == "talos-balance":  # the wrench-parametrised feet beside Contact6d (no TSID equivalent)
            results["talos-balance-wrench"] = wrench_contact_entry(problem, states, args.rounds)
    print(json.dumps({"machine": machine(), "rounds": args.rounds, "scenarios": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
