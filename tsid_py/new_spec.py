"""New spec: write a robot spec to start from, guessed from a URDF (and its SRDF).

``tsid-py new-spec URDF [--srdf SRDF] [--out SPEC.toml]`` reads the robot in its reference posture
(the SRDF's standing-like state, else the neutral one) and guesses, saying what it guessed:

- the base: floating when two feet or more are the lowest of the robot (leaf links whose collision
  geometry reaches within FOOT_BAND of the lowest point), fixed when the root link is the lowest;
- the feet and their frames: a foot whose lowest points (within 2 mm) span 3 cm or more each way
  stands on a sole, the rectangle around them in the foot's frame whose z axis is nearest the
  vertical (one [sole] for all feet: the extents common to them); a smaller one is a point foot,
  its frame the one nearest above its lowest point, ``point_foot_radius`` its height above it;
- the keys of the feet: right / left for two, front_left ... hind_right for four;
- the starting posture: the SRDF's state, or a table of every joint at its neutral value;
- an arm's end effector: a tool-like frame (tcp, ee, tool, hand) of the farthest link.

The spec is checked (:mod:`tsid_py.spec_check`) before it is written; the guide "Adding a robot"
says what to edit by hand.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pinocchio as pin

from tsid_py.collision_points import CollisionPoints
from tsid_py.command import EXIT_OK, Parser, add_package_dir_argument, run_command
from tsid_py.errors import RobotSpecError
from tsid_py.outputs import atomic_output, check_output_file
from tsid_py.robot_specs import (
    FOOT_LOAD,
    FOOT_MIN_LOAD,
    NOT_A_FOOT,
    SoleGeometry,
    example_robot_data_dir,
    foot_name_rank,
    max_normal_force,
    min_normal_force,
)
from tsid_py.robot_wrapper import (
    FRAME_TYPE_ORDER,
    RobotWrapper,
    frame_index,
    load_collision_geometry,
    load_reference_configurations,
    turned_up_to,
)
from tsid_py.sole_leveling import level_soles, sole_tilt
from tsid_py.spec_check import SOLE_TILT

FOOT_BAND = 0.01  # [m] a leaf link whose geometry reaches this close to the lowest point is a foot
SOLE_MIN_WIDTH = 0.03  # [m] a footprint narrower than this either way is a point foot
SOLE_FRAME_TILT = math.radians(30.0)  # [rad] a frame tilted more than this is no sole's
POSTURES = ("half_sitting", "standing", "stand", "default", "home", "ready")  # SRDF states, preferred first
TOOL_WORDS = ("tcp", "ee", "tool", "hand", "flange", "gripper")


@dataclass
class SpecGuess:
    """What :func:`guess_spec` found: the spec's entries and, in ``notes``, what it guessed and why."""

    name: str
    urdf: str
    srdf: str | None
    floating_base: bool
    reference_configuration: str | None = None
    initial_configuration: dict[str, float] = field(default_factory=dict)
    feet: dict[str, str] = field(default_factory=dict)
    sole: SoleGeometry | None = None
    point_foot_radius: float = 0.0
    end_effector: str | None = None
    mass: float = 0.0  # [kg] the URDF's, for the force caps the controllers derive from it
    package_dirs: list[str] = field(default_factory=list)  # relative to the spec's folder
    notes: list[str] = field(default_factory=list)

    def toml(self) -> str:
        """The spec file's text."""
        lines = [
            f"# {self.name}: written by tsid-py new-spec from {Path(self.urdf).name}; check it with",
            "# tsid-py check-spec, then see docs/guides/adding-a-robot.md for what to edit by hand.",
            f'name = "{self.name}"',
            f'description = "{self.name} ({"floating" if self.floating_base else "fixed"} base)"',
            f'urdf = "{self.urdf}"',
        ]
        if self.srdf:
            lines.append(f'srdf = "{self.srdf}"')
        if self.package_dirs:
            folders = ", ".join(f'"{folder}"' for folder in self.package_dirs)
            lines.append(f"package_dirs = [{folders}]  # where the URDF's mesh packages are")
        lines.append(f"floating_base = {str(self.floating_base).lower()}")
        if self.reference_configuration:
            lines.append(f'reference_configuration = "{self.reference_configuration}"')
        if self.end_effector:
            lines.append(f'end_effector = "{self.end_effector}"')
        if self.point_foot_radius:
            lines.append(
                f"point_foot_radius = {self.point_foot_radius:.4f}  # [m] the feet's frames above the ground"
            )
        if self.feet:
            lines += ["", "[feet]", *(f'{_key(key)} = "{frame}"' for key, frame in self.feet.items())]
            cap, least = max_normal_force(self.mass), min_normal_force(self.mass)
            lines += [
                f"# each foot's normal force is kept within {FOOT_MIN_LOAD:g} m g = {least:.2g} N and "
                f"{FOOT_LOAD:g} m g = {cap:.0f} N",
                f"# (m = {self.mass:.2f} kg, the URDF's); f_min, f_max in [biped] or [quadruped] set others",
            ]
        if self.sole is not None:
            sole = self.sole
            lines += [
                "",
                "[sole]  # the rectangle around the feet's lowest points, in the foot frame [m]",
                f"lxp = {sole.lxp:.3f}",
                f"lxn = {sole.lxn:.3f}",
                f"lyp = {sole.lyp:.3f}",
                f"lyn = {sole.lyn:.3f}",
                f"lz = {sole.lz:.4f}",
            ]
        if self.initial_configuration:
            state = self.reference_configuration
            over = f" (over the SRDF's {state})" if state else ""
            lines += ["", f"[initial_configuration]  # [rad, m] by joint{over}; edit the posture here"]
            lines += [f"{_key(name)} = {value:.4f}" for name, value in self.initial_configuration.items()]
        return "\n".join(lines) + "\n"


