"""Check spec: does a robot spec describe the robot it names? Checked against its own URDF.

The legged controllers run :func:`check_stance` when they are made, and refuse a spec with an
error in one line; ``tsid-py check-spec SPEC`` prints every finding (:func:`check_robot`). Unknown
keys are refused when the spec is read (:func:`~tsid_py.robot_specs.check_spec_keys`).

The stance, for a floating base on feet, in the posture a controller starts from (lowered so
that its lowest foot frame stands on the ground):

- soles, or three point feet or more (two points give no area to stand on), none on a wheel (a
  joint that turns without limit), none a world frame (``universe``, or one named so);
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
from tsid_py.robot_specs import (
    NOT_A_FOOT,
    SpecRobot,
    foot_name_rank,
    load_spec,
    max_normal_force,
    min_normal_force,
)
from tsid_py.robot_wrapper import FRAME_TYPE_ORDER, turned_up_to
from tsid_py.sole_leveling import level_soles, sole_tilt

logger = logging.getLogger("tsid_py")

FRAME_TOLERANCE = 5e-3  # [m] a foot frame this far above the ground when the lowest one is on it
SOLE_TILT = math.radians(3.0)  # [rad] a sole tilted past this from the ground is not flat
PENETRATION_TOLERANCE = 5e-3  # [m] the collision geometry may start this far into (or above) the ground
SOLE_TOLERANCE = 0.02  # [m] a sole's side may reach this far past its foot's footprint
POSTURE_TOLERANCE = 1e-6  # [rad, m] a posture's joint may pass its limit by this (rounding in a spec)


@dataclass(frozen=True)
class Finding:
    """One thing a check found: ``"error"`` (refused), ``"warning"`` or ``"note"`` (a figure worth
    knowing: how far from its limits the robot stands), and a line saying what, where, by how much
    and what would be right."""

    severity: str
    message: str


def check_robot(robot: SpecRobot, q: np.ndarray | None = None) -> list[Finding]:
    """Every finding on ``robot``'s spec: its posture within the joint limits, its stance (at
    ``q``, its standing configuration by default) and its joints."""
    return [
        *posture_findings(robot),
        *stance_findings(robot, q),
        *standing_findings(robot, q),
        *joint_findings(robot),
    ]


def static_standing(robot: SpecRobot, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The feet's forces and the joint torques that hold a floating-base robot still at ``q``:
    g(q) = S^T tau + J^T f at rest (J: the feet's Jacobians at their frames, world axes; a sole's
    wrench has 6 numbers, force then moment, a point foot's force 3). f is the least change from
    an even split of the weight (m g / n up at each foot) that balances the base's six rows,
    g_base = J_base^T f (a pseudo-inverse); then tau = g_joints - J_joints^T f.

    Returns:
        forces: One row per foot of the spec's ``[feet]`` [N, N m].
        tau: The actuated joints' torques [N m].
    """
    model, data = robot.model, robot.create_data()
    zero = robot.zero_velocity()
    gravity = pin.rnea(model, data, q, zero, zero)
    pin.computeJointJacobians(model, data, q)
    rows = 6 if robot.spec.sole is not None else 3
    feet = list(robot.spec.feet.values())
    jacobian = np.vstack(
        [pin.getFrameJacobian(model, data, robot.frame_id(f), pin.LOCAL_WORLD_ALIGNED)[:rows] for f in feet]
    )
    even = np.zeros(rows * len(feet))
    even[2::rows] = robot.total_mass * float(np.linalg.norm(model.gravity.linear)) / len(feet)
    base = jacobian[:, :6].T
    forces = even + np.linalg.pinv(base) @ (gravity[:6] - base @ even)
    return forces.reshape(len(feet), rows), gravity[6:] - jacobian[:, 6:].T @ forces


