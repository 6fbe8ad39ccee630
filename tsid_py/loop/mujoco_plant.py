"""A MuJoCo plant: the robot of a spec simulated by MuJoCo (``pip install tsid_py[sim]``).

The model (:func:`~tsid_py.loop.mujoco_model.build_mujoco_model`) has the dynamics of the
controller's Pinocchio model and, by default, the URDF's own collision geometry against a ground
plane: the spec under test does not shape what touches the ground. The plant measures each foot's
ground wrench and contact points, every body that touches the ground, and, with MuJoCo's own
gyroscope and accelerometer on the base (the model's ``imu`` site), what an IMU there reads.

Conventions are converted here, once: MuJoCo's free joint has its quaternion first (w, x, y, z)
and its linear velocity in world axes; Pinocchio's has the quaternion last (x, y, z, w) and the
linear velocity in the base frame (LOCAL). Both take the angular velocity in the base frame.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.errors import InvalidParameterError, RobotSpecError, UnsupportedProblemError
from tsid_py.loop.mujoco_model import (
    IMU_SITE,
    actuated_joints,
    build_mujoco_model,
    imu_sensors,
    mujoco_module,
)
from tsid_py.loop.plant import (
    SIMULATOR_CHECK_EVERY,
    Command,
    ContactMeasurement,
    ImuMeasurement,
    Plant,
    PlantState,
    servo_gains,
)
from tsid_py.planning.terrain import Terrain
from tsid_py.robot_specs import SpecRobot
from tsid_py.validation import as_scalar, as_vector

SERVO_FREQUENCY = 5.0  # [Hz] of the default joint servos (position mode)
TOUCH_THRESHOLD = 1.0  # [N] of normal force: below it a foot is not touching
POINT_THRESHOLD = 0.1  # [N] of normal force: a contact carrying less does not touch
GROUND_BAND = 2e-3  # [m] a touching foot's geometry this close to the ground is what it stands on


_FOUR = np.arange(4)
_IDENTITY = np.eye(3).ravel()
_DECODE_NORMAL = np.ones(4)  # a pyramidal contact's normal force: the sum of its edge forces


class MujocoPlant(Plant):
    """The robot of a spec in MuJoCo, at ``timestep`` (1 kHz by default).

    Args:
        robot: A robot loaded from a spec (its feet get collision geometry).
        timestep: MuJoCo's step [s] (1 ms when None); :meth:`advance` takes a multiple of it.
        mu: Friction coefficient of the feet on the ground (1 when None).
        servo: (kp, kd) per actuated joint for position commands [N m/rad, N m s/rad]; by default
            the spec's ``[servo]``, else :func:`~tsid_py.loop.plant.servo_gains` at SERVO_FREQUENCY
            (critically damped; the servo runs explicitly at the physics rate, so it stays soft).
        collision: What touches the ground: "urdf", the URDF's collision geometry (the default),
            or "spec", feet made from the spec (see :mod:`~tsid_py.loop.mujoco_model`).
        model: A MuJoCo model of the robot built another way (``mujoco.MjModel``, e.g.
            :func:`~tsid_py.loop.mujoco_model.build_mujoco_model_from_urdf`), instead of building
            one: named as :func:`~tsid_py.loop.mujoco_model.build_mujoco_model` names its own
            (each actuated joint and its body after the Pinocchio joint, the base's too, a site
            per foot frame, a motor per actuated joint in the robot's order, a geom "floor"). Its
            timestep, friction and geometry are its own: ``timestep``, ``mu`` and ``collision``
            are then not given.
        terrain: Blocks on the floor (:class:`~tsid_py.planning.terrain.Terrain`): built into the
            model, or, with ``model``, the ground that model's own blocks make (the feet's contact
            points are measured on it).

    Raises:
        RobotSpecError: A model given that is not named so (the first missing name, in one line).
    """

    name = "mujoco"
    check_every = SIMULATOR_CHECK_EVERY  # MuJoCo measures the physics: the checks sample it

    def __init__(
        self,
        robot: SpecRobot,
        timestep: float | None = None,
        mu: float | None = None,
        servo: tuple[np.ndarray, np.ndarray] | None = None,
        collision: str | None = None,
        model=None,
        terrain: Terrain | None = None,
    ) -> None:
        mujoco = mujoco_module()
        self.robot = robot
        if model is None:
            self.timestep = as_scalar(
                "timestep", 1e-3 if timestep is None else timestep, minimum=0.0, strict=True
            )
            mu = as_scalar("mu", 1.0 if mu is None else mu, minimum=0.0)
            self.model = build_mujoco_model(
                robot, self.timestep, mu, "urdf" if collision is None else collision, terrain
            )
        else:
            given = [
                name
                for name, value in (("timestep", timestep), ("mu", mu), ("collision", collision))
                if value is not None
            ]
            if given:
                raise InvalidParameterError(f"{', '.join(given)}: set by the model given, not here")
            if not isinstance(model, mujoco.MjModel):
                raise InvalidParameterError(f"model must be a mujoco.MjModel, got {type(model).__name__}")
            self.model, self.timestep = model, float(model.opt.timestep)
        self.data = mujoco.MjData(self.model)
        self._mujoco = mujoco
        self._floating = not robot.is_fixed_base
        actuated = actuated_joints(robot)
        joints = [_named(self.model.joint, robot.model.names[j], "joint") for j in actuated]
        self._check_motors(joints)
        self._qadr = np.array([joint.qposadr[0] for joint in joints], dtype=int)
        self._angles = JointAngles(robot, actuated)
        self._vadr = np.array([joint.dofadr[0] for joint in joints], dtype=int)
        self._root_body = _named(self.model.body, robot.model.names[1], "body").id if self._floating else 0
        model = robot.model
        feet = list(robot.spec.feet.values())  # the foot frames, each with a site
        sites = np.array([_named(self.model.site, name, "site").id for name in feet], dtype=int)
        bodies = self.model.site_bodyid[sites]
        roots = self.model.body_rootid[bodies]  # where cfrc_ext is: their subtree_com
        if self._floating and self._root_body in bodies.tolist():  # pushes act there too
            raise RobotSpecError(
                f"{robot.spec.name}: a foot frame is on the floating base's body, where the MuJoCo plant "
                "pushes: it could not tell a foot's contact wrench from a push"
            )
        _named(self.model.geom, "floor", "geom")
        self._ground = self.model.geom_bodyid == 0  # the floor and the terrain's blocks, by geom
        self._imu = _imu_addresses(mujoco, self.model, self._root_body) if self._floating else None
        clouds = [
            _FootCloud(self.model, np.flatnonzero(self.model.geom_bodyid == body), terrain) for body in bodies
        ]
        self._foot_parts = list(zip(feet, bodies, roots, sites, clouds, strict=True))  # what _measure reads
        self._moved = np.zeros(6)  # a foot's wrench moved to its frame's origin (MuJoCo's order)
        self._geom_body_names = [self.model.body(b).name for b in self.model.geom_bodyid]
        self._contact_force = np.zeros(6)
        self._pyramids_of_three = (  # normal forces read at once (:meth:`_normal_forces`)
            self.model.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL
            and bool(np.all(self.model.geom_condim == 3))
        )
        self._base_rotation = np.zeros(9)
        self._effort = robot.effort_limit()
        self._least = -self._effort  # np.clip(tau, least, effort), as np.minimum(np.maximum(...)): faster
        self._command = Command(np.zeros(robot.na))
        self._push_steps = 0  # physics steps the push still lasts
        self.clipped_steps = 0  # physics steps where a command exceeded the effort limits
        if servo is None:
            data = robot.create_data()
            pin.crba(robot.model, data, robot.neutral_configuration())
            servo = servo_gains(robot, data, SERVO_FREQUENCY)
        self.kp, self.kd = (as_vector("servo gains", g, robot.na) for g in servo)

    def _check_motors(self, joints: list) -> None:
        """RobotSpecError unless the model's actuators are torque motors on the actuated joints,
        one each, in order (``data.ctrl`` is the torque vector: gain 1, no bias, gear 1), and a
        floating base's free joint comes first in ``qpos`` (:meth:`set_state` writes it there)."""
        mujoco, model = self._mujoco, self.model
        driven = [int(model.actuator_trnid[k, 0]) for k in range(model.nu)]
        wanted = [int(joint.id) for joint in joints]
        motors = (
            np.all(model.actuator_trntype == mujoco.mjtTrn.mjTRN_JOINT)
            and np.all(model.actuator_gaintype == mujoco.mjtGain.mjGAIN_FIXED)
            and np.all(model.actuator_gainprm[:, 0] == 1.0)
            and np.all(model.actuator_biastype == mujoco.mjtBias.mjBIAS_NONE)
            and np.all(model.actuator_gear[:, 0] == 1.0)
        )
        if driven != wanted or not motors:
            raise RobotSpecError(
                f"{self.robot.name}: the MuJoCo model's {model.nu} actuators are not one torque motor "
                f"(gain 1, no bias, gear 1) per actuated joint ({len(wanted)}) in the robot's order"
            )
        if self._floating and not (model.njnt and model.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE):
            raise RobotSpecError(
                f"{self.robot.name}: the MuJoCo model's first joint is not the base's free joint"
            )

    # ------------------------------------------------------------- conversions
    def set_state(self, q: np.ndarray, v: np.ndarray) -> None:
        """Write Pinocchio's (q, v) into MuJoCo's qpos, qvel."""
        data, nj = self.data, self.robot.na
        if self._floating:
            x, y, z, w = q[3:7]
            data.qpos[:7] = [*q[:3], w, x, y, z]
            data.qvel[:3] = pin.Quaternion(w, x, y, z).toRotationMatrix() @ v[:3]
            data.qvel[3:6] = v[3:6]
        data.qpos[self._qadr] = self._angles.angles(q[q.shape[0] - self.robot.nq_actuated :])
        data.qvel[self._vadr] = v[v.shape[0] - nj :]

    def get_state(self) -> tuple[np.ndarray, np.ndarray]:
        """MuJoCo's qpos, qvel as Pinocchio's (q, v) (new arrays)."""
        data, robot = self.data, self.robot
        q, v = np.empty(robot.nq), np.empty(robot.nv)
        if self._floating:
            wxyz = data.qpos[3:7]
            wxyz = wxyz / np.sqrt(wxyz.dot(wxyz))
            q[:3], q[3:6], q[6] = data.qpos[:3], wxyz[1:], wxyz[0]
            rotation = self._base_rotation  # of the base in the world, row-major
            self._mujoco.mju_quat2Mat(rotation, wxyz)
            v[:3] = data.qvel[:3].dot(rotation.reshape(3, 3))  # R^T v_world: base axes
            v[3:6] = data.qvel[3:6]
        q[robot.nq - robot.nq_actuated :] = self._angles.configuration(data.qpos[self._qadr])
        v[robot.nv - robot.na :] = data.qvel[self._vadr]
        return q, v

    # ------------------------------------------------------------- the plant
    def reset(self, q: np.ndarray, v: np.ndarray, t: float = 0.0) -> None:
        q, v = self.robot.check_state(q, v)
        self._mujoco.mj_resetData(self.model, self.data)
        self.set_state(q, v)
        self.data.time = as_scalar("t", t)
        self._command = Command(np.zeros(self.robot.na))
        self._push_steps = 0  # physics steps the push still lasts
        self.clipped_steps = 0
        self._mujoco.mj_forward(self.model, self.data)

    def apply(self, command: Command) -> None:
        na = self.robot.na
        tau = as_vector("tau", command.tau, na)
        if command.q_des is None:
            self._command = Command(tau)
            return
        q_des = as_vector("q_des", command.q_des, self.robot.nq_actuated)
        v_des = as_vector("v_des", command.v_des, na)
        self._command = Command(tau, q_des=self._angles.angles(q_des), v_des=v_des)

    def advance(self, dt: float) -> None:
        steps = as_scalar("dt", dt, minimum=0.0, strict=True) / self.timestep
        if abs(steps - round(steps)) > 1e-9 * max(1.0, steps):
            raise InvalidParameterError(
                f"dt = {dt} s is not a multiple of the mujoco plant's timestep {self.timestep} s"
            )
        mujoco, model, data, command = self._mujoco, self.model, self.data, self._command
        effort, servo = self._effort, command.q_des is not None
        unstable = data.warning[mujoco.mjtWarning.mjWARN_BADQACC]
        resets = unstable.number

        if not servo:  # a torque command: the same motor torques at every physics step
            data.ctrl[:] = np.minimum(np.maximum(command.tau, self._least), effort)
            clipped = bool((np.abs(command.tau) > effort).any())
        for _ in range(int(round(steps))):
            if servo:  # the joint servos, at the physics rate
                q, v = data.qpos[self._qadr], data.qvel[self._vadr]
                error = self._angles.difference(command.q_des, q)
                tau = command.tau + self.kp * error + self.kd * (command.v_des - v)
                data.ctrl[:] = np.minimum(np.maximum(tau, self._least), effort)
                clipped = bool((np.abs(tau) > effort).any())
            self.clipped_steps += clipped
            if self._push_steps == 0:
                data.xfrc_applied[self._root_body] = 0.0
            else:
                self._push_steps -= 1
            t = data.time
            mujoco.mj_step(model, data)
            if unstable.number != resets:  # MuJoCo found a non-finite acceleration and reset the data
                raise self.diverged(t, "MuJoCo reset it")
        self.check_velocity(data.time, data.qvel)

    def state(self) -> PlantState:
        q, v = self.get_state()
        contacts, ground_bodies = self._measure()
        imu = None
        if self._imu is not None:  # MuJoCo's own sensors, of the last physics step (as the contacts)
            gyro, accelerometer = self._imu
            imu = ImuMeasurement(
                self.data.sensordata[gyro].copy(), self.data.sensordata[accelerometer].copy()
            )
        return PlantState(float(self.data.time), q, v, contacts, ground_bodies, imu)

    def push(self, force: np.ndarray, duration: float) -> None:
        """A force [N] in world axes at the base's centre of mass, for ``duration`` [s]: that many
        physics steps (counted, as ``data.time`` adds up timesteps in floating point)."""
        if not self._floating:
            raise UnsupportedProblemError("a fixed-base robot has no base to push")
        self.data.xfrc_applied[self._root_body, :3] = as_vector("force", force, 3)
        self._push_steps = round(as_scalar("duration", duration, minimum=0.0) / self.timestep)

    # -------------------------------------------------------------- contacts
    def contacts(self) -> dict[str, ContactMeasurement]:
        """Each foot's ground wrench at its frame origin, world axes [N, N m], whether it touches
        and where (see :meth:`_measure`)."""
        return self._measure()[0]

    def _measure(self) -> tuple[dict[str, ContactMeasurement], frozenset[str]]:
        """The feet's contact measurements, and the bodies touching the ground.

        Read from the last physics step: MuJoCo's contacts, constraint forces and body positions
        are all of the state that step started from. A foot's wrench is the external wrench MuJoCo
        sums on its body (``mj_rnePostConstraint``: the forces of the body's contacts, at the
        robot's CoM in world axes, moment first; nothing else acts on a foot, as the robot's
        geometry collides with the ground only and :meth:`push` pushes the base), moved to the
        foot frame's origin p (``mju_transformSpatial``: moment + (c - p) x force). A body touches
        the ground when one of its contacts with the ground (the floor, a terrain's block: the
        world body's geoms) carries a normal force above POINT_THRESHOLD.
        """
        mujoco, data, moved = self._mujoco, self.data, self._moved
        count = data.ncon
        bodies: frozenset[str] = frozenset()
        if count:
            geoms = data.contact.geom[:count]
            first_ground = self._ground[geoms[:, 0]]
            robot_geoms = np.where(first_ground, geoms[:, 1], geoms[:, 0])
            on_floor = (self._normal_forces(count) > POINT_THRESHOLD) & (
                first_ground | self._ground[geoms[:, 1]]
            )
            bodies = frozenset([self._geom_body_names[g] for g in robot_geoms[on_floor].tolist()])
        mujoco.mj_rnePostConstraint(self.model, data)
        external, com, origins = data.cfrc_ext, data.subtree_com, data.site_xpos
        measured = {}
        for name, body, root, site, cloud in self._foot_parts:
            mujoco.mju_transformSpatial(moved, external[body], 1, origins[site], com[root], _IDENTITY)
            wrench = np.concatenate((moved[3:], moved[:3]))  # (moment, force) -> (force, moment)
            touching = bool(wrench[2] > TOUCH_THRESHOLD)
            measured[name] = ContactMeasurement(
                wrench, touching, points=cloud.on_ground(data) if touching else None
            )
        return measured, bodies

    def _normal_forces(self, count: int) -> np.ndarray:
        """The first ``count`` contacts' normal forces [N]: for a pyramidal cone with three
        dimensions, the sum of its four edge forces (MuJoCo's ``mju_decodePyramid``), read at once
        from the constraint forces; else by ``mj_contactForce`` one by one."""
        model, data, contact = self.model, self.data, self.data.contact
        address = contact.efc_address[:count]
        if self._pyramids_of_three and address.min() >= 0:
            return data.efc_force[address[:, None] + _FOUR] @ _DECODE_NORMAL
        forces, local = np.empty(count), self._contact_force
        for i in range(count):
            self._mujoco.mj_contactForce(model, data, i, local)
            forces[i] = local[0]
        return forces