def _key(name: str) -> str:
    """A TOML key: bare when it may be (letters, digits, _ and -), else quoted (``"joint_0.0"``)."""
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else '"' + name.replace('"', '\\"') + '"'


def guess_spec(
    urdf: Path,
    srdf: Path | None = None,
    name: str | None = None,
    spec_dir: Path | None = None,
    package_dirs: tuple[Path, ...] = (),
    flatten: bool = False,
) -> SpecGuess:
    """Guess a spec for the robot of ``urdf`` (and ``srdf``), to be written in ``spec_dir`` (the
    current directory by default): its paths are example-robot-data's when the files are there,
    else relative to ``spec_dir``; ``package_dirs``, the folders that hold the URDF's mesh
    packages (``package://NAME/...`` is DIR/NAME/...), go into the spec too. ``flatten``: level
    soles the posture tilts, with the ankles (:func:`~tsid_py.sole_leveling.level_soles`). See the
    module docstring."""
    urdf, srdf = Path(urdf), Path(srdf) if srdf else None
    for path in (urdf, srdf):
        if path is not None and not path.is_file():
            raise RobotSpecError(f"file not found: {path}")
    root = _files_root(urdf, Path(spec_dir or "."))
    guess = SpecGuess(
        name or urdf.stem, _relative(urdf, root), _relative(srdf, root) if srdf else None, False
    )
    for folder in package_dirs:
        if not Path(folder).is_dir():
            raise RobotSpecError(f"--package-dir {folder}: not a folder")
    guess.package_dirs = [_relative(Path(folder), Path(spec_dir or ".")) for folder in package_dirs]
    model = _model(urdf, pin.JointModelFreeFlyer())
    if model.nv == 6:
        raise RobotSpecError(f"{urdf}: the robot has no joints that move: there is nothing to control")
    guess.mass = float(pin.computeTotalMass(model))
    q, posture = _posture(model, srdf)
    guess.reference_configuration = posture
    guess.notes.append(
        f"starting posture: the SRDF's {posture!r}"
        if posture
        else "starting posture: neutral (no SRDF state): edit [initial_configuration]"
    )
    changed = _into_limits(guess, model, q, posture)
    robot = RobotWrapper(model, fixed_base=False, name=guess.name)
    folders = [*(str(folder) for folder in package_dirs), *_package_dirs(urdf)]
    geometry, visual = load_collision_geometry(model, urdf, folders)
    shapes = CollisionPoints(robot, geometry)
    if not shapes.shapes:
        raise RobotSpecError(f"{urdf}: no collision or visual geometry: new-spec finds the feet from it")
    if visual:
        guess.notes.append("no collision geometry in the URDF: its visual geometry stands in (plants too)")
    shapes.place(q)
    feet = _feet(model, shapes)
    if not feet:
        guess.notes.append("fixed base: no two feet are the lowest links (an arm on its base)")
        _arm(guess, _model(urdf, None), srdf, changed)
        return guess
    guess.floating_base = True
    guess.notes.append(
        f"floating base: {len(feet)} feet are the lowest links ({', '.join(model.names[j] for j in feet)})"
    )
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    described = len(guess.notes)
    _describe_feet(guess, model, data, shapes, feet)
    levelled = _level(guess, model, q) if flatten else {}
    if levelled:
        note = guess.notes.pop()
        del guess.notes[described:]  # described again, level
        shapes.place(q)
        pin.framesForwardKinematics(model, data, q)
        _describe_feet(guess, model, data, shapes, feet)
        guess.notes.append(note)
    _posture_table_and_limits(guess, model, q, posture, changed | levelled)
    return guess


