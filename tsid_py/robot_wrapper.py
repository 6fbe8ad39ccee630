"""RobotWrapper: the one place where tsid_py talks to Pinocchio's kinematics and dynamics.

Its conventions are the C++ TSID ``RobotWrapper``'s (stack-of-tasks/tsid,
``src/robots/robot-wrapper.cpp``). The actuated joints are the last ``na`` entries of the velocity
vector. A floating base is a free-flyer first joint (``nv - na = 6``). :meth:`RobotWrapper.compute_all_terms`
fills one ``pinocchio.Data`` per control step, at zero acceleration. The conventions of q, v,
frames and units: docs/concepts/conventions.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pinocchio as pin

from tsid_py.errors import (
    InvalidParameterError,
    MissingFileError,
    RobotSpecError,
    UnknownFrameError,
    UnknownNameError,
)
from tsid_py.sealed import Sealed
from tsid_py.validation import as_vector, is_plain_vector, unknown_name_message

Frame = str | int

MAX_POSITION = 1e6  # |q_i| beyond this [m or rad] is no robot's state
MAX_VELOCITY = 1e5  # |v_i| beyond this [m/s or rad/s] neither
_FAST_BOUND = MAX_VELOCITY**2  # q.q + v.v below it: every entry within both bounds
QUATERNION_TOLERANCE = 1e-6  # on |quat|^2 - 1; pinocchio.integrate keeps it near 1e-15


FRAME_TYPE_ORDER = {
    pin.FrameType.BODY: 0,
    pin.FrameType.FIXED_JOINT: 1,
    pin.FrameType.OP_FRAME: 2,
    pin.FrameType.JOINT: 3,
}  # which of several frames of one name a name means: a link's first


class RobotWrapper(Sealed):
    """A Pinocchio model plus the sizes and accessors the tasks need.

    The wrapper keeps its own copy of the model. Changing the caller's model afterwards does not
    change the robot; :meth:`set_gravity` and :meth:`set_rotor_inertias` do not change the
    caller's model.

    Args:
        model: The Pinocchio model. A floating base must be its first joint, a free flyer.
        fixed_base: Whether the root is fixed. ``None`` decides from the first joint.
        name: A label used in messages and plots.
        visual_model: Optional visual geometry, kept for viewers.
    """

    def __init__(
        self,
        model: pin.Model,
        *,
        fixed_base: bool | None = None,
        name: str = "",
        visual_model: pin.GeometryModel | None = None,
    ) -> None:
        if not isinstance(model, pin.Model):
            raise InvalidParameterError(f"model must be a pinocchio.Model, got {type(model).__name__}")
        has_free_flyer = model.njoints > 1 and model.joints[1].shortname() == "JointModelFreeFlyer"
        if fixed_base is None:
            fixed_base = not has_free_flyer
        if not fixed_base and not has_free_flyer:
            raise InvalidParameterError("a floating-base robot needs a free-flyer first joint")
        self.model = model = pin.Model(model)
        self.name = name or model.name
        self.visual_model = visual_model
        self.is_fixed_base = fixed_base
        self.nq = model.nq
        self.nv = model.nv
        self.na = model.nv if fixed_base else model.nv - 6
        self.nq_actuated = model.nq if fixed_base else model.nq - 7
        self.total_mass = float(pin.computeTotalMass(model))  # [kg], bodies fixed to the world excluded
        self._frame_ids: dict[str, int] = {}
        self._nframes = model.nframes  # read again when an index beyond it is asked for
        actuated = model.armature[self.nv - self.na :]
        self._rotor_inertias = np.array(actuated, dtype=float)  # the URDF's armature, if any
        self._gear_ratios = np.ones(self.na)
        self._no_joint_forces = pin.StdVec_Force()  # copied by zero_external_forces, never handed out
        self._no_joint_forces.extend(pin.Force.Zero() for _ in range(model.njoints))

    @classmethod
    def from_urdf(
        cls,
        urdf: str | Path,
        package_dirs: Sequence[str | Path] = (),
        *,
        floating_base: bool = True,
        srdf: str | Path | None = None,
        load_visuals: bool = False,
    ) -> RobotWrapper:
        """Build from a URDF file.

        Args:
            urdf: The URDF file.
            package_dirs: Where the meshes' ``package://`` paths are looked up (for visuals).
            floating_base: Whether the root is a free flyer.
            srdf: An SRDF file: it gives the named reference configurations (e.g. ``half_sitting``).
            load_visuals: Whether to load the visual geometry.

        Raises:
            MissingFileError: The URDF or the SRDF is not a file.
        """
        model, visual_model = build_model_from_urdf(urdf, package_dirs, floating_base, srdf, load_visuals)
        return cls(model, fixed_base=not floating_base, name=Path(urdf).stem, visual_model=visual_model)

    # ------------------------------------------------------------ model terms
    @property
    def gravity(self) -> pin.Motion:
        """The gravity acceleration as a spatial motion (linear, angular) [m/s^2] (a copy)."""
        return pin.Motion(self.model.gravity)

    def set_gravity(self, gravity: pin.Motion | object) -> None:
        """Set the gravity of the dynamics (TSID's ``setGravity``). Data created before keep working.

        Args:
            gravity: A ``pinocchio.Motion``, a 6-vector (linear, angular), or the 3-vector linear
                part [m/s^2].
        """
        if isinstance(gravity, pin.Motion):
            vector = gravity.vector
        else:
            vector = as_vector("gravity", gravity)
            if vector.shape[0] == 3:
                vector = np.concatenate([vector, np.zeros(3)])
        self.model.gravity = pin.Motion(as_vector("gravity", vector, 6))

    @property
    def rotor_inertias(self) -> np.ndarray:
        """Rotor inertia of each actuated joint's motor, size na [kg m^2] (a copy)."""
        return self._rotor_inertias.copy()

    @property
    def gear_ratios(self) -> np.ndarray:
        """Gear ratio of each actuated joint's motor, size na (a copy)."""
        return self._gear_ratios.copy()

    def set_rotor_inertias(self, inertias: object) -> None:
        """Motor rotor inertias, size na [kg m^2]; see :meth:`set_gear_ratios`."""
        self._rotor_inertias = as_vector("rotor inertias", inertias, self.na)
        self._set_armature()

    def set_gear_ratios(self, ratios: object) -> None:
        """Set the motor gear ratios, size na.

        The mass matrix gets ratio^2 * rotor inertia added on the diagonal of each actuated joint:
        the motor's reflected inertia, as in TSID's ``RobotWrapper::computeAllTerms``. It goes
        through Pinocchio's ``model.armature``.
        """
        self._gear_ratios = as_vector("gear ratios", ratios, self.na)
        self._set_armature()

    def _set_armature(self) -> None:
        if np.any(self._rotor_inertias < 0.0):
            raise InvalidParameterError(f"rotor inertias must be >= 0, got {self._rotor_inertias}")
        armature = np.array(self.model.armature)
        armature[self.nv - self.na :] = self._gear_ratios**2 * self._rotor_inertias
        self.model.armature = armature

    # ------------------------------------------------------------------ state
    def create_data(self) -> pin.Data:
        """A fresh ``pinocchio.Data`` for this model."""
        return self.model.createData()

    def zero_external_forces(self) -> pin.StdVec_Force:
        """One zero force per joint (a new container), the ``fext`` of Pinocchio's ``rnea``."""
        return pin.StdVec_Force(self._no_joint_forces)

    def zero_velocity(self) -> np.ndarray:
        """The zero velocity vector (size nv) [m/s, rad/s]."""
        return np.zeros(self.nv)

    def neutral_configuration(self) -> np.ndarray:
        """Pinocchio's neutral configuration (size nq)."""
        return pin.neutral(self.model)

    def reference_configuration(self, name: str) -> np.ndarray:
        """A named configuration from the SRDF, e.g. ``"half_sitting"`` (a copy, size nq)."""
        configurations = self.model.referenceConfigurations
        names = [entry.key() for entry in configurations]
        if name not in names:
            raise UnknownNameError(unknown_name_message("reference configuration", name, names))
        return np.array(configurations[name], dtype=float)

    def check_state(self, q: object, v: object) -> tuple[np.ndarray, np.ndarray]:
        """(q, v) checked, as float arrays.

        Checks: the sizes; finite entries of physical magnitude (|q_i| <= MAX_POSITION,
        |v_i| <= MAX_VELOCITY); with a floating base, a unit quaternion (to QUATERNION_TOLERANCE on
        its squared norm). The common case is checked in one go: q.q + v.v is below MAX_VELOCITY^2
        only if every entry is finite and of physical size (a NaN fails the comparison). Anything
        else goes to the full checks, which name the entry.

        Raises:
            DimensionError: A wrong size.
            NonFiniteError: A NaN or an infinity.
            InvalidParameterError: An entry beyond physical sense, or a quaternion whose norm is not 1.
        """
        if is_plain_vector(q, self.nq) and is_plain_vector(v, self.nv) and q.dot(q) + v.dot(v) < _FAST_BOUND:
            if self.is_fixed_base:
                return q, v
            quaternion = q[3:7]
            if abs(quaternion.dot(quaternion) - 1.0) <= QUATERNION_TOLERANCE:
                return q, v
        q, v = as_vector("q", q, self.nq), as_vector("v", v, self.nv)
        for name, values, bound, unit in (
            ("q", q, MAX_POSITION, "m or rad"),
            ("v", v, MAX_VELOCITY, "m/s or rad/s"),
        ):
            beyond = np.flatnonzero(np.abs(values) > bound)
            if beyond.size:
                i = int(beyond[0])
                raise InvalidParameterError(
                    f"{name}[{i}] = {values[i]:g} is beyond physical sense (|{name}| <= {bound:g} {unit})"
                )
        if not self.is_fixed_base:
            norm = float(np.linalg.norm(q[3:7]))
            if abs(norm**2 - 1.0) > QUATERNION_TOLERANCE:
                raise InvalidParameterError(
                    f"the base quaternion q[3:7] = {q[3:7].tolist()} has norm {norm:.6g}, not 1: "
                    "normalize it (pinocchio.normalize(model, q)) before handing it over"
                )
        return q, v

    def compute_all_terms(self, data: pin.Data, q: object, v: object) -> None:
        """Fill ``data`` at (q, v), with zero acceleration.

        Every acceleration read from ``data`` is then a *drift*: the part of an acceleration that
        does not depend on dv. It computes the mass matrix, the nonlinear effects
        h = C(q, v) v + g(q), the joint Jacobians, the frame placements, the CoM and its Jacobian,
        the centroidal momentum matrix A_g and the momentum drift dA_g v. The CoM drift is
        m^-1 times the linear part of dA_g v.

        Args:
            data: A Data of this model (:meth:`create_data`).
            q: Configuration, size nq; checked (:meth:`check_state`).
            v: Velocity, size nv; checked.
        """
        self.compute_all_terms_checked(data, *self.check_state(q, v))

    def forward_kinematics(self, data: pin.Data, q: object) -> None:
        """Fill the joint placements of ``data`` at q (enough for :meth:`frame_placement`)."""
        pin.forwardKinematics(self.model, data, as_vector("q", q, self.nq, copy=False))

    def compute_all_terms_checked(self, data: pin.Data, q: np.ndarray, v: np.ndarray) -> None:
        """:meth:`compute_all_terms` for (q, v) already validated by :meth:`check_state`."""
        pin.computeAllTerms(self.model, data, q, v)
        pin.updateFramePlacements(self.model, data)
        pin.computeCentroidalMomentumTimeVariation(self.model, data)

    # -------------------------------------------------------------- dynamics
    # Each accessor below returns a new array (the caller's to keep or change), or, given ``out``,
    # writes into that array and returns it: the library's own hot paths pass their buffers.
    def mass(self, data: pin.Data, out: np.ndarray | None = None) -> np.ndarray:
        """Joint-space mass matrix M(q), nv x nv [kg, kg m^2]."""
        return _copy(data.M, out)

    def nonlinear_effects(self, data: pin.Data, out: np.ndarray | None = None) -> np.ndarray:
        """Coriolis, centrifugal and gravity terms h(q, v), size nv [N, N m]."""
        return _copy(data.nle, out)

    def com(self, data: pin.Data, out: np.ndarray | None = None) -> np.ndarray:
        """Centre of mass position in the world frame [m]."""
        return _copy(data.com[0], out)

    def com_vel(self, data: pin.Data, out: np.ndarray | None = None) -> np.ndarray:
        """Centre of mass velocity in the world frame [m/s]."""
        return _copy(data.vcom[0], out)

    def com_acc(self, data: pin.Data, out: np.ndarray | None = None) -> np.ndarray:
        """CoM acceleration at dv = 0 (the drift dJ_com v) [m/s^2]."""
        if out is None:
            return data.dhg.linear / self.total_mass
        return np.divide(data.dhg.linear, self.total_mass, out=out)

    def com_jacobian(self, data: pin.Data, out: np.ndarray | None = None) -> np.ndarray:
        """CoM Jacobian J_com(q), 3 x nv."""
        return _copy(data.Jcom, out)

    def momentum_jacobian(self, data: pin.Data, out: np.ndarray | None = None) -> np.ndarray:
        """Centroidal momentum matrix A_g(q), 6 x nv (linear rows first)."""
        return _copy(data.Ag, out)

    def centroidal_momentum(self, data: pin.Data) -> np.ndarray:
        """Centroidal momentum h_g = A_g v, 6-vector (linear [kg m/s], angular [kg m^2/s])."""
        return np.array(data.hg.vector)

    def angular_momentum_time_variation(self, data: pin.Data) -> np.ndarray:
        """Angular part of dA_g v, the angular-momentum drift at dv = 0 [N m]."""
        return np.array(data.dhg.angular)

    def actuated_joint_names(self) -> list[str]:
        """The joint of each actuated velocity, by name (size na; a joint of several velocities
        is named once per velocity). Pinocchio's joint 0, the universe, moves nothing."""
        model, first = self.model, self.nv - self.na
        return [
            model.names[j]
            for j in range(1, model.njoints)
            if model.joints[j].idx_v >= first
            for _ in range(model.joints[j].nv)
        ]

    # ---------------------------------------------------------------- frames
    def frame_id(self, frame: Frame) -> int:
        """The index of a frame given by name (:func:`frame_index`) or an index, checked."""
        if type(frame) is int and 0 <= frame < self._nframes:  # the common case, checked first
            return frame
        if isinstance(frame, (int, np.integer)):
            if 0 <= frame < self._nframes:
                return int(frame)
            self._nframes = self.model.nframes  # frames may have been added to the model since
            if not 0 <= frame < self._nframes:
                raise UnknownFrameError(f"frame index {frame} out of range [0, {self._nframes})")
            return int(frame)
        cached = self._frame_ids.get(frame)
        if cached is not None:
            return cached
        if not isinstance(frame, str):
            raise UnknownFrameError(
                unknown_name_message("frame", str(frame), [f.name for f in self.model.frames])
            )
        self._frame_ids[frame] = frame_index(self.model, frame)
        return self._frame_ids[frame]

    def joint_id(self, joint: Frame) -> int:
        """The index of a joint given by name (or an index, checked; 0 is the universe)."""
        if isinstance(joint, (int, np.integer)):
            if not 0 <= joint < self.model.njoints:
                raise UnknownFrameError(
                    f"joint index {joint} out of range [0, {self.model.njoints}) "
                    "(a joint index, not a frame index)"
                )
            return int(joint)
        if not isinstance(joint, str) or not self.model.existJointName(joint):
            raise UnknownFrameError(unknown_name_message("joint", str(joint), list(self.model.names)))
        return self.model.getJointId(joint)

    def joint_placement(self, data: pin.Data, joint: Frame) -> pin.SE3:
        """Placement of the joint in the world, oMi, from the joint placements in ``data`` (a copy;
        TSID's ``position``). Frames have their own accessor, :meth:`frame_placement`."""
        return pin.SE3(data.oMi[self.joint_id(joint)])

    def frame_name(self, frame: Frame) -> str:
        """The name of a frame given by name or index."""
        return self.model.frames[self.frame_id(frame)].name

    def frame_placement(self, data: pin.Data, frame: Frame) -> pin.SE3:
        """Placement of the frame in the world, oMf, from the joint placements in ``data`` (a copy).

        As TSID's ``framePosition``, it is computed from ``data.oMi``, with Pinocchio's
        ``updateFramePlacement`` (which also refreshes ``data.oMf``). That is ten times faster than
        copying ``data.oMf[i]`` through the bindings.
        """
        return pin.updateFramePlacement(self.model, data, self.frame_id(frame))

    def frame_velocity(self, data: pin.Data, frame: Frame) -> pin.Motion:
        """Spatial velocity of the frame, expressed in the frame (LOCAL)."""
        return pin.getFrameVelocity(self.model, data, self.frame_id(frame), pin.LOCAL)

    def frame_velocity_world_oriented(self, data: pin.Data, frame: Frame) -> pin.Motion:
        """Velocity of the frame expressed in LOCAL_WORLD_ALIGNED (origin at the frame, world axes)."""
        return pin.getFrameVelocity(self.model, data, self.frame_id(frame), pin.LOCAL_WORLD_ALIGNED)

    def frame_acceleration(self, data: pin.Data, frame: Frame) -> pin.Motion:
        """Spatial acceleration drift (at dv = 0) of the frame, LOCAL."""
        return pin.getFrameAcceleration(self.model, data, self.frame_id(frame), pin.LOCAL)

    def frame_classic_acceleration(self, data: pin.Data, frame: Frame) -> pin.Motion:
        """Classical acceleration drift (at dv = 0) of the frame origin, LOCAL.

        Classical means the linear part is the second time derivative of the origin position
        (spatial acceleration plus omega x v), as in TSID's ``frameClassicAcceleration``.
        """
        return pin.getFrameClassicalAcceleration(self.model, data, self.frame_id(frame), pin.LOCAL)

    def frame_classic_acceleration_world_oriented(self, data: pin.Data, frame: Frame) -> pin.Motion:
        """Classical acceleration drift of the frame origin in LOCAL_WORLD_ALIGNED axes."""
        return pin.getFrameClassicalAcceleration(
            self.model, data, self.frame_id(frame), pin.LOCAL_WORLD_ALIGNED
        )

    def frame_motion(
        self, data: pin.Data, frame: Frame, local: bool = True
    ) -> tuple[pin.SE3, np.ndarray, np.ndarray]:
        """What a task on a frame needs, in one call.

        Args:
            data: Filled by :meth:`compute_all_terms`.
            frame: A frame name or index.
            local: The frame's axes (LOCAL); False: world-aligned axes (LOCAL_WORLD_ALIGNED).

        Returns:
            placement: The placement (a copy).
            jacobian: The Jacobian, 6 x nv.
            acceleration: The classical acceleration of the origin at dv = 0, 6-vector, linear
                first [m/s^2, rad/s^2].
        """
        model, index = self.model, self.frame_id(frame)
        axes = pin.LOCAL if local else pin.LOCAL_WORLD_ALIGNED
        return (
            pin.updateFramePlacement(model, data, index),
            pin.getFrameJacobian(model, data, index, axes),
            pin.getFrameClassicalAcceleration(model, data, index, axes).vector,
        )

    def frame_jacobian_local(self, data: pin.Data, frame: Frame) -> np.ndarray:
        """Frame Jacobian in the LOCAL frame, 6 x nv (linear rows first)."""
        return pin.getFrameJacobian(self.model, data, self.frame_id(frame), pin.LOCAL)

    def frame_jacobian_world_oriented(self, data: pin.Data, frame: Frame) -> np.ndarray:
        """Frame Jacobian in LOCAL_WORLD_ALIGNED axes, 6 x nv."""
        return pin.getFrameJacobian(self.model, data, self.frame_id(frame), pin.LOCAL_WORLD_ALIGNED)

    # ---------------------------------------------------------------- limits
    def effort_limit(self) -> np.ndarray:
        """Torque limits of the actuated joints from the URDF, size na [N m]; inf for a joint
        whose URDF gives none (Pinocchio reads a missing limit as 0: Romeo's fingers)."""
        limit = self.model.effortLimit[self.nv - self.na :]
        return np.where(limit > 0, limit, np.inf)

    def velocity_limit(self) -> np.ndarray:
        """Velocity limits of the actuated joints from the URDF, size na [rad/s]; inf where the
        URDF gives none (read as 0)."""
        limit = self.model.velocityLimit[self.nv - self.na :]
        return np.where(limit > 0, limit, np.inf)

    def position_limits(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper position limits of the actuated joints, size nq_actuated [rad, m]."""
        start = self.nq - self.nq_actuated
        return (
            np.array(self.model.lowerPositionLimit[start:], dtype=float),
            np.array(self.model.upperPositionLimit[start:], dtype=float),
        )

    def __repr__(self) -> str:
        base = "fixed base" if self.is_fixed_base else "floating base"
        return f"RobotWrapper({self.name!r}, nq={self.nq}, nv={self.nv}, na={self.na}, {base})"


def build_model_from_urdf(
    urdf: str | Path,
    package_dirs: Sequence[str | Path],
    floating_base: bool,
    srdf: str | Path | None,
    load_visuals: bool,
) -> tuple[pin.Model, pin.GeometryModel | None]:
    """The Pinocchio model of a URDF, with its SRDF reference postures and optional visuals.

    The arguments are those of :meth:`RobotWrapper.from_urdf`.

    Returns:
        model: The model.
        visual_model: The visual geometry, or None.
    """
    urdf = Path(urdf)
    if not urdf.is_file():
        raise MissingFileError(f"URDF file not found: {urdf}")
    if floating_base:
        model = pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer())
    else:
        model = pin.buildModelFromUrdf(str(urdf))
    if srdf is not None:
        if not Path(srdf).is_file():
            raise MissingFileError(f"SRDF file not found: {srdf}")
        load_reference_configurations(model, srdf)
    visual_model = None
    if load_visuals:
        visual_model = load_geometry(model, urdf, pin.GeometryType.VISUAL, package_dirs)
    return model, visual_model


def turned_up_to(angle: float, low: float) -> float:
    """The same angle [rad] whole turns away: angle + 2 pi k, k the least integer that puts it at or
    above ``low`` (whether it is then within a joint's upper limit is the caller's question)."""
    return angle + 2.0 * math.pi * math.ceil((low - angle) / (2.0 * math.pi))


def load_reference_configurations(model: pin.Model, srdf: str | Path) -> None:
    """The SRDF's states into ``model.referenceConfigurations`` (Pinocchio's reader); a file it
    cannot read is one line (RobotSpecError) naming it."""
    try:
        pin.loadReferenceConfigurations(model, str(srdf), False)
    except (RuntimeError, ValueError) as error:
        raise RobotSpecError(
            f"{srdf}: not an SRDF Pinocchio reads ({' '.join(str(error).split())})"
        ) from None


def frame_index(model: pin.Model, name: str) -> int:
    """The index of the frame ``name`` (UnknownFrameError if none); where a URDF names several
    frames alike (a link and the joint of the same name), the link's, then a fixed joint's, then
    the others (FRAME_TYPE_ORDER)."""
    named = [i for i, f in enumerate(model.frames) if f.name == name]
    if not named:
        raise UnknownFrameError(unknown_name_message("frame", str(name), [f.name for f in model.frames]))
    return min(named, key=lambda i: FRAME_TYPE_ORDER.get(model.frames[i].type, 9))


def load_geometry(
    model: pin.Model, urdf: str | Path, kind: pin.GeometryType, package_dirs: Sequence[str | Path]
) -> pin.GeometryModel:
    """The URDF's collision or visual geometry (``pinocchio.buildGeomFromUrdf``), its
    ``package://NAME/...`` meshes looked up as DIR/NAME/... for each of ``package_dirs`` and of
    ``ROS_PACKAGE_PATH``'s folders (Pinocchio's rule, as ROS's).

    Raises:
        MissingFileError: A mesh found under none of them: one line naming it and where to say
            where its package is.
    """
    dirs = [str(d) for d in package_dirs]
    try:
        return pin.buildGeomFromUrdf(model, str(urdf), kind, package_dirs=dirs)
    except ValueError as exc:
        found = re.search(r"Mesh (\S+) could not be found", str(exc))
        if found is None:
            raise
        mesh = found.group(1)
        package = mesh.removeprefix("package://").split("/")[0] if mesh.startswith("package://") else None
        where = f"the folder that holds package {package!r}" if package else "the mesh's folder"
        raise MissingFileError(
            f"{Path(urdf).name}: mesh {mesh} not found: give {where} with --package-dir DIR (or a "
            "spec's package_dirs, or ROS_PACKAGE_PATH)"
        ) from None


def load_collision_geometry(
    model: pin.Model, urdf: str | Path, package_dirs: Sequence[str | Path]
) -> tuple[pin.GeometryModel, bool]:
    """The URDF's collision geometry (:func:`load_geometry`) or, for a URDF that has none (some
    give only visual meshes, e.g. example-robot-data's Alexander), its visual geometry in its
    place; and whether it is the visual one."""
    collision = load_geometry(model, urdf, pin.GeometryType.COLLISION, package_dirs)
    if collision.ngeoms:
        return collision, False
    return load_geometry(model, urdf, pin.GeometryType.VISUAL, package_dirs), True


def _copy(source: np.ndarray, out: np.ndarray | None) -> np.ndarray:
    """A copy of ``source`` (a view into a Pinocchio Data), new or written into ``out``."""
    if out is None:
        return np.array(source)
    out[...] = source
    return out
