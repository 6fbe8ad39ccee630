"""Solve time of every installed QP backend on the Talos balance problem; prints JSON.

Runs the Talos balance controller (or the CoM sinusoid, ``--amplitude 0.05``) in closed loop,
driven by quadprog's solution, and at every step times each backend on the same problem, each
with its own warm start:

- ``solve_us``: ``solver.solve(hqp)``, what a control loop pays (stacking the levels + the QP);
- ``qp_us``: the backend's dense-QP primitive alone (``solver.solve_qp``), on the same QP.

Two problems: the classic two levels (contacts and torque bounds hard, every task at level 1),
and three levels (posture moved to level 2: a cascade of two QPs).

    python benchmarks/qp_backends.py --steps 500 [--amplitude 0.05]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import tsid_py as tsid
from tsid_py.controllers.biped import BipedController
from tsid_py.solvers import installed_backends
from tsid_py.solvers.dense_qp import dense_qp
from tsid_py.trajectories import TrajectoryEuclidianSinusoid


def timed(function, *args):
    start = time.perf_counter()
    result = function(*args)
    return result, (time.perf_counter() - start) * 1e6


def measure(levels: int, steps: int, amplitude: float) -> dict[str, dict[str, float]]:
    robot = tsid.load_robot("talos")
    controller = BipedController(robot)
    form = controller.formulation
    if levels == 3:
        form.remove_task("task-posture")
        form.add_motion_task(controller.posture_task, weight=1.0, priority=2)
    solvers = {name: tsid.make_solver(name) for name in installed_backends()}
    primitives = {name: tsid.make_solver(name) for name in solvers}
    sway = TrajectoryEuclidianSinusoid("com", controller.com_initial, [0.0, amplitude, 0.0], [0.0, 0.5, 0.0])
    times = {name: {"solve_us": [], "qp_us": []} for name in solvers}
    worst = dict.fromkeys(solvers, 0.0)
    q, v, dt = controller.q0.copy(), robot.zero_velocity(), 0.002
    for i in range(steps):
        controller.set_com_reference(sway.sample(i * dt))
        hqp = form.compute_problem_data(i * dt, q, v)
        qp = dense_qp(hqp.snapshot())  # levels 0 and 1, independent of the formulation's buffers
        solutions = {}
        for name, solver in solvers.items():
            solutions[name], elapsed = timed(solver.solve, hqp)
            times[name]["solve_us"].append(elapsed)
            times[name]["qp_us"].append(timed(primitives[name].solve_qp, qp)[1])
        reference = solutions["quadprog"].x
        for name, solution in solutions.items():
            worst[name] = max(worst[name], float(np.abs(solution.x - reference).max()))
        q, v = tsid.integrate(robot, q, v, form.get_accelerations(solutions["quadprog"]), dt)
    return {
        name: {
            "solve_us_median": float(np.median(t["solve_us"])),
            "solve_us_p95": float(np.percentile(t["solve_us"], 95)),
            "qp_us_median": float(np.median(t["qp_us"])),
            "max_abs_diff_to_quadprog": worst[name],
        }
        for name, t in times.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500, help="control steps (default: 500)")
    parser.add_argument(
        "--amplitude", type=float, default=0.0, help="CoM sway along y [m] (default: 0, balance)"
    )
    args = parser.parse_args()
    scenario = "balance" if args.amplitude == 0.0 else f"CoM sinusoid {args.amplitude} m"
    result = {
        "problem": f"Talos {scenario}: 62 variables, 18 equalities, 66 inequalities",
        "steps": args.steps,
        "backends": installed_backends(),
        "two_levels": measure(2, args.steps, args.amplitude),
        "three_levels": measure(3, args.steps, args.amplitude),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