def _level(guess: SpecGuess, model: pin.Model, q: np.ndarray) -> dict[str, float]:
    """``--flatten``: the ankle angles that level soles tilted past the checker's SOLE_TILT (set in
    ``q``, and noted), by joint name; none for point feet or level soles."""
    frames = [frame_index(model, frame) for frame in guess.feet.values()]
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    if guess.sole is None or max(sole_tilt(model, data, f) for f in frames) <= SOLE_TILT:
        return {}
    levelled = level_soles(model, q, frames)
    changes = []
    for name, value in levelled.items():
        k = model.joints[model.getJointId(name)].idx_q
        changes.append(f"{name} {q[k]:.4f} -> {value:.4f}")
        q[k] = value
    guess.notes.append(f"--flatten: the soles levelled by the ankles: {', '.join(changes)} rad")
    return levelled


def _feet(model: pin.Model, shapes: CollisionPoints) -> list[int]:
    """The leaf bodies within FOOT_BAND of the lowest point, if there are two or more and the root
    link is not the lowest (one lowest leaf is an arm's hand, or a pendulum's tip)."""
    lowest: dict[int, float] = {}
    for shape in shapes.shapes:
        z = float(shapes.world(shape)[:, 2].min()) - shape.radius
        lowest[shape.joint] = min(lowest.get(shape.joint, np.inf), z)
    bottom = min(lowest.values())
    parents = set(model.parents[1:])
    if lowest.get(1, np.inf) <= bottom + FOOT_BAND or lowest.get(0, np.inf) <= bottom + FOOT_BAND:
        return []  # the base (the free flyer's body, or the universe) is down: a fixed base
    feet = sorted(j for j, z in lowest.items() if j not in parents and z <= bottom + FOOT_BAND)
    return feet if len(feet) >= 2 else []


def _describe_feet(
    guess: SpecGuess, model: pin.Model, data: pin.Data, shapes: CollisionPoints, feet: list[int]
) -> None:
    soles, frames = [], {}
    for joint in feet:
        candidates = [
            i for i, f in enumerate(model.frames) if f.parentJoint == joint and f.type != pin.FrameType.JOINT
        ]
        candidates = candidates or [i for i, f in enumerate(model.frames) if f.parentJoint == joint]
        named = [i for i in candidates if foot_name_rank(model.frames[i].name) < NOT_A_FOOT]
        candidates = named or candidates  # never a "world" frame fixed to a foot, when there is another
        sole = _sole_frame(model, data, shapes, joint, candidates)
        if sole is not None:
            frame, local = sole
            placement = data.oMf[frame]
            soles.append((local, placement))
            width = np.ptp(local[:, :2], axis=0)
            tilt = math.degrees(math.acos(min(1.0, float(placement.rotation[2, 2]))))
            guess.notes.append(
                f"{model.frames[frame].name}: a sole of {width[0] * 100:.1f} x {width[1] * 100:.1f} cm "
                f"under the frame, tilted {tilt:.1f} deg"
                + (" (more than 3 deg: --flatten levels it with the ankle)" if tilt > 3 else "")
            )
        else:
            footprint = shapes.sole(joint)
            point = footprint[np.argmin(footprint[:, 2])]
            frame = min(
                candidates,
                key=lambda i: (
                    foot_name_rank(model.frames[i].name),  # a frame the URDF names a sole, then a foot
                    round(float(np.linalg.norm(data.oMf[i].translation[:2] - point[:2])), 4),
                    round(float(data.oMf[i].translation[2]), 4),
                    _rank(model, i),
                ),
            )
            offset = float(np.linalg.norm(data.oMf[frame].translation[:2] - point[:2]))
            height = float(data.oMf[frame].translation[2] - point[2])
            guess.point_foot_radius = max(guess.point_foot_radius, height)
            guess.notes.append(
                f"{model.frames[frame].name}: a point foot, {height * 1000:.1f} mm above its lowest point"
                + (f", {offset * 1000:.0f} mm to its side" if offset > 5e-3 else "")
            )
        frames[joint] = frame
    names = {j: model.frames[f].name for j, f in frames.items()}
    positions = {j: data.oMf[f].translation for j, f in frames.items()}
    guess.feet = _foot_keys(names, positions)
    if soles:
        guess.sole = _common_sole(soles)
        guess.notes.append("one [sole] for every foot: the extents their footprints share")


