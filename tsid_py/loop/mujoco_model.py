"""The MuJoCo model of a robot, built from the Pinocchio model and the URDF's collision geometry.

One source for the dynamics: the bodies are made from the Pinocchio model the controller uses
(itself read from the spec's URDF), body by body, so masses, centres of mass, inertias, joint axes
and placements are the same numbers. The root is a free joint. Each actuated joint has a motor
whose force range is the spec's effort limit (none where the URDF gives 0); joint damping and
armature come from the Pinocchio model (``model.damping``, ``model.armature``).

What touches the ground is the robot's own geometry, not the spec's (``collision="urdf"``, the
default): every collision geometry of the URDF (meshes as their convex hulls, boxes, spheres,
cylinders, capsules) collides with the ground plane at z = 0, and none with another, so that a
spec whose sole or foot frame is wrong shows up as a wrong outcome, and a knee or a hand on the
floor is seen; a foot that stands on an area gets a flat plate fitted to its lowest points
(:func:`_add_sole_plates`). ``collision="spec"`` builds the feet from the spec instead (a 1 cm box under each
sole rectangle, a 1 cm sphere at each point foot), for a URDF without collision geometry.
"""

from __future__ import annotations

from xml.etree import ElementTree

import numpy as np
import pinocchio as pin

from tsid_py.collision_points import CollisionPoints
from tsid_py.errors import InvalidParameterError, RobotSpecError, UnsupportedProblemError
from tsid_py.loop.inertia import simulable
from tsid_py.planning.terrain import Terrain
from tsid_py.robot_specs import SpecRobot, files_root
from tsid_py.validation import as_scalar

SOLE_THICKNESS = 0.01  # [m] of the box under each sole (collision="spec")
POINT_FOOT_RADIUS = (
    0.01  # [m] of the sphere under a point foot without a point_foot_radius (collision="spec")
)
PLATE_THICKNESS = 5e-3  # [m] of the plate under a sole (collision="urdf")
PLATE_MIN_WIDTH = 0.03  # [m] a foot whose lowest points span less than this either way is a point foot
COLLISIONS = ("urdf", "spec")
IMU_SITE = "imu"  # the site of the base's IMU, and the prefix of its sensors' names
_ROBOT, _GROUND = 1, 2  # collision bits: the robot's geoms touch the ground, not each other


def mujoco_module():
    """The ``mujoco`` package, or a clear error naming the extra that installs it."""
    try:
        import mujoco
    except ImportError:
        raise UnsupportedProblemError(
            "the mujoco plant needs MuJoCo: pip install 'tsid_py[sim]' (or pip install mujoco)"
        ) from None
    return mujoco


def build_mujoco_model(
    robot: SpecRobot,
    timestep: float = 1e-3,
    mu: float = 1.0,
    collision: str = "urdf",
    terrain: Terrain | None = None,
):
    """The MuJoCo model (``mujoco.MjModel``) of ``robot``.

    Args:
        robot: A robot loaded from a spec.
        timestep: MuJoCo's step [s].
        mu: Friction coefficient of the robot on the ground.
        collision: "urdf" (the URDF's collision geometry, the default) or "spec" (feet from the
            spec's sole or point feet).
        terrain: Blocks on the floor (:class:`~tsid_py.planning.terrain.Terrain`), each a box geom
            of the world body named ``terrain-K``, as the floor is for the robot's geometry.

    Bodies are named after the Pinocchio joints that move them; each foot frame of the spec has a
    site of its name at its origin; a floating base has an IMU (:data:`IMU_SITE`: MuJoCo's
    gyroscope and accelerometer at its frame's origin).
    """
    if collision not in COLLISIONS:
        raise InvalidParameterError(f"collision must be one of {COLLISIONS}, got {collision!r}")
    mujoco = mujoco_module()
    model = robot.model
    spec = mujoco.MjSpec()
    spec.modelname = robot.name
    spec.compiler.degree = False  # joint ranges in radians, as Pinocchio's
    spec.option.timestep = timestep
    spec.option.gravity = np.array(model.gravity.linear)
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    floor = spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05])
    floor.pos = [0.0, 0.0, floor_height(robot)]
    floor.contype, floor.conaffinity, floor.friction = _GROUND, _ROBOT, [mu, 0.005, 0.0001]
    for k, block in enumerate(terrain.blocks if terrain is not None else ()):
        box = spec.worldbody.add_geom(
            name=f"terrain-{k}",
            type=mujoco.mjtGeom.mjGEOM_BOX,
            size=np.array(block.size) / 2,
            pos=block.center,
        )
        box.quat = pin.Quaternion(block.rotation).coeffs()[[3, 0, 1, 2]]  # MuJoCo's w, x, y, z
        box.contype, box.conaffinity, box.friction = _GROUND, _ROBOT, [mu, 0.005, 0.0001]
        box.rgba = [0.6, 0.6, 0.55, 1.0]
    bodies = {0: spec.worldbody}
    for j in range(1, model.njoints):
        bodies[j] = _add_body(mujoco, model, j, bodies[model.parents[j]])
    if collision == "urdf":
        _add_urdf_geometry(mujoco, spec, robot, bodies)
    else:
        for frame_name in robot.spec.feet.values():
            _add_spec_foot(mujoco, robot, bodies, frame_name)
    for geom in spec.geoms:
        if geom.name != "floor" and not geom.name.startswith("terrain-"):
            geom.contype, geom.conaffinity, geom.friction = _ROBOT, _GROUND, [mu, 0.005, 0.0001]
            geom.condim = 3
    for frame_name in robot.spec.feet.values():  # the foot frame's origin, to measure at
        frame = model.frames[robot.frame_id(frame_name)]
        bodies[frame.parentJoint].add_site(name=frame_name, pos=frame.placement.translation)
    if not robot.is_fixed_base:
        _add_imu(mujoco, spec, bodies[1])
    _add_motors(mujoco, spec, robot)
    return spec.compile()


