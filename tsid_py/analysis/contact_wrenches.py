"""Inverse dynamics with contacts: the contact wrenches that make the root rows vanish, then the torques.

The root (first six) rows of M a + h = S^T tau + sum_c J_c^T w_c hold no torque, so
A w = b with A = [X_1 ... X_n] (see :mod:`tsid_py.analysis.contact_geometry`) and b the root rows of
M a + h. One 6-D contact: A is an invertible 6 x 6 matrix and w = A^-1 b. Several contacts: A w = b
is under-determined and we pick

    min_w  sum_c (w_c - g_c)^T W (w_c - g_c)   s.t.  A w = b   [and C w >= d],

with g the guesses (zero by default, then the wrenches of smallest moments and, weakly, forces) and
W = diag(force_weight, min_torque_weight). Without physical limits this is a closed-form weighted
least-norm solution; with limits (:class:`ContactLimits`) it is a small QP (quadprog). When the
limits make A w = b impossible, we first find the smallest residual root wrench
r = b - A w over the admissible w (least-squares slack) and report it: the result says
``feasible = False`` and ``root_residual = r``; it is never a silently wrong balance.

Point contacts (3-D forces, zero moment) keep only their force columns in A. Fewer than three
non-collinear points leave A without full row rank: w then balances the part of b in the range of A,
and the rest is the reported root residual (``feasible = False``).

Wrenches are in each contact's LOCAL frame: force (N) and moment (N m) about the frame origin.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
import quadprog

from tsid_py.analysis.contact_geometry import (
    contact_frame_ids,
    point_contact_mask,
    require_floating_base,
    root_wrench_matrix,
    set_external_forces,
    wrench_components,
    zero_external_forces,
)
from tsid_py.analysis.contact_limits import ContactLimits
from tsid_py.analysis.inverse_dynamics import check_motion_state
from tsid_py.errors import DimensionError, InvalidParameterError, UnknownFrameError
from tsid_py.robot_wrapper import Frame, RobotWrapper
from tsid_py.validation import as_gain, as_matrix, as_vector

FEASIBILITY_TOLERANCE = 1e-6  # relative to max(1, |b|_inf): larger root residuals mean infeasible
RANK_TOLERANCE = 1e-9  # singular values of A below this times the largest count as zero


@dataclass(frozen=True)
class ContactInverseDynamicsResult:
    """Joint torques and contact wrenches that explain one frame of a motion.

    Attributes:
        contact_frames: Names of the contact frames, in the order of ``contact_wrenches``.
        contact_wrenches: (n, 6) wrenches (f_x, f_y, f_z [N], m_x, m_y, m_z [N m]) applied by the
            environment on the robot, in each contact's LOCAL frame, about its origin.
        joint_torques: Actuated joint torques, size na [N m].
        root_residual: Root rows of M a + h - sum_c J_c^T w_c, recomputed with RNEA (base frame,
            force [N] then moment [N m]): what the contacts could not explain (~0 when feasible).
        feasible: Whether the contacts, within their limits, balance the root.
    """

    contact_frames: tuple[str, ...]
    contact_wrenches: np.ndarray
    joint_torques: np.ndarray
    root_residual: np.ndarray
    feasible: bool

    @property
    def contact_wrench(self) -> np.ndarray:
        """The wrench of the only contact (LOCAL frame, 6-vector)."""
        if len(self.contact_frames) != 1:
            raise DimensionError(f"{len(self.contact_frames)} contacts: use wrench(frame)")
        return self.contact_wrenches[0]

    def wrench(self, frame: str) -> np.ndarray:
        """The wrench of the named contact frame (LOCAL frame, 6-vector)."""
        if frame not in self.contact_frames:
            raise UnknownFrameError(
                f"{frame!r} is not a contact frame; contacts: {list(self.contact_frames)}"
            )
        return self.contact_wrenches[self.contact_frames.index(frame)]


def axis_weights(name: str, value: object) -> np.ndarray:
    """A weight per axis (3,) from a scalar or a 3-vector."""
    return as_gain(name, value, 3) if np.ndim(value) == 0 else as_vector(name, value, 3)  # type: ignore[arg-type]


def wrench_weights(force_weight: object, min_torque_weight: object) -> np.ndarray:
    """The diagonal W (6,) from the force and moment weights (scalars or 3-vectors, > 0)."""
    weights = np.concatenate(
        [axis_weights("force_weight", force_weight), axis_weights("min_torque_weight", min_torque_weight)]
    )
    if np.any(weights <= 0.0):
        raise InvalidParameterError(f"force_weight and min_torque_weight must be > 0, got {weights.tolist()}")
    return weights


def contact_inverse_dynamics(
    robot: RobotWrapper, q: object, v: object, a: object, contact_frame: Frame, *, point_contact: bool = False
) -> ContactInverseDynamicsResult:
    """Inverse dynamics with one contact: the wrench is the solution of the six root rows.

    A 6-D contact makes them a square invertible system (root residual ~0); a point contact has
    three unknowns, so its force is the least-squares solution and the root residual reports the rest.

    Args:
        q, v, a: State and acceleration (sizes nq, nv, nv).
        contact_frame: The frame in contact (name or index).
        point_contact: Whether the contact is a point (a force at the frame origin, no moment).
    """
    return multi_contact_inverse_dynamics(robot, q, v, a, [contact_frame], point_contacts=point_contact)


def multi_contact_inverse_dynamics(
    robot: RobotWrapper,
    q: object,
    v: object,
    a: object,
    contact_frames: Sequence[Frame],
    wrench_guesses: object = None,
    *,
    force_weight: object = 1e-3,
    min_torque_weight: object = 1.0,
    limits: ContactLimits | Sequence[ContactLimits] | None = None,
    point_contacts: bool | Sequence[Frame] = False,
) -> ContactInverseDynamicsResult:
    """Inverse dynamics with several contacts: the balancing wrenches closest to the guesses.

    Args:
        contact_frames: The frames in contact.
        wrench_guesses: (n, 6) guessed wrenches (LOCAL frames); ``None`` for zeros. Guesses that
            already balance the root are returned unchanged.
        force_weight: Weight of the force components in W [1/N^2] (scalar or per axis).
        min_torque_weight: Weight of the moment components in W [1/(N m)^2] (scalar or per axis).
        limits: Physical limits, one for all contacts or one per contact; ``None`` for none. A point
            contact takes no sole (it has no centre of pressure).
        point_contacts: Which contacts are points (3-D force, zero moment): ``True`` for all, or a
            list of frames; the others are 6-D. When the points cannot balance the root (e.g. one or
            two points), the result is the least-squares balance and ``feasible`` is False.
    """
    require_floating_base(robot, "contact inverse dynamics")
    q, v, a = check_motion_state(robot, q, v, a)
    frame_ids = contact_frame_ids(robot, contact_frames)
    n = len(frame_ids)
    is_point = point_contact_mask(robot, frame_ids, point_contacts)
    guesses = (
        np.zeros((n, 6)) if wrench_guesses is None else as_matrix("wrench_guesses", wrench_guesses, (n, 6))
    )
    unknowns = wrench_components(is_point)
    weights = np.tile(wrench_weights(force_weight, min_torque_weight), n)[unknowns]
    data = robot.create_data()
    b = np.array(pin.rnea(robot.model, data, q, v, a)[:6])
    pin.forwardKinematics(robot.model, data, q)
    A = root_wrench_matrix(robot, data, frame_ids)[:, unknowns]
    inequalities = (
        None if limits is None else stacked_inequalities(per_contact_limits(limits, is_point), unknowns)
    )
    wrenches: np.ndarray = np.zeros(6 * n)
    wrenches[unknowns], feasible = balance_root(A, b, weights, guesses.reshape(-1)[unknowns], inequalities)
    wrenches = wrenches.reshape(n, 6)
    fext = set_external_forces(robot, zero_external_forces(robot), frame_ids, wrenches)
    remaining = np.array(pin.rnea(robot.model, data, q, v, a, fext))
    return ContactInverseDynamicsResult(
        contact_frames=tuple(robot.model.frames[i].name for i in frame_ids),
        contact_wrenches=wrenches,
        joint_torques=remaining[6:],
        root_residual=remaining[:6],
        feasible=feasible,
    )


def per_contact_limits(
    limits: ContactLimits | Sequence[ContactLimits], is_point: np.ndarray
) -> list[ContactLimits]:
    """One ContactLimits per contact (n = ``is_point.size``), checked: no sole on a point contact."""
    n = is_point.size
    per_contact = [limits] * n if isinstance(limits, ContactLimits) else list(limits)
    if not all(isinstance(limit, ContactLimits) for limit in per_contact):
        raise InvalidParameterError(f"limits must be ContactLimits, got {limits!r}")
    if len(per_contact) != n:
        raise DimensionError(f"limits must be one ContactLimits or {n} of them, got {len(per_contact)}")
    if any(limit.sole is not None and point for limit, point in zip(per_contact, is_point, strict=True)):
        raise InvalidParameterError("a point contact has no centre of pressure: give its limits no sole")
    return per_contact


def stacked_inequalities(
    per_contact: Sequence[ContactLimits], unknowns: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Block-diagonal (C, d), C w >= d, over the contacts' stacked wrenches, on the unknown components."""
    blocks = [limit.inequalities() for limit in per_contact]
    C = np.zeros((sum(c.shape[0] for c, _ in blocks), 6 * len(per_contact)))
    row = 0
    for k, (c, _) in enumerate(blocks):
        C[row : row + c.shape[0], 6 * k : 6 * k + 6] = c
        row += c.shape[0]
    return C[:, unknowns], np.concatenate([d for _, d in blocks])


