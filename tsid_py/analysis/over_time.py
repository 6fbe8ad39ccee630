"""Contact wrenches and joint torques over a whole recording, solved at a cost linear in its length.

From positions alone: velocities and accelerations by central differences on the manifold
(:mod:`tsid_py.analysis.finite_differences`). At every frame t the root rows of the dynamics give
A_t w_t = b_t (:mod:`tsid_py.analysis.contact_wrenches`) for the stacked wrenches w_t of the
contacts active at t (inactive contacts carry zero wrench). Over the recording we solve

    min  sum_t (w_t - g_t)^T W (w_t - g_t) + smoothing_weight sum_t |w_{t+1} - w_t|^2
    s.t. A_t w_t = b_t for every t,

with W = diag(force_weight, min_torque_weight) per contact and g the optional guesses; the
smoothing couples a contact's wrenches at consecutive frames where it is active at both.
Each frame's constraint is eliminated exactly: w_t = p_t + N_t z_t with p_t the least-squares
solution of A_t w = b_t and N_t a basis of the null space of A_t. The cost in z is then a
symmetric positive-definite block-tridiagonal system, solved by a banded Cholesky factorization
(``scipy.linalg.solveh_banded``): time and memory grow linearly with the number of frames.
Point contacts contribute only their force columns to A_t. Frames without any active contact
cannot balance the root: their wrenches are zero and their whole root wrench b_t is reported as the
residual; likewise the part of b_t outside the range of A_t where the active contacts span fewer
than six directions (one or two points). Elsewhere the residual is ~0.

With physical limits (unilateral, friction, CoP: :class:`~tsid_py.analysis.ContactLimits`) the
frames are not smoothed: each is the small QP of
:func:`~tsid_py.analysis.contact_wrenches.balance_root`, still linear in the number of frames.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
import scipy.linalg
import scipy.sparse

from tsid_py.analysis.contact_geometry import (
    base_wrench_in_world,
    contact_frame_ids,
    point_contact_mask,
    require_floating_base,
    root_wrench_matrix,
    set_external_forces,
    wrench_components,
    zero_external_forces,
)
from tsid_py.analysis.contact_limits import ContactLimits
from tsid_py.analysis.contact_wrenches import (
    FEASIBILITY_TOLERANCE,
    RANK_TOLERANCE,
    balance_root,
    per_contact_limits,
    stacked_inequalities,
    wrench_weights,
)
from tsid_py.analysis.finite_differences import as_positions, velocities_and_accelerations
from tsid_py.errors import DimensionError, InvalidParameterError, UnsupportedProblemError
from tsid_py.progress import progress_bar
from tsid_py.robot_wrapper import Frame, RobotWrapper
from tsid_py.validation import as_matrix, as_scalar


@dataclass(frozen=True)
class MotionAnalysis:
    """Inverse dynamics of a recording; arrays have one row per frame.

    Attributes:
        t: Frame times (T,) [s], starting at 0.
        q: Configurations (T, nq).
        v: Velocities (T, nv) by finite differences [m/s, rad/s].
        a: Accelerations (T, nv) by finite differences [m/s^2, rad/s^2].
        contact_frames: Names of the contact frames (n of them).
        contact_schedule: (T, n) booleans, whether each contact is active.
        contact_wrenches: (T, n, 6) wrenches applied on the robot, each in its contact's LOCAL frame
            about the frame origin: force [N], then moment [N m]; zero while inactive, and zero
            moment for a point contact.
        total_contact_wrench: (T, 6) sum of the contact wrenches in the world frame, about the world
            origin: force [N], then moment [N m].
        joint_torques: (T, na) actuated joint torques [N m].
        root_residual: (T, 6) root rows of M a + h - sum J^T w (base frame, N then N m): what the
            contacts did not explain; ~0 except at frames whose active contacts cannot balance the
            root (none active, fewer than three non-collinear points, or limits that forbid it).
        feasible: (T,) booleans, whether the root residual is ~0 (relative to the root wrench).
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    contact_frames: tuple[str, ...]
    contact_schedule: np.ndarray
    contact_wrenches: np.ndarray
    total_contact_wrench: np.ndarray
    joint_torques: np.ndarray
    root_residual: np.ndarray
    feasible: np.ndarray


