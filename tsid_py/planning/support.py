"""Support polygons on the ground: convex hulls of sole corners and signed margins of points."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.errors import InvalidParameterError
from tsid_py.robot_specs import SoleGeometry
from tsid_py.validation import as_matrix, as_vector


def as_placement(name: str, placement: object) -> pin.SE3:
    """``placement`` if it is a ``pinocchio.SE3``, else an :class:`InvalidParameterError`."""
    if not isinstance(placement, pin.SE3):
        raise InvalidParameterError(f"{name} must be a pinocchio.SE3, got {type(placement).__name__}")
    return placement


def as_sole(sole: object) -> SoleGeometry:
    """``sole`` if it is a :class:`SoleGeometry`, else an :class:`InvalidParameterError`."""
    if not isinstance(sole, SoleGeometry):
        raise InvalidParameterError(f"sole must be a SoleGeometry, got {type(sole).__name__}")
    return sole


def ground_point(name: str, point: object) -> np.ndarray:
    """The x-y of a point given as x-y or x-y-z [m]."""
    point = as_vector(name, point)
    if point.shape[0] not in (2, 3):
        raise InvalidParameterError(f"{name} must be x-y or x-y-z [m], got size {point.shape[0]}")
    return point[:2]


def sole_polygon(sole: SoleGeometry, placement: pin.SE3) -> np.ndarray:
    """The sole's four corners in the world, projected on the ground plane (4 x 2) [m]."""
    sole, placement = as_sole(sole), as_placement("foot placement", placement)
    corners = placement.rotation @ sole.corners() + placement.translation[:, None]
    return corners[:2].T


def sole_center(sole: SoleGeometry, placement: pin.SE3) -> np.ndarray:
    """The centre of the sole rectangle in the world (3-vector) [m]."""
    sole, placement = as_sole(sole), as_placement("foot placement", placement)
    local = np.array([(sole.lxp - sole.lxn) / 2, (sole.lyp - sole.lyn) / 2, -sole.lz])
    return placement.act(local)


def convex_hull(points: np.ndarray) -> np.ndarray:
    """Convex hull of 2-D points, counter-clockwise without repeated points (Andrew's monotone chain)."""
    points = np.unique(as_matrix("points", points, (None, 2)), axis=0)
    if points.shape[0] < 3:
        raise InvalidParameterError(
            f"a support polygon needs at least 3 distinct points, got {points.shape[0]}"
        )

    def half(sequence: np.ndarray) -> list[np.ndarray]:
        chain: list[np.ndarray] = []
        for p in sequence:
            while len(chain) >= 2 and _cross(chain[-2], chain[-1], p) <= 0:
                chain.pop()
            chain.append(p)
        return chain

    lower, upper = half(points), half(points[::-1])
    return np.array(lower[:-1] + upper[:-1])


def polygon_margin(point: np.ndarray, hull: np.ndarray) -> float:
    """How far a point (its x-y) is inside a counter-clockwise convex polygon (n x 2) [m].

    The smallest signed distance to the edge lines: inside, the distance to the boundary (> 0);
    outside, negative (minus the largest distance past an edge line).
    """
    point = ground_point("point", point)
    hull = as_matrix("hull", hull, (None, 2))
    if hull.shape[0] < 3:
        raise InvalidParameterError(f"a polygon needs at least 3 corners, got {hull.shape[0]}")
    edges = np.roll(hull, -1, axis=0) - hull
    normals = np.column_stack([-edges[:, 1], edges[:, 0]]) / np.linalg.norm(edges, axis=1)[:, None]
    return float(np.min(np.einsum("ij,ij->i", point - hull, normals)))


def _cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))