def _sole_frame(
    model: pin.Model, data: pin.Data, shapes: CollisionPoints, joint: int, candidates: list[int]
) -> tuple[int, np.ndarray] | None:
    """The frame of a foot that stands on a sole, and the sole's points in it, or None for a point
    foot. Tried in turn: the frames within SOLE_FRAME_TILT of the vertical, one named a sole
    first (:func:`~tsid_py.robot_specs.foot_name_rank`), then the most vertical, a link's before
    a joint's, the lowest; the first whose footprint (the foot's points within 2 mm of its lowest
    along the frame's z, a tilted foot's own) spans SOLE_MIN_WIDTH or more each way is the
    sole's."""
    upright = [i for i in candidates if data.oMf[i].rotation[2, 2] >= math.cos(SOLE_FRAME_TILT)]
    for frame in sorted(
        upright,
        key=lambda i: (
            foot_name_rank(model.frames[i].name) > 0,
            -round(float(data.oMf[i].rotation[2, 2]), 6),
            _rank(model, i),
            data.oMf[i].translation[2],
        ),
    ):
        placement = data.oMf[frame]
        footprint = shapes.sole(joint, up=placement.rotation[:, 2])
        local = (footprint - placement.translation) @ placement.rotation
        if len(local) > 1 and np.all(np.ptp(local[:, :2], axis=0) >= SOLE_MIN_WIDTH):
            return frame, local
    return None


def _rank(model: pin.Model, frame: int) -> int:
    """How a frame type is preferred as a foot frame: a link's, then a fixed joint's, then others."""
    return FRAME_TYPE_ORDER.get(model.frames[frame].type, 9)


def _foot_keys(names: dict[int, str], positions: dict[int, np.ndarray]) -> dict[str, str]:
    """right / left for two feet (by y), front_left ... for four (by x and y), else the frames' names."""
    joints = list(names)
    if len(joints) == 2:
        right, left = sorted(joints, key=lambda j: positions[j][1])
        return {"right": names[right], "left": names[left]}
    if len(joints) == 4:
        keys = {}
        for j in joints:
            x, y = positions[j][:2]
            keys[f"{'front' if x > 0 else 'hind'}_{'left' if y > 0 else 'right'}"] = names[j]
        if len(keys) == 4:
            return dict(sorted(keys.items()))
    return {names[j]: names[j] for j in joints}


def _common_sole(soles: list[tuple[np.ndarray, pin.SE3]]) -> SoleGeometry:
    """The sole every foot has: the smallest extent of each side, the deepest sole."""
    return SoleGeometry(  # (+ 0.0: no -0.0 in the spec)
        lxp=min(float(local[:, 0].max()) for local, _ in soles) + 0.0,
        lxn=min(float(-local[:, 0].min()) for local, _ in soles) + 0.0,
        lyp=min(float(local[:, 1].max()) for local, _ in soles) + 0.0,
        lyn=min(float(-local[:, 1].min()) for local, _ in soles) + 0.0,
        lz=max(float(-local[:, 2].min()) for local, _ in soles) + 0.0,
    )


