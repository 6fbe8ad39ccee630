"""A MuJoCo plant: the robot of a spec simulated by MuJoCo (``pip install tsid_py[sim]``).

One model source: the MuJoCo model is built from the Pinocchio model the controller uses (itself
read from the spec's URDF), body by body, so masses, centres of mass, inertias, joint axes and
placements are the same numbers (the model-agreement test checks total mass, CoM and the
joint-space inertia to 1e-6). The root is a free joint. Collision geometry is the feet only: a box
under each sole of the spec (its rectangle, 1 cm thick), or a sphere at each point foot, against a
ground plane at z = 0; feet do not collide with each other. Each actuated joint has a motor whose
force range is the URDF effort limit (none where the URDF gives 0); joint damping and armature
come from the Pinocchio model (``model.damping``, ``model.armature``: rotor inertias times gear
ratios squared, :meth:`~tsid_py.robot_wrapper.RobotWrapper.set_rotor_inertias`).

Conventions are converted here, once: MuJoCo's free joint has its quaternion first (w, x, y, z)
and its linear velocity in world axes; Pinocchio's has the quaternion last (x, y, z, w) and the
linear velocity in the base frame (LOCAL). Both take the angular velocity in the base frame.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.errors import InvalidParameterError, UnsupportedProblemError
from tsid_py.loop.plant import Command, ContactMeasurement, Plant, PlantState, servo_gains
from tsid_py.robot_specs import Robot
from tsid_py.validation import as_scalar, as_vector

SOLE_THICKNESS = 0.01  # [m] of the box under each sole
POINT_FOOT_RADIUS = 0.01  # [m] of the sphere at each point foot
SERVO_FREQUENCY = 5.0  # [Hz] of the default joint servos (position mode)
TOUCH_THRESHOLD = 1.0  # [N] of normal force: below it a foot is not touching
_FLOOR, _FEET = 1, 2  # collision bits: feet touch the floor, not each other


def mujoco_module():
    """The ``mujoco`` package, or a clear error naming the extra that installs it."""
    try:
        import mujoco
    except ImportError:
        raise UnsupportedProblemError(
            "the mujoco plant needs MuJoCo: pip install 'tsid_py[sim]' (or pip install mujoco)"
        ) from None
    return mujoco


def build_mujoco_model(robot: Robot, timestep: float = 1e-3, mu: float = 1.0):
    """The MuJoCo model (``mujoco.MjModel``) of ``robot``, built from its Pinocchio model."""
    mujoco = mujoco_module()
    model = robot.model
    spec = mujoco.MjSpec()
    spec.modelname = robot.name
    spec.compiler.degree = False  # joint ranges in radians, as Pinocchio's
    spec.option.timestep = timestep
    spec.option.gravity = np.array(model.gravity.linear)
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    floor = spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05])
    floor.contype, floor.conaffinity, floor.friction = _FLOOR, _FEET, [mu, 0.005, 0.0001]
    bodies = {0: spec.worldbody}
    for j in range(1, model.njoints):
        joint, placement, inertia = model.joints[j], model.jointPlacements[j], model.inertias[j]
        name = model.names[j]
        body = bodies[model.parents[j]].add_body(
            name=name, pos=placement.translation, quat=_wxyz(placement.rotation)
        )
        body.mass = max(inertia.mass, 1e-9)  # MuJoCo needs mass on a moving body
        body.ipos = inertia.lever
        I = inertia.inertia  # noqa: E741 (about the CoM, joint axes)
        body.fullinertia = [I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]]
        body.explicitinertial = True
        kind = joint.shortname()
        if kind == "JointModelFreeFlyer":
            body.add_freejoint(name=name)
        else:
            axis, hinge = _axis(joint)
            dof = joint.idx_v
            added = body.add_joint(
                name=name,
                type=mujoco.mjtJoint.mjJNT_HINGE if hinge else mujoco.mjtJoint.mjJNT_SLIDE,
                axis=axis,
                damping=float(model.damping[dof]),
                armature=float(model.armature[dof]),
            )
            added.range = [model.lowerPositionLimit[joint.idx_q], model.upperPositionLimit[joint.idx_q]]
            added.limited = mujoco.mjtLimited.mjLIMITED_TRUE if np.all(np.isfinite(added.range)) else 0
        bodies[j] = body
    for frame_name in robot.spec.feet.values():
        _add_foot(spec, mujoco, robot, bodies, frame_name, mu)
    effort = robot.effort_limit()
    for k, j in enumerate(_actuated_joints(robot)):
        motor = spec.add_actuator(name=model.names[j], target=model.names[j])
        motor.trntype = mujoco.mjtTrn.mjTRN_JOINT
        if effort[k] > 0:
            motor.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
            motor.forcerange = [-effort[k], effort[k]]
    return spec.compile()


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross products of two n x 3 arrays (np.cross costs more on so few rows)."""
    (ax, ay, az), (bx, by, bz) = a.T, b.T
    return np.stack((ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx), axis=1)


def _wxyz(rotation: np.ndarray) -> np.ndarray:
    x, y, z, w = pin.Quaternion(rotation).coeffs()
    return np.array([w, x, y, z])