FLOOR_CLEARANCE = 0.05  # [m] below a hanging arm's lowest point, where its floor is


def floor_height(robot: SpecRobot) -> float:
    """Where the floor is [m]: at z = 0 under a floating base; under a fixed base too, unless its
    moving links reach below z = 0 in the starting posture (an arm hung from a ceiling or a drone,
    or lying along the floor): then FLOOR_CLEARANCE below the lowest of them."""
    if not robot.is_fixed_base:
        return 0.0
    try:
        shapes = CollisionPoints(robot)
    except (RuntimeError, ValueError):  # no geometry to collide: the floor does not matter
        return 0.0
    shapes.place(robot.default_configuration())
    lowest, _ = shapes.lowest(set(range(1, robot.model.njoints)))
    return min(0.0, lowest - FLOOR_CLEARANCE) if np.isfinite(lowest) else 0.0


def build_mujoco_model_from_urdf(
    robot: SpecRobot, timestep: float = 1e-3, mu: float = 1.0, sole_box: float = 0.01, compiled: bool = True
):
    """The robot's MuJoCo model built another way, as a user converts a URDF (``mujoco.MjModel``).

    MuJoCo's own URDF importer reads the masses, inertias, joint axes and limits (not the
    controller's Pinocchio model); MuJoCo's defaults stand for the contact softness, the solver and
    the integrator; the joints have no damping, friction or armature (the URDF's ``dynamics`` are
    zeroed: the controller's model has none). The URDF's geometry is dropped: each
    sole is a box of the spec's sole rectangle, ``sole_box`` thick [m], hanging under the sole (so
    the robot stands ``sole_box`` higher than the spec says), and a point foot a sphere of its
    ``point_foot_radius`` (1 cm by default) under its frame. Named as :func:`build_mujoco_model`
    names its model (bodies after the joints that move them, a site per foot frame, a motor per
    actuated joint with the spec's effort limit), so that ``MujocoPlant(robot, model=...)`` runs
    it: a check that what the controller does holds in a model it was not built from. With
    ``compiled=False``, the ``mujoco.MjSpec``, to change before ``spec.compile()``.
    """
    mujoco = mujoco_module()
    if robot.spec.feet is None or not robot.spec.feet:
        raise UnsupportedProblemError(f"{robot.name}: a model from the URDF needs the spec's feet")
    urdf = ElementTree.parse(files_root(robot.spec) / robot.spec.urdf).getroot()
    for link in urdf.iter("link"):  # MuJoCo reads the URDF's dynamics only: no meshes to find
        for shape in link.findall("visual") + link.findall("collision"):
            link.remove(shape)
    spec = mujoco.MjSpec.from_string(ElementTree.tostring(urdf, encoding="unicode"))
    spec.option.timestep = as_scalar("timestep", timestep, minimum=0.0, strict=True)
    model = robot.model
    for joint in spec.joints:  # the controller's model has no joint damping or friction
        joint.damping = np.zeros_like(np.asarray(joint.damping))
        joint.frictionloss = 0.0
        joint.parent.name = joint.name
    if not robot.is_fixed_base:
        root = spec.worldbody.first_body()
        root.add_freejoint(name=model.names[1])
        root.name = model.names[1]
        _add_imu(mujoco, spec, root)
    floor = spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05])
    floor.pos = [0.0, 0.0, floor_height(robot)]
    mu = as_scalar("mu", mu, minimum=0.0)
    floor.friction = [mu, 0.005, 0.0001]
    sole = robot.spec.sole
    depth = as_scalar("sole_box", sole_box, minimum=0.0, strict=True)
    for frame_name in robot.spec.feet.values():
        frame = model.frames[robot.frame_id(frame_name)]
        body, placement = spec.body(model.names[frame.parentJoint]), frame.placement
        body.add_site(name=frame_name, pos=placement.translation, quat=wxyz(placement.rotation))
        if sole is not None:
            center = [(sole.lxp - sole.lxn) / 2, (sole.lyp - sole.lyn) / 2, -sole.lz - depth / 2]
            size = [(sole.lxp + sole.lxn) / 2, (sole.lyp + sole.lyn) / 2, depth / 2]
            kind = mujoco.mjtGeom.mjGEOM_BOX
        else:
            radius = robot.spec.point_foot_radius or POINT_FOOT_RADIUS
            center, size, kind = [0.0, 0.0, -radius], [radius, 0.0, 0.0], mujoco.mjtGeom.mjGEOM_SPHERE
        foot = body.add_geom(
            name=frame_name,
            type=kind,
            size=size,
            pos=placement.act(np.array(center)),
            quat=wxyz(placement.rotation),
        )
        foot.friction = [mu, 0.005, 0.0001]
    _add_motors(mujoco, spec, robot)
    return spec.compile() if compiled else spec


