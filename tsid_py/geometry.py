"""Ground geometry, once: gravity, support polygons (convex hulls), margins, centres of pressure.

Points are in the world frame [m]; the ground is a plane of normal ``GROUND_NORMAL`` (z up).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tsid_py.errors import InvalidParameterError
from tsid_py.validation import as_matrix, as_vector

GRAVITY = 9.81  # [m/s^2], the magnitude of Pinocchio's default model gravity
GROUND_NORMAL = np.array([0.0, 0.0, 1.0])
GROUND_NORMAL.flags.writeable = False
COLLINEAR_TOLERANCE = 1e-12  # [m^2] a hull corner whose turn is below this is dropped (collinear)


def heading(rotation: np.ndarray) -> float:
    """The yaw of a rotation matrix [rad]: the angle of its x axis about the world's z."""
    return float(np.arctan2(rotation[1, 0], rotation[0, 0]))


def flat_rotation(yaw: float) -> np.ndarray:
    """The rotation of ``yaw`` [rad] about the world's z: a foot flat on the ground, facing yaw."""
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def convex_hull_indices(points: object) -> np.ndarray:
    """Indices of the convex hull of 2-D points (n x 2), counter-clockwise, collinear points dropped.

    Andrew's monotone chain, on the points left by the Akl-Toussaint heuristic (those strictly
    inside the polygon of the extreme points along 8 directions cannot be corners): a sole's
    hundred mesh vertices cost a few of them. Fewer than three points are returned as they are
    (sorted).
    """
    return _hull(as_matrix("points", points, (None, 2)))


def _hull(points: np.ndarray) -> np.ndarray:
    """:func:`convex_hull_indices` of checked points (n x 2, finite)."""
    candidates = _outside_extremes(points)
    order = candidates[np.lexsort((points[candidates, 1], points[candidates, 0]))]
    if order.size <= 2:
        return order
    xy = points[order].tolist()  # Python floats: the chain's many small products are cheaper so
    hull: list[int] = []
    for sweep in (range(order.size), range(order.size - 1, -1, -1)):
        start = len(hull)
        for i in sweep:
            bx, by = xy[i]
            while len(hull) >= start + 2:
                (ox, oy), (ax, ay) = xy[hull[-2]], xy[hull[-1]]
                if (ax - ox) * (by - oy) - (ay - oy) * (bx - ox) > COLLINEAR_TOLERANCE:
                    break
                hull.pop()
            hull.append(i)
        hull.pop()
    return order[hull]


_DIRECTIONS = np.array([[1, 0], [1, 1], [0, 1], [-1, 1], [-1, 0], [-1, -1], [0, -1], [1, -1]], dtype=float)
_PREVIOUS = np.array([7, 0, 1, 2, 3, 4, 5, 6])
_LEFT = np.array([-1.0, 1.0])  # (e_y, e_x) * this: an edge's left normal (-e_y, e_x)


def _edges(corners: np.ndarray) -> np.ndarray:
    """The edge vectors of a polygon, corner i to corner i + 1 (n x 2)."""
    edges = np.empty_like(corners)
    np.subtract(corners[1:], corners[:-1], out=edges[:-1])
    np.subtract(corners[0], corners[-1], out=edges[-1])
    return edges


def _outside_extremes(points: np.ndarray) -> np.ndarray:
    """Indices of the points not strictly inside the polygon of the extreme points along 8 directions."""
    if points.shape[0] <= 8:
        return np.arange(points.shape[0])
    corners = points[np.argmax(points @ _DIRECTIONS.T, axis=0)]  # counter-clockwise, by direction
    corners = corners[(corners != corners[_PREVIOUS]).any(axis=1)]  # repeats dropped
    if corners.shape[0] < 3:
        return np.arange(points.shape[0])
    edges = _edges(corners)
    # z of edge x (point - corner): > tolerance for every edge means strictly inside
    turns = edges[:, 0] * (points[:, None, 1] - corners[:, 1]) - edges[:, 1] * (
        points[:, None, 0] - corners[:, 0]
    )
    return np.flatnonzero(~np.all(turns > COLLINEAR_TOLERANCE, axis=1))


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