def _axis(joint) -> tuple[np.ndarray, bool]:
    """A one-dof joint's axis in its frame and whether it is a hinge (revolute) or a slide."""
    kind = joint.shortname()
    if kind in ("JointModelRevoluteUnaligned", "JointModelPrismaticUnaligned"):
        return np.array(joint.axis), kind.startswith("JointModelRevolute")
    for prefix, hinge in (("JointModelR", True), ("JointModelP", False)):
        if kind.startswith(prefix) and kind[-1] in "XYZ" and len(kind) == len(prefix) + 1:
            return np.eye(3)["XYZ".index(kind[-1])], hinge
    raise UnsupportedProblemError(f"the mujoco plant does not convert joints of type {kind}")


def _actuated_joints(robot: Robot) -> list[int]:
    start = 1 if robot.is_fixed_base else 2
    return list(range(start, robot.model.njoints))


def _add_foot(spec, mujoco, robot: Robot, bodies: dict, frame_name: str, mu: float) -> None:
    """A box whose bottom face is the sole (the spec's rectangle, at its depth lz), or a sphere."""
    frame = robot.model.frames[robot.frame_id(frame_name)]
    body, placement = bodies[frame.parentJoint], frame.placement
    sole = robot.spec.sole
    if sole is not None:
        center = np.array(
            [(sole.lxp - sole.lxn) / 2, (sole.lyp - sole.lyn) / 2, -sole.lz + SOLE_THICKNESS / 2]
        )
        geom = body.add_geom(
            name=frame_name,
            type=mujoco.mjtGeom.mjGEOM_BOX,
            size=[(sole.lxp + sole.lxn) / 2, (sole.lyp + sole.lyn) / 2, SOLE_THICKNESS / 2],
            pos=placement.act(center),
            quat=_wxyz(placement.rotation),
        )
    else:
        geom = body.add_geom(
            name=frame_name,
            type=mujoco.mjtGeom.mjGEOM_SPHERE,
            size=[POINT_FOOT_RADIUS, 0, 0],
            pos=placement.translation,
        )
    geom.contype, geom.conaffinity, geom.friction = _FEET, _FLOOR, [mu, 0.005, 0.0001]
    geom.condim = 3
    body.add_site(name=frame_name, pos=placement.translation)  # the foot frame's origin, to measure at