class JointAngles:
    """The actuated joints' configuration as Pinocchio writes it and as MuJoCo does: the same
    numbers, except for a joint that turns without limit (a URDF's continuous joint), whose
    Pinocchio configuration is (cos, sin) and MuJoCo's the angle (an ``atan2``)."""

    def __init__(self, robot: SpecRobot, actuated: list[int]) -> None:
        model, first = robot.model, robot.nq - robot.nq_actuated
        starts = [model.joints[j].idx_q - first for j in actuated]
        turns = [k for k, j in enumerate(actuated) if model.joints[j].nq == 2]
        self._single = np.array([s for k, s in enumerate(starts) if k not in turns], dtype=int)
        self._single_motor = np.array([k for k in range(len(actuated)) if k not in turns], dtype=int)
        self._cos = np.array([starts[k] for k in turns], dtype=int)
        self._turns = np.array(turns, dtype=int)
        self._size = robot.nq_actuated
        self._same = not turns  # then both are the same vector

    def angles(self, q: np.ndarray) -> np.ndarray:
        """MuJoCo's ``qpos`` of the motors' joints from Pinocchio's actuated configuration ``q``."""
        if self._same:
            return q
        out = np.empty(self._single_motor.size + self._turns.size)
        out[self._single_motor] = q[self._single]
        out[self._turns] = np.arctan2(q[self._cos + 1], q[self._cos])
        return out

    def configuration(self, angles: np.ndarray) -> np.ndarray:
        """Pinocchio's actuated configuration from MuJoCo's angles (``angles`` itself when no
        joint turns without limit: the plant passes a fresh ``qpos[...]`` and copies the result)."""
        if self._same:
            return angles
        q = np.empty(self._size)
        q[self._single] = angles[self._single_motor]
        q[self._cos], q[self._cos + 1] = np.cos(angles[self._turns]), np.sin(angles[self._turns])
        return q

    def difference(self, target: np.ndarray, angles: np.ndarray) -> np.ndarray:
        """target - angles, the turning joints' wrapped to [-pi, pi) (the short way round)."""
        error = target - angles
        if not self._same:
            error[self._turns] = (error[self._turns] + np.pi) % (2.0 * np.pi) - np.pi
        return error