def imu_sensors(mujoco) -> tuple[tuple[str, int], tuple[str, int]]:
    """The base IMU's sensors, (name, MuJoCo sensor type): ``imu_gyro``, ``imu_accelerometer``."""
    return (
        (f"{IMU_SITE}_gyro", mujoco.mjtSensor.mjSENS_GYRO),
        (f"{IMU_SITE}_accelerometer", mujoco.mjtSensor.mjSENS_ACCELEROMETER),
    )


def _add_imu(mujoco, spec, base) -> None:
    """An IMU on the floating base: a site ``imu`` at its frame's origin, in its axes, with MuJoCo's
    gyroscope and accelerometer sensors (:func:`imu_sensors`)."""
    base.add_site(name=IMU_SITE)
    for name, kind in imu_sensors(mujoco):
        spec.add_sensor(name=name, type=kind, objtype=mujoco.mjtObj.mjOBJ_SITE, objname=IMU_SITE)


def _add_motors(mujoco, spec, robot: SpecRobot) -> None:
    """A motor per actuated joint, named as the joint, its force range the spec's effort limit."""
    model, effort = robot.model, robot.effort_limit()
    for k, j in enumerate(actuated_joints(robot)):
        motor = spec.add_actuator(name=model.names[j], target=model.names[j])
        motor.trntype = mujoco.mjtTrn.mjTRN_JOINT
        if np.isfinite(effort[k]):
            motor.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
            motor.forcerange = [-effort[k], effort[k]]


