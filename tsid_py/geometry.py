"""Ground geometry, once: gravity, support polygons (convex hulls), margins, centres of pressure.

Points are in the world frame [m]; the ground is a plane of normal ``GROUND_NORMAL`` (z up).
"""

from __future__ import annotations

import numpy as np

from tsid_py.errors import InvalidParameterError
from tsid_py.validation import as_matrix, as_vector

GRAVITY = 9.81  # [m/s^2], the magnitude of Pinocchio's default model gravity
GROUND_NORMAL = np.array([0.0, 0.0, 1.0])
GROUND_NORMAL.flags.writeable = False
COLLINEAR_TOLERANCE = 1e-12  # [m^2] a hull corner whose turn is below this is dropped (collinear)


def convex_hull_indices(points: object) -> np.ndarray:
    """Indices of the convex hull of 2-D points (n x 2), counter-clockwise, collinear points dropped.

    Andrew's monotone chain. Fewer than three points are returned as they are (sorted).
    """
    points = as_matrix("points", points, (None, 2))
    order = np.lexsort((points[:, 1], points[:, 0]))
    if order.size <= 2:
        return order

    def cross(o: int, a: int, b: int) -> float:
        (ox, oy), (ax, ay), (bx, by) = points[o], points[a], points[b]
        return float((ax - ox) * (by - oy) - (ay - oy) * (bx - ox))

    hull: list[int] = []
    for sweep in (order, order[::-1]):
        start = len(hull)
        for i in sweep:
            while len(hull) >= start + 2 and cross(hull[-2], hull[-1], i) <= COLLINEAR_TOLERANCE:
                hull.pop()
            hull.append(int(i))
        hull.pop()
    return np.array(hull, dtype=int)


def convex_hull(points: object) -> np.ndarray:
    """Convex hull of 2-D points (n x 2), counter-clockwise, as its corners (k x 2) [m].

    Raises :class:`InvalidParameterError` when the points span no area (fewer than three corners).
    """
    points = as_matrix("points", points, (None, 2))
    hull = points[convex_hull_indices(points)]
    if hull.shape[0] < 3:
        raise InvalidParameterError(
            "a support polygon needs at least 3 distinct points not on one line, "
            f"got {points.shape[0]} points"
        )
    return hull


def polygon_margin(point: object, hull: object) -> float:
    """How far a point (its x-y) is inside a counter-clockwise convex polygon (n x 2) [m].

    The smallest signed distance to the edge lines: inside, the distance to the boundary (> 0);
    outside, negative (minus the largest distance past an edge line).
    """
    point = as_vector("point", point)
    if point.shape[0] not in (2, 3):
        raise InvalidParameterError(f"point must be x-y or x-y-z [m], got size {point.shape[0]}")
    hull = as_matrix("hull", hull, (None, 2))
    if hull.shape[0] < 3:
        raise InvalidParameterError(f"a polygon needs at least 3 corners, got {hull.shape[0]}")
    edges = np.roll(hull, -1, axis=0) - hull
    normals = np.column_stack([-edges[:, 1], edges[:, 0]]) / np.linalg.norm(edges, axis=1)[:, None]
    return float(np.min(np.einsum("ij,ij->i", point[:2] - hull, normals)))


def center_of_pressure(points: object, forces: object, normal: object = GROUND_NORMAL) -> np.ndarray:
    """CoP of point forces: sum_j p_j (n . f_j) / sum_j (n . f_j) [m].

    ``points`` and ``forces`` are (k, 3), in the world frame [m, N]. For points on a plane of
    normal n this is the ZMP of the forces. Raises :class:`InvalidParameterError` when the total
    normal force is not positive.
    """
    points = as_matrix("points", points, (None, 3))
    forces = as_matrix("forces", forces, (points.shape[0], 3))
    normal_forces = forces @ as_vector("normal", normal, 3)
    total = float(normal_forces.sum())
    if total <= 0:
        raise InvalidParameterError(f"no centre of pressure: the total normal force is {total} N")
    return normal_forces @ points / total
