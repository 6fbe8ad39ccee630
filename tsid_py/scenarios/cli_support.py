"""Command-line plumbing shared by every scenario: common flags, JSON or readable output."""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from tsid_py.command import (
    EXIT_CONTROLLER_FAILED,
    EXIT_FELL,
    EXIT_OK,
    Parser,
    number,
    run_command,
)
from tsid_py.errors import InvalidParameterError, OutputError, SimulationDivergedError
from tsid_py.loop.control_loop import check_pushes, failure_of
from tsid_py.loop.estimation import ESTIMATORS
from tsid_py.loop.plant import COMMAND_MODES, Push
from tsid_py.loop.plants import PLANTS
from tsid_py.loop.sensing import SENSINGS
from tsid_py.outputs import check_output_dir, check_output_file
from tsid_py.planning.terrain import load_terrain
from tsid_py.scenarios.runner import LoopSetup, RunResult
from tsid_py.threads import limit_blas_threads
from tsid_py.viz.meshcat_server import ANSWER_WITHIN
from tsid_py.viz.plots import PLOT_STEPS

logger = logging.getLogger("tsid_py")

SUMMARY_LABELS = {
    "steps": ("control steps", ""),
    "qp_failures": ("QP failures", ""),
    "recovery": ("push recovery", ""),
    "recovery_steps": ("steps the recovery chose", ""),
    "recovery_moves": ("landings moved over 1 cm", ""),
    "recovery_move_max_m": ("landing moved, max", "m"),
    "recovery_waited_s": ("footsteps held back, in all", "s"),
    "com_error_max_m": ("CoM error, max", "m"),
    "com_error_rms_m": ("CoM error, rms", "m"),
    "foot_drift_max_m": ("foot drift, max", "m"),
    "min_normal_force_n": ("normal force, min", "N"),
    "ee_error_max_m": ("end-effector error, max", "m"),
    "ee_error_rms_m": ("end-effector error, rms", "m"),
    "ee_error_final_m": ("end-effector error, final", "m"),
    "max_friction_ratio": ("|f_t|/(mu f_n) max, pyramid <= 1.41", ""),
    "max_torque_ratio": ("|tau| / tau_max, max", ""),
    "max_velocity_ratio": ("|v| / v_max, max", ""),
    "dynamics_residual_max": ("dynamics residual, max (relative)", ""),
    "step_time_median_us": ("step time, median", "us"),
    "step_time_p99_us": ("step time, 99th percentile", "us"),
    "touchdown_error_right_m": ("touch-down error, right foot", "m"),
    "touchdown_error_left_m": ("touch-down error, left foot", "m"),
    "swing_height_max_m": ("swing height, max", "m"),
    "zmp_margin_min_m": ("ZMP margin in the support, min", "m"),
    "com_margin_min_m": ("CoM margin in the support, min", "m"),
    "max_force_jump_n": ("contact-force jump per step, max", "N"),
    "com_drift_max_m": ("CoM drift from its reference, max", "m"),
    "real_time_factor": ("real-time factor", ""),
    "physics_checks": ("steps checked against the physics", ""),
    # the course scenarios (tsid_py/scenarios/course)
    "target_outside_m": ("CoM target outside the support polygon", "m"),
    "com_target_distance_m": ("CoM distance to its target, final", "m"),
    "com_margin_final_m": ("CoM margin in the support, final", "m"),
    "com_left_support_s": ("CoM left the support polygon at", "s"),
    "first_limit_frequency_hz": ("first frequency at which a limit binds", "Hz"),
    "first_limit": ("the limit that binds first", ""),
    "runs_qp_failed": ("runs whose QP failed", ""),
    "foot_drift_kp0_m": ("foot drift, contact Kp = 0", "m"),
    "foot_drift_kp_m": ("foot drift, contact Kp > 0", "m"),
    "hand_force_error_max_n": ("hand normal-force error, max", "N"),
    "hand_force_error_rms_n": ("hand normal-force error, rms", "N"),
    "hand_drift_max_m": ("hand drift on the wall, max", "m"),
    "min_distance_m": ("self-collision distance, min", "m"),
    "d_min_m": ("self-collision distance kept (d_min)", "m"),
}


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """--json, --allow-fall and the viewing options: what every scenario's command prints and draws."""
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object instead of the readable summary"
    )
    parser.add_argument(
        "--allow-fall",
        action="store_true",
        help="exit 0 when the robot fell or lost balance (a fall is an expected outcome); exit 4 otherwise",
    )
    add_viewing_arguments(parser)


