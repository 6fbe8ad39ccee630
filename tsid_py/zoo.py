"""The robot zoo: every URDF of example-robot-data through new-spec, check-spec and a scenario.

    python -m tsid_py.zoo [--jobs 2] [--markdown FILE] [--json FILE] [NAME ...]

What a new user does with a robot, done for each URDF example-robot-data ships (:data:`ZOO`, with
its SRDF where the robot has one): :func:`~tsid_py.new_spec.guess_spec` with ``--flatten`` writes
a spec, :func:`~tsid_py.spec_check.check_robot` checks it, and a spec without errors runs in
MuJoCo, torque commands, the verdict from the plant's measured state:

- feet on soles: ``balance`` for STAND seconds; it **stands** when the verdict is ``recovered``
  and the CoM stayed within COM_TOLERANCE of its reference;
- three point feet or more: ``quadruped`` with no sway, the same;
- a fixed base: ``reach`` a target REACH_STEP away that a posture within the joint limits puts
  the end effector at (:func:`_reachable_offset`); it **reaches** when the end effector ends
  within EE_TOLERANCE of it.

Otherwise the outcome says what refused the robot and why (new-spec's error, or check-spec's
first), or how the run went wrong. Each robot also has its kind, a fact about the robot, not a
guess: what it is (``biped``, ``quadruped``, ``arm``, ...) whatever tsid_py makes of it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import pinocchio as pin

from tsid_py.command import EXIT_OK, Parser, run_command
from tsid_py.errors import InvalidParameterError, TsidError
from tsid_py.outputs import atomic_output
from tsid_py.progress import progress_bar
from tsid_py.robot_specs import example_robot_data_dir

STAND = 5.0  # [s] a legged robot's run
REACH = 3.0  # [s] an arm's run
COM_TOLERANCE = 0.02  # [m] a standing robot's CoM within this of its reference
EE_TOLERANCE = 1e-3  # [m] an arm's end effector this close to its target at the end
REACH_STEP = 0.05  # [m] how far an arm's target is from where its end effector starts

RUNNABLE = ("biped", "quadruped", "arm")  # the kinds the zoo's goal counts: legged robots and arms


@dataclass(frozen=True)
class ZooRobot:
    """One URDF of example-robot-data: its path and its SRDF's (under the robots folder), what
    the robot is, and its name in the zoo (the URDF's file name, with its package's where two
    packages share it: ``anymal_b_simple/anymal``)."""

    urdf: str
    srdf: str | None
    kind: str
    name: str


# What each robot is, its URDF in example-robot-data's robots/ folder and the SRDF it is paired
# with, if any (in the URDF's package).
_ZOO_TABLE = """
quadruped a1_description/urdf/a1.urdf srdf/a1.srdf
upper-body alex_description/urdf/alex_nub_hands.urdf srdf/alex_nub_hands.srdf
upper-body alex_description/urdf/alex_psyonic_hands.urdf srdf/alex_psyonic_hands.srdf
upper-body alex_description/urdf/alex_sake_hands.urdf srdf/alex_sake_hands.srdf
biped     alexander_description/urdf/alexander_v1.lowerBodyOnly.urdf srdf/alexander.srdf
hand      allegro_hand_description/urdf/allegro_left_hand.urdf
hand      allegro_hand_description/urdf/allegro_right_hand.urdf
quadruped anymal_b_simple_description/robots/anymal-kinova.urdf srdf/anymal-kinova.srdf
quadruped anymal_b_simple_description/robots/anymal.urdf srdf/anymal.srdf
quadruped anymal_c_simple_description/urdf/anymal.urdf srdf/anymal.srdf
arm       asr_twodof_description/urdf/TwoDofs.urdf
quadruped b1_description/urdf/b1-z1.urdf srdf/b1-z1.srdf
quadruped b1_description/urdf/b1.urdf srdf/b1.srdf
arm       baxter_description/urdf/baxter.urdf srdf/baxter_manipulation.srdf
biped     bolt_description/robots/bolt.urdf srdf/bolt.srdf
aerial    borinot_description/urdf/borinot_flying_arm_2.urdf srdf/borinot_flying_arm_2.srdf
wheeled-legs centauro_description/urdf/centauro.urdf srdf/centauro.srdf
pendulum  double_pendulum_description/urdf/double_pendulum.urdf
pendulum  double_pendulum_description/urdf/double_pendulum_continuous.urdf
pendulum  double_pendulum_description/urdf/double_pendulum_simple.urdf
arm       finger_edu_description/robots/finger_edu.urdf srdf/finger_edu.srdf
biped     g1_description/urdf/g1_29dof_rev_1_0.urdf
biped     g1_description/urdf/g1_29dof_with_hand_rev_1_0.urdf
quadruped go1_description/urdf/go1.urdf srdf/go1.srdf
quadruped go2_description/urdf/go2.urdf srdf/go2.srdf
aerial    hector_description/robots/quadrotor_base.urdf
aerial    hextilt_description/urdf/hextilt_flying_arm_5.urdf srdf/hextilt_flying_arm_5.srdf
human-model human_description/robots/human.urdf
quadruped hyq_description/robots/hyq_no_sensors.urdf srdf/hyq.srdf
biped     icub_description/robots/icub.urdf srdf/icub.srdf
biped     icub_description/robots/icub_reduced.urdf srdf/icub.srdf
aerial    iris_description/robots/iris.urdf
aerial    iris_description/robots/iris_simple.urdf
arm       kinova_description/robots/kinova.urdf srdf/kinova.srdf
quadruped laikago_description/urdf/laikago.urdf
arm       panda_description/urdf/panda.urdf srdf/panda.srdf
arm       panda_description/urdf/panda_collision.urdf srdf/panda.srdf
mobile-manipulator pr2_description/urdf/pr2.urdf srdf/pr2.srdf
quadruped quadruped_description/urdf/quadruped.urdf
biped     romeo_description/urdf/romeo.urdf srdf/romeo.srdf
biped     romeo_description/urdf/romeo_laas_small.urdf srdf/romeo_small.srdf
biped     romeo_description/urdf/romeo_small.urdf srdf/romeo_small.srdf
biped     simple_humanoid_description/urdf/simple_humanoid.urdf srdf/simple_humanoid.srdf
biped     simple_humanoid_description/urdf/simple_humanoid_classical.urdf srdf/simple_humanoid_classical.srdf
arm       so_arm_description/urdf/so100.urdf
arm       so_arm_description/urdf/so101.urdf
quadruped solo_description/robots/solo.urdf srdf/solo.srdf
quadruped solo_description/robots/solo12.urdf srdf/solo.srdf
biped     talos_data/robots/talos_full_v2.urdf srdf/talos.srdf
biped     talos_data/robots/talos_full_v2_box.urdf srdf/talos.srdf
biped     talos_data/robots/talos_reduced.urdf srdf/talos.srdf
biped     talos_data/robots/talos_reduced_box.urdf srdf/talos.srdf
biped     talos_data/robots/talos_reduced_corrected.urdf srdf/talos.srdf
arm       talos_data/robots/talos_left_arm.urdf
mobile-manipulator tiago_description/robots/tiago.urdf
mobile-manipulator tiago_description/robots/tiago_dual.urdf
mobile-manipulator tiago_description/robots/tiago_no_hand.urdf
mobile-manipulator tiago_pro_description/robots/tiago_pro.urdf
arm       ur_description/urdf/ur10_joint_limited_robot.urdf
arm       ur_description/urdf/ur10_robot.urdf
arm       ur_description/urdf/ur3.urdf
arm       ur_description/urdf/ur3_gripper.urdf srdf/ur3_gripper.srdf
arm       ur_description/urdf/ur3_joint_limited_robot.urdf
arm       ur_description/urdf/ur3_robot.urdf
arm       ur_description/urdf/ur5_gripper.urdf srdf/ur5_gripper.srdf
arm       ur_description/urdf/ur5_joint_limited_robot.urdf srdf/ur5_joint_limited_robot.srdf
arm       ur_description/urdf/ur5_robot.urdf srdf/ur5.srdf
arm       xarm_description/urdf/xarm7.urdf srdf/xarm7.srdf
arm       z1_description/urdf/z1.urdf srdf/z1.srdf
"""


def _parse_zoo(table: str) -> tuple[ZooRobot, ...]:
    rows = [line.split() for line in table.strip().splitlines()]
    stems = [Path(urdf).stem for _, urdf, *_ in rows]
    robots = []
    for (kind, urdf, *srdf), stem in zip(rows, stems, strict=True):
        package = urdf.split("/")[0]
        name = stem if stems.count(stem) == 1 else f"{package.removesuffix('_description')}/{stem}"
        robots.append(ZooRobot(urdf, f"{package}/{srdf[0]}" if srdf else None, kind, name))
    return tuple(robots)


ZOO = _parse_zoo(_ZOO_TABLE)


@dataclass(frozen=True)
class ZooOutcome:
    """What became of one robot of the zoo.

    Attributes:
        name, urdf, kind: The robot (:class:`ZooRobot`).
        mass: Its URDF's mass [kg] (0 where new-spec refused it).
        dof: Its actuated joints' velocities (0 where new-spec refused it).
        outcome: ``stands``, ``reaches``, ``refused by new-spec``, ``refused by check-spec``,
            ``fell``, ``missed`` (an arm's end effector not at its target) or ``failed`` (a QP
            failed, or an internal error: tsid_py's fault).
        reason: new-spec's or check-spec's first error, or the run's verdict or failure.
        detail: The run's figures: the CoM's largest error, or the end effector's final one.
    """

    name: str
    urdf: str
    kind: str
    mass: float
    dof: int
    outcome: str
    reason: str
    detail: str

    @property
    def succeeded(self) -> bool:
        return self.outcome in ("stands", "reaches")


def run_robot(entry: ZooRobot, folder: Path | None = None) -> ZooOutcome:
    """new-spec (with ``--flatten``), check-spec, and the robot's scenario in MuJoCo; the spec is
    written in ``folder`` (a temporary one by default). Whatever escapes (a bug) is the outcome
    ``failed``, its reason ``internal error: ...``: one robot never stops the zoo."""
    if folder is None:
        with tempfile.TemporaryDirectory() as temporary:
            return run_robot(entry, Path(temporary))
    try:
        return _run_robot(entry, folder)
    except Exception as error:  # a bug of tsid_py's (or a library's), reported as the robot's outcome
        reason = f"internal error: {type(error).__name__}: {' '.join(str(error).split())}"
        return ZooOutcome(entry.name, entry.urdf, entry.kind, 0.0, 0, "failed", reason, "")


def _run_robot(entry: ZooRobot, folder: Path) -> ZooOutcome:
    from tsid_py.new_spec import guess_spec
    from tsid_py.robot_specs import SpecRobot, load_spec
    from tsid_py.spec_check import check_robot

    robots = example_robot_data_dir()
    start = ZooOutcome(entry.name, entry.urdf, entry.kind, 0.0, 0, "", "", "")
    try:
        guess = guess_spec(
            robots / entry.urdf,
            robots / entry.srdf if entry.srdf else None,
            entry.name.replace("/", "-"),
            folder,
            flatten=True,
        )
    except TsidError as error:
        return replace(start, outcome="refused by new-spec", reason=_short(error, robots))
    path = folder / f"{guess.name}.toml"
    path.write_text(guess.toml())
    try:
        robot = SpecRobot(load_spec(path))
    except TsidError as error:
        return replace(start, outcome="refused by check-spec", reason=_short(error, robots))
    start = replace(start, mass=round(robot.total_mass, 1), dof=robot.na)
    errors = [f.message for f in check_robot(robot) if f.severity == "error"]
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return replace(
            start, outcome="refused by check-spec", reason=errors[0].removeprefix(f"{robot.name}: ") + more
        )
    try:
        outcome, reason, detail = _scenario(robot, path)
    except TsidError as error:
        return replace(start, outcome="failed", reason=_short(error, robots))
    return replace(start, outcome=outcome, reason=reason, detail=detail)


def _scenario(robot, path: Path) -> tuple[str, str, str]:
    """Run the robot's scenario: its outcome, reason and detail (:class:`ZooOutcome`)."""
    from tsid_py.scenarios import SCENARIOS

    if robot.is_fixed_base:
        offset = _reachable_offset(robot)
        if np.linalg.norm(offset) < 0.1 * REACH_STEP:
            return (
                "missed",
                f"its joints move its end effector {np.linalg.norm(offset) * 1000:.1f} mm at most",
                "",
            )
        summary = SCENARIOS["reach"].run(str(path), REACH, offset=tuple(offset), plant="mujoco").summary
        if int(summary["qp_failures"]):
            return "failed", _cause(summary), ""
        error = float(summary["ee_error_final_m"])
        detail = f"end effector {error * 1000:.3f} mm from its target"
        if error <= EE_TOLERANCE:
            return "reaches", "", detail
        return "missed", f"ends {error * 1000:.1f} mm from its target", detail
    scenario = "balance" if robot.spec.sole is not None else "quadruped"
    keywords = {} if scenario == "balance" else {"amplitude": 0.0}
    summary = SCENARIOS[scenario].run(str(path), STAND, plant="mujoco", **keywords).summary
    com = float(summary["com_error_max_m"])
    detail = f"CoM within {com * 1000:.1f} mm"
    if int(summary["qp_failures"]):
        return "failed", _cause(summary), detail
    if str(summary["verdict"]).startswith("recovered") and com < COM_TOLERANCE:
        return "stands", "", detail
    return "fell", str(summary["verdict"]), detail


def _reachable_offset(robot) -> np.ndarray:
    """A target the arm can reach, relative to where its end effector starts [m, world]: where
    the end effector is when every joint has moved from the starting posture towards the middle
    of its range (an unlimited joint forwards), by the same angle s, chosen (by bisection) to put
    it REACH_STEP away, within the joint limits (nearer when the limits allow no more)."""
    model, data, frame = robot.model, robot.create_data(), robot.frame_id(robot.spec.end_effector)
    q0 = robot.default_configuration()
    direction, room = np.ones(model.nv), np.inf
    for j in range(1, model.njoints):
        joint = model.joints[j]
        low, high = model.lowerPositionLimit[joint.idx_q], model.upperPositionLimit[joint.idx_q]
        if joint.nq != 1 or joint.nv != 1 or not low < high:
            continue
        value = q0[joint.idx_q]
        direction[joint.idx_v] = 1.0 if (low + high) / 2 >= value else -1.0
        room = min(room, (high - value) if direction[joint.idx_v] > 0 else (value - low))
    room = min(room, math.pi)

    def moved(s: float) -> np.ndarray:
        pin.framesForwardKinematics(model, data, pin.integrate(model, q0, s * direction))
        return data.oMf[frame].translation.copy()

    start, low, high = moved(0.0), 0.0, float(room)
    if np.linalg.norm(moved(high) - start) <= REACH_STEP:
        return moved(high) - start
    for _ in range(40):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if np.linalg.norm(moved(middle) - start) < REACH_STEP else (low, middle)
    return moved(high) - start


def _cause(summary: dict) -> str:
    """The first QP failure's cause, to its first clause on what conflicts."""
    cause = str(summary.get("qp_failure") or "a QP did not solve")
    return cause.split("; the conflicting set")[0]


def _short(error: BaseException, robots: Path) -> str:
    """An error's line, with example-robot-data's folder left out of its paths."""
    return " ".join(str(error).split()).replace(f"{robots}/", "")


def run_zoo(entries: tuple[ZooRobot, ...] = ZOO, jobs: int = 1, progress: bool = False) -> list[ZooOutcome]:
    """:func:`run_robot` for each entry, in ``jobs`` processes; in the entries' order."""
    if jobs <= 1:
        return [run_robot(entry) for entry in progress_bar(entries, progress, "zoo", "robot")]
    with ProcessPoolExecutor(jobs) as pool:
        return list(progress_bar(pool.map(run_robot, entries), progress, "zoo", "robot"))


def share(outcomes: list[ZooOutcome]) -> tuple[int, int]:
    """How many legged robots and arms stand or reach, of how many."""
    counted = [o for o in outcomes if o.kind in RUNNABLE]
    return sum(o.succeeded for o in counted), len(counted)


def markdown(outcomes: list[ZooOutcome]) -> str:
    """The zoo as a Markdown table, and the share of legged robots and arms that stand or reach."""
    lines = [
        "| robot | kind | mass [kg] | dof | outcome | why, or how well |",
        "|---|---|---:|---:|---|---|",
    ]
    for o in outcomes:
        mass = f"{o.mass:.1f}" if o.mass else ""
        dof = str(o.dof) if o.dof else ""
        why = (o.reason or o.detail).replace("|", "\\|")
        lines.append(f"| `{o.name}` | {o.kind} | {mass} | {dof} | {o.outcome} | {why} |")
    good, counted = share(outcomes)
    if counted:
        lines += [
            "",
            f"Legged robots and arms that stand or reach: {good} of {counted} ({good / counted:.0%}).",
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="python -m tsid_py.zoo", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="only these robots (by name; default: all)")
    parser.add_argument("--jobs", type=int, default=1, help="processes to run robots in (default: 1)")
    parser.add_argument("--markdown", type=Path, help="write the table there")
    parser.add_argument("--json", type=Path, help="write the outcomes there, as JSON")
    args = parser.parse_args(argv)
    return run_command(parser.prog, lambda: _zoo(args))


def _zoo(args: argparse.Namespace) -> int:
    names = {entry.name for entry in ZOO}
    unknown = sorted(set(args.names) - names)
    if unknown:
        raise InvalidParameterError(
            f"no robot {unknown[0]!r} in the zoo; its robots: {', '.join(sorted(names))}"
        )
    entries = tuple(entry for entry in ZOO if not args.names or entry.name in args.names)
    outcomes = run_zoo(entries, max(1, args.jobs), progress=True)
    table = markdown(outcomes)
    print(table, end="")
    if args.markdown:
        with atomic_output(args.markdown, "w") as handle:
            handle.write(table)
    if args.json:
        with atomic_output(args.json, "w") as handle:
            json.dump([asdict(o) for o in outcomes], handle, indent=1)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
