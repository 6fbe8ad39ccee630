"""Physical checks of a solution, computed independently of the formulation's own matrices.

The dynamics residual uses Pinocchio's RNEA with the contact wrenches as external forces, so it
does not reuse the mass matrix, nonlinear effects or contact Jacobians of the formulation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from tsid_py.contacts.contact_base import ContactBase
from tsid_py.errors import InvalidParameterError
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.sealed import watch
from tsid_py.validation import as_vector

FRICTION_RATIO_MIN_NORMAL_FORCE = 1e-3  # [N]


@dataclass
class SolutionCheck:
    """How well one solution satisfies physics.

    Attributes:
        dynamics_residual: max |M dv + h - S^T tau - J^T f| divided by max(1, |h|_inf) (relative).
        min_normal_force: smallest total normal force over the contacts [N] (inf without contacts).
        max_friction_ratio: largest |f_t| / (mu f_n) over contact points carrying more than
            1e-3 N (the pyramid allows sqrt(2); the pyramid violation is the check).
        max_pyramid_violation: largest excess of a point force outside its pyramid [N].
        max_normal_bound_violation: largest excess of a total normal force outside [f_min, f_max] [N].
        max_torque_ratio: largest |tau_i| / tau_max_i over the joints with a finite limit (0 if none).
    """

    dynamics_residual: float
    min_normal_force: float
    max_friction_ratio: float
    max_pyramid_violation: float
    max_normal_bound_violation: float
    max_torque_ratio: float


def dynamics_residual(
    robot: RobotWrapper,
    q: np.ndarray,
    v: np.ndarray,
    dv: np.ndarray,
    tau: np.ndarray,
    contacts: dict[str, tuple[ContactBase, np.ndarray]],
    data: pin.Data | None = None,
    external: np.ndarray | None = None,
) -> float:
    """The relative equation-of-motion error of a solution (:meth:`SolutionChecker.residual`).

    ``data`` is a scratch Pinocchio Data (a new one when None; creating one costs milliseconds for a
    humanoid, so closed loops pass their own, distinct from the formulation's).
    """
    return SolutionChecker(robot, data=data).residual(q, v, dv, tau, contacts, external)


def normal_forces_and_friction_ratio(contact: ContactBase, forces: np.ndarray) -> tuple[np.ndarray, float]:
    """Normal force of each contact point [N] and the largest |f_t| / (mu f_n) over the loaded points."""
    points = contact.point_forces(forces)
    return _normal_forces_and_friction(
        points, np.broadcast_to(contact.contact_normal, points.shape), contact.mu
    )


def _normal_forces_and_friction(
    points: np.ndarray, normals: np.ndarray, mu: float | np.ndarray
) -> tuple[np.ndarray, float]:
    """f_n = f . n of each point force (k x 3, normals k x 3) [N], and the largest |f_t| / (mu f_n)
    over the points loaded above FRICTION_RATIO_MIN_NORMAL_FORCE (an unloaded point's ratio is
    rounding noise; 0 when none is); ``mu`` per point or one for all."""
    f_n = np.einsum("ij,ij->i", points, normals)
    tangential = points - f_n[:, None] * normals
    f_t = np.sqrt(np.einsum("ij,ij->i", tangential, tangential))
    loaded = f_n > FRICTION_RATIO_MIN_NORMAL_FORCE
    ratios = np.divide(f_t, mu * f_n, out=np.zeros_like(f_n), where=loaded)
    return f_n, float(ratios.max(initial=0.0))


def check_solution(
    robot: RobotWrapper,
    q: np.ndarray,
    v: np.ndarray,
    dv: np.ndarray,
    tau: np.ndarray,
    contacts: dict[str, tuple[ContactBase, np.ndarray]],
    tau_max: np.ndarray | None = None,
    data: pin.Data | None = None,
    external: np.ndarray | None = None,
) -> SolutionCheck:
    """Check one solution. ``contacts`` maps a name to (contact, its force variables); ``data`` and
    ``external`` (known external wrenches) as in :func:`dynamics_residual`. A loop that checks
    every step keeps one :class:`SolutionChecker` instead: a call makes one, and stacks the
    contacts' maps (about 0.1 ms for Talos) that a kept checker stacks once."""
    return SolutionChecker(robot, tau_max, data).check(q, v, dv, tau, contacts, external)


class SolutionChecker:
    """The physics checks of one robot's solutions, step after step (:func:`check_solution`).

    What does not change from one step to the next is kept: a scratch Pinocchio Data, the
    container of joint forces, the torque limits, and the contacts' linear maps stacked into one
    matrix, so that one product gives every contact's point forces, friction-pyramid rows and
    wrench on its joint (:class:`_ContactLayout`: made again when the contacts are others, or one
    of them changed, which it tells the checker: :func:`tsid_py.sealed.watch`).

    Args:
        robot: The robot.
        tau_max: Torque limits of the actuated joints [N m] (inf: unlimited; None: no torque check).
        data: A scratch Pinocchio Data (a new one when None), distinct from the formulation's.
    """

    def __init__(self, robot: RobotWrapper, tau_max: np.ndarray | None = None, data: pin.Data | None = None):
        self.robot = robot
        self.data = robot.create_data() if data is None else data
        self._fext = robot.zero_external_forces()
        self._touched: set[int] = set()  # the joints of _fext with a force
        self._layout: _ContactLayout | None = None  # of the last contacts checked
        self._actuated = np.zeros(robot.nv)
        self._difference = np.zeros(robot.nv)
        self._limits: tuple[np.ndarray, np.ndarray] | None = None
        if tau_max is not None:
            limited = np.isfinite(tau_max)
            self._limits = limited, np.asarray(tau_max, dtype=float)[limited]

    def external_forces(
        self, contacts: dict[str, tuple[ContactBase, np.ndarray]], q: np.ndarray | None = None
    ) -> pin.StdVec_Force:
        """Per-joint external forces of the contact wrenches (the checker's container, valid until
        its next call; local joint frames).

        A wrench in the contact frame moves to the parent joint by the dual action matrix of the
        frame's placement; a 3-D force acts at its frame's origin, in the contact frame or in world
        axes (rotated with the frame's placement at q, or in ``data`` as it is when q is None); a
        contact that holds two frames together applies +f to the first and -f to the second.
        """
        layout = self._contacts(contacts)
        return self._joint_forces(layout, layout.apply(contacts), contacts, q)

    def residual(
        self,
        q: np.ndarray,
        v: np.ndarray,
        dv: np.ndarray,
        tau: np.ndarray,
        contacts: dict[str, tuple[ContactBase, np.ndarray]],
        external: np.ndarray | None = None,
    ) -> float:
        """max |RNEA(q, v, dv, f_ext) - S^T tau - external| / max(1, |h|_inf): the relative
        equation-of-motion error; ``external`` is the generalized force of known external wrenches,
        sum J^T w of the measured or prescribed ones (size nv)."""
        return self._residual(q, v, dv, tau, self.external_forces(contacts, q), external)

    def check(
        self,
        q: np.ndarray,
        v: np.ndarray,
        dv: np.ndarray,
        tau: np.ndarray,
        contacts: dict[str, tuple[ContactBase, np.ndarray]],
        external: np.ndarray | None = None,
    ) -> SolutionCheck:
        """Check one solution (see :class:`SolutionCheck`); ``contacts`` maps a name to (contact,
        its force variables), ``external`` as in :meth:`residual`."""
        layout = self._contacts(contacts)
        mapped = layout.apply(contacts)
        min_normal_force, friction, pyramid, bounds = np.inf, 0.0, 0.0, 0.0
        if layout.unilateral:  # (two frames held together: no normal, no friction)
            points = mapped[layout.points].reshape(-1, 3)
            f_n, friction = _normal_forces_and_friction(points, layout.normals, layout.mu)
            totals = np.add.reduceat(f_n, layout.starts)
            min_normal_force = float(totals.min())
            pyramid = max(float(mapped[layout.pyramid].max(initial=0.0)), 0.0)
            f_min, f_max = layout.normal_bounds
            bounds = max(float(np.maximum(f_min - totals, totals - f_max).max()), 0.0)
        torque_ratio = self.torque_ratio(tau)
        fext = self._joint_forces(layout, mapped, contacts, q)
        return SolutionCheck(
            dynamics_residual=self._residual(q, v, dv, tau, fext, external),
            min_normal_force=min_normal_force,
            max_friction_ratio=friction,
            max_pyramid_violation=pyramid,
            max_normal_bound_violation=bounds,
            max_torque_ratio=torque_ratio,
        )

    def torque_ratio(self, tau: np.ndarray) -> float:
        """max |tau_i| / tau_max_i over the joints with a finite limit (0 if none): cheap enough
        for every step, where the whole check samples."""
        if self._limits is None:
            return 0.0
        limited, tau_max = self._limits
        return float(np.max(np.abs(tau[limited]) / tau_max, initial=0.0))

    def _contacts(self, contacts: dict[str, tuple[ContactBase, np.ndarray]]) -> _ContactLayout:
        """The :class:`_ContactLayout` of these contacts, made again when one of them changed
        (:meth:`revise`) or they are others."""
        key = tuple(contact for contact, _ in contacts.values())
        if self._layout is None or self._layout.key != key:
            self._layout = _ContactLayout(self.robot, key)
            for contact in key:
                if isinstance(contact, ContactBase):
                    watch(contact, self)
        return self._layout

    def revise(self) -> None:
        """A contact the checker watches changed: its layout is made again at the next check."""
        self._layout = None

    def _joint_forces(
        self,
        layout: _ContactLayout,
        mapped: np.ndarray,
        contacts: dict[str, tuple[ContactBase, np.ndarray]],
        q: np.ndarray | None,
    ) -> pin.StdVec_Force:
        """The checker's joint-force container filled from the contacts' ``mapped`` forces and the
        wrenches applied (``layout.applied``)."""
        robot, fext, data = self.robot, self._fext, self.data
        wrenches: dict[int, np.ndarray] = {}  # joint -> the wrench on it, in its frame
        for joint, rows in layout.joint_wrenches:
            wrench = mapped[rows]
            wrenches[joint] = wrench if joint not in wrenches else wrenches[joint] + wrench
        forces: list[tuple[ContactBase, np.ndarray]] = [(c, mapped[rows]) for c, rows in layout.point_forces]
        if layout.applied:
            items = list(contacts.values())
            for index in layout.applied:
                contact, variables = items[index]
                wrench = contact.wrench(variables)
                if wrench.shape[0] == 6:  # a wrench in the contact frame
                    joint, action = layout.frame(robot, contact.frame_id)
                    wrench = action @ wrench
                    wrenches[joint] = wrench if joint not in wrenches else wrenches[joint] + wrench
                else:
                    forces.append((contact, wrench))
        if forces and q is not None:
            robot.forward_kinematics(data, q)
        for contact, force in forces:  # forces at frame origins, rotated to world axes
            world = contact.force_rotation(data) @ force
            ends = [(contact.frame_id, world)]
            if not contact.unilateral:
                ends.append((contact.frame_id2, -world))  # type: ignore[attr-defined]  # a bilateral contact: two frames
            for frame_id, end in ends:  # as a wrench in the frame, on the parent joint
                local = np.concatenate([robot.frame_placement(data, frame_id).rotation.T @ end, np.zeros(3)])
                joint, action = layout.frame(robot, frame_id)
                moved = action @ local
                wrenches[joint] = moved if joint not in wrenches else wrenches[joint] + moved
        for joint in self._touched - wrenches.keys():
            fext[joint] = pin.Force.Zero()
        for joint, wrench in wrenches.items():
            fext[joint] = pin.Force(wrench)
        self._touched = set(wrenches)
        return fext

    def _residual(
        self,
        q: np.ndarray,
        v: np.ndarray,
        dv: np.ndarray,
        tau: np.ndarray,
        fext: pin.StdVec_Force,
        external: np.ndarray | None,
    ) -> float:
        robot, data, actuated, difference = self.robot, self.data, self._actuated, self._difference
        actuated[:] = 0.0
        actuated[robot.nv - robot.na :] = tau
        if external is not None:
            actuated += external
        np.subtract(pin.rnea(robot.model, data, q, v, dv, fext), actuated, out=difference)
        error = float(np.abs(difference, out=difference).max())
        scale = max(1.0, float(np.abs(pin.nonLinearEffects(robot.model, data, q, v)).max()))
        return error / scale


class _ContactLayout:
    """The contacts of a step as one linear map of their force variables, stacked in order: the
    point forces of the unilateral ones (``point_forces``, 3 per point, each point's normal and
    friction coefficient in ``normals`` and ``mu``, each contact's first point in ``starts``),
    their friction-pyramid rows (of their force constraints, the last row of each, the bounds on
    the total normal force, left out), and each contact's wrench: moved to its frame's parent
    joint for a 6-D wrench in the contact frame (``joint_wrenches``: joint, rows), as it is for a
    3-D force that the checker rotates at each step (``point_forces``: contact, rows).

    A contact's wrench and point forces are linear in its force variables (its generator T): the
    map's columns are their values at the unit vectors. An item that is no contact (not a
    ``ContactBase``: a prescribed wrench) applies the wrench it gives at each step, and is listed
    by its place in ``applied``."""

    def __init__(self, robot: RobotWrapper, key: tuple[ContactBase, ...]) -> None:
        self.key = key
        self.applied = [i for i, item in enumerate(key) if not isinstance(item, ContactBase)]
        for i in self.applied:
            if key[i].unilateral:
                raise InvalidParameterError(
                    f"{key[i]!r} is not a contact (ContactBase): the contact checks need one"
                )
        contacts = [item for item in key if isinstance(item, ContactBase)]
        self.sizes = [contact.n_force for contact in contacts]
        self._frames: dict[int, tuple[int, np.ndarray]] = {}
        self.unilateral = [contact for contact in contacts if contact.unilateral]
        blocks: list[tuple[int, np.ndarray]] = []  # (first column, rows) of the stacked map
        columns = np.cumsum([0, *self.sizes])
        counts = []
        for contact, start in zip(contacts, columns, strict=False):
            if contact.unilateral:
                points = _columns(contact.point_forces, contact.n_force)
                counts.append(points.shape[0] // 3)
                blocks.append((start, points))
        self.points = slice(0, sum(block.shape[0] for _, block in blocks))
        for contact, start in zip(contacts, columns, strict=False):
            if contact.unilateral:
                blocks.append((start, contact.force_constraint.matrix[:-1]))
        self.pyramid = slice(self.points.stop, sum(block.shape[0] for _, block in blocks))
        self.joint_wrenches: list[tuple[int, slice]] = []
        self.point_forces: list[tuple[ContactBase, slice]] = []
        row = self.pyramid.stop
        for contact, start in zip(contacts, columns, strict=False):
            wrench = _columns(contact.wrench, contact.n_force)
            if wrench.shape[0] == 6:  # a wrench in the contact frame
                joint, action = self.frame(robot, contact.frame_id)
                self.joint_wrenches.append((joint, slice(row, row + 6)))
                blocks.append((start, action @ wrench))
            else:
                self.point_forces.append((contact, slice(row, row + wrench.shape[0])))
                blocks.append((start, wrench))
            row += wrench.shape[0]
        self.matrix = np.zeros((row, int(columns[-1])))
        row = 0
        for start, block in blocks:
            self.matrix[row : row + block.shape[0], start : start + block.shape[1]] = block
            row += block.shape[0]
        self.starts = np.cumsum([0, *counts[:-1]]).astype(int)
        self.normals = np.repeat([c.contact_normal for c in self.unilateral], counts, axis=0).reshape(-1, 3)
        self.mu = np.repeat([c.mu for c in self.unilateral], counts)
        self.normal_bounds = (  # each contact's [f_min, f_max] on its total normal force [N]
            np.array([c.min_normal_force for c in self.unilateral]),
            np.array([c.max_normal_force for c in self.unilateral]),
        )

    def apply(self, contacts: dict[str, tuple[ContactBase, np.ndarray]]) -> np.ndarray:
        """The map of the contacts' force variables (checked: each its contact's size)."""
        variables = [f for i, (_, f) in enumerate(contacts.values()) if i not in self.applied]
        forces = [
            as_vector("contact forces", f, size, copy=False)
            for f, size in zip(variables, self.sizes, strict=True)
        ]
        return self.matrix @ np.concatenate(forces) if forces else np.zeros(0)

    def frame(self, robot: RobotWrapper, frame_id: int) -> tuple[int, np.ndarray]:
        """A frame's parent joint and the 6x6 matrix that moves a wrench (force, moment) from the
        frame to that joint's frame (Pinocchio's ``placement.act`` of a force, as a matrix)."""
        known = self._frames.get(frame_id)
        if known is None:
            frame = robot.model.frames[frame_id]
            known = self._frames[frame_id] = (frame.parentJoint, frame.placement.toDualActionMatrix())
        return known


def _columns(linear, size: int) -> np.ndarray:
    """The matrix of a linear map of vectors of ``size``: its values at the unit vectors, the
    map's output flattened (rows)."""
    return np.column_stack([np.ravel(linear(unit)) for unit in np.eye(size)]).reshape(-1, size)


class WorstChecks:
    """The worst of each check over a run, kept as the checks come (constant memory, however long
    the run), under the summary keys of the scenarios (NaN before the first check)."""

    _WORST = {  # summary key: (SolutionCheck field, worst is the min or the max)
        "min_normal_force_n": ("min_normal_force", min),
        "max_friction_ratio": ("max_friction_ratio", max),
        "max_torque_ratio": ("max_torque_ratio", max),
        "dynamics_residual_max": ("dynamics_residual", max),
        "max_pyramid_violation_n": ("max_pyramid_violation", max),
        "max_normal_bound_violation_n": ("max_normal_bound_violation", max),
    }

    def __init__(self) -> None:
        self.count = 0
        self._worst = {key: float("nan") for key in self._WORST}
        self._torque = float("nan")  # the torque ratio of every step, when given (torque)

    def torque(self, ratio: float) -> None:
        """A step's torque ratio, whether its solution is checked or not: the summary's
        ``max_torque_ratio`` is then the worst of every step, not of the checked ones."""
        self._torque = ratio if self._torque != self._torque else max(self._torque, ratio)  # (NaN: none yet)

    def add(self, check: SolutionCheck) -> None:
        for key, (name, worst) in self._WORST.items():
            value = getattr(check, name)
            self._worst[key] = value if self.count == 0 else worst(self._worst[key], value)
        self.count += 1

    def summary(self) -> dict[str, float]:
        worst = dict(self._worst)
        if self._torque == self._torque:  # (not NaN: given at every step)
            worst["max_torque_ratio"] = self._torque
        return worst