LOG_WINDOW = 1000  # control steps a CLI run keeps in memory when no output needs them all
VIEWER_RATE = 25.0  # [Hz] the live viewer's frames per simulated second, when --viewer-rate is not given


def add_plant_arguments(parser: argparse.ArgumentParser) -> None:
    """--plant, --mode, --push: what the controller drives (read by :func:`loop_setup`)."""
    group = parser.add_argument_group("the plant")
    group.add_argument(
        "--plant",
        choices=tuple(PLANTS),
        default="integrator",
        help="what the controller drives: " + "; ".join(f"{k}: {v}" for k, v in PLANTS.items()),
    )
    group.add_argument(
        "--mode",
        choices=COMMAND_MODES,
        default="torque",
        help="torque commands, or position + velocity + torque",
    )
    group.add_argument(
        "--push",
        action="append",
        default=[],
        metavar="FX,FY,FZ@T+DURATION",
        help="a force on the base, world axes [N], from T for DURATION [s] (e.g. 0,250,0@1+0.1 or "
        "-300,0,0@1+0.1); repeatable, one push after the other (they may not overlap). A pushed run "
        "goes on past --duration until its verdict is decided "
        "(the robot fell, or is at rest again), for at most 5 s after the last push",
    )
    group.add_argument(
        "--no-extend",
        action="store_true",
        help="stop a pushed run at --duration even when its verdict is still undecided",
    )
    group.add_argument(
        "--sensing",
        choices=SENSINGS,
        default="truth",
        help="what the controller gets: the plant's state (truth, the default: TSID's exercises, and "
        "parity with the C++ TSID), or what a robot has (robot: encoders, an IMU and the feet's "
        "force/torque sensors with the spec's [sensors] noise, through the kinematic-inertial "
        "estimator, commands one period late); the verdict is always the plant's",
    )
    group.add_argument(
        "--estimator",
        choices=ESTIMATORS,
        default="kinematic-inertial",
        help="the base-state estimator of --sensing robot (kinematic-inertial: the IMU's orientation, "
        "the stance feet's kinematics fused with the accelerometer; docs/concepts/sensing.md)",
    )
    group.add_argument(
        "--check-every",
        type=int,
        default=None,
        metavar="N",
        help="check the controller's solution against the physics (RNEA residual, contact forces, "
        "torque limits) every N steps, 0 never (default: every step on the integrator, every 10th "
        "on the pinocchio and mujoco plants, which measure the physics themselves; a check costs "
        "about half a Talos step)",
    )


def loop_setup(args: argparse.Namespace) -> LoopSetup:
    """The :class:`LoopSetup` of parsed ``--plant``, ``--mode`` and ``--push`` options (the
    integrator, torque and no push for a scenario without them) and of where the log goes: when an
    output needs the whole run (--plot, --html, --record) it streams to disk beside the outputs
    (:func:`log_directory`), else only the last ``LOG_WINDOW`` steps are kept. Either way memory
    stays flat however long the run."""
    pushes = tuple(Push.parse(text) for text in getattr(args, "push", ()))
    if getattr(args, "duration", None) is not None:
        check_pushes(pushes, args.duration)  # before the controller is made
    directory = log_directory(args)
    window = None if directory is not None else LOG_WINDOW
    plant, mode = getattr(args, "plant", "integrator"), getattr(args, "mode", "torque")
    check_every = getattr(args, "check_every", None)
    if check_every is not None and check_every < 0:
        raise InvalidParameterError(f"--check-every takes a number of steps >= 0, got {check_every}")
    extend = not getattr(args, "no_extend", False)
    sensing, estimator = getattr(args, "sensing", "truth"), getattr(args, "estimator", "kinematic-inertial")
    return LoopSetup(
        plant,
        mode,
        pushes,
        window,
        directory,
        check_every,
        extend=extend,
        sensing=sensing,
        estimator=estimator,
    )