def _add_body(mujoco, model: pin.Model, j: int, parent):
    """The body moved by Pinocchio joint j, with its inertia and its joint."""
    joint, placement, inertia = model.joints[j], model.jointPlacements[j], model.inertias[j]
    name = model.names[j]
    body = parent.add_body(name=name, pos=placement.translation, quat=wxyz(placement.rotation))
    inertia = simulable(inertia)  # MuJoCo needs mass, and a physical inertia, on a moving body
    body.mass = inertia.mass
    body.ipos = inertia.lever
    I = inertia.inertia  # noqa: E741 (about the CoM, joint axes)
    body.fullinertia = [I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]]
    body.explicitinertial = True
    if joint.shortname() == "JointModelFreeFlyer":
        body.add_freejoint(name=name)
        return body
    axis, hinge = joint_axis(joint)
    dof = joint.idx_v
    added = body.add_joint(
        name=name,
        type=mujoco.mjtJoint.mjJNT_HINGE if hinge else mujoco.mjtJoint.mjJNT_SLIDE,
        axis=axis,
        damping=float(model.damping[dof]),
        armature=float(model.armature[dof]),
    )
    low, high = model.lowerPositionLimit[joint.idx_q], model.upperPositionLimit[joint.idx_q]
    # a URDF joint without lower and upper reads as [0, 0] in Pinocchio, a continuous one has none
    bounded = joint.nq == 1 and np.isfinite(low) and np.isfinite(high) and low < high
    if bounded:
        added.range = [low, high]
    added.limited = mujoco.mjtLimited.mjLIMITED_TRUE if bounded else 0
    return body


def _add_urdf_geometry(mujoco, spec, robot: SpecRobot, bodies: dict) -> None:
    """Every collision geometry of the URDF, as a geom of the body of its parent joint, and a
    plate under each sole (:func:`_add_sole_plates`)."""
    collision_model = robot.load_collision_model()
    for index, item in enumerate(collision_model.geometryObjects):
        shape = item.geometry
        kind = type(shape).__name__
        name, pos, quat = f"{item.name}#{index}", item.placement.translation, wxyz(item.placement.rotation)
        body = bodies[item.parentJoint]
        if kind == "Box":
            body.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_BOX, size=shape.halfSide, pos=pos, quat=quat)
        elif kind == "Sphere":
            body.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[shape.radius, 0, 0], pos=pos)
        elif kind in ("Cylinder", "Capsule"):
            geom_type = (
                mujoco.mjtGeom.mjGEOM_CYLINDER if kind == "Cylinder" else mujoco.mjtGeom.mjGEOM_CAPSULE
            )
            body.add_geom(
                name=name, type=geom_type, size=[shape.radius, shape.halfLength, 0], pos=pos, quat=quat
            )
        elif hasattr(shape, "vertices"):  # a mesh (BVH) or a convex: MuJoCo collides its convex hull
            vertices = np.asarray(shape.vertices(), dtype=float).reshape(-1, 3)
            if vertices.shape[0] < 4:
                continue
            spec.add_mesh(name=name, uservert=vertices.ravel())
            body.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_MESH, meshname=name, pos=pos, quat=quat)
        else:
            raise UnsupportedProblemError(
                f"{robot.name}: the collision geometry {item.name} is a {kind}, which the mujoco plant "
                "does not convert (use collision='spec')"
            )
    spec.compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
    _add_sole_plates(mujoco, robot, bodies, CollisionPoints(robot, collision_model))


def _add_sole_plates(mujoco, robot: SpecRobot, bodies: dict, shapes: CollisionPoints) -> None:
    """A 5 mm box under each foot whose collision geometry stands on an area: its bottom face is the
    rectangle around the geometry's lowest points (within SOLE_BAND, in the spec's reference
    posture), aligned with the foot body's x axis, flush with the lowest point.

    MuJoCo collides a mesh with a plane at three points at most, chosen among its vertices: a sole
    whose vertices spread over a couple of millimetres (Talos's) rocks between vertex triples
    (1.9 mm of CoM drift in 10 s of standing, 3 mm oscillations in position mode). A box meets the
    plane at its four corners, as a rigid flat sole does. Point feet (a footprint under
    PLATE_MIN_WIDTH) keep their own geometry.
    """
    shapes.place(robot.default_configuration())
    for frame_name in robot.spec.feet.values():
        joint = robot.model.frames[robot.frame_id(frame_name)].parentJoint
        sole = shapes.sole(joint)
        if not sole.size:  # MuJoCo would let it through the ground: no witness of where it stands
            raise RobotSpecError(
                f"{robot.name}: the body of foot {frame_name!r} has no collision geometry in the URDF, "
                "so it cannot stand on the ground in MuJoCo; give it collision shapes, or build the "
                "plant's feet from the spec (collision='spec')"
            )
        placement = shapes.joint_placement(joint)
        local = (sole - placement.translation) @ placement.rotation  # in the foot body's frame
        up = placement.rotation.T[:, 2]  # the world's z, in the body's frame
        forward = np.eye(3)[0] - up[0] * up  # the body's x axis, on the ground
        if np.linalg.norm(forward) < 0.5:  # nearly vertical: its y axis instead
            forward = np.eye(3)[1] - up[1] * up
        forward /= np.linalg.norm(forward)
        axes = np.column_stack([forward, np.cross(up, forward), up])
        plate = local @ axes
        low, high = plate.min(axis=0), plate.max(axis=0)
        if np.any(high[:2] - low[:2] < PLATE_MIN_WIDTH):
            continue
        center = axes @ np.array(
            [(low[0] + high[0]) / 2, (low[1] + high[1]) / 2, low[2] + PLATE_THICKNESS / 2]
        )
        bodies[joint].add_geom(
            name=f"{frame_name}#sole",
            type=mujoco.mjtGeom.mjGEOM_BOX,
            size=[(high[0] - low[0]) / 2, (high[1] - low[1]) / 2, PLATE_THICKNESS / 2],
            pos=center,
            quat=wxyz(axes),
        )