def multi_contact_inverse_dynamics_over_time(
    robot: RobotWrapper,
    positions: object,
    contact_frames: Sequence[Frame],
    dt: float,
    smoothing_weight: float = 1e-4,
    min_torque_weight: object = 1.0,
    contact_schedule: object = None,
    *,
    force_weight: object = 1e-3,
    wrench_guesses: object = None,
    velocities: object = None,
    accelerations: object = None,
    point_contacts: bool | Sequence[Frame] = False,
    limits: ContactLimits | Sequence[ContactLimits] | None = None,
    progress: bool = False,
) -> MotionAnalysis:
    """Joint torques and contact wrenches of a recorded motion, from its positions alone.

    Args:
        robot: A floating-base robot.
        positions: (T, nq) configurations sampled every ``dt``, T >= 4.
        contact_frames: The n frames that may touch the environment (6-D or point contacts).
        dt: Sampling period [s].
        smoothing_weight: Weight of |w_{t+1} - w_t|^2, per frame [1/N^2 on forces and 1/(N m)^2 on
            moments]; 0 solves each frame on its own.
        min_torque_weight: Weight of the contact moments (the torque part of each wrench) in W
            [1/(N m)^2], scalar or per axis, > 0.
        contact_schedule: (T, n) booleans (or 0/1), which contacts are active at each frame;
            all active when ``None``.
        force_weight: Weight of the contact forces in W [1/N^2], scalar or per axis, > 0.
        wrench_guesses: (T, n, 6) wrenches the solution is pulled toward (LOCAL frames); zeros
            when ``None``.
        velocities: (T, nv) measured velocities to use instead of finite differences [m/s, rad/s].
        accelerations: (T, nv) measured accelerations to use instead of finite differences.
        point_contacts: Which contacts are points (3-D force at the frame origin, zero moment):
            ``True`` for all (e.g. Solo12's feet), or a list of frames; the others are 6-D.
        limits: Unilateral / friction / CoP limits (:class:`ContactLimits`, one for all contacts or one
            per contact). Each frame is then a small QP solved on its own (``smoothing_weight`` must be
            0): frames the limits make unexplainable keep the smallest root residual they allow.
        progress: Show progress bars on stderr (only when it is a terminal).
    """
    require_floating_base(robot, "multi_contact_inverse_dynamics_over_time")
    q = as_positions(robot, positions)
    dt = as_scalar("dt", dt, minimum=0.0, strict=True)
    smoothing_weight = as_scalar("smoothing_weight", smoothing_weight, minimum=0.0)
    frame_ids = contact_frame_ids(robot, contact_frames)
    T, n = q.shape[0], len(frame_ids)
    schedule = _schedule(contact_schedule, T, n)
    is_point = point_contact_mask(robot, frame_ids, point_contacts)
    unknown_components = np.zeros(6 * n, dtype=bool)
    unknown_components[wrench_components(is_point)] = True
    if limits is not None:
        limits = per_contact_limits(limits, is_point)
        if smoothing_weight > 0.0:
            raise UnsupportedProblemError(
                "with limits each frame is solved on its own: pass smoothing_weight=0 (smoothing under "
                "inequalities would couple all frames in one large QP)"
            )
    guesses = np.zeros((T, n, 6)) if wrench_guesses is None else _guesses(wrench_guesses, T, n)
    weights = wrench_weights(force_weight, min_torque_weight)
    if velocities is None or accelerations is None:
        v, a = velocities_and_accelerations(robot, q, dt)
    if velocities is not None:
        v = as_matrix("velocities", velocities, (T, robot.nv))
    if accelerations is not None:
        a = as_matrix("accelerations", accelerations, (T, robot.nv))

    A, b = _root_rows(robot, q, v, a, frame_ids, progress)
    if limits is None:
        particular, null_basis = _eliminate_root_rows(A, b, schedule, unknown_components)
        z = _solve_null_space_coordinates(
            particular, null_basis, schedule, weights, smoothing_weight, guesses
        )
        wrenches = particular + np.einsum("tij,tj->ti", null_basis, z).reshape(T, n, 6)
    else:
        wrenches = _balance_each_frame(A, b, schedule, unknown_components, weights, guesses, limits)
    wrenches[~schedule] = 0.0
    torques, root_residual = _torques(robot, q, v, a, frame_ids, wrenches, progress)
    total = base_wrench_in_world(q[:, :7], np.einsum("tij,tj->ti", A, wrenches.reshape(T, -1)))
    return MotionAnalysis(
        t=dt * np.arange(T),
        q=q,
        v=v,
        a=a,
        contact_frames=tuple(robot.model.frames[i].name for i in frame_ids),
        contact_schedule=schedule,
        contact_wrenches=wrenches,
        total_contact_wrench=total,
        joint_torques=torques,
        root_residual=root_residual,
        feasible=np.max(np.abs(root_residual), axis=1)
        <= FEASIBILITY_TOLERANCE * np.maximum(1.0, np.max(np.abs(b), axis=1)),
    )