def log_directory(args: argparse.Namespace) -> Path | None:
    """Where a run streams its log: the ``--plot`` directory, else the ``--html`` file's directory
    (the first of its ancestors that exists, before the outputs are made), or None without
    outputs. The log is an unnamed file there: nothing of it stays after the run, even killed."""
    if getattr(args, "plot", None):
        target = Path(args.plot)
    elif getattr(args, "html", None):
        target = Path(args.html).parent
    elif getattr(args, "record", None):
        target = Path(args.record).parent
    else:
        return None
    target = target.absolute()
    while not target.is_dir():
        target = target.parent
    return target


def add_viewing_arguments(parser: argparse.ArgumentParser) -> None:
    """--viewer, --viewer-rate, --viewer-url, --html, --plot (read by :func:`scenario_main`)."""
    see = parser.add_argument_group("viewing the run")
    see.add_argument(
        "--viewer",
        choices=("none", "meshcat", "rerun"),
        default="none",
        help="live 3-D view in meshcat, served on 127.0.0.1; or in rerun (the [rerun] extra): its native "
        "viewer where there is a screen, else a rerun server on 127.0.0.1 with its web viewer, 3-D and "
        "time series on the simulated time (default: none, headless)",
    )
    see.add_argument(
        "--viewer-rate",
        type=number("a number of frames per second"),
        default=None,
        metavar="HZ",
        help=f"viewer frames per simulated second [Hz], with --viewer meshcat or rerun, or --rerun-save "
        f"(default: {VIEWER_RATE:g})",
    )
    see.add_argument(
        "--viewer-url",
        default=None,
        metavar="URL",
        help="with --viewer meshcat: the zmq_url (tcp://HOST:PORT) a running `meshcat-server` printed (not "
        "its web page); with --viewer rerun: a running rerun viewer's or server's gRPC URL "
        f"(rerun+http://HOST:PORT/proxy); refused when nothing answers there within {ANSWER_WITHIN:g} s "
        "(default: start a server for the run, or spawn rerun's viewer)",
    )
    see.add_argument(
        "--rerun-save",
        metavar="FILE.rrd",
        help="write the run as a rerun recording (the [rerun] extra; open it with `rerun FILE.rrd`): 3-D "
        "and time series on the simulated time; with or without --viewer rerun",
    )
    see.add_argument("--html", metavar="FILE", help="write the run as a self-contained HTML replay")
    see.add_argument(
        "--plot",
        metavar="DIR",
        help="write PNG plots of the run into the directory DIR (made if its parent exists): reference, "
        "planned and measured CoM and feet, planned and measured contact forces, torques, a top view. "
        "With --plot or --html the run's log streams to an unnamed file beside the outputs as the run "
        "goes (memory stays flat however long the run; "
        f"plots draw at most {PLOT_STEPS} evenly spread steps); without them only the last "
        f"{LOG_WINDOW} steps are kept",
    )
    see.add_argument(
        "--record",
        metavar="DIR",
        type=Path,
        help="write the run as a ROS 2 bag (MCAP storage) into the new folder DIR: joint states, /tf, "
        "the URDF, the contact wrenches planned and measured, CoM and capture point markers, the summary "
        "(the [ros] extra; ros2 bag info and Foxglove read it)",
    )
    see.add_argument(
        "--record-rate",
        type=number("a number of messages per second"),
        default=None,
        metavar="HZ",
        help="with --record: messages per simulated second [Hz] (default: every control step)",
    )
    see.add_argument(
        "--force", action="store_true", help="overwrite the --html, --rerun-save file or the --plot files"
    )


def report(result: RunResult, as_json: bool) -> str:
    """The run's summary as JSON, or as an aligned table for people."""
    summary = result.summary
    if as_json:  # strict JSON: a quantity not measured (NaN, e.g. no step checked) is null
        return json.dumps({k: None if isinstance(v, float) and v != v else v for k, v in summary.items()})
    lines = [
        f"{summary['scenario']} on {summary['robot']}: {_run_time(summary)} at dt = {summary['dt_s']} s"
        + (f", {summary['plant']} plant, {summary['mode']} commands" if "plant" in summary else "")
    ]
    verdict = verdict_line(summary)
    if verdict:
        lines.append(f"  {'verdict':<36} {verdict}")
    for held in summary.get("contacts_not_touching") or ():  # type: ignore[attr-defined]
        when = f"from {held['from_s']:.3g} s for {held['for_s']:.3g} s"
        lines.append(f"  {'held contact not touching':<36} {held['frame']} {when}")
    for step in summary.get("steps_taken") or ():  # type: ignore[attr-defined]
        kind = "step" if step["chosen"] else "foot put down again"
        x, y = step["landing_m"][:2]
        lines.append(
            f"  {kind:<36} {step['foot']}: lifted at {step['t_lift_s']:.3g} s, "
            f"landed at {step['t_land_s']:.3g} s at x = {x:.3f}, y = {y:.3f} m"
        )
    for key, (label, unit) in SUMMARY_LABELS.items():
        if summary.get(key) is None:
            continue
        value = summary[key]
        text = f"{value:.3g}" if isinstance(value, float) else str(value)
        lines.append(f"  {label:<36} {text} {unit}".rstrip())
    return "\n".join(lines)