def _add_spec_foot(mujoco, robot: SpecRobot, bodies: dict, frame_name: str) -> None:
    """A box whose bottom face is the spec's sole (its rectangle, at its depth lz), or a sphere
    at a point foot."""
    frame = robot.model.frames[robot.frame_id(frame_name)]
    body, placement = bodies[frame.parentJoint], frame.placement
    sole = robot.spec.sole
    if sole is not None:
        center = np.array(
            [(sole.lxp - sole.lxn) / 2, (sole.lyp - sole.lyn) / 2, -sole.lz + SOLE_THICKNESS / 2]
        )
        body.add_geom(
            name=frame_name,
            type=mujoco.mjtGeom.mjGEOM_BOX,
            size=[(sole.lxp + sole.lxn) / 2, (sole.lyp + sole.lyn) / 2, SOLE_THICKNESS / 2],
            pos=placement.act(center),
            quat=wxyz(placement.rotation),
        )
    else:  # a sphere of the spec's radius centred on the frame, or a small one touching below it
        radius = robot.spec.point_foot_radius or POINT_FOOT_RADIUS
        below = 0.0 if robot.spec.point_foot_radius else POINT_FOOT_RADIUS
        body.add_geom(
            name=frame_name,
            type=mujoco.mjtGeom.mjGEOM_SPHERE,
            size=[radius, 0, 0],
            pos=placement.act(np.array([0.0, 0.0, -below])),
        )


def wxyz(rotation: np.ndarray) -> np.ndarray:
    """A rotation matrix as MuJoCo's quaternion (w, x, y, z)."""
    x, y, z, w = pin.Quaternion(rotation).coeffs()
    return np.array([w, x, y, z])


def joint_axis(joint) -> tuple[np.ndarray, bool]:
    """A one-dof joint's axis in its frame and whether it is a hinge (revolute) or a slide: the
    axis-aligned joints (``JointModelRX``, ``JointModelPY``, ...), the unaligned ones (any axis,
    e.g. the Panda finger's ``0 -1 0``) and the revolute ones that turn without limit (a URDF's
    continuous joint: ``JointModelRUBZ``, ``JointModelRevoluteUnboundedUnaligned``, whose
    configuration is Pinocchio's (cos, sin) and MuJoCo's angle)."""
    kind = joint.shortname().removeprefix("JointModel")
    for family, hinge in (("Revolute", True), ("RevoluteUnbounded", True), ("Prismatic", False)):
        if kind == f"{family}Unaligned":
            return np.array(joint.extract().axis, dtype=float), hinge
    if len(kind) == 2 and kind[0] in "RP" and kind[1] in "XYZ":
        return np.eye(3)["XYZ".index(kind[1])], kind[0] == "R"
    if len(kind) == 4 and kind[:3] == "RUB" and kind[3] in "XYZ":
        return np.eye(3)["XYZ".index(kind[3])], True
    raise UnsupportedProblemError(
        f"the mujoco plant does not convert joints of type {joint.shortname()} (one-dof revolute or "
        "prismatic joints only)"
    )


def actuated_joints(robot: SpecRobot) -> list[int]:
    """The Pinocchio joint indices of the actuated joints (all but the universe and a free flyer)."""
    start = 1 if robot.is_fixed_base else 2
    return list(range(start, robot.model.njoints))