def _balance_each_frame(
    A: np.ndarray,
    b: np.ndarray,
    schedule: np.ndarray,
    unknown_components: np.ndarray,
    weights: np.ndarray,
    guesses: np.ndarray,
    limits: list[ContactLimits],
) -> np.ndarray:
    """(T, n, 6) wrenches, frame by frame: the limited QP of ``balance_root`` over the active contacts."""
    T, n = schedule.shape
    wrenches = np.zeros((T, 6 * n))
    stacked_weights, stacked_guesses = np.tile(weights, n), guesses.reshape(T, 6 * n)
    for pattern in np.unique(schedule, axis=0):
        active = np.flatnonzero(pattern)
        columns = np.flatnonzero(np.repeat(pattern, 6) & unknown_components)
        if columns.size == 0:
            continue
        local_columns = np.flatnonzero(unknown_components.reshape(n, 6)[active].reshape(-1))
        inequalities = stacked_inequalities([limits[k] for k in active], local_columns)
        for t in np.flatnonzero(np.all(schedule == pattern, axis=1)):
            wrenches[t, columns] = balance_root(
                A[t][:, columns], b[t], stacked_weights[columns], stacked_guesses[t, columns], inequalities
            )[0]
    return wrenches.reshape(T, n, 6)


def _schedule(contact_schedule: object, T: int, n: int) -> np.ndarray:
    """The (T, n) boolean schedule (all active when ``None``)."""
    if contact_schedule is None:
        return np.ones((T, n), dtype=bool)
    schedule = np.asarray(contact_schedule)
    if schedule.shape != (T, n):
        raise DimensionError(f"contact_schedule must have shape ({T}, {n}), got {schedule.shape}")
    if schedule.dtype != bool and not np.all((schedule == 0) | (schedule == 1)):
        raise InvalidParameterError("contact_schedule must hold booleans or 0/1")
    return schedule.astype(bool)


def _guesses(wrench_guesses: object, T: int, n: int) -> np.ndarray:
    """Finite (T, n, 6) wrench guesses."""
    guesses = np.asarray(wrench_guesses)
    if guesses.shape != (T, n, 6):
        raise DimensionError(f"wrench_guesses must have shape ({T}, {n}, 6), got {guesses.shape}")
    return as_matrix("wrench_guesses", guesses.reshape(T, 6 * n), (T, 6 * n)).reshape(T, n, 6)