def _run_time(summary: dict[str, object]) -> str:
    """The simulated time actually run, and the time requested when they differ."""
    requested, ran = summary["duration_s"], summary.get("simulated_time_s")
    if not isinstance(ran, float) or abs(ran - float(requested)) < 1e-6:  # type: ignore[arg-type]
        return f"{requested} s"
    why = " (extended to decide the verdict)" if summary.get("extended_to_s") is not None else ""
    return f"{ran:.3g} s of the {requested} s requested{why}"


def verdict_line(summary: dict[str, object]) -> str:
    """The verdict and its times in words, e.g. ``fell at 2.93 s (the base ...); lost balance at 1.65 s``
    (empty for a run that is not judged: a fixed base)."""
    verdict = summary.get("verdict")
    if verdict is None:
        return ""
    times = {"recovered": "recovered_at_s", "fell": "fell_at_s", "lost": "lost_balance_at_s"}
    at = summary.get(times.get(str(verdict), ""))
    text = ("lost balance" if verdict == "lost" else str(verdict)) + (
        f" at {at:.3g} s" if isinstance(at, float) else ""
    )
    text += f" ({summary['verdict_reason']})" if summary.get("verdict_reason") else ""
    lost = summary.get("lost_balance_at_s")
    if verdict != "lost" and isinstance(lost, float):
        text += f"; lost balance at {lost:.3g} s"
    if len(summary.get("push_verdicts") or ()) > 1:  # type: ignore[arg-type]
        text += "; per push: " + ", ".join(summary["push_verdicts"])  # type: ignore[arg-type]
    return text


def scenario_main(
    command: str,
    build_parser: Callable[[argparse.ArgumentParser], None],
    run: Callable[..., RunResult],
    description: str,
    argv: list[str] | None = None,
) -> int:
    """Parse the arguments, check the outputs, run the scenario, print the summary, write the
    replay and plots.

    ``command`` is the scenario's name on the command line; ``run(args)`` runs the scenario; with
    ``--viewer meshcat`` it is called as ``run(args, viewer)`` and passes the viewer on as the
    runner's per-step observer. Exit codes as
    :mod:`tsid_py.command`: 2 on bad input (checked before the run), 3 when a QP failed, 4 when
    the robot fell or lost balance (0 with ``--allow-fall``).
    """
    parser = Parser(prog=f"tsid-py {command}", description=description)
    build_parser(parser)
    args = parser.parse_args(argv)
    limit_blas_threads()
    return run_command(parser.prog, lambda: _run_scenario(command, run, args))


