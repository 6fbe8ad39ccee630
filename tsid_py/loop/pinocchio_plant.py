"""PinocchioPlant: rigid-contact physics from Pinocchio's constraint dynamics, not from our QP.

Each internal step (``timestep``, 1 ms by default) of :class:`PinocchioPlant`:

1. the contacts: a free contact point that reached the ground (z <= 0) engages;
2. the generalized forces: the command's torques clipped to the URDF effort limits (torque mode)
   or the joint servos (position mode, below), the joints' viscous damping (``model.damping``),
   and a push on the base while one is under way;
3. the forward dynamics with the engaged points as rigid 3-D contacts, by
   ``pinocchio.constraintDynamics`` (``RigidConstraintModel`` CONTACT_3D in the foot's axes,
   proximal KKT solver, ``ProximalSettings``), with Baumgarte stabilisation a = -Kp e - Kd e_dot
   of each point toward the ground; then the unilateral check on each foot's total wrench: a foot
   the ground would have to pull is released, a foot whose centre of pressure lies outside the
   polygon of its engaged points releases the point farthest from it (it tips onto an edge or a
   corner), and the dynamics is solved again;
4. a semi-implicit Euler step on the manifold: v' = v + dt dv, q' = q (+) dt v' (``pin.integrate``).

Why ``constraintDynamics``: it is Pinocchio's rigid-contact forward dynamics (the KKT system of
M dv + h = tau + J^T f, J dv + J_dot v = a_Baumgarte, solved by a sparse Cholesky with proximal
regularisation, so that the redundant rows of four corners on one sole are fine), one call per
solve. Pinocchio 4's newer ``ADMMConstraintSolver`` (friction cones, unilateral contacts in one
solve) needs a Delassus operator and constraint sets assembled by hand each step, and only buys
what this plant does not claim: slip.

Position mode: the servos' torque tau_ff + Kp (q_des - q') + Kd (v_des - v') is taken at the end
of the step (q' = q + dt v', v' = v + dt dv): its dependence on dv goes to the mass matrix (as
MuJoCo's implicit damping), so that the stiff default servos (:func:`servo_gains`) are stable at
1 ms even on a floating robot's light joints; a joint beyond its effort limit is held at it.

Contact model and its limits:

- A foot with a sole (the spec's ``[sole]``) is its four sole corners, each a unilateral 3-D point
  contact; a foot without one (point feet, e.g. Solo) is one point at its frame origin. The ground
  is the plane z = 0; nothing else collides (no hands, knees, self-collision).
- Contacts stick: slip is not simulated. Friction is measured: each foot reports |f_t| / f_n
  (:attr:`ContactMeasurement.friction_ratio`) and :attr:`PinocchioPlant.slip_steps`
  counts the steps where a touching foot's ratio exceeded ``mu`` (where a real foot would slip).
  The tangential position of a point is not corrected either: Kd stops its sliding.
- Impacts are plastic: the default Kd = 1 / timestep stops a landing point within one step;
  Kp = 0.25 / timestep^2 removes a quarter of a penetration per step. The active set is a
  heuristic, not a complementarity solver: a released point re-engages only when it is back at
  z <= 0, and the contact forces are those of the engaged set.
- How a sole's force is shared among its corners is the solver's choice (a rigid sole on four
  points is statically indeterminate) and may carry internal forces that sum to zero; each
  foot's total wrench, which is what the plant measures, is determined.
- The plant copies the robot's model when it is built: later changes to the robot's model
  (gravity, rotor inertias) do not reach it. In its copy, a body without mass or with an
  unphysical inertia (Romeo's fingers) gets the least one a forward dynamics can move
  (:mod:`tsid_py.loop.inertia`, as the MuJoCo model does).
- A step whose velocity is not finite, or beyond any robot's, raises
  :class:`~tsid_py.errors.SimulationDivergedError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from tsid_py.errors import InvalidParameterError, UnsupportedProblemError
from tsid_py.loop.inertia import simulable
from tsid_py.loop.plant import (
    SIMULATOR_CHECK_EVERY,
    Command,
    ContactMeasurement,
    Plant,
    PlantState,
    servo_gains,
)
from tsid_py.robot_specs import SpecRobot
from tsid_py.validation import as_scalar, as_vector

DEFAULT_MU = 0.7  # rubber sole on a floor; only used to count the steps where a foot would slip
TOUCH_TOLERANCE = 1e-3  # [m] a point this close to the ground at reset starts engaged
FORCE_TOLERANCE = 1e-9  # [N] a foot's total normal force below -this releases it
COP_TOLERANCE = 1e-6  # [m] a centre of pressure this far outside its support polygon tips it
SERVO_FREQUENCY = 20.0  # [Hz] of the default joint servos (position mode; implicit damping)
SERVO_DAMPING = 0.7  # damping ratio of the default joint servos


@dataclass
class StepRecord:
    """The internals of the last internal step, for checks: M(q) dv + h(q, v) = tau + J^T f.

    q, v: the state the step started from; tau: the generalized forces applied (size nv: actuator
    torques after clipping, joint damping, a push on the base); dv: the accelerations; jacobian:
    the engaged points' Jacobian (3 rows each, world axes, 0 rows when none); forces: their ground
    forces on the robot [N], world axes, (k, 3); points: their indices in :attr:`PinocchioPlant.points`.
    """

    q: np.ndarray
    v: np.ndarray
    tau: np.ndarray
    dv: np.ndarray
    jacobian: np.ndarray
    forces: np.ndarray
    points: np.ndarray


class PinocchioPlant(Plant):
    """A robot on flat rigid ground simulated with ``pinocchio.constraintDynamics`` (see the module).

    Args:
        robot: A robot loaded from a spec.
        contact_frames: The frames that touch the ground; the spec's feet by default. Each is its
            sole's four corners if the spec has a ``[sole]``, else one point at the frame origin.
        mu: Friction coefficient of the ground; contacts stick regardless, ``slip_steps`` counts
            the steps where a touching foot's |f_t| / f_n exceeded it.
        timestep: The internal step [s]; :meth:`advance` takes a multiple of it.
        baumgarte_kp: Position gain of the contact stabilisation [1/s^2]; 0.25 / timestep^2 by default.
        baumgarte_kd: Velocity gain [1/s]; 1 / timestep by default (plastic impacts in one step).
        servo: (kp, kd) per actuated joint for position commands; :func:`servo_gains` at the
            robot's default configuration by default.
        touch_tolerance: [m] at :meth:`reset`, a point this close to the ground starts engaged.
        prox_settings: The proximal solver's settings (accuracy 1e-12, mu 1e-5, 10 iterations).

    Attributes:
        clipped_steps: Internal steps where a torque exceeded the effort limits and was clipped.
        slip_steps: Internal steps where a touching foot's friction ratio exceeded ``mu``.
        last_step: :class:`StepRecord` of the last internal step (None before the first).
    """

    name = "pinocchio"
    check_every = SIMULATOR_CHECK_EVERY  # constraint dynamics measure the physics: the checks sample it

    def __init__(
        self,
        robot: SpecRobot,
        contact_frames: Sequence[str] | None = None,
        *,
        mu: float = DEFAULT_MU,
        timestep: float = 1e-3,
        baumgarte_kp: float | None = None,
        baumgarte_kd: float | None = None,
        servo: tuple[object, object] | None = None,
        touch_tolerance: float = TOUCH_TOLERANCE,
        prox_settings: pin.ProximalSettings | None = None,
    ) -> None:
        self.robot = robot
        model = self.model = pin.Model(robot.model)  # its own: the servos change its armature
        for joint in range(1, model.njoints):  # bodies a forward dynamics can move (loop.inertia)
            model.inertias[joint] = simulable(model.inertias[joint])

        self.data = model.createData()
        self.mu = as_scalar("mu", mu, minimum=0.0)
        self.timestep = as_scalar("timestep", timestep, minimum=0.0, strict=True)
        kp = 0.25 / self.timestep**2 if baumgarte_kp is None else baumgarte_kp
        kd = 1.0 / self.timestep if baumgarte_kd is None else baumgarte_kd
        self.baumgarte_kp = as_scalar("baumgarte_kp", kp, minimum=0.0)
        self.baumgarte_kd = as_scalar("baumgarte_kd", kd, minimum=0.0)
        self.touch_tolerance = as_scalar("touch_tolerance", touch_tolerance, minimum=0.0)
        self.prox = prox_settings or pin.ProximalSettings(1e-12, 1e-5, 10)
        self._floating = not robot.is_fixed_base
        na, nv = robot.na, robot.nv
        self._effort = robot.effort_limit()
        self._actuated = slice(nv - na, nv)
        self._damping = np.array(model.damping[nv - na :], dtype=float)
        self._armature = np.array(model.armature, dtype=float)
        if servo is None:
            servo_data = model.createData()
            pin.crba(model, servo_data, robot.default_configuration())
            servo = servo_gains(robot, servo_data, SERVO_FREQUENCY, SERVO_DAMPING)
        self.kp, self.kd = (as_vector(f"servo {n}", g, na) for n, g in zip(("kp", "kd"), servo, strict=True))

        # the contact points: per frame, its sole's corners (or its origin) in its parent joint's frame
        frames = list(robot.spec.feet.values()) if contact_frames is None else list(contact_frames)
        if len(set(frames)) != len(frames):
            raise InvalidParameterError(f"contact frames repeat: {frames}")
        corners = robot.spec.sole.corners().T if robot.spec.sole is not None else np.zeros((1, 3))
        self.contact_frames = frames
        self._feet: list[_Foot] = []
        for index, frame in enumerate(frames):
            frame_id = robot.frame_id(frame)
            placement = model.frames[frame_id].placement
            points = corners @ placement.rotation.T + placement.translation
            start = index * corners.shape[0]
            self._feet.append(
                _Foot(
                    frame_id,
                    int(model.frames[frame_id].parentJoint),
                    points,
                    slice(start, start + corners.shape[0]),
                    placement.rotation[:, 2].copy() if corners.shape[0] > 1 else None,
                )
            )
        self.points = np.concatenate([np.zeros((0, 3)), *(foot.points for foot in self._feet)])
        self._owners = np.repeat(np.arange(len(frames)), corners.shape[0])
        self._ownership = (self._owners == np.arange(len(frames))[:, None]).astype(float)  # feet x points
        npoints = self._owners.size
        normals = [foot.normal if foot.normal is not None else np.zeros(3) for foot in self._feet]
        self._normals = np.array(normals).reshape(-1, 3)
        self._engaged = np.zeros(npoints, dtype=bool)
        self._anchors = np.zeros((npoints, 3))
        self._active_key: tuple[int, ...] | None = None
        self._cms = self._cds = None

        self._q = robot.default_configuration()
        self._v = robot.zero_velocity()
        self._t0, self._steps = 0.0, 0
        self._command = Command(np.zeros(na))
        self._push_force, self._push_end = np.zeros(3), -np.inf
        self.clipped_steps = 0
        self.slip_steps = 0
        self.last_step: StepRecord | None = None
        self._forces = np.zeros((npoints, 3))  # last solve's ground forces, world axes [N]
        self._positions = np.zeros((npoints, 3))  # where they applied (the solve's state)
        self._origins = np.zeros((len(frames), 3))  # the frames' origins at that state
        self._rotations = np.zeros((len(frames), 3, 3))  # the feet's joint rotations at that state

    # ------------------------------------------------------------- the plant
    def reset(self, q: np.ndarray, v: np.ndarray, t: float = 0.0) -> None:
        q, v = self.robot.check_state(q, v)
        self._q, self._v = q.copy(), v.copy()
        self._t0, self._steps = as_scalar("t", t), 0
        self._command = Command(np.zeros(self.robot.na))
        self._push_force, self._push_end = np.zeros(3), -np.inf
        self.clipped_steps = self.slip_steps = 0
        pin.forwardKinematics(self.model, self.data, self._q)
        positions = self._point_positions()
        self._engaged[:] = positions[:, 2] <= self.touch_tolerance
        self._anchors[:] = positions
        self._anchors[:, 2] = 0.0
        self._active_key = None
        self._forces[:] = 0.0  # no force measured before the first step; touching is geometric
        self.last_step = None

    def apply(self, command: Command) -> None:
        robot = self.robot
        tau = as_vector("tau", command.tau, robot.na)
        if command.q_des is None:
            self._command = Command(tau)
            return
        if command.v_des is None:
            raise InvalidParameterError("a position command needs v_des with q_des")
        q_des = as_vector("q_des", command.q_des, robot.nq_actuated)
        v_des = as_vector("v_des", command.v_des, robot.na)
        self._command = Command(tau, q_des=q_des, v_des=v_des)

    def advance(self, dt: float) -> None:
        dt = as_scalar("dt", dt, minimum=0.0, strict=True)
        steps = dt / self.timestep
        if abs(steps - round(steps)) > 1e-9 * max(1.0, steps):
            raise InvalidParameterError(
                f"dt = {dt:g} s is not a multiple of the pinocchio plant's timestep {self.timestep:g} s"
            )
        for _ in range(int(round(steps))):
            self._step()

    def state(self) -> PlantState:
        return PlantState(self.time, self._q.copy(), self._v.copy(), self.contacts())

    def push(self, force: np.ndarray, duration: float) -> None:
        """A force [N] in world axes at the base's centre of mass, from now for ``duration`` [s]
        (the internal steps that start before the end)."""
        if not self._floating:
            raise UnsupportedProblemError("a fixed-base robot has no base to push")
        self._push_force = as_vector("force", force, 3)
        self._push_end = self.time + as_scalar("duration", duration, minimum=0.0)

    @property
    def time(self) -> float:
        """The plant's time [s] (t0 + steps timestep: no sum of rounding errors)."""
        return self._t0 + self._steps * self.timestep

    @property
    def engaged(self) -> np.ndarray:
        """Which contact points are engaged (a copy), in the order of :attr:`points`."""
        return self._engaged.copy()

    # ------------------------------------------------------------ measurements
    def contacts(self) -> dict[str, ContactMeasurement]:
        """Each contact frame's ground wrench at its origin, world axes [N, N m], from the last
        solve, whether it touches (has an engaged point), its friction ratio |f_t| / f_n and its
        engaged points (world)."""
        f, r = self._forces, self._positions - self._origins[self._owners]
        moments = np.column_stack(
            [
                r[:, 1] * f[:, 2] - r[:, 2] * f[:, 1],
                r[:, 2] * f[:, 0] - r[:, 0] * f[:, 2],
                r[:, 0] * f[:, 1] - r[:, 1] * f[:, 0],
            ]
        )
        wrenches = self._ownership @ np.hstack([f, moments])
        touching = self._ownership @ self._engaged > 0
        measured = {}
        for index, frame in enumerate(self.contact_frames):
            wrench = wrenches[index]
            normal = wrench[2]
            ratio = float(np.hypot(wrench[0], wrench[1]) / normal) if touching[index] and normal > 0 else 0.0
            points = self._positions[self._engaged & (self._owners == index)]
            measured[frame] = ContactMeasurement(wrench, bool(touching[index]), ratio, points)
        return measured

    # -------------------------------------------------------------- internals
    def _step(self) -> None:
        model, data, q, v = self.model, self.data, self._q, self._v
        pin.forwardKinematics(model, data, q)
        positions = self._point_positions()
        self._engaged |= positions[:, 2] <= 0.0  # a free point that reached the ground engages
        passive = self._passive_forces()
        command, effort, actuated = self._command, self._effort, self._actuated
        if command.q_des is None:
            tau = np.clip(command.tau, -effort, effort)
            self.clipped_steps += bool(np.any(tau != command.tau))
            passive[actuated] += tau
            dv, jacobian, forces, active = self._solve(passive, positions)
            generalized = passive
        else:
            dv, jacobian, forces, active, generalized = self._servo_step(passive, positions)
        if active.size:  # the feet's total forces: is one beyond the friction cone?
            totals = self._ownership @ self._forces
            tangential = np.hypot(totals[:, 0], totals[:, 1])
            self.slip_steps += bool(np.any(tangential > self.mu * np.maximum(totals[:, 2], 0.0)))
        self.last_step = StepRecord(q, v, generalized, dv, jacobian, forces, active)
        v_next = v + self.timestep * dv
        self.check_velocity(self.time, v_next)
        self._q = pin.integrate(model, q, self.timestep * v_next)

        self._v = v_next
        self._steps += 1

    def _servo_step(
        self, passive: np.ndarray, positions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The dynamics under the joint servos, tau = tau_ff + Kp (q_des - q') + Kd (v_des - v'),
        taken at the end of the step (q' = q + dt v', v' = v + dt dv): implicit, as MuJoCo's
        implicit damping, so that stiff servos on light joints are stable at 1 ms (on Talos in the
        air, a joint's effective inertia 1 / (M^-1)_ii is down to 1/20 of M_ii, and the explicit
        servo diverges). The servo torque's dependence on dv, -dt (Kd + dt Kp) dv, goes to the mass
        matrix (``model.armature``). A joint whose torque exceeds its effort limit is held at the
        limit, and the step solved again without its servo.

        Returns (dv, jacobian, forces, engaged indices, generalized forces applied)."""
        robot, model, q, v, dt = self.robot, self.model, self._q, self._v, self.timestep
        command, na, actuated = self._command, robot.na, self._actuated
        target = q.copy()
        target[robot.nq - robot.nq_actuated :] = command.q_des
        error = pin.difference(model, q, target)[actuated]
        velocity = v[actuated]
        explicit = command.tau + self.kp * (error - dt * velocity) + self.kd * (command.v_des - velocity)
        stiffness = dt * (self.kd + dt * self.kp)  # the servo torque's decrease per unit of dv
        servo, held = np.ones(na, dtype=bool), np.zeros(na)
        armature = self._armature.copy()
        try:
            while True:
                armature[actuated] = self._armature[actuated] + np.where(servo, stiffness, 0.0)
                model.armature = armature
                generalized = passive.copy()
                generalized[actuated] += np.where(servo, explicit, held)
                dv, jacobian, forces, active = self._solve(generalized, positions)
                applied = np.where(servo, explicit - stiffness * dv[actuated], held)
                over = servo & (np.abs(applied) > self._effort)
                if not np.any(over):
                    break
                held[over] = np.clip(applied[over], -self._effort[over], self._effort[over])
                servo &= ~over
        finally:
            model.armature = self._armature
        self.clipped_steps += not np.all(servo)
        generalized = passive.copy()
        generalized[actuated] += applied
        return dv, jacobian, forces, active, generalized

    def _set_anchors(self, positions: np.ndarray) -> None:
        """Where each engaged point is held: on the ground, under a rigid correction of its sole.

        The Baumgarte error of a point is its position minus its anchor. The errors of the points
        of one sole make a rigid displacement field, u + w x (p - o) (o their centre), that levels
        the sole onto the ground: u_z is their mean height and w_x, w_y the sole's slopes (w_z,
        u_x, u_y are 0: no tangential correction; Kd stops the sliding). Errors that no rigid
        motion of the sole could realise would be inconsistent constraints for the redundant
        points of a sole, which the proximal solver answers with internal forces as large as
        1 / mu.
        """
        engaged = self._ownership * self._engaged  # feet x points
        counts = engaged.sum(axis=1)
        normals = np.einsum("fij,fj->fi", self._rotations, self._normals)  # world axes
        levelled = (counts >= 2) & (normals[:, 2] >= 0.5)  # one point, or a sole on its side: no lever
        centres = engaged @ positions / np.maximum(counts, 1.0)[:, None]
        slopes = np.where(levelled[:, None], normals[:, :2] / np.maximum(normals[:, 2:], 0.5), 0.0)
        w_x, w_y = -slopes[self._owners, 1], slopes[self._owners, 0]  # z = z_o - (n_x r_x + n_y r_y) / n_z
        r = positions - centres[self._owners]
        error = np.empty_like(r)
        error[:, 0], error[:, 1] = w_y * r[:, 2], -w_x * r[:, 2]
        error[:, 2] = np.where(levelled[self._owners], centres[self._owners, 2], positions[:, 2])
        error[:, 2] += w_x * r[:, 1] - w_y * r[:, 0]
        self._anchors = positions - error

    def _solve(
        self, tau: np.ndarray, positions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The forward dynamics at the current state (kinematics done, ``positions`` of the points):
        solve with the engaged points, release the points no ground could hold, solve again.

        Returns (dv, jacobian, forces (k, 3), engaged indices)."""
        model, data, q, v = self.model, self.data, self._q, self._v
        while True:
            active = np.flatnonzero(self._engaged)
            if active.size == 0:
                dv = np.array(pin.aba(model, data, q, v, tau))
                self._forces[:] = 0.0
                return dv, np.zeros((0, self.robot.nv)), np.zeros((0, 3)), active
            self._set_anchors(positions)
            cms, cds = self._constraint_set(active)
            dv = np.array(pin.constraintDynamics(model, data, q, v, tau, cms, cds, self.prox))
            turns = self._rotations[self._owners[active]]  # each point's axes, the foot joint's
            forces = np.einsum("kij,kj->ki", turns, np.array(data.lambda_c).reshape(-1, 3))  # world
            released = self._unheld(active, forces, positions[active])
            if not released:
                break
            self._engaged[released] = False
        self._forces[:] = 0.0
        self._forces[active] = forces
        self._positions[:] = positions
        for index, foot in enumerate(self._feet):
            self._origins[index] = pin.updateFramePlacement(model, data, foot.frame_id).translation
        local = pin.getConstraintsJacobian(model, data, cms, cds).reshape(active.size, 3, -1)
        jacobian = np.einsum("kij,kjn->kin", turns, local).reshape(3 * active.size, -1)  # world axes
        return dv, jacobian, forces, active

    def _unheld(self, active: np.ndarray, forces: np.ndarray, positions: np.ndarray) -> list[int]:
        """The engaged points to release: all the points of a foot the ground would have to pull
        (its total normal force < 0), or the one farthest from its centre of pressure when that
        lies outside the polygon of its engaged points (the foot tips over an edge or a corner).

        Judged on each foot's total wrench, not on the forces of its points: those of a sole's
        redundant points are the solver's choice and carry internal forces (which sum to zero)."""
        released: list[int] = []
        if forces[:, 2].min() >= -FORCE_TOLERANCE:  # every point pushes: every foot is held
            return released
        owners = self._owners[active]
        for index in np.unique(owners):
            mine = owners == index
            f, p = forces[mine], positions[mine]
            total = f.sum(axis=0)
            if total[2] < -FORCE_TOLERANCE:
                released.extend(int(k) for k in active[mine])
                continue
            if p.shape[0] < 2 or total[2] <= FORCE_TOLERANCE:
                continue
            centre = np.array([*p[:, :2].mean(axis=0), 0.0])
            moment = np.cross(p - centre, f).sum(axis=0)
            cop = centre[:2] + np.array([-moment[1], moment[0]]) / total[2]
            if not _inside(cop, p[:, :2]):
                farthest = int(np.argmax(np.linalg.norm(p[:, :2] - cop, axis=1)))
                released.append(int(active[mine][farthest]))
        return released

    def _constraint_set(self, active: np.ndarray) -> tuple[object, object]:
        """The constraint models and datas of the engaged points, anchored at ``_anchors`` (the
        vectors are built again when the set changes, the anchors set in place each step)."""
        key = tuple(int(k) for k in active)
        if key != self._active_key:
            models = [self._constraint(k) for k in key]
            self._cms = pin.StdVec_RigidConstraintModel(models)
            self._cds = pin.StdVec_RigidConstraintData([m.createData() for m in models])
            pin.initConstraintDynamics(self.model, self.data, self._cms, self._cds)
            self._active_key = key
        cms, identity, anchors = self._cms, np.eye(3), self._anchors
        for i, k in enumerate(key):  # cms[i] is the vector's own element: changed in place
            cms[i].joint2_placement = pin.SE3(identity, anchors[k])
        return self._cms, self._cds

    def _constraint(self, k: int) -> pin.RigidConstraintModel:
        """Point k's contact, in the axes of its foot's joint (LOCAL): Pinocchio takes the Baumgarte
        errors of a CONTACT_3D in those axes even for LOCAL_WORLD_ALIGNED, whose rows are in world
        axes, and the two would not agree on a tilted foot."""
        identity = np.eye(3)
        constraint = pin.RigidConstraintModel(
            pin.ContactType.CONTACT_3D,
            self.model,
            self._feet[self._owners[k]].joint,
            pin.SE3(identity, self.points[k]),
            0,
            pin.SE3(identity, self._anchors[k]),
            pin.ReferenceFrame.LOCAL,
        )
        constraint.m_baumgarte_parameters.Kp = self.baumgarte_kp
        constraint.m_baumgarte_parameters.Kd = self.baumgarte_kd
        return constraint

    def _point_positions(self) -> np.ndarray:
        """World positions of the contact points, (k, 3), from ``data.oMi`` (kinematics done); keeps
        the feet's joint rotations in ``_rotations``."""
        positions, oMi = np.empty((self._owners.size, 3)), self.data.oMi
        for index, foot in enumerate(self._feet):
            placement = oMi[foot.joint]
            self._rotations[index] = placement.rotation
            positions[foot.points_slice] = foot.points @ placement.rotation.T + placement.translation
        return positions

    def _passive_forces(self) -> np.ndarray:
        """The generalized forces (size nv) that are not the actuators': the joints' viscous damping
        (``model.damping``) and the push on the base."""
        q, v = self._q, self._v
        generalized = np.zeros(self.robot.nv)
        generalized[self._actuated] = -self._damping * v[self._actuated]
        if self._floating and self.time < self._push_end - 1e-9 * self.timestep:
            rotation = pin.Quaternion(q[6], q[3], q[4], q[5]).normalized().toRotationMatrix()
            force = rotation.T @ self._push_force  # in the base frame, at the base's CoM
            generalized[:3] += force
            generalized[3:6] += np.cross(self.model.inertias[1].lever, force)
        return generalized


def _inside(point: np.ndarray, polygon: np.ndarray, tolerance: float = COP_TOLERANCE) -> bool:
    """Whether ``point`` (x, y) lies in the convex hull of the k = 2..4 points ``polygon`` (k, 2),
    up to ``tolerance`` [m]: on the segment for two points, in the convex polygon for more."""
    if polygon.shape[0] == 2:
        a, b = polygon
        edge = b - a
        length = float(np.linalg.norm(edge))
        along = float((point - a) @ edge) / length
        return -tolerance <= along <= length + tolerance
    centre = polygon.mean(axis=0)
    order = np.argsort(np.arctan2(*(polygon - centre).T[::-1]))  # counter-clockwise
    ring = polygon[order]
    for a, b in zip(ring, np.roll(ring, -1, axis=0), strict=True):
        edge = b - a
        cross = edge[0] * (point[1] - a[1]) - edge[1] * (point[0] - a[0])
        if cross < -tolerance * np.linalg.norm(edge):
            return False
    return True


@dataclass(frozen=True)
class _Foot:
    """A contact frame: its id, its parent joint, its points in the joint's frame (k, 3), their
    rows among all points, and its sole's normal in the joint's frame (None for a point foot)."""

    frame_id: int
    joint: int
    points: np.ndarray
    points_slice: slice
    normal: np.ndarray | None
