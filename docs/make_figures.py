"""Make the documentation's figures with the library's own plots: ``python docs/make_figures.py``.

The push maps (the sweeps page's and the push-recovery tutorial's two) are the sweeps they show
(about ten minutes on two cores, with [sim] and [cluster]): ``python docs/make_figures.py --push-map``.

The performance page's three figures come from the benchmarks' JSON instead:

    python benchmarks/step_time.py --rounds 5 --out step_time.json
    python docs/make_figures.py --step-time step_time.json   # the step time against nv and the split
    python benchmarks/python_floor.py --rounds 10 --out floor.json
    python docs/make_figures.py --floor floor.json

Each figure is what ``tsid-py SCENARIO --plot DIR`` (or ``tsid-py analyze --plot``) writes, saved
into docs/images as a small PNG (64-colour palette). About a minute on two cores. The three
screenshots of the 3-D view (balance.png, quadruped.png, reach.png) are headless Chromium's
renderings of the ``--html`` replays:

    tsid-py balance --duration 1 --html balance.html
    chromium --headless --no-sandbox --window-size=640,480 --virtual-time-budget=2000 \
        --screenshot=docs/images/balance.png balance.html
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

IMAGES = Path(__file__).resolve().parent / "images"
TSID_PY = [sys.executable, "-m", "tsid_py.cli"]

# (command arguments, {plot written: name in docs/images})
RUNS = [
    (["balance"], {"balance_contact_forces.png": "balance_contact_forces.png"}),
    (
        ["com-sinusoid", "--duration", "4"],
        {
            "com-sinusoid_com.png": "com-sinusoid_com.png",
            "com-sinusoid_contact_forces.png": "com-sinusoid_contact_forces.png",
        },
    ),
    (["step"], {"step_foot_heights.png": "step_foot_heights.png", "step_com.png": "step_com.png"}),
    (["walk"], {"walk_top_view.png": "walk_top_view.png"}),
    (
        ["balance", "--plant", "mujoco", "--push", "450,0,0@1+0.1", "--recovery", "step", "--duration", "3"],
        {
            "balance_capture_point.png": "push_recovery_capture_point.png",
            "balance_top_view.png": "push_recovery_top_view.png",
        },
    ),
    (["walk", "--robot", "romeo"], {"walk_top_view.png": "walk_romeo_top_view.png"}),
    (
        ["walk", "--plant", "mujoco", "--recovery", "step", "--push", "0,-300,0@3.35+0.1"],
        {"walk_top_view.png": "walk_push_recovery_top_view.png"},
    ),
    (
        ["walk", "--terrain", "stairs", "--plant", "mujoco"],
        {"walk_side_view.png": "walk_stairs_side_view.png", "walk_top_view.png": "walk_stairs_top_view.png"},
    ),
    (["reach"], {"reach-target_end_effector.png": "reach-target_end_effector.png"}),
    (["quadruped"], {"quadruped_top_view.png": "quadruped_top_view.png"}),
]


# The push maps, each a sweep on Talos in MuJoCo: docs/sweeps.md's (lateral pushes of 100 to 600 N
# at 0.5 to 1.5 s), and the push-recovery tutorial's two polar ones (0.1 s at 1 s, every 45 deg,
# 100 to 800 N), without and with the stepping
_TALOS_MUJOCO = ["sweep", "balance", "--robot", "talos", "--param", "plant=mujoco", "--workers", "2"]
_POLAR = ["--param", "push_force=100:800:100", "--param", "push_angle=0:315:45"]
PUSH_MAPS = {
    "push_map_talos.png": [*_TALOS_MUJOCO, "--param", "push_fy=100:600:50", "--param", "push_t=0.5:1.5:0.25"],
    "push_map_polar_none.png": [*_TALOS_MUJOCO, *_POLAR, "--param", "recovery=none"],
    "push_map_polar_step.png": [*_TALOS_MUJOCO, *_POLAR, "--param", "recovery=step"],
}


def save_small(source: Path, target: Path) -> None:
    """``source`` as a 64-colour palette PNG at ``target`` (a third of matplotlib's size)."""
    from PIL import Image

    with Image.open(source) as image:
        image.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT).save(target, optimize=True)


# PlaCo's published step time of its dynamics solver on Talos (two 6-D wrench contacts, 50
# variables), measured on its authors' machine, not this one: one marked point, for scale.
PLACO_TALOS = (38, 97.0)  # (nv, us)
KIND_MARKERS = {"reaching": "D", "balance": "o", "com-sinusoid": "^", "walking": "s"}
KIND_OFFSETS = {"reaching": 0.0, "balance": -1.2, "com-sinusoid": 0.0, "walking": 1.2}  # [nv], to separate
SPLIT_COLOURS = {
    "pinocchio_us": ("Pinocchio", "#4c72b0"),
    "tasks_and_assembly_us": ("tasks and assembly", "#dd8452"),
    "qp_stacking_us": ("QP stacking", "#55a868"),
    "qp_solve_us": ("QP solve", "#c44e52"),
    "python_rest_us": ("Python rest (references, tau)", "#8172b3"),
}