def _arm(guess: SpecGuess, model: pin.Model, srdf: Path | None, changed: dict[str, float]) -> None:
    """A fixed base's end effector (a tool-like frame of the farthest link) and starting posture
    (with the joints ``changed`` into their limits)."""
    depth = {0: 0}
    for j in range(1, model.njoints):
        depth[j] = depth[model.parents[j]] + 1
    deepest = max(depth.values())
    chains = {j for j in depth if depth[j] >= deepest - 1}  # the last link and, past fingers, the hand
    scored = []
    for i, frame in enumerate(model.frames):
        words = sum(word in frame.name.lower() for word in TOOL_WORDS)
        scored.append((words, depth[frame.parentJoint] if frame.parentJoint in chains else -1, i))
    _, _, best = max(scored)
    guess.end_effector = model.frames[best].name
    guess.notes.append(
        f"end effector: {guess.end_effector} (a tool-like frame of the farthest link; check it)"
    )
    q, posture = _posture(model, srdf)
    for name, value in changed.items():
        q[model.joints[model.getJointId(name)].idx_q] = value
    _posture_table_and_limits(guess, model, q, posture, changed)


def _posture_table_and_limits(
    guess: SpecGuess, model: pin.Model, q: np.ndarray, posture: str | None, changed: dict[str, float]
) -> None:
    """The starting configuration: without an SRDF posture, ``q`` as a table by joint name (the
    one-dof joints after the root's free flyer, if any); with one, the joints ``changed`` over it.
    Then the limits' notes."""
    if posture:
        guess.initial_configuration = dict(changed)
    else:
        first = 2 if guess.floating_base else 1
        guess.initial_configuration = {
            model.names[j]: float(q[model.joints[j].idx_q])
            for j in range(first, model.njoints)
            if model.joints[j].nq == 1
        }
    _limits(guess, model)


def _limits(guess: SpecGuess, model: pin.Model) -> None:
    """Notes on the URDF's effort and velocity limits, which the spec uses as they are."""
    start = model.joints[2].idx_v if guess.floating_base else 0
    effort, velocity = model.effortLimit[start:], model.velocityLimit[start:]
    given = (np.isfinite(effort) & (effort > 0), np.isfinite(velocity) & (velocity > 0))
    if given[0].any() and given[1].any():
        effort, velocity = effort[given[0]], velocity[given[1]]
        guess.notes.append(
            f"limits from the URDF: effort {effort.min():g} to {effort.max():g} N m, velocity "
            f"{velocity.min():g} to {velocity.max():g} rad/s (effort_scaling or [motors] change them)"
        )
    unbounded = [
        model.names[j]
        for j in range(1, model.njoints)
        if model.joints[j].nv == 1
        and not (
            np.isfinite(model.effortLimit[model.joints[j].idx_v])
            and model.effortLimit[model.joints[j].idx_v] > 0
        )
    ]
    if unbounded:
        guess.notes.append(
            f"no effort limit in the URDF for {', '.join(unbounded)}: their torques are unbounded"
        )


def _model(urdf: Path, root_joint) -> pin.Model:
    try:
        if root_joint is None:
            return pin.buildModelFromUrdf(str(urdf))
        return pin.buildModelFromUrdf(str(urdf), root_joint)
    except (RuntimeError, ValueError) as error:
        raise RobotSpecError(f"{urdf}: not a URDF Pinocchio reads ({' '.join(str(error).split())})") from None


def _posture(model: pin.Model, srdf: Path | None) -> tuple[np.ndarray, str | None]:
    """The SRDF's preferred state (see POSTURES; else its first), or the neutral configuration."""
    if srdf is not None:
        load_reference_configurations(model, srdf)
        states = [entry.key() for entry in model.referenceConfigurations]
        if states:
            chosen = next((s for s in POSTURES if s in states), states[0])
            return np.array(model.referenceConfigurations[chosen]), chosen
    q = pin.neutral(model)
    if model.joints[1].shortname() == "JointModelFreeFlyer":
        q[2] = 1.0
    return q, None


