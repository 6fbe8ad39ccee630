"""Check spec: does a robot spec describe the robot it names? Checked against its own URDF.

The legged controllers run :func:`check_stance` when they are made, and refuse a spec with an
error in one line; ``tsid-py check-spec SPEC`` prints every finding (:func:`check_robot`). Unknown
keys are refused when the spec is read (:func:`~tsid_py.robot_specs.check_spec_keys`).

The stance, for a floating base on feet, in the posture a controller starts from (lowered so
that its lowest foot frame stands on the ground):

- every foot frame on the ground, within FRAME_TOLERANCE, when the lowest one is;
- every sole flat: its frame's z axis within SOLE_TILT of the vertical;
- the robot's own collision geometry not below the ground by more than PENETRATION_TOLERANCE (a
  foot frame that is not where the robot touches the ground: a calf for a foot, a sphere's centre
  for a point foot without ``point_foot_radius``);
- each foot's collision geometry down to the ground within PENETRATION_TOLERANCE (a warning: the
  robot drops onto it);
- each sole against its foot's footprint (the collision geometry's points within 2 mm of its
  lowest): a sole reaching past the footprint by more than SOLE_TOLERANCE is an error (the
  controller would push where there is no foot), one short of it by more a warning.

And every joint of the spec's starting posture within its limits (an error naming the joint, its
value and limits, with a hint where the value looks like degrees), and every joint one the MuJoCo
plant converts (a warning: the other plants take any joint).
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pinocchio as pin

from tsid_py.collision_points import CollisionPoints
from tsid_py.command import EXIT_BAD_INPUT, EXIT_OK, Parser, add_package_dir_argument, run_command
from tsid_py.errors import RobotSpecError, UnsupportedProblemError
from tsid_py.loop.mujoco_model import joint_axis
from tsid_py.robot_specs import Robot, load_spec

logger = logging.getLogger("tsid_py")

FRAME_TOLERANCE = 5e-3  # [m] a foot frame this far above the ground when the lowest one is on it
SOLE_TILT = math.radians(3.0)  # [rad] a sole tilted past this from the ground is not flat
PENETRATION_TOLERANCE = 5e-3  # [m] the collision geometry may start this far into (or above) the ground
SOLE_TOLERANCE = 0.02  # [m] a sole's side may reach this far past its foot's footprint
POSTURE_TOLERANCE = 1e-6  # [rad, m] a posture's joint may pass its limit by this (rounding in a spec)


@dataclass(frozen=True)
class Finding:
    """One thing a check found: ``"error"`` (refused) or ``"warning"``, and a line saying what,
    where, by how much and what would be right."""

    severity: str
    message: str


def check_robot(robot: Robot, q: np.ndarray | None = None) -> list[Finding]:
    """Every finding on ``robot``'s spec: its posture within the joint limits, its stance (at
    ``q``, its standing configuration by default) and its joints."""
    return [*posture_findings(robot), *stance_findings(robot, q), *joint_findings(robot)]


def posture_findings(robot: Robot) -> list[Finding]:
    """An error for each joint of the spec's starting posture outside its limits, named with its
    value and limits, and a hint where the value looks like degrees (it is not within the limits
    in radians, and its conversion from degrees is)."""
    model, q = robot.model, robot.default_configuration()
    found = []
    for index in range(1, model.njoints):
        joint = model.joints[index]
        if joint.nq != 1:
            continue
        k = joint.idx_q
        value, low, high = float(q[k]), float(model.lowerPositionLimit[k]), float(model.upperPositionLimit[k])
        if low - POSTURE_TOLERANCE <= value <= high + POSTURE_TOLERANCE:
            continue
        hint = ""
        if low <= math.radians(value) <= high and joint.shortname().startswith("JointModelR"):
            hint = (
                f"; as degrees it would be {math.radians(value):.4f} rad, within them: the spec's "
                "posture is in radians"
            )
        found.append(
            Finding(
                "error",
                f"{robot.name}: the posture puts joint {model.names[index]} at {value:g}, outside its limits "
                f"[{low:.4f}, {high:.4f}]{hint}",
            )
        )
    return found


def check_stance(robot: Robot, q: np.ndarray | None = None) -> None:
    """Refuse a robot whose feet do not stand as its spec says (the first error, in one line);
    log the warnings. The findings of a spec are computed once per process."""
    findings = stance_findings(robot, q)
    for finding in findings:
        if finding.severity == "warning":
            logger.warning("%s", finding.message)
    errors = [f.message for f in findings if f.severity == "error"]
    if errors:
        more = f" (and {len(errors) - 1} more: tsid-py check-spec lists them)" if len(errors) > 1 else ""
        raise RobotSpecError(errors[0] + more)


def stance_findings(robot: Robot, q: np.ndarray | None = None) -> list[Finding]:
    """The findings on how the robot's feet stand (none for a fixed base or a robot without feet)."""
    if robot.is_fixed_base or not robot.spec.feet:
        return []
    q = robot.standing_configuration() if q is None else np.asarray(q, dtype=float)
    return list(_stance(robot, _signature(robot, q), q))


def _signature(robot: Robot, q: np.ndarray) -> tuple:
    """What the stance depends on: the URDF, the feet, their soles and the posture."""
    spec = robot.spec
    feet = tuple(spec.feet.items())
    return (
        spec.name,
        spec.urdf,
        str(spec.directory),
        feet,
        repr(spec.sole),
        spec.point_foot_radius,
        q.tobytes(),
    )


