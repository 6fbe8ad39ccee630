"""Analyze: joint torques and contact wrenches of a recorded motion (inverse dynamics over time).

tsid-py analyze MOTION.npz --robot talos --contacts leg_right_sole_fix_joint,leg_left_sole_fix_joint
    [--point-contacts] [--mu MU] [--min-normal-force F] [--cop]
    [--json] [--plot DIR] [--out RESULT.npz|RESULT.csv]
tsid-py analyze --batch 'recordings/*.npz' --out results/ [--workers N] [--address ADDR] [options]

MOTION.npz holds ``q`` (T, nq) configurations, and optionally ``dt`` (scalar, s) or ``t`` (T,)
uniformly spaced times, and ``contact_schedule`` (T, n) booleans in the order of --contacts.
MOTION may also be a ROS 2 bag (a folder, or its .mcap file; the [ros] extra): the joints from
its joint states, the base from /tf, a contact down where its measured wrench carries more than
TOUCH_FRACTION of m g (:mod:`tsid_py.ros_bag`).
"""

from __future__ import annotations

import argparse
import json
import math
import time
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import numpy as np

from tsid_py.analysis.contact_limits import ContactLimits
from tsid_py.analysis.over_time import (
    MotionAnalysis,
    joint_torques_from_wrenches,
    multi_contact_inverse_dynamics_over_time,
)
from tsid_py.command import NEWTONS, SECONDS, Parser, run_command
from tsid_py.errors import InvalidParameterError
from tsid_py.outputs import atomic_output, check_output_dir, check_output_file
from tsid_py.robot_specs import SpecRobot, load_robot
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.validation import as_scalar, as_vector


def build_parser() -> argparse.ArgumentParser:
    """The options of ``tsid-py analyze``."""
    parser = Parser(prog="tsid-py analyze", description=__doc__.splitlines()[0])
    parser.add_argument(
        "motion", type=Path, nargs="?", help="NPZ file with q (T, nq) [and dt or t, contact_schedule]"
    )
    batch = parser.add_argument_group("many motions (--batch: --out is a folder)")
    batch.add_argument("--batch", metavar="PATTERN", help="analyse every file of a glob, e.g. 'rec/*.npz'")
    batch.add_argument("--workers", type=int, default=None, help="--batch on Ray with N workers (1: serial)")
    batch.add_argument("--address", default=None, help="--batch on a Ray cluster (default: $RAY_ADDRESS)")
    batch.add_argument(
        "--allow-errors", action="store_true", help="--batch: exit 0 when files raised (without it, exit 3)"
    )
    parser.add_argument("--robot", default="talos", help="robot spec name (default: talos)")
    bag = parser.add_argument_group("a ROS 2 bag (MOTION a bag folder or its .mcap file)")
    bag.add_argument(
        "--joint-states-topic", default="/joint_states", help="sensor_msgs/JointState (default: %(default)s)"
    )
    bag.add_argument(
        "--tf-topic",
        default="/tf",
        help="tf2_msgs/TFMessage with world -> the base link (default: %(default)s)",
    )
    bag.add_argument(
        "--wrench-topic",
        action="append",
        default=None,
        metavar="FRAME=TOPIC",
        help="a contact frame's measured geometry_msgs/WrenchStamped, repeatable (default: the "
        "/contacts/<frame>/wrench/measured topics the bag has)",
    )
    parser.add_argument(
        "--contacts", default=None, help="comma-separated contact frames (default: the spec's feet)"
    )
    parser.add_argument(
        "--dt", type=SECONDS, default=None, help="sampling period [s] (default: from the file)"
    )
    parser.add_argument(
        "--smoothing",
        type=float,
        default=None,
        help="weight of |w(t+1) - w(t)|^2 (default: 1e-4, or 0 with limits)",
    )
    parser.add_argument(
        "--min-torque-weight", type=float, default=1.0, help="weight of contact moments (default: 1)"
    )
    parser.add_argument(
        "--force-weight", type=float, default=1e-3, help="weight of contact forces (default: 1e-3)"
    )
    parser.add_argument(
        "--point-contacts",
        action="store_true",
        help="the contacts are points: a 3-D force each, no moment (e.g. solo12's feet)",
    )
    parser.add_argument(
        "--mu", type=float, default=None, help="friction coefficient: limit each contact force"
    )
    parser.add_argument(
        "--min-normal-force", type=NEWTONS, default=None, help="unilateral contacts: normal force >= this [N]"
    )
    parser.add_argument("--cop", action="store_true", help="keep each CoP in the spec's sole rectangle")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a summary")
    parser.add_argument("--plot", type=Path, default=None, help="write PNG plots into this folder")
    parser.add_argument("--out", type=Path, default=None, help="write torques and wrenches (.npz or .csv)")
    parser.add_argument("--force", action="store_true", help="overwrite the --out file or the --plot files")
    return parser


