"""The largest push Talos recovers from in MuJoCo, by direction: on a grid of forces, or by bisection.

    python benchmarks/push_recovery.py [--recovery none,step] [--directions +x,-x,+y,-y]
                                       [--range 0 1000] [--grid 25 | --resolution 5]
                                       [--duration 0.1] [--at 1.0] [--mode torque]
                                       [--plant mujoco|mujoco-urdf] [--contacts plant|none]
                                       [--sensing truth,robot] [--params JSON] [--out FILE]

A push of ``--duration`` s at t = ``--at`` s on the base, along each direction; each run goes on
until its verdict is decided (fell, or recovered: at rest again after the push), 5 s after the
push at most (:mod:`tsid_py.loop.verdict`). With ``--grid G`` the largest recovered push means
what it says: the forces G, 2G, ... are run upward, and the figure is the largest force below
which every grid force recovered; the scan goes on until three forces in a row are not recovered
(or the range ends), and the forces recovered above the first loss are reported
(``recovered_above_n``: a band where the outcome is not monotone in the force). Without it,
bisection keeps a force that was recovered below and one that was not above, to
``--resolution``, both ends checked first: it assumes that the outcome changes once with the
force, which it does not always. Each recovery mode of the balance controller (``--recovery``:
none, ankle, step; :mod:`tsid_py.controllers.strategies.push_recovery`) is measured in the same
run, and with ``--sensing truth,robot`` each with the controller fed the plant's state and with
robot sensing (:mod:`tsid_py.loop.sensing`), robot's over truth's given. ``--params`` overrides
RecoveryParams (JSON). ``--plant mujoco-urdf`` runs Talos in a MuJoCo model built another way
(MuJoCo's URDF importer, box feet under the soles, no damping), and ``--contacts none`` in a
user's own loop whose controller gets no contact measurements (issue 41: the recovery must not be
worse than none there). Prints one JSON object (and writes it to ``--out``): per sensing, mode and
direction the largest recovered force, the smallest force not recovered and its verdict, the
ratios, and every run's force, verdict, steps and times. Needs ``[sim]``.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from machine import describe, emit  # noqa: E402

import tsid_py as tsid  # noqa: E402
from tsid_py.controllers import BipedController, RecoveryParams  # noqa: E402
from tsid_py.errors import SolverFailedError  # noqa: E402
from tsid_py.loop import BalanceJudge, Command, PlantState, Push  # noqa: E402
from tsid_py.loop.plants import make_plant  # noqa: E402
from tsid_py.scenarios import balance  # noqa: E402

AXES = {"x": 0, "y": 1}


def push_along(direction: str, force: float, at: float, duration: float) -> Push:
    """A push of ``force`` [N] along ``direction`` (``+x``, ``-y``, ...)."""
    vector = [0.0, 0.0, 0.0]
    vector[AXES[direction[1]]] = force if direction[0] == "+" else -force
    return Push((vector[0], vector[1], vector[2]), at, duration)


def judge(direction: str, force: float, args: argparse.Namespace, runs: list[dict]) -> bool:
    """Run one push; True when its verdict is ``recovered``."""
    started = time.perf_counter()
    sensing = {} if args.sensing_now == "truth" else {"sensing": args.sensing_now}  # (older trees: none)
    summary = balance.run(
        duration=args.at + args.duration + 0.5,
        plant=args.plant,
        mode=args.mode,
        push=push_along(direction, force, args.at, args.duration),
        check_every=10,  # every 10th step checked against the physics: torques within limits
        recovery=args.recovery_mode,
        recovery_params=args.recovery_params if args.recovery_mode != "none" else None,
        **sensing,
    ).summary
    runs.append(run_record(summary, force, started, steps=summary.get("recovery_steps", 0)))
    return summary["verdict"] == "recovered"


def run_record(summary: dict, force: float, started: float, **extra: object) -> dict[str, object]:
    """What a benchmark keeps of one pushed run: the force [N], the verdict and its times, the QP
    failures, the worst torque ratio and residual, the times simulated and taken, and ``extra``."""
    return {
        "force_n": force,
        "verdict": summary["verdict"],
        "lost_balance_at_s": summary["lost_balance_at_s"],
        "fell_at_s": summary["fell_at_s"],
        "recovered_at_s": summary["recovered_at_s"],
        "qp_failures": summary["qp_failures"],
        "max_torque_ratio": summary["max_torque_ratio"],
        "dynamics_residual_max": summary["dynamics_residual_max"],
        **extra,
        "simulated_s": summary["simulated_time_s"],
        "wall_s": time.perf_counter() - started,
    }


def judge_without_contacts(direction: str, force: float, args: argparse.Namespace, runs: list[dict]) -> bool:
    """Run one push in a user's own loop whose controller gets no contact measurements
    (``PlantState(t, q, v)``, as in docs/guides/embedding.md), judged from the plant's full state
    until decided, 5 s after the push at most; a failed QP counts as a fall. True when recovered."""
    started = time.perf_counter()
    robot = tsid.load_robot("talos")
    controller = BipedController(robot, recovery=args.recovery_mode, recovery_params=args.recovery_params)
    plant = make_plant(args.plant, robot)
    plant.reset(controller.q0, robot.zero_velocity())
    push, dt = push_along(direction, force, args.at, args.duration), 0.002
    judge = BalanceJudge(robot, controller.q0, disturbances=[(push.t, push.t + push.duration)])
    failed = None
    for k in range(int(round((push.t + push.duration + 5.0) / dt))):
        state = plant.state()
        if k == int(round(push.t / dt)):
            plant.push(push.force, push.duration)
        judge.observe(judge.measure(state), controller.held_contact_frames(), controller.stepping)
        if judge.decided():
            break
        controller.observe(controller.measurer.measure(PlantState(state.t, state.q, state.v)))
        try:
            out = controller.compute(state.t, state.q, state.v)
        except SolverFailedError:
            failed = state.t
            break
        plant.apply(Command(out.tau, out.dv))
        plant.advance(dt)
    verdict = judge.verdict()
    name = "fell" if failed is not None else verdict.verdict
    runs.append(
        {
            "force_n": force,
            "verdict": name,
            "reason": f"the QP failed at {failed:.3f} s" if failed is not None else verdict.reason,
            "simulated_s": judge.t_end,
            "wall_s": time.perf_counter() - started,
        }
    )
    return name == "recovered"


def grid_limit(direction: str, args: argparse.Namespace, judge=judge) -> dict[str, object]:
    """The largest force below which every force of the grid recovered (see the docstring); each
    force run by ``judge(direction, force, args, runs)`` (this module's: the balance scenario)."""
    runs: list[dict] = []
    grid, high = args.grid, args.range[1]
    first_loss, misses, force = None, 0, grid
    while force <= high + 1e-9 and misses < 3:
        recovered = judge(direction, force, args, runs)
        misses = 0 if recovered else misses + 1
        if not recovered and first_loss is None:
            first_loss = force
        force += grid
    if first_loss is None:
        return {"largest_recovered_n": high, "note": f"every force up to {high} N recovered", "runs": runs}
    failed = next(run for run in runs if run["force_n"] == first_loss)
    above = [run["force_n"] for run in runs if run["force_n"] > first_loss and run["verdict"] == "recovered"]
    return {
        "largest_recovered_n": first_loss - grid if first_loss > grid else None,
        "smallest_not_recovered_n": first_loss,
        "its_verdict": failed["verdict"],
        "recovered_above_n": above,
        "runs": runs,
    }


def largest_recovered(direction: str, args: argparse.Namespace) -> dict[str, object]:
    if args.contacts == "none":
        return grid_limit(direction, args, judge_without_contacts)
    if args.grid:
        return grid_limit(direction, args)
    return bisect_limit(lambda force, runs: judge(direction, force, args, runs), args.range, args.resolution)


def bisect_limit(recovers, force_range: tuple[float, float], resolution: float) -> dict[str, object]:
    """The largest recovered force by bisection, to ``resolution`` [N], both ends of
    ``force_range`` checked first; ``recovers(force, runs)`` runs one push, appends its record (a
    dict with ``force_n`` and ``verdict``) to ``runs`` and says whether it was recovered. Assumes
    the outcome changes once with the force (the module docstring)."""
    runs: list[dict] = []
    low, high = force_range
    if not recovers(low, runs):
        return {"largest_recovered_n": None, "note": f"{low} N was not recovered", "runs": runs}
    if recovers(high, runs):
        return {"largest_recovered_n": high, "note": f"{high} N was recovered: raise --range", "runs": runs}
    while high - low > resolution:
        middle = 0.5 * (low + high)
        low, high = (middle, high) if recovers(middle, runs) else (low, middle)
    failed = next(run for run in runs if run["force_n"] == high)
    return {
        "largest_recovered_n": low,
        "smallest_not_recovered_n": high,
        "its_verdict": failed["verdict"],
        "runs": runs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--directions", default="+x,-x,+y,-y")
    parser.add_argument("--range", type=float, nargs=2, default=(0.0, 1000.0), metavar=("LOW", "HIGH"))
    parser.add_argument("--resolution", type=float, default=5.0, help="[N]")
    parser.add_argument("--duration", type=float, default=0.1, help="of the push [s]")
    parser.add_argument("--at", type=float, default=1.0, help="when the push starts [s]")
    parser.add_argument("--mode", choices=("torque", "position"), default="torque")
    parser.add_argument(
        "--plant",
        choices=("mujoco", "mujoco-urdf"),
        default="mujoco",
        help="the MuJoCo model: the library's, or built another way (tsid_py.loop.plants)",
    )
    parser.add_argument(
        "--contacts",
        choices=("plant", "none"),
        default="plant",
        help="none: a user's own loop whose controller gets no contact measurements (on --grid)",
    )
    parser.add_argument("--recovery", default="none,step", help="the controller's modes, comma separated")
    parser.add_argument(
        "--grid", type=float, default=0.0, help="scan GRID, 2 GRID, ... instead of bisecting [N]"
    )
    parser.add_argument("--sensing", default="truth", help="truth, robot or both (comma separated)")
    parser.add_argument("--params", default="", help="RecoveryParams overrides, as JSON")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    modes = [m.strip() for m in args.recovery.split(",")]
    if args.contacts == "none" and (not args.grid or args.mode != "torque" or args.sensing != "truth"):
        parser.error("--contacts none runs a torque-mode grid with truth sensing: give --grid")
    args.recovery_params = RecoveryParams(**json.loads(args.params)) if args.params else None
    directions = [d.strip() for d in args.directions.split(",")]
    for direction in directions:
        if len(direction) != 2 or direction[0] not in "+-" or direction[1] not in AXES:
            parser.error(f"--directions: {direction!r} is not one of +x, -x, +y, -y")
    started = time.perf_counter()
    out: dict[str, object] = {
        "machine": describe(),
        "robot": "talos",
        "plant": args.plant,
        "contacts": args.contacts,
        "mode": args.mode,
        "push": {"duration_s": args.duration, "at_s": args.at, "resolution_n": args.resolution},
        "params": args.params,
        "sensing": args.sensing,
    }
    sensings = [s.strip() for s in args.sensing.split(",")]
    for sensing in sensings:
        args.sensing_now = sensing
        results: dict = out.setdefault(
            "recovery" if sensing == "truth" else f"recovery_{sensing}_sensing", {}
        )  # type: ignore[assignment]
        for mode in modes:
            args.recovery_mode = mode
            results[mode] = {direction: largest_recovered(direction, args) for direction in directions}
        for mode in modes[1:]:
            for direction, result in results[mode].items():
                base, this = (
                    results[modes[0]][direction]["largest_recovered_n"],
                    result["largest_recovered_n"],
                )
                result["ratio_to_" + modes[0]] = this / base if base and this is not None else None
    if "truth" in sensings and "robot" in sensings:
        truth, robot = out["recovery"], out["recovery_robot_sensing"]
        for mode in modes:
            for direction, result in robot[mode].items():  # type: ignore[index]
                base, this = truth[mode][direction]["largest_recovered_n"], result["largest_recovered_n"]  # type: ignore[index]
                result["ratio_to_truth"] = this / base if base and this is not None else None
    out["wall_s"] = time.perf_counter() - started
    emit(out, args.out)


if __name__ == "__main__":
    main()