def standing_findings(robot: SpecRobot, q: np.ndarray | None = None) -> list[Finding]:
    """Whether the robot can hold still in its starting posture. On feet (:func:`static_standing`):
    an error for a foot pressing outside the controllers' bounds [f_min, f_max] (the spec's
    ``[biped]`` or ``[quadruped]`` ones, else :func:`~tsid_py.robot_specs.min_normal_force` and
    :func:`~tsid_py.robot_specs.max_normal_force`), or outside its friction cone (mu, 0.3 by
    default). On a fixed base, the joints hold gravity:
    tau = g(q). Either way an error for a joint above its torque limit (the URDF's times
    ``effort_scaling``, or ``[quadruped] tau_max``); else a note with the margins."""
    spec, model, name = robot.spec, robot.model, robot.name
    found, summary = [], ""
    if robot.is_fixed_base:
        q = robot.default_configuration() if q is None else q
        zero = robot.zero_velocity()
        tau = pin.rnea(model, robot.create_data(), q, zero, zero)[robot.nv - robot.na :]
        what = "holding its posture"
    elif spec.feet:
        forces, tau = static_standing(robot, robot.standing_configuration() if q is None else q)
        table = spec.biped if spec.sole is not None else spec.quadruped
        cap = float(table.get("f_max", max_normal_force(robot.total_mass)))  # type: ignore[arg-type]
        least = float(table.get("f_min", min_normal_force(robot.total_mass)))  # type: ignore[arg-type]
        mu = float(table.get("mu", 0.3))  # type: ignore[arg-type]
        what = "standing still"
        for frame, wrench in zip(spec.feet.values(), forces, strict=True):
            normal, tangent = float(wrench[2]), float(np.hypot(wrench[0], wrench[1]))
            if not least <= normal <= cap:
                message = (
                    f"foot {frame} carries {normal:.0f} N, outside [{least:.2g}, {cap:.0f}] N (f_min, f_max)"
                )
                found.append(Finding("error", f"{name}: {what}, {message}"))
            elif tangent > mu * normal:
                message = f"foot {frame} needs friction {tangent / normal:.2f}, above mu {mu:g}"
                found.append(Finding("error", f"{name}: {what}, {message}"))
        normals = forces[:, 2]
        carried = f"{normals.min():.0f} to {normals.max():.0f} N of {cap:.0f} N (f_max)"
        summary = f" with its feet carrying {carried},"
    else:
        return []
    limits = robot.effort_limit()
    if spec.sole is None and "tau_max" in spec.quadruped:
        limits = np.full(robot.na, float(spec.quadruped["tau_max"]))  # type: ignore[arg-type]
    joints = robot.actuated_joint_names()
    ratio = np.abs(tau) / np.where(limits > 0, limits, np.inf)
    for k in np.flatnonzero(ratio > 1.0):
        message = f"joint {joints[k]} needs {abs(tau[k]):.1f} N m, above its limit {limits[k]:.1f} N m"
        found.append(Finding("error", f"{name}: {what}, {message}"))
    if not found and robot.na:
        worst = int(np.argmax(ratio))
        found.append(
            Finding(
                "note",
                f"{name}: {'stands still' if summary else 'holds its posture'}{summary} its joints at "
                f"{ratio[worst]:.0%} of their torque limits at most ({joints[worst]})",
            )
        )
    return found


def posture_findings(robot: SpecRobot) -> list[Finding]:
    """An error for each joint of the spec's starting posture outside its limits, named with its
    value and limits, and a hint where the value looks like degrees (above pi, outside the limits
    in radians, and its conversion from degrees is within) or where whole turns bring it within."""
    model, q = robot.model, robot.default_configuration()
    found = []
    for index in range(1, model.njoints):
        joint = model.joints[index]
        if joint.nq != 1:
            continue
        k = joint.idx_q
        value, low, high = float(q[k]), float(model.lowerPositionLimit[k]), float(model.upperPositionLimit[k])
        if low >= high or low - POSTURE_TOLERANCE <= value <= high + POSTURE_TOLERANCE:
            continue  # (a URDF joint without lower and upper reads as [0, 0]: no limits)
        hint = ""
        turned = turned_up_to(value, low)
        if (
            abs(value) > math.pi
            and low <= math.radians(value) <= high
            and joint.shortname().startswith("JointModelR")
        ):
            hint = (
                f"; as degrees it would be {math.radians(value):.4f} rad, within them: the spec's "
                "posture is in radians"
            )
        elif turned <= high and joint.shortname().startswith("JointModelR"):
            hint = f"; whole turns away, {turned:.4f} rad is the same angle within them"
        found.append(
            Finding(
                "error",
                f"{robot.name}: the posture puts joint {model.names[index]} at {value:g}, outside its limits "
                f"[{low:.4f}, {high:.4f}]{hint}",
            )
        )
    return found