class _FootCloud:
    """A foot's collision geometry as points in its body's frame, each with a radius below it
    (mesh and box vertices: 0; sphere and capsule centres: their radius); :meth:`on_ground` gives
    those within GROUND_BAND of the ground (the floor, or a terrain's surface under them)."""

    def __init__(self, model, geoms: np.ndarray, terrain: Terrain | None = None) -> None:
        self._terrain = None if terrain is None or terrain.flat else terrain
        import mujoco

        points, radii = [], []
        for geom in geoms:
            kind, size = model.geom_type[geom], model.geom_size[geom]
            radius = 0.0
            if kind == mujoco.mjtGeom.mjGEOM_MESH:
                mesh = model.geom_dataid[geom]
                start, count = model.mesh_vertadr[mesh], model.mesh_vertnum[mesh]
                local = np.array(model.mesh_vert[start : start + count], dtype=float)
            elif kind == mujoco.mjtGeom.mjGEOM_BOX:
                local = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * size
            elif kind == mujoco.mjtGeom.mjGEOM_SPHERE:
                local, radius = np.zeros((1, 3)), float(size[0])
            elif kind in (mujoco.mjtGeom.mjGEOM_CAPSULE, mujoco.mjtGeom.mjGEOM_CYLINDER):
                local, radius = np.array([[0.0, 0.0, -size[1]], [0.0, 0.0, size[1]]]), float(size[0])
            else:
                continue
            rotation = np.empty(9)
            mujoco.mju_quat2Mat(rotation, model.geom_quat[geom])
            points.append(local @ rotation.reshape(3, 3).T + model.geom_pos[geom])
            radii.append(np.full(local.shape[0], radius))
        self.body = int(model.geom_bodyid[geoms[0]]) if len(geoms) else 0
        self.points = np.vstack(points) if points else np.zeros((0, 3))
        self.radii = np.concatenate(radii) if radii else np.zeros(0)

    def on_ground(self, data) -> np.ndarray:
        """The points within GROUND_BAND of the ground, dropped by their radius (k x 3, world) [m]."""
        rotation, origin = data.xmat[self.body].reshape(3, 3), data.xpos[self.body]
        heights = self.points @ rotation[2] + (origin[2] - self.radii)
        if self._terrain is None:
            low = heights <= GROUND_BAND
            found = self.points[low] @ rotation.T + origin
            found[:, 2] = heights[low]
            return found
        world = self.points @ rotation.T + origin
        world[:, 2] = heights
        return world[heights <= self._terrain.heights(world) + GROUND_BAND]