class MujocoPlant(Plant):
    """The robot of a spec in MuJoCo, at ``timestep`` (1 kHz by default).

    Args:
        robot: A robot loaded from a spec (its feet get collision geometry).
        timestep: MuJoCo's step [s]; :meth:`advance` takes a multiple of it.
        mu: Friction coefficient of the feet on the ground.
        servo: (kp, kd) per actuated joint for position commands [N m/rad, N m s/rad]; by default
            the spec's ``[servo]``, else :func:`~tsid_py.loop.plant.servo_gains` at SERVO_FREQUENCY
            (critically damped; the servo runs explicitly at the physics rate, so it stays soft).
    """

    name = "mujoco"

    def __init__(
        self,
        robot: Robot,
        timestep: float = 1e-3,
        mu: float = 1.0,
        servo: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        mujoco = mujoco_module()
        self.robot = robot
        self.timestep = as_scalar("timestep", timestep, minimum=0.0, strict=True)
        self.model = build_mujoco_model(robot, self.timestep, as_scalar("mu", mu, minimum=0.0))
        self.data = mujoco.MjData(self.model)
        self._mujoco = mujoco
        model = robot.model
        self._floating = not robot.is_fixed_base
        actuated = _actuated_joints(robot)
        self._qadr = np.array([self.model.joint(model.names[j]).qposadr[0] for j in actuated], dtype=int)
        self._vadr = np.array([self.model.joint(model.names[j]).dofadr[0] for j in actuated], dtype=int)
        self._root_body = self.model.body(model.names[1]).id if self._floating else 0
        self._feet = {name: self.model.geom(name).id for name in robot.spec.feet.values()}
        self._foot_sites = np.array([self.model.site(name).id for name in self._feet], dtype=int)
        self._foot_of_geom = np.full(self.model.ngeom, -1)  # geom id -> index of its foot, or -1
        self._foot_of_geom[list(self._feet.values())] = np.arange(len(self._feet))
        self._contact_force = np.zeros(6)
        self._base_rotation = np.zeros(9)
        self._effort = np.where(robot.effort_limit() > 0, robot.effort_limit(), np.inf)
        self._command = Command(np.zeros(robot.na))
        self._push_end = -np.inf
        self.clipped_steps = 0  # physics steps where a command exceeded the effort limits
        if servo is None:
            data = robot.create_data()
            pin.crba(robot.model, data, robot.neutral_configuration())
            servo = servo_gains(robot, data, SERVO_FREQUENCY)
        self.kp, self.kd = (as_vector("servo gains", g, robot.na) for g in servo)

    # ------------------------------------------------------------- conversions
    def set_state(self, q: np.ndarray, v: np.ndarray) -> None:
        """Write Pinocchio's (q, v) into MuJoCo's qpos, qvel."""
        data, nj = self.data, self.robot.na
        if self._floating:
            x, y, z, w = q[3:7]
            data.qpos[:7] = [*q[:3], w, x, y, z]
            data.qvel[:3] = pin.Quaternion(w, x, y, z).toRotationMatrix() @ v[:3]
            data.qvel[3:6] = v[3:6]
        data.qpos[self._qadr] = q[q.shape[0] - nj :]
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
        q[robot.nq - robot.na :] = data.qpos[self._qadr]
        v[robot.nv - robot.na :] = data.qvel[self._vadr]
        return q, v

    # ------------------------------------------------------------- the plant
    def reset(self, q: np.ndarray, v: np.ndarray, t: float = 0.0) -> None:
        q, v = self.robot.check_state(q, v)
        self._mujoco.mj_resetData(self.model, self.data)
        self.set_state(q, v)
        self.data.time = as_scalar("t", t)
        self._command = Command(np.zeros(self.robot.na))
        self._push_end = -np.inf
        self.clipped_steps = 0
        self._mujoco.mj_forward(self.model, self.data)

    def apply(self, command: Command) -> None:
        na = self.robot.na
        tau = as_vector("tau", command.tau, na)
        if command.q_des is None:
            self._command = Command(tau)
            return
        q_des = as_vector("q_des", command.q_des, self._qadr.size)
        v_des = as_vector("v_des", command.v_des, na)
        self._command = Command(tau, q_des=q_des, v_des=v_des)

    def advance(self, dt: float) -> None:
        steps = as_scalar("dt", dt, minimum=0.0, strict=True) / self.timestep
        if abs(steps - round(steps)) > 1e-9 * max(1.0, steps):
            raise InvalidParameterError(
                f"dt = {dt} s is not a multiple of the mujoco plant's timestep {self.timestep} s"
            )
        mujoco, model, data, command = self._mujoco, self.model, self.data, self._command
        effort, servo = self._effort, command.q_des is not None
        if not servo:  # a torque command: the same motor torques at every physics step
            data.ctrl[:] = np.clip(command.tau, -effort, effort)
            clipped = bool((np.abs(command.tau) > effort).any())
        for _ in range(int(round(steps))):
            if servo:  # the joint servos, at the physics rate
                q, v = data.qpos[self._qadr], data.qvel[self._vadr]
                tau = command.tau + self.kp * (command.q_des - q) + self.kd * (command.v_des - v)
                data.ctrl[:] = np.clip(tau, -effort, effort)
                clipped = bool((np.abs(tau) > effort).any())
            self.clipped_steps += clipped
            if data.time >= self._push_end:
                data.xfrc_applied[self._root_body] = 0.0
            mujoco.mj_step(model, data)

    def state(self) -> PlantState:
        q, v = self.get_state()
        return PlantState(float(self.data.time), q, v, self.contacts())

    def push(self, force: np.ndarray, duration: float) -> None:
        """A force [N] in world axes at the base's centre of mass, for ``duration`` [s]."""
        if not self._floating:
            raise UnsupportedProblemError("a fixed-base robot has no base to push")
        self.data.xfrc_applied[self._root_body, :3] = as_vector("force", force, 3)
        self._push_end = self.data.time + as_scalar("duration", duration, minimum=0.0)

    # -------------------------------------------------------------- contacts
    def contacts(self) -> dict[str, ContactMeasurement]:
        """Each foot's ground wrench at its frame origin, world axes [N, N m], and whether it touches.

        Read from the last physics step: MuJoCo's contacts and the foot frames' origins (a site at
        each) are both of the state that step started from. A contact's force is given in its
        contact frame, on geom2 from geom1 (``mj_contactForce``); the rows of ``contact.frame`` are
        that frame's axes in world axes, so f_world = frame^T f_local.
        """
        mujoco, model, data = self._mujoco, self.model, self.data
        count, feet = data.ncon, self._foot_sites.size
        wrenches = np.zeros((feet, 6))
        if count:
            contact, local = data.contact, self._contact_force
            forces = np.empty((count, 3))
            for i in range(count):
                mujoco.mj_contactForce(model, data, i, local)
                forces[i] = local[:3]
            forces = np.einsum("nji,nj->ni", contact.frame[:count].reshape(count, 3, 3), forces)
            geoms = contact.geom[:count]
            on_geom2 = self._foot_of_geom[geoms[:, 1]]
            foot = np.where(on_geom2 >= 0, on_geom2, self._foot_of_geom[geoms[:, 0]])
            # +f on a foot that is geom2, -f on one that is geom1; each contact summed on its foot
            sides = (foot == np.arange(feet)[:, None]) * np.where(on_geom2 >= 0, 1.0, -1.0)
            wrenches[:, :3] = sides.dot(forces)
            moments = sides.dot(_cross(contact.pos[:count], forces))  # about the world origin
            wrenches[:, 3:] = moments - _cross(data.site_xpos[self._foot_sites], wrenches[:, :3])
        return {
            name: ContactMeasurement(wrench, bool(wrench[2] > TOUCH_THRESHOLD))
            for name, wrench in zip(self._feet, wrenches, strict=True)
        }