def load_motion(path: Path, dt: float | None) -> tuple[np.ndarray, float, np.ndarray | None]:
    """(q, dt, schedule) from an NPZ recording; a file that is not one, an array whose header
    claims more data than the file holds, a complex or object array: an error naming the file."""
    if not path.is_file():
        raise InvalidParameterError(f"motion file not found: {path}")
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise InvalidParameterError(f"{path} is not an NPZ archive: {exc}") from None
    with archive:
        arrays = {info.filename.removesuffix(".npy"): info for info in archive.infolist()}
        if "q" not in arrays:
            raise InvalidParameterError(f"{path} has no array 'q' (T, nq); it has {sorted(arrays)}")
        q = _array(archive, arrays["q"], path)
        schedule = _array(archive, arrays["contact_schedule"], path) if "contact_schedule" in arrays else None
        if dt is None and "dt" in arrays:
            dt = as_scalar(f"{path.name}: dt", _array(archive, arrays["dt"], path))
        if dt is None and "t" in arrays:
            steps = np.diff(as_vector(f"{path.name}: t", _array(archive, arrays["t"], path)))
            if steps.size == 0 or not np.allclose(steps, steps[0], rtol=1e-6, atol=1e-12):
                raise InvalidParameterError(f"{path}: t must hold at least two uniformly spaced times")
            dt = float(steps[0])
    if dt is None:
        raise InvalidParameterError(f"{path} has neither 'dt' nor 't': pass --dt")
    return q, dt, schedule


TOUCH_FRACTION = 0.01  # a contact carrying more than this fraction of m g is down


def is_bag(path: Path) -> bool:
    """Whether ``path`` is a ROS 2 bag: a folder with metadata.yaml, or the .mcap file in one."""
    folder = path.parent if path.suffix == ".mcap" else path
    return (folder / "metadata.yaml").is_file()


def load_bag_motion(
    args: argparse.Namespace, path: Path, robot: SpecRobot, contacts: list[str]
) -> tuple[np.ndarray, float, np.ndarray | None]:
    """(q, dt, schedule) from a ROS 2 bag: the schedule from the measured wrenches of the
    contact frames, where the bag has them all (else every contact is down)."""
    from tsid_py.ros_bag import read_bag_motion

    topics = None
    if args.wrench_topic:
        pairs = [item.split("=", 1) for item in args.wrench_topic]
        if any(len(pair) != 2 for pair in pairs):
            raise InvalidParameterError(f"--wrench-topic takes FRAME=TOPIC, got {args.wrench_topic}")
        topics = {frame: topic for frame, topic in pairs}
    motion = read_bag_motion(path, robot, args.joint_states_topic, args.tf_topic, topics)
    schedule = None
    if all(frame in motion.wrenches for frame in contacts):
        threshold = TOUCH_FRACTION * robot.total_mass * 9.81
        schedule = np.stack([motion.wrenches[frame][:, 2] > threshold for frame in contacts], axis=1)
    args.bag_motion = motion  # kept for the summary's comparisons (bag_summary)
    return motion.q, (args.dt or motion.dt), schedule


def bag_summary(motion: Any, robot: RobotWrapper, result: MotionAnalysis) -> dict[str, object]:
    """What a bag adds to the summary where it measured every contact's wrench: the joint torques
    those wrenches give (:func:`joint_torques_from_wrenches`), how far the motion-only analysis is
    from them, and, where the bag has the torques sent, how far they are from those (RMS over
    the frames but the two at each end, whose finite differences are one-sided) [N m]."""
    frames = list(result.contact_frames)
    if not all(frame in motion.wrenches for frame in frames):
        return {}
    measured = np.stack([motion.wrenches[frame] for frame in frames], axis=1)
    dt = float(result.t[1] - result.t[0])
    torques = joint_torques_from_wrenches(robot, motion.q, frames, measured, dt)
    inner = slice(2, -2)
    info: dict[str, object] = {
        "ft_joint_torque_max_nm": float(np.max(np.abs(torques))),
        "motion_vs_ft_torque_max_nm": float(np.max(np.abs(result.joint_torques - torques)[inner])),
    }
    if motion.effort is not None:
        info["ft_vs_sent_torque_rms_nm"] = float(np.sqrt(np.mean((torques - motion.effort)[inner] ** 2)))
    return info