class HullTracker:
    """The convex hull of a point set that changes little from one call to the next (the ground
    points of a robot's feet, step after step): the last hull's corners are kept while every point
    lies on or inside the polygon they make, one vectorised test; only otherwise is the hull
    computed again. Exact: a convex polygon whose corners are points of the set and which holds
    every point of it is the set's convex hull.
    """

    def __init__(self) -> None:
        self._indices: np.ndarray | None = None

    def indices(self, points: np.ndarray) -> np.ndarray:
        """:func:`convex_hull_indices` of checked points (n x 2, finite)."""
        return self._corners(points)[0]

    def _corners(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray, _Lines | None]:
        """The hull's indices, its corners and, when the kept hull still holds, its edges' lines
        (else None: the hull was computed again) of checked points (n x 2, finite)."""
        kept = self._indices
        if kept is not None and kept.size >= 3 and kept.max() < points.shape[0]:
            corners = points[kept]
            lines = _lines(corners)
            # z of edge x (point - corner) for every point and edge, as one product: the points
            # against each edge's left normal (-e_y, e_x), less the corners' own
            turns = points @ lines.normals.T - lines.offsets
            if turns.min() >= -COLLINEAR_TOLERANCE and lines.squares.min() > 0.0:
                return kept, corners, lines  # (two kept corners now one point: an edge of no length)
        self._indices = _hull(points)
        self._indices.flags.writeable = False  # handed out: the tracker keeps it
        return self._indices, points[self._indices], None

    def margin(self, point: np.ndarray, points: np.ndarray) -> float:
        """:func:`support_margin` of a checked point (its first two entries, x-y) in the support of
        checked ground points (n x 2 or n x 3, finite; n = 0: -inf)."""
        if points.shape[0] == 0:
            return -np.inf
        _, corners, lines = self._corners(points[:, :2])
        if corners.shape[0] >= 3:
            lines = _lines(corners) if lines is None else lines
            # each edge's signed distance: its left normal . (point - corner) / |edge|
            return float(((lines.normals @ point[:2] - lines.offsets) / np.sqrt(lines.squares)).min())
        start, end = corners[0], corners[-1]
        along = end - start
        length2 = float(along @ along)
        s = 0.0 if length2 == 0.0 else float(np.clip((point[:2] - start) @ along / length2, 0.0, 1.0))
        return -float(np.linalg.norm(point[:2] - start - s * along))


class _Lines(NamedTuple):
    """A polygon's edge lines: each edge's left normal (-e_y, e_x) (k x 2, not unit), its
    normal . corner (k) and its squared length (k)."""

    normals: np.ndarray
    offsets: np.ndarray
    squares: np.ndarray


def _lines(corners: np.ndarray) -> _Lines:
    edges = _edges(corners)
    normals = edges[:, ::-1] * _LEFT
    return _Lines(normals, (normals * corners).sum(axis=1), (edges * edges).sum(axis=1))


def support_margin(point: object, support: object, hulls: HullTracker | None = None) -> float:
    """How far a point (its x-y) is inside the support region of ground points (k x 2 or k x 3) [m].

    The region is the convex hull of the points' x-y: inside, the distance to its boundary (> 0);
    outside, minus the largest distance past one of its edge lines (as :func:`polygon_margin`).
    A region with no area (one point, or points on a line: two point feet) has no inside: the
    margin is minus the distance to the point or the segment. No point at all (nothing touches
    the ground): -inf. ``hulls``: a :class:`HullTracker` of a support that changes little between
    calls (the same margins, computed faster).
    """
    point = as_vector("point", point)
    if point.shape[0] not in (2, 3):
        raise InvalidParameterError(f"point must be x-y or x-y-z [m], got size {point.shape[0]}")
    support = np.asarray(support, dtype=float)
    if support.size == 0:
        return -np.inf
    if support.ndim != 2 or support.shape[1] not in (2, 3):
        raise InvalidParameterError(f"support must be k x 2 or k x 3 ground points [m], got {support.shape}")
    points = as_matrix("support", support[:, :2], (None, 2))
    return (HullTracker() if hulls is None else hulls).margin(point, points)