def _geometric_mean(values: list[float]) -> float:
    product = 1.0
    for value in values:
        product *= value
    return product ** (1.0 / len(values))


def step_time_figures(result: dict[str, Any], scratch: Path) -> None:
    """docs/images/step_time_vs_nv.png (median step time of tsid_py and of the C++ TSID against nv,
    each scenario a point, the geometric mean per robot a line, PlaCo's published point) and
    docs/images/step_time_split.png (tsid_py's step split per scenario), from the benchmark's JSON."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    scenarios = {n: e for n, e in result["scenarios"].items() if e.get("tsid") is not None}
    backend = result["summary"]["backend"]
    machine = result["machine"]
    note = (
        f"{result['date']}, {machine['cpu']}, Python {machine['python']}, {result['rounds']} rounds, "
        f"load average {result['load_average_start'][0]:.1f} (shared machine)"
    )
    figure = Figure(figsize=(7.5, 4.8), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    libraries = [("tsid_py", f"tsid_py ({backend})", "#1f77b4"), ("tsid", "C++ TSID 1.10", "#ff7f0e")]
    for key, label, colour in libraries:
        per_robot: dict[int, list[float]] = {}
        for entry in scenarios.values():
            median = (entry["tsid_py"][backend] if key == "tsid_py" else entry["tsid"])["median_us"]
            per_robot.setdefault(entry["nv"], []).append(median)
            axes.plot(
                entry["nv"] + KIND_OFFSETS.get(entry["kind"], 0.0),
                median,
                KIND_MARKERS.get(entry["kind"], "x"),
                color=colour,
                markersize=7,
                markerfacecolor=colour if key == "tsid_py" else "white",
            )
        nvs = sorted(per_robot)
        axes.plot(
            nvs, [_geometric_mean(per_robot[n]) for n in nvs], "-", color=colour, label=label, alpha=0.7
        )
    axes.plot(*PLACO_TALOS, "*", color="#2ca02c", markersize=14, label="PlaCo on Talos (published, 97 us)")
    axes.annotate(
        "PlaCo, published figure\n(its authors' machine)",
        PLACO_TALOS,
        xytext=(12, -28),
        textcoords="offset points",
        fontsize=8,
        color="#2ca02c",
    )
    for kind, marker in KIND_MARKERS.items():
        axes.plot([], [], marker, color="grey", markerfacecolor="white", label=kind)
    robots = sorted({(e["nv"], e["robot"]) for e in scenarios.values()})
    axes.set_xticks([nv for nv, _ in robots], [f"{robot}\n{nv}" for nv, robot in robots])
    axes.set_xlabel("robot, nv")
    axes.set_ylabel("median step time [us]")
    axes.set_ylim(bottom=0)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="upper left", ncols=2)
    axes.set_title("Step time against nv (line: geometric mean over a robot's scenarios)", fontsize=10)
    figure.text(0.01, 0.01, note, fontsize=7, color="grey")
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    figure.savefig(scratch / "step_time_vs_nv.png")
    save_small(scratch / "step_time_vs_nv.png", IMAGES / "step_time_vs_nv.png")
    print("docs/images/step_time_vs_nv.png")

    split = {n: e["tsid_py_breakdown"] for n, e in result["scenarios"].items() if e.get("tsid_py_breakdown")}
    names = list(split)[::-1]
    figure = Figure(figsize=(7.5, 0.4 * len(names) + 2.2), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    left = [0.0] * len(names)
    for key, (label, colour) in SPLIT_COLOURS.items():
        widths = [split[n][key] or 0.0 for n in names]
        axes.barh(names, widths, left=left, color=colour, label=label)
        left = [a + b for a, b in zip(left, widths, strict=True)]
    for k, name in enumerate(names):
        entry = result["scenarios"][name]
        if entry.get("tsid") is not None:
            axes.plot(entry["tsid"]["median_us"], k, "|", color="black", markersize=14, markeredgewidth=2)
    axes.plot([], [], "|", color="black", markersize=10, markeredgewidth=2, label="C++ TSID's whole step")
    axes.set_xlabel(f"median time per step [us], tsid_py ({backend})")
    axes.grid(axis="x", alpha=0.3)
    axes.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncols=3)
    figure.text(0.01, 0.01, note, fontsize=7, color="grey")
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    figure.savefig(scratch / "step_time_split.png")
    save_small(scratch / "step_time_split.png", IMAGES / "step_time_split.png")
    print("docs/images/step_time_split.png")


def floor_figure(result: dict[str, Any], scratch: Path) -> None:
    """docs/images/python_floor.png: tsid_py's, the flat step's and the tuned step's median over the
    C++ TSID's per scenario, with issue 22's goal, from benchmarks/python_floor.py's JSON."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    scenarios = {n: e for n, e in result["scenarios"].items() if "tsid" in e}
    names = list(scenarios)[::-1]
    figure = Figure(figsize=(7.5, 0.55 * len(names) + 1.8), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    rows = range(len(names))
    bars = [
        ("tsid_py_over_tsid", "tsid_py", "#1f77b4", 0.27),
        ("flat_over_tsid", "flat step", "#999999", 0.0),
        ("tuned_over_tsid", "tuned step", "#555555", -0.27),
    ]
    for key, label, colour, shift in bars:
        measured = [(k, scenarios[n][key]) for k, n in zip(rows, names, strict=True) if key in scenarios[n]]
        axes.barh(
            [k + shift for k, _ in measured], [r for _, r in measured], height=0.26, color=colour, label=label
        )
        for k, ratio in measured:
            axes.text(ratio, k + shift, f" {ratio:.2f}", va="center", fontsize=7)
    for k, name in zip(rows, names, strict=True):
        goal = result["goals"].get(name)
        if goal is not None:
            axes.plot(goal, k, "|", color="#d62728", markersize=22, markeredgewidth=2.5)
    axes.plot([], [], "|", color="#d62728", markersize=10, markeredgewidth=2.5, label="issue 22's goal")
    axes.axvline(1.0, color="black", linewidth=1)
    axes.set_yticks(list(rows), names)
    axes.set_xscale("log")
    ticks = [0.25, 0.35, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0]
    axes.set_xticks(ticks, [f"{tick:g}" for tick in ticks])
    axes.minorticks_off()
    axes.set_xlabel("median step time over the C++ TSID's (log scale; left of 1: faster than TSID)")
    axes.grid(axis="x", alpha=0.3, which="both")
    axes.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=4)
    machine = result["machine"]
    note = (
        f"{result['date']}, {machine['cpu']}, {result['rounds']} rounds, load average "
        f"{machine['load_average'][0]:.1f} (shared machine)"
    )
    figure.text(0.01, 0.01, note, fontsize=7, color="grey")
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    figure.savefig(scratch / "python_floor.png")
    save_small(scratch / "python_floor.png", IMAGES / "python_floor.png")
    print("docs/images/python_floor.png")