def _root_rows(
    robot: RobotWrapper,
    q: np.ndarray,
    v: np.ndarray,
    a: np.ndarray,
    frame_ids: list[int],
    progress: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """A (T, 6, 6n) and b (T, 6): the root rows A_t w = b_t at every frame (RNEA and kinematics)."""
    model, data = robot.model, robot.create_data()
    T, n = q.shape[0], len(frame_ids)
    A, b = np.empty((T, 6, 6 * n)), np.empty((T, 6))
    for t in progress_bar(range(T), progress, "root dynamics", "frame"):
        b[t] = pin.rnea(model, data, q[t], v[t], a[t])[:6]
        pin.forwardKinematics(model, data, q[t])
        A[t] = root_wrench_matrix(robot, data, frame_ids)
    return A, b


def _eliminate_root_rows(
    A: np.ndarray, b: np.ndarray, schedule: np.ndarray, unknown_components: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per frame, w = p + N z over the unknowns of the active contacts (SVD, batched by activity pattern).

    p is the least-squares (minimum-norm) solution of A_t w = b_t and N a basis of the null space of
    A_t; singular values below ``RANK_TOLERANCE`` times the largest count as zero (point contacts that
    cannot balance the root, e.g. two feet: rank 5). Returns p (T, n, 6), zero at frames without
    contact, and N (T, 6n, r_max) padded with zero columns.
    """
    T, n = schedule.shape
    eliminated = []
    for pattern in np.unique(schedule, axis=0):
        columns = np.flatnonzero(np.repeat(pattern, 6) & unknown_components)
        if columns.size == 0:
            continue
        frames = np.flatnonzero(np.all(schedule == pattern, axis=1))
        U, s, Vt = np.linalg.svd(A[frames][:, :, columns])
        ranks = np.sum(s > RANK_TOLERANCE * s[:, :1], axis=1)
        for rank in np.unique(ranks):
            same = ranks == rank
            eliminated.append((frames[same], columns, rank, U[same], s[same], Vt[same]))
    r_max = max((columns.size - rank for _, columns, rank, *_ in eliminated), default=0)
    particular = np.zeros((T, 6 * n))
    null_basis = np.zeros((T, 6 * n, r_max))
    for frames, columns, rank, U, s, Vt in eliminated:
        coefficients = np.einsum("fij,fi->fj", U[:, :, :rank], b[frames]) / s[:, :rank]
        particular[np.ix_(frames, columns)] = np.einsum("fji,fj->fi", Vt[:, :rank], coefficients)
        null_basis[frames[:, None], columns[None, :], : columns.size - rank] = np.swapaxes(Vt[:, rank:], 1, 2)
    return particular.reshape(T, n, 6), null_basis


def _solve_null_space_coordinates(
    particular: np.ndarray,
    null_basis: np.ndarray,
    schedule: np.ndarray,
    weights: np.ndarray,
    smoothing_weight: float,
    guesses: np.ndarray,
) -> np.ndarray:
    """z (T, r_max) minimizing the weighted and smoothing costs, by a banded Cholesky solve.

    In the stacked variables x = p + P z (P block-diagonal, P_t = N_t), the cost is
    (x - g)^T Q_w (x - g) + x^T Q_s x with Q_w = blockdiag(W) and Q_s = s D^T D (D the masked
    forward differences); the normal equations
    P^T (Q_w + Q_s) P z = P^T (Q_w (g - p) - Q_s p) have a bandwidth below 2 r_max.
    """
    T, m, r = null_basis.shape
    if r == 0:
        return np.zeros((T, 0))
    size = T * m
    contact_rows = np.repeat(schedule, 6, axis=1)  # (T, m)
    Q_w = scipy.sparse.diags(np.tile(np.tile(weights, m // 6), T) * contact_rows.reshape(-1))
    Q_s = scipy.sparse.csr_matrix((size, size))
    if smoothing_weight > 0.0:
        both = (contact_rows[:-1] & contact_rows[1:]).reshape(-1).astype(float)
        rows = np.arange((T - 1) * m)
        D = scipy.sparse.csr_matrix(
            (np.concatenate([-both, both]), (np.concatenate([rows, rows]), np.concatenate([rows, rows + m]))),
            shape=((T - 1) * m, size),
        )
        Q_s = smoothing_weight * (D.T @ D)
    frame, row, column = np.nonzero(null_basis)
    P = scipy.sparse.csr_matrix(
        (null_basis[frame, row, column], (frame * m + row, frame * r + column)), shape=(size, T * r)
    )
    p = particular.reshape(-1)
    H = (P.T @ (Q_w + Q_s) @ P).tocoo()
    rhs = P.T @ (Q_w @ (guesses.reshape(-1) - p) - Q_s @ p)
    # Padded (unused) null-space columns have zero rows and columns in H: pin them with 1 on the diagonal.
    unused = np.flatnonzero(np.abs(H.diagonal()) == 0.0)
    H = (H + scipy.sparse.coo_matrix((np.ones(unused.size), (unused, unused)), shape=H.shape)).tocoo()
    upper = H.row <= H.col
    bandwidth = int(np.max(H.col[upper] - H.row[upper]))
    banded = np.zeros((bandwidth + 1, H.shape[0]))
    banded[bandwidth + H.row[upper] - H.col[upper], H.col[upper]] = H.data[upper]
    try:
        z = scipy.linalg.solveh_banded(banded, rhs, check_finite=False)
    except np.linalg.LinAlgError as exc:
        raise InvalidParameterError(
            "the wrench cost is not positive definite on the balancing wrenches; "
            "use force_weight > 0 and min_torque_weight > 0"
        ) from exc
    return z.reshape(T, r)


def _torques(
    robot: RobotWrapper,
    q: np.ndarray,
    v: np.ndarray,
    a: np.ndarray,
    frame_ids: list[int],
    wrenches: np.ndarray,
    progress: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Joint torques and root residual: RNEA with the contact wrenches as external forces."""
    model, data = robot.model, robot.create_data()
    T = q.shape[0]
    fext = zero_external_forces(robot)
    torques, residual = np.empty((T, robot.na)), np.empty((T, 6))
    for t in progress_bar(range(T), progress, "joint torques", "frame"):
        set_external_forces(robot, fext, frame_ids, wrenches[t])
        generalized = pin.rnea(model, data, q[t], v[t], a[t], fext)
        residual[t], torques[t] = generalized[:6], generalized[6:]
    return torques, residual


def joint_torques_from_wrenches(
    robot: RobotWrapper,
    positions: object,
    contact_frames: Sequence[Frame],
    wrenches: object,
    dt: float,
) -> np.ndarray:
    """The joint torques of a sampled motion whose contact wrenches were measured (F/T sensors).

    tau = [M(q) a + h(q, v) - sum_c J_c^T w_c]_actuated, with v and a the motion's central
    differences (:func:`velocities_and_accelerations`) and w_c each contact's measured wrench in
    its frame (LOCAL, force then moment [N, N m]): the split between the contacts that the motion
    alone leaves open (two feet down) is the one measured.

    Args:
        robot: The robot.
        positions: (T, nq) configurations sampled every ``dt`` [s]; T >= 4.
        contact_frames: The contact frames, n of them.
        wrenches: (T, n, 6) the measured wrenches.
        dt: Sampling period [s].

    Returns:
        (T, na) joint torques [N m].
    """
    q = as_positions(robot, positions)
    frame_ids = contact_frame_ids(robot, contact_frames)
    measured = np.asarray(wrenches, dtype=float)
    if measured.shape != (q.shape[0], len(frame_ids), 6):
        raise DimensionError(
            f"wrenches must be (T, n, 6) = ({q.shape[0]}, {len(frame_ids)}, 6), got {measured.shape}"
        )
    v, a = velocities_and_accelerations(robot, q, dt)
    model, data, fext = robot.model, robot.create_data(), zero_external_forces(robot)
    first = robot.nv - robot.na
    torques = np.empty((q.shape[0], robot.na))
    for k in range(q.shape[0]):
        set_external_forces(robot, fext, frame_ids, measured[k])
        torques[k] = pin.rnea(model, data, q[k], v[k], a[k], fext)[first:]
    return torques