_FOUND: dict[
    tuple, tuple[Finding, ...]
] = {}  # by spec and posture: a controller made again is not re-checked


def _stance(robot: Robot, key: tuple, q: np.ndarray) -> tuple[Finding, ...]:
    if key not in _FOUND:
        _FOUND[key] = tuple(_stance_checks(robot, q))
    return _FOUND[key]


def _stance_checks(robot: Robot, q: np.ndarray):
    spec, model = robot.spec, robot.model
    data = robot.create_data()
    pin.framesForwardKinematics(model, data, q)
    height = robot.foot_height()
    for frame in spec.feet.values():
        placement = data.oMf[robot.frame_id(frame)]
        above = float(placement.translation[2]) - height
        if above > FRAME_TOLERANCE:
            yield Finding(
                "error",
                f"{spec.name}: foot frame {frame} is {above * 1000:.0f} mm above the ground when the lowest "
                "foot stands on it: the feet of the starting posture are not on one ground",
            )
        tilt = math.acos(min(1.0, max(-1.0, float(placement.rotation[2, 2]))))
        if spec.sole is not None and tilt > SOLE_TILT:
            yield Finding(
                "error",
                f"{spec.name}: the sole of {frame} is tilted {math.degrees(tilt):.1f} deg from the ground "
                f"(more than {math.degrees(SOLE_TILT):g} deg): its frame's z axis must be the sole's normal",
            )
    try:
        shapes = CollisionPoints(robot)
    except (RuntimeError, ValueError) as error:  # a URDF whose meshes cannot be read
        yield Finding("warning", f"{spec.name}: the collision geometry could not be read ({error})")
        return
    if not shapes.shapes:
        yield Finding(
            "warning", f"{spec.name}: the URDF has no collision geometry: the feet were not checked"
        )
        return
    shapes.place(q)
    lowest, name = shapes.lowest()
    if lowest < -PENETRATION_TOLERANCE:
        yield Finding(
            "error",
            f"{spec.name}: the collision geometry {name} is {-lowest * 1000:.0f} mm below the ground when "
            "the "
            "foot frames stand on it: the foot frames are not where the robot touches the ground (a frame "
            "at a sphere's centre needs point_foot_radius)",
        )
    for frame in spec.feet.values():
        joint = model.frames[robot.frame_id(frame)].parentJoint
        yield from _foot_findings(robot, shapes, frame, joint, data.oMf[robot.frame_id(frame)])


def _foot_findings(robot: Robot, shapes: CollisionPoints, frame: str, joint: int, placement: pin.SE3):
    spec = robot.spec
    sole = shapes.sole(joint)
    if sole.size == 0:
        yield Finding("warning", f"{spec.name}: the body of foot frame {frame} has no collision geometry")
        return
    gap = float(sole[:, 2].min())
    if gap > PENETRATION_TOLERANCE:
        yield Finding(
            "warning",
            f"{spec.name}: the collision geometry under {frame} is {gap * 1000:.0f} mm above the ground "
            "when the frame stands on it: the robot will drop that far",
        )
    if spec.sole is None:
        return
    local = (sole - placement.translation) @ placement.rotation  # the footprint in the foot frame
    footprint = {
        "lxp": local[:, 0].max(),
        "lxn": -local[:, 0].min(),
        "lyp": local[:, 1].max(),
        "lyn": -local[:, 1].min(),
    }
    for side, reach in footprint.items():
        declared = getattr(spec.sole, side)
        if declared > reach + SOLE_TOLERANCE:
            yield Finding(
                "error",
                f"{spec.name}: [sole] {side} = {declared:g} m reaches {(declared - reach) * 100:.0f} cm past "
                "the "
                f"foot's collision geometry under {frame} ({reach:.3f} m)",
            )
        elif declared < reach - SOLE_TOLERANCE:
            yield Finding(
                "warning",
                f"{spec.name}: [sole] {side} = {declared:g} m is {(reach - declared) * 100:.0f} cm short of "
                "the "
                f"foot's collision geometry under {frame} ({reach:.3f} m)",
            )


def joint_findings(robot: Robot) -> list[Finding]:
    """A warning for every joint the MuJoCo plant does not convert."""
    found = []
    for index in range(1, robot.model.njoints):
        joint = robot.model.joints[index]
        if joint.shortname() == "JointModelFreeFlyer":
            continue
        try:
            joint_axis(joint)
        except UnsupportedProblemError:
            found.append(
                Finding(
                    "warning",
                    f"{robot.name}: joint {robot.model.names[index]} ({joint.shortname()}) does not convert "
                    "to "
                    "the mujoco plant",
                )
            )
    return found


# ---------------------------------------------------------------------------------- the command
def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="tsid-py check-spec", description=__doc__.splitlines()[0])
    parser.add_argument("spec", help="a spec name (robots/NAME.toml) or a path to a .toml spec")
    add_package_dir_argument(parser)
    args = parser.parse_args(argv)
    return run_command(parser.prog, lambda: _check(args))


def _check(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec)
    extra = tuple(str(Path(folder).resolve()) for folder in args.package_dir)
    robot = Robot(replace(spec, package_dirs=spec.package_dirs + extra))  # unknown keys, frames refused
    findings = check_robot(robot)
    for finding in findings:
        print(f"{finding.severity}: {finding.message}")
    errors = sum(f.severity == "error" for f in findings)
    print(f"{robot.name}: {errors} error(s), {len(findings) - errors} warning(s)", file=sys.stderr)
    return EXIT_BAD_INPUT if errors else EXIT_OK