def clamp_into_polygon(point: np.ndarray, hull: np.ndarray, inset: float = 0.0) -> np.ndarray:
    """The point of a counter-clockwise convex polygon (n x 2), shrunk by ``inset`` [m] (grown when
    negative), nearest to a 2-D point: the point itself (a copy) when it is inside. The shrunk
    polygon's edges are the polygon's moved inward by ``inset``; one that shrinks to nothing is its
    centroid.
    """
    return SupportPolygon(hull).clamp(point, inset)


class SupportPolygon:
    """The convex hull of ground points (x-y) with its edges' inward unit normals kept, so that a
    margin costs one product: for a controller that asks of the same support every step.

    Args:
        points: The points (n x 2) [m]; their hull must have an area (:func:`convex_hull`).

    Attributes:
        hull, edges, normals: Its corners (counter-clockwise), edge vectors and inward unit
            normals (k x 2 each, read-only).
    """

    def __init__(self, points: object) -> None:
        self.hull = convex_hull(points)
        self.edges = _edges(self.hull)
        lengths = np.sqrt((self.edges * self.edges).sum(axis=1))
        self.normals = np.column_stack([-self.edges[:, 1], self.edges[:, 0]]) / lengths[:, None]  # inward
        self._offsets = (self.normals * self.hull).sum(axis=1)  # margin(p) = min(normals p - offsets)
        for array in (self.hull, self.edges, self.normals):
            array.flags.writeable = False
        # the same, as floats: a margin of a few edges is faster in Python than in NumPy
        self._lines = [
            (float(a), float(b), float(c)) for (a, b), c in zip(self.normals, self._offsets, strict=True)
        ]

    def margin(self, point: np.ndarray) -> float:
        """How far ``point`` (x-y) is inside [m] (outside: negative; as :func:`polygon_margin`)."""
        x, y = float(point[0]), float(point[1])
        return min(a * x + b * y - c for a, b, c in self._lines)

    def reach(self, point: np.ndarray, direction: np.ndarray) -> float:
        """How far from ``point`` (x-y, inside) the polygon goes along ``direction`` (x-y) [m]: the
        largest s with point + s d / |d| inside."""
        d = np.asarray(direction, dtype=float)[:2]
        d = d / np.linalg.norm(d)
        slack = self.normals @ np.asarray(point, dtype=float)[:2] - self._offsets  # >= 0 inside
        closing = self.normals @ d  # < 0: the edge comes nearer along d
        ahead = closing < 0.0
        return float((slack[ahead] / -closing[ahead]).min())

    def clamp(self, point: np.ndarray, inset: float = 0.0) -> np.ndarray:
        """The point of the polygon shrunk by ``inset`` [m] nearest ``point`` (x-y; a new array,
        ``point``'s x-y when it is inside; see :func:`clamp_into_polygon`)."""
        point = np.array(point, dtype=float)[:2]
        if self.margin(point) >= inset:
            return point
        hull, edges = self.hull, self.edges
        starts = hull + inset * self.normals  # each edge line moved inward, corner i = lines i-1 and i meet
        corners = np.empty_like(hull)
        for i in range(hull.shape[0]):
            (p1, d1), (p2, d2) = (starts[i - 1], edges[i - 1]), (starts[i], edges[i])
            denominator = d1[0] * d2[1] - d1[1] * d2[0]
            s = ((p2[0] - p1[0]) * d2[1] - (p2[1] - p1[1]) * d2[0]) / denominator
            corners[i] = p1 + s * d1
        along = _edges(corners)
        if np.any((along * edges).sum(axis=1) <= 0.0):  # an edge turned around: shrunk to nothing
            return hull.mean(axis=0)
        s = np.clip(((point - corners) * along).sum(axis=1) / (along * along).sum(axis=1), 0.0, 1.0)
        nearest = corners + s[:, None] * along
        return nearest[np.argmin(((nearest - point) ** 2).sum(axis=1))]