def balance_root(
    A: np.ndarray,
    b: np.ndarray,
    weights: np.ndarray,
    guess: np.ndarray,
    inequalities: tuple[np.ndarray, np.ndarray] | None,
) -> tuple[np.ndarray, bool]:
    """min (w - g)^T diag(weights) (w - g) s.t. A w = b [, C w >= d].

    A (6 x m) may lack full row rank (point contacts): then only the part of b in its range,
    U_r^T b with A = U_r S_r V_r^T, can be balanced, and the rest is left as root residual.
    Returns (w, feasible). When the inequalities, or the rank of A, make A w = b impossible, w
    balances the root as well as they allow (smallest |A w - b|) and ``feasible`` is False.
    """
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    rank = int(np.sum(s > RANK_TOLERANCE * s[0]))
    A_range, b_range = s[:rank, None] * Vt[:rank], U[:, :rank].T @ b
    unexplained = b - U[:, :rank] @ b_range
    balanced = np.max(np.abs(unexplained)) <= FEASIBILITY_TOLERANCE * max(1.0, float(np.max(np.abs(b))))
    if inequalities is None:
        inverse_weights = 1.0 / weights
        correction = np.linalg.solve((A_range * inverse_weights) @ A_range.T, b_range - A_range @ guess)
        return guess + inverse_weights * (A_range.T @ correction), balanced
    C, d = inequalities
    G, linear = np.diag(weights), weights * guess
    try:
        return _solve_qp(G, linear, A_range, b_range, C, d), balanced
    except ValueError:  # quadprog: "constraints are inconsistent"
        pass
    # Least-squares slack: the admissible w closest to balancing the root, then the weighted cost
    # among the wrenches that produce that same (unique) root wrench A w.
    scale = np.trace(A.T @ A) / np.sum(weights)
    G_slack = A.T @ A + 1e-9 * scale * np.diag(weights)
    w_slack = quadprog.solve_qp(G_slack, A.T @ b + 1e-9 * scale * weights * guess, C.T, d, 0)[0]
    reached = U[:, :rank].T @ (A @ w_slack)
    if np.max(np.abs(reached - b_range)) <= FEASIBILITY_TOLERANCE * max(1.0, float(np.max(np.abs(b)))):
        return w_slack, balanced
    try:
        return _solve_qp(G, linear, A_range, reached, C, d), False
    except ValueError:
        return w_slack, False


def _solve_qp(
    G: np.ndarray, linear: np.ndarray, A: np.ndarray, b: np.ndarray, C: np.ndarray, d: np.ndarray
) -> np.ndarray:
    """quadprog: min 1/2 w^T G w - linear^T w s.t. A w = b, C w >= d."""
    return quadprog.solve_qp(G, linear, np.vstack([A, C]).T, np.concatenate([b, d]), A.shape[0])[0]