def _array(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> np.ndarray:
    """One real-valued array of the archive, its header checked against the bytes it holds
    before anything is allocated (object arrays, which would need pickle, are refused)."""
    name = info.filename.removesuffix(".npy")
    try:
        with archive.open(info) as member:
            version = np.lib.format.read_magic(member)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(member)
            else:
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(member)
            held = info.file_size - member.tell()
            claimed = math.prod(shape) * dtype.itemsize
            data = member.read(claimed) if claimed == held and not dtype.hasobject else b""
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        raise InvalidParameterError(f"{path}: array {name!r} cannot be read: {exc}") from None
    if dtype.hasobject or dtype.kind not in "biuf":
        raise InvalidParameterError(f"{path}: array {name!r} has dtype {dtype}, not real numbers")
    if claimed != held or len(data) != claimed:
        raise InvalidParameterError(
            f"{path}: array {name!r} claims shape {shape} ({claimed} bytes) but holds {held} bytes: "
            "the file is truncated or corrupt"
        )
    return np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C").copy()


def contact_limits(args: argparse.Namespace, robot: SpecRobot) -> ContactLimits | None:
    """The ContactLimits of --mu, --min-normal-force and --cop, or ``None`` when none is given."""
    if args.mu is None and args.min_normal_force is None and not args.cop:
        return None
    if args.cop and robot.spec.sole is None:
        raise InvalidParameterError(f"--cop needs a sole rectangle, and the {robot.name} spec has none")
    return ContactLimits(
        mu=args.mu,
        sole=robot.spec.sole if args.cop else None,
        min_normal_force=0.0 if args.min_normal_force is None else args.min_normal_force,
    )


def actuated_joint_names(robot: RobotWrapper) -> list[str]:
    """One name per actuated velocity index (joint name, suffixed by the axis for multi-dof joints)."""
    names = []
    first = robot.nv - robot.na
    for joint, name in zip(robot.model.joints, robot.model.names, strict=True):
        if joint.idx_v >= first and joint.nv > 0:
            names += [name] if joint.nv == 1 else [f"{name}_{i}" for i in range(joint.nv)]
    return names


def summary(result: MotionAnalysis, robot: RobotWrapper, seconds: float) -> dict[str, object]:
    """The --json object: sizes, worst root residual [N, N m], torque [N m] and normal-force [N] extremes."""
    normal = result.contact_wrenches[:, :, 2]
    return {
        "robot": robot.name,
        "frames": int(result.t.size),
        "dt_s": float(result.t[1] - result.t[0]),
        "duration_s": float(result.t[-1]),
        "contacts": list(result.contact_frames),
        "root_residual_max": float(np.max(np.abs(result.root_residual))),
        "unexplained_frames": int(np.sum(~result.feasible)),
        "frames_without_contact": int(np.sum(~result.contact_schedule.any(axis=1))),
        "joint_torque_max_nm": float(np.max(np.abs(result.joint_torques))),
        "normal_force_min_n": float(np.min(np.where(result.contact_schedule, normal, np.inf))),
        "normal_force_max_n": float(np.max(normal)),
        "analysis_time_s": seconds,
        "time_per_frame_us": 1e6 * seconds / result.t.size,
    }


def write_output(result: MotionAnalysis, joint_names: list[str], path: Path) -> None:
    """NPZ with every array, or CSV with t, the torques tau/<joint> and wrenches w/<frame>/<component>."""
    if path.suffix == ".npz":
        with atomic_output(path) as handle:
            _save_npz(handle, result, joint_names)
        return
    components = ("fx", "fy", "fz", "mx", "my", "mz")
    header = ["t"] + [f"tau/{name}" for name in joint_names]
    header += [f"w/{frame}/{c}" for frame in result.contact_frames for c in components]
    table = np.column_stack(
        [result.t, result.joint_torques, result.contact_wrenches.reshape(result.t.size, -1)]
    )
    with atomic_output(path, "w") as handle:
        np.savetxt(handle, table, delimiter=",", header=",".join(header), comments="", fmt="%.9g")


def _save_npz(handle: IO, result: MotionAnalysis, joint_names: list[str]) -> None:
    np.savez(
        handle,
        t=result.t,
        joint_torques=result.joint_torques,
        joint_names=np.array(joint_names),
        contact_frames=np.array(result.contact_frames),
        contact_wrenches=result.contact_wrenches,
        total_contact_wrench=result.total_contact_wrench,
        root_residual=result.root_residual,
        feasible=result.feasible,
        v=result.v,
        a=result.a,
    )


def main(
    argv: list[str] | None = None, batch_runner: Callable[[argparse.Namespace], int] | None = None
) -> int:
    """Run ``tsid-py analyze``; exit codes as :mod:`tsid_py.command` (2 with one line on bad input).

    ``--batch`` runs on the sweep engine (``tsid_py.sweep.batch.run_batch``), a layer above this
    module: the ``tsid-py`` command hands it in as ``batch_runner``."""
    args = build_parser().parse_args(argv)
    if args.batch is not None:
        return run_command("tsid-py analyze", lambda: _batch(args, batch_runner))
    return run_command("tsid-py analyze", lambda: _analyze(args))


def _batch(args: argparse.Namespace, batch_runner: Callable[[argparse.Namespace], int] | None) -> int:
    if batch_runner is None:
        raise InvalidParameterError("--batch runs on tsid_py.sweep: run it as `tsid-py analyze --batch ...`")
    return batch_runner(args)


def analyse_motion(
    args: argparse.Namespace, motion: Path, progress: bool = False
) -> tuple[RobotWrapper, MotionAnalysis, float, float]:
    """The analysis of the motion file ``motion`` with the options of ``tsid-py analyze`` in
    ``args``: (robot, result, dt [s], seconds the analysis took)."""
    robot = load_robot(args.robot)
    contacts = args.contacts.split(",") if args.contacts else list(robot.spec.feet.values())
    if is_bag(motion):
        q, dt, schedule = load_bag_motion(args, motion, robot, contacts)
    else:
        q, dt, schedule = load_motion(motion, args.dt)
    limits = contact_limits(args, robot)
    smoothing = args.smoothing if args.smoothing is not None else (1e-4 if limits is None else 0.0)
    start = time.perf_counter()
    result = multi_contact_inverse_dynamics_over_time(
        robot,
        q,
        contacts,
        dt,
        smoothing_weight=smoothing,
        min_torque_weight=args.min_torque_weight,
        contact_schedule=schedule,
        force_weight=args.force_weight,
        point_contacts=args.point_contacts,
        limits=limits,
        progress=progress,
    )
    return robot, result, dt, time.perf_counter() - start


def _analyze(args: argparse.Namespace) -> int:
    if args.motion is None:
        raise InvalidParameterError("give a MOTION file (or --batch PATTERN)")
    if args.out is not None:
        if args.out.suffix not in (".npz", ".csv"):
            raise InvalidParameterError(f"--out must end with .npz or .csv, got {args.out.name}")
        check_output_file(args.out, args.force, "--out")
    if args.plot is not None:
        from tsid_py.analysis.plots import PLOT_NAMES

        check_output_dir(args.plot, PLOT_NAMES, args.force, "--plot", "figures")
    robot, result, dt, seconds = analyse_motion(args, args.motion, progress=not args.json)
    joint_names = actuated_joint_names(robot)
    if args.out is not None:
        write_output(result, joint_names, args.out)
    if args.plot is not None:
        from tsid_py.analysis.plots import plot_motion_analysis

        plot_motion_analysis(result, joint_names, args.plot)
    info = summary(result, robot, seconds)
    if getattr(args, "bag_motion", None) is not None:
        info.update(bag_summary(args.bag_motion, robot, result))
    if args.json:
        print(json.dumps(info))
    else:
        print(f"analyze {args.motion.name} on {robot.name}: {info['frames']} frames at dt = {dt} s")
        for key, value in info.items():
            if key not in ("robot", "frames", "dt_s"):
                print(f"  {key:<24} {value:.4g}" if isinstance(value, float) else f"  {key:<24} {value}")
    return 0