def _named(lookup, name: str, kind: str):
    """``lookup(name)`` (``model.joint``, ``model.site``, ...), or a one-line RobotSpecError."""
    try:
        return lookup(name)
    except KeyError:
        raise RobotSpecError(
            f"the MuJoCo model has no {kind} named {name!r} (a plant's model is named as "
            "build_mujoco_model names it)"
        ) from None


def _imu_addresses(mujoco, model, base: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Where the base IMU's gyroscope and accelerometer are in ``sensordata`` (None: the model has
    neither, e.g. one of a user's own); RobotSpecError for one without the other, or an IMU whose
    site is not on the base's body."""
    found = {}
    for name, kind in imu_sensors(mujoco):
        try:
            sensor = found[name] = model.sensor(name)
        except KeyError:
            continue
        on_base = sensor.objtype[0] == mujoco.mjtObj.mjOBJ_SITE and model.site_bodyid[sensor.objid[0]] == base
        if sensor.type[0] != kind or not on_base:
            raise RobotSpecError(
                f"the MuJoCo model's sensor {name} is not a {kind.name} on a site of the base"
            )
    if not found:
        return None
    if len(found) == 1:
        raise RobotSpecError(
            f"the MuJoCo model has {next(iter(found))} but not its pair: an IMU is "
            f"{IMU_SITE}_gyro and {IMU_SITE}_accelerometer"
        )
    return tuple(np.arange(s.adr[0], s.adr[0] + 3) for s in found.values())  # type: ignore[return-value]