def _read_json(parser: argparse.ArgumentParser, path: Path) -> dict[str, Any]:
    """The JSON object in ``path``, or the parser's one-line error."""
    try:
        result = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        parser.error(f"{path}: {exc}")
    if not isinstance(result, dict):
        parser.error(f"{path}: not a JSON object")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--step-time",
        type=Path,
        metavar="JSON",
        help="make only the performance figures, from benchmarks/step_time.py's --out JSON",
    )
    parser.add_argument(
        "--floor",
        type=Path,
        metavar="JSON",
        help="make only the flat and tuned steps' figure, from benchmarks/python_floor.py's --out JSON",
    )
    parser.add_argument(
        "--push-map", action="store_true", help="make only the push maps (runs their sweeps: minutes)"
    )
    args = parser.parse_args(argv)
    IMAGES.mkdir(exist_ok=True)
    if args.push_map:
        with tempfile.TemporaryDirectory() as scratch:
            for name, sweep in PUSH_MAPS.items():
                picture, table = Path(scratch) / name, Path(scratch) / f"{name}.csv"
                subprocess.run([*TSID_PY, *sweep, "--out", str(table), "--plot", str(picture)], check=True)
                save_small(picture, IMAGES / name)
                print(f"docs/images/{name}")
        return 0
    if args.step_time is not None or args.floor is not None:
        with tempfile.TemporaryDirectory() as scratch:
            if args.step_time is not None:
                step_time_figures(_read_json(parser, args.step_time), Path(scratch))
            if args.floor is not None:
                floor = _read_json(parser, args.floor)
                timed = [n for n, e in floor.get("scenarios", {}).items() if "tsid" in e]
                if "goals" not in floor or not timed:
                    parser.error(f"--floor {args.floor}: not a python_floor.py JSON with TSID timings")
                floor_figure(floor, Path(scratch))
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        for k, (arguments, figures) in enumerate(RUNS):
            out = Path(scratch) / str(k)
            subprocess.run(
                [*TSID_PY, *arguments, "--json", "--plot", str(out)], check=True, stdout=subprocess.DEVNULL
            )
            for written, name in figures.items():
                save_small(out / written, IMAGES / name)
                print(f"docs/images/{name}")
        motion = Path(scratch) / "motion"
        demo = Path(__file__).resolve().parents[1] / "demos" / "inverse_dynamics_from_motion.py"
        subprocess.run(
            [sys.executable, str(demo), "--duration", "4", "--out-dir", str(motion)],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for written in ("joint_torques.png", "contact_forces.png"):
            save_small(motion / written, IMAGES / f"analyze_{written}")
            print(f"docs/images/analyze_{written}")
        shutil.rmtree(motion)
    return 0


if __name__ == "__main__":
    sys.exit(main())
