"""Contact base class: a rigid contact brings force variables and three constraints.

The three constraints (motion, force inequality, force regularization) and the force generator T:
docs/concepts/contacts.md. What a subclass implements: docs/architecture.md, section "Writing your
own task".
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin

from tsid_py.constraints import ConstraintEquality, ConstraintInequality
from tsid_py.errors import InvalidParameterError
from tsid_py.robot_wrapper import Frame, RobotWrapper
from tsid_py.sealed import Sealed
from tsid_py.tasks.task_base import TaskMotion
from tsid_py.tasks.task_parts import Gain
from tsid_py.tasks.task_se3_equality import TaskSE3Equality
from tsid_py.validation import as_scalar, as_unit_vector, as_vector


class ContactBase(Sealed):
    """Common state of every contact: its motion task, friction and normal-force parameters.

    The force inequality, for ``n_points`` points: a 4-sided friction pyramid per point
    (:func:`friction_pyramid`), then f_min <= total normal force <= f_max. The force regularization:
    W T f = W f_ref, W = diag(``regularization_weights``).

    Args:
        name: Contact name (unique in a formulation).
        robot: The robot.
        frame: The contact frame; forces are expressed in it.
        contact_normal: Unit normal of the contact surface in the contact frame.
        mu: Friction coefficient, > 0.
        f_min: Minimum normal force, >= 0 [N].
        f_max: Maximum normal force, >= f_min [N].
    """

    n_points: int = 0
    n_force: int = 0
    wrench_size: int = 6
    motion_mask: tuple[float, ...] = (1.0,) * 6  # which rows of the 6-D frame acceleration are held
    unilateral: bool = True  # pushes along a normal: the last force-inequality row bounds the total
    # normal force (f_min..f_max), which transitions ramp

    def __init__(
        self,
        name: str,
        robot: RobotWrapper,
        frame: Frame,
        contact_normal: object,
        mu: float,
        f_min: float,
        f_max: float,
    ) -> None:
        self._init_motion(name, robot, TaskSE3Equality(name, robot, frame))
        self.frame_id = self.motion_task.frame_id
        self.frame_name = self.motion_task.frame_name
        self._normal = as_unit_vector("contact_normal", contact_normal)
        self._mu = as_scalar("mu", mu, minimum=0.0, strict=True)
        f_min = as_scalar("f_min", f_min, minimum=0.0)  # TSID's constructors take 0 (ex_4_conf: fMin = 0)
        f_max = as_scalar("f_max", f_max)
        if f_min > f_max:
            raise InvalidParameterError(f"f_min must be <= f_max, got f_min = {f_min} N > f_max = {f_max} N")
        self._f_min, self._f_max = f_min, f_max
        self._init_forces()

    def _init_motion(self, name: str, robot: RobotWrapper, motion_task: TaskMotion) -> None:
        """Name, robot and the motion task (masked with ``motion_mask``) of any contact."""
        self.name = name
        self.robot = robot
        # a TaskSE3Equality, or the motion task of the contact's kind (two frames, a line)
        self.motion_task: Any = motion_task
        self.motion_task.mask = self.motion_mask

    def _init_forces(self) -> None:
        """Force inequality and regularization, once the force parameters are set."""
        self._force_reference = np.zeros(self.wrench_size)
        self._force_regularization = ConstraintEquality(self.name, self.wrench_size, self.n_force)
        self._regularization_weights = self.default_regularization_weights()
        self._update_force_inequality()
        self._update_force_regularization()

    def __setattr__(self, name: str, value: object) -> None:
        """An attribute set on a contact, its own included, tells the problems it is in
        (:func:`tsid_py.sealed.watch`), which then copy its force rows and generator again: they
        are made from its attributes, whichever they are (a subclass's parameter too). A property
        tells through what its setter sets (:meth:`Sealed._set_watched`)."""
        super().__setattr__(name, value)  # a public name: Sealed tells
        if name[0] == "_" and self._watchers:
            self._tell()

    # ------------------------------------------------------------ subclass API
    def default_regularization_weights(self) -> np.ndarray:
        """The regularization weights W a new contact starts with, one per wrench component."""
        raise NotImplementedError

    def _generator(self) -> np.ndarray:
        """T: contact force variables -> wrench in the contact frame (wrench_size x n_force)."""
        raise NotImplementedError

    def _update_force_inequality(self) -> None:
        """Friction pyramid rows (<= 0) per point, then f_min <= total normal force <= f_max."""
        self._set_cone(friction_pyramid(self._normal, self._mu, self.n_points))

    def _set_cone(self, rows: np.ndarray) -> None:
        """The force inequality: ``rows`` f <= 0, but the last, f_min <= its row f <= f_max (the
        total normal force)."""
        lower, upper = np.full(rows.shape[0], -np.inf), np.zeros(rows.shape[0])
        lower[-1], upper[-1] = self._f_min, self._f_max
        self._force_constraint = ConstraintInequality(self.name, rows, lower, upper)

    def _update_force_regularization(self) -> None:
        W = self._regularization_weights
        self._force_regularization.matrix = W[:, None] * self._generator()
        self._force_regularization.vector = W * self._force_reference

    # ----------------------------------------------------------------- gains
    # One gain per constrained motion row: 6 for a surface contact, 3 for a point (as TSID's
    # ContactPoint::Kp); the motion task holds them in its 6 components.
    kp = Gain(
        "Gains of the contact motion constraint, one per constrained row [1/s^2] (a read-only copy: "
        "set them with ``contact.kp = ...``).",
        held_by="motion_task",
    )
    kd = Gain(
        "Damping of the contact motion constraint, one per constrained row [1/s] (a read-only copy); "
        "2 sqrt(kp) when never set.",
        held_by="motion_task",
    )

    def _gain_rows(self) -> np.ndarray:
        """The motion task's components the contact constrains, which its gains are."""
        return np.flatnonzero(self.motion_mask)

    # ------------------------------------------------------------- references
    def set_reference(self, placement: pin.SE3) -> None:
        """Set the placement the contact frame is held at (world frame).

        Raises:
            NonFiniteError: The placement holds NaN or infinity.
            DimensionError: Its rotation is not a rotation matrix (orthonormal, determinant +1).
        """
        self.motion_task.set_reference(placement)

    @property
    def reference(self) -> pin.SE3:
        """The placement the contact frame is held at (a copy)."""
        return self.motion_task.reference_placement

    def set_force_reference(self, wrench: object) -> None:
        """The wrench the regularization pulls toward, in the contact frame [N, N m]."""
        self._force_reference = as_vector("force reference", wrench, self.wrench_size)
        self._update_force_regularization()

    @property
    def force_reference(self) -> np.ndarray:
        """The wrench the regularization pulls toward [N, N m] (a copy)."""
        return self._force_reference.copy()

    def set_regularization_task_weight_vector(self, weights: object) -> None:
        """Per-component weights of the force regularization (size of the wrench), >= 0."""
        weights = as_vector("regularization weights", weights, self.wrench_size)
        if np.any(weights < 0):
            raise InvalidParameterError(f"regularization weights must be >= 0, got {weights.tolist()}")
        self._regularization_weights = weights
        self._update_force_regularization()

    @property
    def regularization_weights(self) -> np.ndarray:
        """Per-component weights W of the force regularization (a copy)."""
        return self._regularization_weights.copy()

    # --------------------------------------------------------- friction etc.
    @property
    def contact_normal(self) -> np.ndarray:
        """The surface normal in the contact frame (a copy)."""
        return self._normal.copy()

    def set_contact_normal(self, normal: object) -> None:
        """Set the surface normal in the contact frame (normalized here)."""
        self._normal = as_unit_vector("contact_normal", normal)
        self._update_force_inequality()

    @property
    def mu(self) -> float:
        """Friction coefficient."""
        return self._mu

    def set_friction_coefficient(self, mu: float) -> None:
        """Set the friction coefficient mu > 0."""
        self._mu = as_scalar("mu", mu, minimum=0.0, strict=True)
        self._update_force_inequality()

    @property
    def min_normal_force(self) -> float:
        """f_min [N]."""
        return self._f_min

    @property
    def max_normal_force(self) -> float:
        """f_max [N]."""
        return self._f_max

    def set_min_normal_force(self, f_min: float) -> None:
        """Set f_min [N], >= 0 (0: the contact may unload fully, as the constructor allows) and
        <= f_max.

        Raises:
            InvalidParameterError: f_min < 0 or f_min > f_max.
        """
        f_min = as_scalar("f_min", f_min, minimum=0.0)
        if f_min > self._f_max:
            raise InvalidParameterError(f"f_min must be <= f_max = {self._f_max} N, got {f_min} N")
        self._f_min = f_min
        self._update_force_inequality()

    def set_max_normal_force(self, f_max: float) -> None:
        """Set f_max [N], >= f_min.

        Raises:
            InvalidParameterError: f_max < f_min.
        """
        f_max = as_scalar("f_max", f_max)
        if f_max < self._f_min:
            raise InvalidParameterError(f"f_max must be >= f_min = {self._f_min} N, got {f_max} N")
        self._f_max = f_max
        self._update_force_inequality()

    def get_normal_force(self, forces: object) -> float:
        """The total normal force n . sum_i f_i of the contact's force variables [N].

        Args:
            forces: The contact's force variables, size ``n_force``.
        """
        forces = as_vector("contact forces", forces, self.n_force, copy=False)
        return float(self._normal.dot(forces.reshape(-1, 3).sum(axis=0)))

    def wrench(self, forces: object) -> np.ndarray:
        """The wrench T f in the contact frame [N, N m].

        Args:
            forces: The contact's force variables, size ``n_force``.
        """
        return self._generator().dot(as_vector("contact forces", forces, self.n_force, copy=False))

    # ------------------------------------------------------------ where it touches
    def local_points(self) -> np.ndarray:
        """The contact's points in its frame, 3 x n_points [m] (a copy)."""
        return self._local_points().copy()

    def _local_points(self) -> np.ndarray:
        """The points in the contact frame (subclasses with several points override): the origin."""
        return np.zeros((3, max(self.n_points, 1)))

    def world_points(self, data: pin.Data) -> np.ndarray:
        """The contact's points in the world, 3 x n_points [m] (a surface contact only)."""
        if not self.unilateral:
            raise InvalidParameterError(f"contact {self.name!r} is bilateral: it has no contact surface")
        placement = self.robot.frame_placement(data, self.frame_id)
        return placement.rotation.dot(self._local_points()) + placement.translation[:, None]

    def force_rotation(self, data: pin.Data) -> np.ndarray:
        """The rotation from the axes the force variables are expressed in to the world."""
        if self.motion_task.local_frame:
            return self.robot.frame_placement(data, self.frame_id).rotation
        return np.eye(3)

    def point_forces(self, forces: object) -> np.ndarray:
        """The forces the friction and normal-force checks read, one row per point of contact, in
        the contact frame [N]: the force variables three by three (a contact whose variables are
        not point forces overrides it)."""
        return as_vector("contact forces", forces, self.n_force, copy=False).reshape(-1, 3)

    def point_force_map(self) -> np.ndarray:
        """P: the force variables -> the point forces :meth:`world_forces` reads, stacked point by
        point in the force variables' axes (3 n_points x n_force, a new array). The identity where
        the variables are the point forces."""
        return np.eye(self.n_force)

    def world_forces(self, data: pin.Data, forces: object) -> np.ndarray:
        """The force variables as one 3-D force per point in world axes, n_points x 3 [N]."""
        forces = as_vector("contact forces", forces, self.n_force, copy=False)
        return forces.reshape(-1, 3).dot(self.force_rotation(data).T)

    # --------------------------------------------------- formulation interface
    @property
    def force_generator(self) -> np.ndarray:
        """T: contact force variables -> wrench in the contact frame (wrench_size x n_force), a copy."""
        return self._generator().copy()

    @property
    def motion_constraint(self) -> ConstraintEquality:
        """The motion constraint as last computed (a copy)."""
        return self.motion_task.constraint

    def compute_motion_task(
        self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data
    ) -> ConstraintEquality:
        """The motion constraint J dv = a* - dJ v at time t [s] from (q, v) and ``data`` filled by
        ``robot.compute_all_terms``: a new constraint, the caller's (TSID's ``computeMotionTask``)."""
        constraint = self.motion_task.compute(t, q, v, data)
        assert isinstance(constraint, ConstraintEquality)
        return constraint

    @property
    def force_constraint(self) -> ConstraintInequality:
        """Friction pyramid and normal-force bounds on the force variables (a copy)."""
        return self._force_constraint.copy()  # type: ignore[return-value]  # a copy keeps its kind

    @property
    def force_regularization(self) -> ConstraintEquality:
        """W T f = W f_ref, a least-squares cost (a copy)."""
        return self._force_regularization.copy()  # type: ignore[return-value]  # a copy keeps its kind

    def write_force_constraints(
        self, inequality: ConstraintInequality, regularization: ConstraintEquality
    ) -> None:
        """Copy the force inequality and the regularization into constraints of the same shapes
        (the formulation's rows, whenever the contact changed since it last did: :meth:`__setattr__`)."""
        inequality.matrix[...] = self._force_constraint.matrix
        inequality.lower_bound[...] = self._force_constraint.lower_bound
        inequality.upper_bound[...] = self._force_constraint.upper_bound
        regularization.matrix[...] = self._force_regularization.matrix
        regularization.vector[...] = self._force_regularization.vector

    @property
    def force_inequality_rows(self) -> int:
        """Rows of the force inequality."""
        return self._force_constraint.rows

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, frame={self.frame_name!r})"


