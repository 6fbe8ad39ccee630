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
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pinocchio as pin

from tsid_py.collision_points import CollisionPoints
from tsid_py.command import EXIT_OK, Parser, add_package_dir_argument, run_command
from tsid_py.errors import RobotSpecError
from tsid_py.outputs import atomic_output, check_output_file
from tsid_py.robot_specs import FOOT_LOAD, SoleGeometry, example_robot_data_dir, max_normal_force
from tsid_py.robot_wrapper import RobotWrapper, load_geometry

FOOT_BAND = 0.01  # [m] a leaf link whose geometry reaches this close to the lowest point is a foot
SOLE_MIN_WIDTH = 0.03  # [m] a footprint narrower than this either way is a point foot
FRAME_PREFERENCE = {
    pin.FrameType.BODY: 0,
    pin.FrameType.FIXED_JOINT: 1,
    pin.FrameType.OP_FRAME: 2,
}  # links first
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
            lines += ["", "[feet]", *(f'{key} = "{frame}"' for key, frame in self.feet.items())]
            cap = max_normal_force(self.mass)
            lines += [
                f"# each foot's normal force is capped at {FOOT_LOAD:g} m g = {cap:.0f} N "
                f"(m = {self.mass:.2f} kg, the URDF's),",
                "# a [biped] or [quadruped] table's f_max sets another",
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
            lines += ["", "[initial_configuration]  # [rad, m] by joint; edit the posture here"]
            lines += [f"{name} = {value:.4f}" for name, value in self.initial_configuration.items()]
        return "\n".join(lines) + "\n"


def guess_spec(
    urdf: Path,
    srdf: Path | None = None,
    name: str | None = None,
    spec_dir: Path | None = None,
    package_dirs: tuple[Path, ...] = (),
) -> SpecGuess:
    """Guess a spec for the robot of ``urdf`` (and ``srdf``), to be written in ``spec_dir`` (the
    current directory by default): its paths are example-robot-data's when the files are there,
    else relative to ``spec_dir``; ``package_dirs``, the folders that hold the URDF's mesh
    packages (``package://NAME/...`` is DIR/NAME/...), go into the spec too. See the module
    docstring."""
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
    guess.mass = float(pin.computeTotalMass(model))
    q, posture = _posture(model, srdf)
    guess.reference_configuration = posture
    guess.notes.append(
        f"starting posture: the SRDF's {posture!r}"
        if posture
        else "starting posture: neutral (no SRDF state): edit [initial_configuration]"
    )
    robot = RobotWrapper(model, fixed_base=False, name=guess.name)
    folders = [*(str(folder) for folder in package_dirs), *_package_dirs(urdf)]
    geometry = load_geometry(model, urdf, pin.GeometryType.COLLISION, folders)
    shapes = CollisionPoints(robot, geometry)
    if not shapes.shapes:
        raise RobotSpecError(f"{urdf}: no collision geometry: new-spec finds feet and soles from it")
    shapes.place(q)
    feet = _feet(model, shapes)
    if not feet:
        guess.notes.append("fixed base: the root link is the lowest (an arm on its base)")
        _arm(guess, _model(urdf, None), srdf)
        return guess
    guess.floating_base = True
    guess.notes.append(
        f"floating base: {len(feet)} feet are the lowest links ({', '.join(model.names[j] for j in feet)})"
    )
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    _describe_feet(guess, model, data, shapes, feet)
    _posture_table_and_limits(guess, model, q, posture)
    return guess


def _feet(model: pin.Model, shapes: CollisionPoints) -> list[int]:
    """The leaf bodies within FOOT_BAND of the lowest point, unless the root link is the lowest."""
    lowest: dict[int, float] = {}
    for shape in shapes.shapes:
        z = float(shapes.world(shape)[:, 2].min()) - shape.radius
        lowest[shape.joint] = min(lowest.get(shape.joint, np.inf), z)
    bottom = min(lowest.values())
    parents = set(model.parents[1:])
    if lowest.get(1, np.inf) <= bottom + FOOT_BAND or lowest.get(0, np.inf) <= bottom + FOOT_BAND:
        return []  # the base (the free flyer's body, or the universe) is down: a fixed base
    return sorted(j for j, z in lowest.items() if j not in parents and z <= bottom + FOOT_BAND)


def _describe_feet(
    guess: SpecGuess, model: pin.Model, data: pin.Data, shapes: CollisionPoints, feet: list[int]
) -> None:
    soles, frames = [], {}
    for joint in feet:
        footprint = shapes.sole(joint)
        width = np.ptp(footprint[:, :2], axis=0) if len(footprint) > 1 else np.zeros(2)
        candidates = [
            i for i, f in enumerate(model.frames) if f.parentJoint == joint and f.type != pin.FrameType.JOINT
        ]
        candidates = candidates or [i for i, f in enumerate(model.frames) if f.parentJoint == joint]
        named = [i for i in candidates if _name_rank(model.frames[i].name) < NOT_A_FOOT]
        candidates = named or candidates  # never a "world" frame fixed to a foot, when there is another
        if np.all(width >= SOLE_MIN_WIDTH):
            frame = max(
                candidates,
                key=lambda i: (
                    round(float(data.oMf[i].rotation[2, 2]), 6),
                    -_rank(model, i),
                    -data.oMf[i].translation[2],
                ),
            )
            placement = data.oMf[frame]
            local = (footprint - placement.translation) @ placement.rotation
            soles.append((local, placement))
            tilt = math.degrees(math.acos(min(1.0, float(placement.rotation[2, 2]))))
            guess.notes.append(
                f"{model.frames[frame].name}: a sole of {width[0] * 100:.1f} x {width[1] * 100:.1f} cm "
                "under the "
                f"frame, tilted {tilt:.1f} deg"
                + (" (more than 3 deg: pick a frame level with the sole)" if tilt > 3 else "")
            )
        else:
            point = footprint[np.argmin(footprint[:, 2])]
            frame = min(
                candidates,
                key=lambda i: (
                    _name_rank(model.frames[i].name),  # a frame the URDF names a sole, then a foot
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


NOT_A_FOOT = 3  # the name rank of a frame that is no foot's (a world frame)


def _name_rank(name: str) -> int:
    """How a frame's name is preferred for a foot: "sole" (0), "foot" (1), any other (2), one
    that says "world" or "universe" never (NOT_A_FOOT: iCub fixes ``codyco_balancing_world`` to
    its left foot)."""
    lowered = name.lower()
    if "world" in lowered or "universe" in lowered:
        return NOT_A_FOOT
    return 0 if "sole" in lowered else 1 if "foot" in lowered else 2


def _rank(model: pin.Model, frame: int) -> int:
    """How a frame type is preferred as a foot frame: a link's, then a fixed joint's, then others."""
    return FRAME_PREFERENCE.get(model.frames[frame].type, 3)


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
    return SoleGeometry(
        lxp=min(float(local[:, 0].max()) for local, _ in soles),
        lxn=min(float(-local[:, 0].min()) for local, _ in soles),
        lyp=min(float(local[:, 1].max()) for local, _ in soles),
        lyn=min(float(-local[:, 1].min()) for local, _ in soles),
        lz=max(float(-local[:, 2].min()) for local, _ in soles),
    )


def _arm(guess: SpecGuess, model: pin.Model, srdf: Path | None) -> None:
    """A fixed base's end effector (a tool-like frame of the farthest link) and starting posture."""
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
    guess.reference_configuration = posture
    _posture_table_and_limits(guess, model, q, posture)


def _posture_table_and_limits(guess: SpecGuess, model: pin.Model, q: np.ndarray, posture: str | None) -> None:
    """Without an SRDF posture, the starting configuration ``q`` as a table by joint name (the
    one-dof joints after the root's free flyer, if any); then the limits' notes."""
    if not posture:
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
    guess.notes.append(
        f"limits from the URDF: effort {effort.min():g} to {effort.max():g} N m, velocity {velocity.min():g} "
        f"to {velocity.max():g} rad/s (effort_scaling or [motors] change them)"
    )
    unbounded = [
        model.names[j]
        for j in range(1, model.njoints)
        if model.joints[j].nv == 1 and model.effortLimit[model.joints[j].idx_v] <= 0
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
        pin.loadReferenceConfigurations(model, str(srdf), False)
        states = [entry.key() for entry in model.referenceConfigurations]
        if states:
            chosen = next((s for s in POSTURES if s in states), states[0])
            return np.array(model.referenceConfigurations[chosen]), chosen
    q = pin.neutral(model)
    if model.joints[1].shortname() == "JointModelFreeFlyer":
        q[2] = 1.0
    return q, None


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