def _run_scenario(command: str, run: Callable[..., RunResult], args: argparse.Namespace) -> int:
    check_viewer_options(args)
    if args.html:
        check_output_file(args.html, args.force, "--html")
    if args.rerun_save:
        check_output_file(args.rerun_save, args.force, "--rerun-save")
    if args.record:
        check_bag_output(args)
    if args.plot:
        check_output_dir(args.plot, plot_names(args.plot, command), args.force, "--plot", "figures")
    interactive = sys.stdin.isatty() and sys.stderr.isatty() and not args.json
    viewer, result = None, None
    try:
        if args.viewer == "meshcat":
            from tsid_py.viz.meshcat_viewer import LiveViewer

            rate = VIEWER_RATE if args.viewer_rate is None else args.viewer_rate
            terrain = getattr(args, "terrain", None)  # (the walk's: drawn as boxes)
            viewer = LiveViewer(
                rate,
                args.viewer_url,
                wait_for_browser=interactive,
                terrain=None if terrain is None else load_terrain(terrain),
            )
        if args.viewer == "rerun" or args.rerun_save:
            viewer = rerun_viewer(args)
        result = run(args) if viewer is None else run(args, viewer)
        finish = getattr(viewer, "finish", None)  # (rerun: the verdict, then the .rrd file)
        if callable(finish):
            finish(result.summary)
        print(report(result, args.json))
        if args.record:
            from tsid_py.ros_bag import write_run_bag

            if args.force and args.record.exists():
                shutil.rmtree(args.record) if args.record.is_dir() else args.record.unlink()
            logger.info("wrote %s", write_run_bag(result, args.record, args.record_rate))
        if args.html:
            from tsid_py.viz.html_replay import write_html_replay

            logger.info("wrote %s", write_html_replay(result, args.html))
        if args.plot:
            from tsid_py.viz.plots import write_plots

            for path in write_plots(result, args.plot):
                logger.info("wrote %s", path)
        if viewer is not None and interactive and getattr(viewer, "wait_before_close", True):
            input("press Enter to close the viewer ")
    finally:
        if viewer is not None:
            viewer.close()
        close = getattr(getattr(result, "log", None), "close", None)
        if callable(close):
            close()  # a streamed log's file goes
    summary = result.summary
    failure = failure_of(summary)
    if failure is not None:
        what = "" if isinstance(failure, SimulationDivergedError) else "the controller failed: "
        print(f"tsid-py {command}: {what}{failure}", file=sys.stderr)
        return EXIT_CONTROLLER_FAILED
    if summary.get("verdict") in ("fell", "lost") and not getattr(args, "allow_fall", False):
        print(f"tsid-py {command}: the robot {verdict_line(summary)}", file=sys.stderr)
        return EXIT_FELL
    return EXIT_OK


def check_bag_output(args: argparse.Namespace) -> None:
    """--record: the extra installed, a new folder (or --force), its parent there; before the run."""
    from tsid_py.ros_bag import _rosbags

    _rosbags()
    if args.record_rate is not None and args.record_rate <= 0:
        raise InvalidParameterError(f"--record-rate must be above 0, got {args.record_rate:g}")
    if not args.record.parent.is_dir():
        raise OutputError(f"--record {args.record}: the folder {args.record.parent} does not exist")
    if args.record.exists() and not args.force:
        raise OutputError(f"--record {args.record} exists: give --force to replace it")


def check_viewer_options(args: argparse.Namespace) -> None:
    """--viewer-url and --viewer-rate set the live viewer: refused without ``--viewer meshcat`` or
    ``rerun`` (silently ignored, they would leave the user waiting for a view that never comes);
    --viewer-rate also sets the frames of --rerun-save."""
    given = [f"--viewer-{name}" for name in ("url", "rate") if getattr(args, f"viewer_{name}") is not None]
    if args.rerun_save and args.viewer == "meshcat":
        raise InvalidParameterError("--rerun-save goes with --viewer rerun or none: one viewer at a time")
    if args.rerun_save and args.viewer == "none":
        given = [name for name in given if name != "--viewer-rate"]
    if given and args.viewer == "none":
        raise InvalidParameterError(
            f"{given[0]} needs --viewer meshcat or --viewer rerun (without it the run is not shown)"
        )


def rerun_viewer(args: argparse.Namespace):
    """The :class:`~tsid_py.viz.rerun_viewer.RerunViewer` of ``--viewer rerun`` (live, at the
    motion's pace: at ``--viewer-url``, else spawned or served) and ``--rerun-save`` (the file)."""
    from tsid_py.viz.rerun_viewer import RerunViewer

    rate = VIEWER_RATE if args.viewer_rate is None else args.viewer_rate
    terrain = getattr(args, "terrain", None)  # (the walk's: drawn as boxes)
    live = (args.viewer_url or "auto") if args.viewer == "rerun" else None
    blocks = None if terrain is None else load_terrain(terrain)
    return RerunViewer(rate, live, args.rerun_save, blocks, realtime=live is not None)


def plot_names(directory: str, command: str) -> list[str]:
    """The plot files of a ``command`` run already in ``directory`` (which a run could overwrite)."""
    from tsid_py.viz.plots import FIGURES

    return sorted(path.name for name in FIGURES for path in Path(directory).glob(f"{command}*_{name}.png"))