def tangent_directions(normal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit tangents orthogonal to ``normal``, as TSID builds them (n x e_x, else n x e_y)."""
    t1 = np.cross(normal, [1.0, 0.0, 0.0])
    if np.linalg.norm(t1) < 1e-5:
        t1 = np.cross(normal, [0.0, 1.0, 0.0])
    t2 = np.cross(normal, t1)
    return t1 / np.linalg.norm(t1), t2 / np.linalg.norm(t2)


def friction_pyramid(normal: np.ndarray, mu: float, points: int) -> np.ndarray:
    """Rows B with B f <= 0 for the 4-sided pyramid |f.t_k| <= mu f.n at each of ``points`` points.

    Followed by one row n^T summed over the points (the total normal force). Shape (4 points + 1, 3 points).
    """
    t1, t2 = tangent_directions(normal)
    block = np.array([-t1 - mu * normal, t1 - mu * normal, -t2 - mu * normal, t2 - mu * normal])
    B = np.zeros((4 * points + 1, 3 * points))
    for i in range(points):
        B[4 * i : 4 * i + 4, 3 * i : 3 * i + 3] = block
        B[-1, 3 * i : 3 * i + 3] = normal
    return B


def contacts_of(controller: object) -> dict[str, ContactBase]:
    """Every contact a controller knows, by name: those in its formulation and its ``contacts`` table."""
    found = {}
    for contact in getattr(controller, "contacts", {}).values():
        found[contact.name] = contact
    formulation = getattr(controller, "formulation", None)
    if formulation is not None:
        found.update(formulation.contacts)
    return found