LIMIT_MARGIN = 0.1  # of a joint's range: how far inside its limits a neutral value outside them goes


def _into_limits(guess: SpecGuess, model: pin.Model, q: np.ndarray, posture: str | None) -> dict[str, float]:
    """The starting posture's joints outside their limits, moved within them (in ``q``, noted),
    by name: a revolute joint by whole turns when one lands within them (Kinova's SRDF puts a
    joint limited to [0.33, 5.95] at -pi/2); without an SRDF posture, a neutral value to
    LIMIT_MARGIN of the range inside (Laikago's and Go2's calves, whose 0 is past their stop).
    An SRDF's value that no turn brings within is left as it is, for check-spec to name."""
    moved: dict[str, float] = {}
    notes = []
    for j in range(1, model.njoints):
        joint = model.joints[j]
        if joint.nq != 1 or joint.shortname() == "JointModelFreeFlyer":
            continue
        k = joint.idx_q
        low, high, value = float(model.lowerPositionLimit[k]), float(model.upperPositionLimit[k]), float(q[k])
        if not (np.isfinite(low) and np.isfinite(high) and low < high) or low <= value <= high:
            continue
        turned = turned_up_to(value, low)
        if joint.shortname().startswith("JointModelR") and turned <= high:
            q[k] = turned
        elif posture is None:
            margin = LIMIT_MARGIN * (high - low)
            q[k] = float(np.clip(value, low + margin, high - margin))
        else:
            continue
        moved[model.names[j]] = float(q[k])
        notes.append(f"{model.names[j]} {value:.4f} -> {q[k]:.4f}")
    if notes:
        guess.notes.append(
            "joints outside their limits in the "
            + (f"SRDF's {posture!r}" if posture else "neutral posture")
            + f", moved within them (by whole turns, else {LIMIT_MARGIN:.0%} of the range inside): "
            + ", ".join(notes)
        )
    return moved


def _files_root(urdf: Path, spec_dir: Path) -> Path:
    """Where the spec's paths start (as :func:`~tsid_py.robot_specs.files_root` reads them):
    example-robot-data's robots folder when the URDF is in it, else the spec's directory."""
    try:
        robots = example_robot_data_dir()
        urdf.resolve().relative_to(robots.resolve())
        return robots
    except (RobotSpecError, ValueError):
        return spec_dir.resolve()


def _relative(path: Path, root: Path) -> str:
    return os.path.relpath(path.resolve(), root.resolve())


def _package_dirs(urdf: Path) -> list[str]:
    """Where ``package://`` mesh paths resolve: the folders above the URDF's (a package's, and
    example-robot-data's ``package://example-robot-data/robots/...``)."""
    return [str(folder) for folder in urdf.resolve().parents[:5]]


# ---------------------------------------------------------------------------------- the command
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("urdf", help="the robot's URDF")
    parser.add_argument("--srdf", help="its SRDF (reference postures), if it has one")
    parser.add_argument("--name", help="the robot's name (default: the URDF's file name)")
    parser.add_argument("--out", help="write the spec there (default: print it)")
    parser.add_argument("--force", action="store_true", help="overwrite --out")
    parser.add_argument(
        "--flatten",
        action="store_true",
        help="level soles the starting posture tilts (more than 3 deg), with the ankles; the angles go "
        "into [initial_configuration]",
    )
    add_package_dir_argument(parser)


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="tsid-py new-spec", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    return run_command(parser.prog, lambda: _new_spec(args))


def _new_spec(args: argparse.Namespace) -> int:
    out = Path(args.out) if args.out else None
    if out is not None:
        check_output_file(out, args.force, "--out")
    guess = guess_spec(
        Path(args.urdf),
        Path(args.srdf) if args.srdf else None,
        args.name,
        out.parent if out else None,
        tuple(Path(folder) for folder in args.package_dir),
        args.flatten,
    )
    for note in guess.notes:
        print(f"guessed: {note}", file=sys.stderr)
    text = guess.toml()
    if out is None:
        print(text, end="")
        return EXIT_OK
    with atomic_output(out, "w") as handle:
        handle.write(text)
    print(f"wrote {out}; next: tsid-py check-spec {out}", file=sys.stderr)
    return EXIT_OK
