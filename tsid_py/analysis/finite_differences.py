"""Velocities and accelerations of a sampled motion, by finite differences on the configuration manifold.

With d_k = (q_{k+1} (-) q_k) / dt, where (-) is Pinocchio's ``difference`` (the log map of each
joint's Lie group, so a free-flyer's increment is its body twist, expressed in the base frame like
Pinocchio's v), the estimates are the central differences

    v_k = (d_{k-1} + d_k) / 2,        a_k = (d_k - d_{k-1}) / dt,

second-order accurate in dt for smooth motions (the O(dt^3) Lie-bracket terms of the two
increments are equal and cancel). The first and last frames use second-order one-sided formulas:
v_0 = (3 d_0 - d_1) / 2 and a linear extrapolation of a from its neighbours.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.errors import DimensionError, InvalidParameterError
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.validation import as_matrix, as_scalar

MIN_FRAMES = 4
QUATERNION_NORM_TOLERANCE = 1e-3


def as_positions(robot: RobotWrapper, positions: object) -> np.ndarray:
    """Validate a (T, nq) array of configurations with T >= 4 frames.

    A floating base's quaternions (q[:, 3:7]) must have unit norm to within ``QUATERNION_NORM_TOLERANCE``
    (rounding in a recording); they are returned normalized (a copy).
    """
    q = as_matrix("positions", positions, (None, robot.nq))
    if q.shape[0] < MIN_FRAMES:
        raise DimensionError(f"positions need at least {MIN_FRAMES} frames (rows), got {q.shape[0]}")
    if robot.is_fixed_base:
        return q
    norms = np.linalg.norm(q[:, 3:7], axis=1)
    bad = np.flatnonzero(np.abs(norms - 1.0) > QUATERNION_NORM_TOLERANCE)
    if bad.size:
        raise InvalidParameterError(
            f"positions[:, 3:7] must be unit quaternions (x, y, z, w) of the base: row {bad[0]} has norm "
            f"{norms[bad[0]]:.6g} ({bad.size} rows off by more than {QUATERNION_NORM_TOLERANCE})"
        )
    q = q.copy()
    q[:, 3:7] /= norms[:, None]
    return q


def manifold_increments(robot: RobotWrapper, positions: np.ndarray, dt: float) -> np.ndarray:
    """(q_{k+1} (-) q_k) / dt for k = 0 .. T-2, shape (T - 1, nv) [m/s, rad/s]."""
    model = robot.model
    increments = np.empty((positions.shape[0] - 1, robot.nv))
    for k in range(positions.shape[0] - 1):
        increments[k] = pin.difference(model, positions[k], positions[k + 1])
    return increments / dt


def velocities_and_accelerations(
    robot: RobotWrapper, positions: object, dt: float
) -> tuple[np.ndarray, np.ndarray]:
    """Velocities [m/s, rad/s] and accelerations [m/s^2, rad/s^2] of a sampled motion.

    Args:
        robot: The robot whose configurations are sampled.
        positions: (T, nq) configurations, one row per frame, sampled every ``dt``; T >= 4.
        dt: Sampling period [s].

    Returns:
        (v, a), both (T, nv), in Pinocchio's tangent convention (free-flyer in the base frame).
    """
    q = as_positions(robot, positions)
    dt = as_scalar("dt", dt, minimum=0.0, strict=True)
    d = manifold_increments(robot, q, dt)
    v = np.empty((q.shape[0], robot.nv))
    v[1:-1] = 0.5 * (d[:-1] + d[1:])
    v[0] = 1.5 * d[0] - 0.5 * d[1]
    v[-1] = 1.5 * d[-1] - 0.5 * d[-2]
    a = np.empty_like(v)
    a[1:-1] = (d[1:] - d[:-1]) / dt
    a[0] = 2.0 * a[1] - a[2]
    a[-1] = 2.0 * a[-2] - a[-3]
    return v, a