def check_stance(robot: SpecRobot, q: np.ndarray | None = None) -> None:
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


def stance_findings(robot: SpecRobot, q: np.ndarray | None = None) -> list[Finding]:
    """The findings on how the robot's feet stand (none for a fixed base or a robot without feet)."""
    if robot.is_fixed_base or not robot.spec.feet:
        return []
    q = robot.standing_configuration() if q is None else np.asarray(q, dtype=float)
    return list(_stance(robot, _signature(robot, q), q))


def _signature(robot: SpecRobot, q: np.ndarray) -> tuple:
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


def _stance(robot: SpecRobot, key: tuple, q: np.ndarray) -> tuple[Finding, ...]:
    if key not in _FOUND:
        _FOUND[key] = tuple(_stance_checks(robot, q))
    return _FOUND[key]


def _stance_checks(robot: SpecRobot, q: np.ndarray):
    spec, model = robot.spec, robot.model
    if spec.sole is None and len(spec.feet) < 3:
        yield Finding(
            "error",
            f"{spec.name}: {'one point foot' if len(spec.feet) == 1 else 'two point feet'} "
            f"({', '.join(spec.feet.values())}) give no area to stand on: the robot cannot stand still (a "
            "biped stands on soles: [sole]; point feet need 3 or more)",
        )
    for frame in spec.feet.values():
        parent = model.frames[robot.frame_id(frame)].parentJoint
        if foot_name_rank(frame) == NOT_A_FOOT or parent == 0:
            named = sorted(
                (foot_name_rank(f.name), FRAME_TYPE_ORDER.get(f.type, 9), f.name)
                for f in model.frames
                if f.parentJoint == parent and parent > 0 and foot_name_rank(f.name) < NOT_A_FOOT
            )
            instead = f": give the foot's own frame, e.g. {named[0][2]}" if named else ""
            yield Finding(
                "error",
                f"{spec.name}: foot frame {frame} is a world frame, not a foot's{instead}",
            )
        joint = model.joints[parent]
        if joint.nq == 2 and joint.nv == 1:
            yield Finding(
                "error",
                f"{spec.name}: foot {frame} is on a wheel (joint {model.names[joint.id]} turns without "
                "limit): the legged controllers stand on feet that hold still, not on wheels",
            )
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
        tilt = sole_tilt(model, data, robot.frame_id(frame))
        if spec.sole is not None and tilt > SOLE_TILT:
            yield Finding(
                "error",
                f"{spec.name}: the sole of {frame} is tilted {math.degrees(tilt):.1f} deg from the ground "
                f"(more than {math.degrees(SOLE_TILT):g} deg): {_levelling(robot, q, frame)}",
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


def _levelling(robot: SpecRobot, q: np.ndarray, frame: str) -> str:
    """What levels a tilted sole: its ankle's angles (:func:`~tsid_py.sole_leveling.level_soles`),
    or why none do."""
    try:
        angles = level_soles(robot.model, q, [robot.frame_id(frame)])
    except RobotSpecError as error:
        return f"its frame's z axis must be the sole's normal ({error})"
    values = ", ".join(f"{name} = {value:.4f}" for name, value in angles.items())
    return f"the ankle at {values} rad levels it ([initial_configuration]; new-spec --flatten writes them)"


def _foot_findings(robot: SpecRobot, shapes: CollisionPoints, frame: str, joint: int, placement: pin.SE3):
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


def joint_findings(robot: SpecRobot) -> list[Finding]:
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
    robot = SpecRobot(replace(spec, package_dirs=spec.package_dirs + extra))  # unknown keys, frames refused
    findings = check_robot(robot)
    for finding in findings:
        print(f"{finding.severity}: {finding.message}")
    errors = sum(f.severity == "error" for f in findings)
    warnings = sum(f.severity == "warning" for f in findings)
    print(f"{robot.name}: {errors} error(s), {warnings} warning(s)", file=sys.stderr)
    return EXIT_BAD_INPUT if errors else EXIT_OK
