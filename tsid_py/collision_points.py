"""The URDF's collision geometry as points: what is lowest, and what a foot stands on.

Each collision shape becomes points in the frame of the joint that moves it, with a radius around
each: a mesh or convex by its vertices, a box by its corners, a cylinder by its two rims (16
points each), a sphere by its centre and a capsule by its axis ends, with their radius. The lowest
point of a shape along the world's z is then the lowest of its points minus the radius, exactly
for every kind but the cylinder (within 2 % of its radius).

Used by the spec checks (does the robot stand on its contact frames?), by ``tsid-py new-spec``
(where are the feet and their soles?) and by the MuJoCo plant (a flat plate under each sole).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from tsid_py.robot_wrapper import RobotWrapper

RIM_POINTS = 16  # points on each rim of a cylinder
SOLE_BAND = 2e-3  # [m] the points of a foot this close to its lowest are its sole


@dataclass(frozen=True)
class Shape:
    """One collision shape: its name, the joint that moves it, its points in that joint's frame
    (k x 3) [m] and the radius around each point [m]."""

    name: str
    joint: int
    points: np.ndarray
    radius: float


def shapes_of(collision_model: pin.GeometryModel) -> list[Shape]:
    """The shapes of a Pinocchio collision model (kinds it cannot describe are left out: planes,
    half-spaces, octrees)."""
    shapes = []
    for item in collision_model.geometryObjects:
        described = _points(item.geometry)
        if described is None:
            continue
        local, radius = described
        placement = item.placement
        shapes.append(
            Shape(item.name, item.parentJoint, local @ placement.rotation.T + placement.translation, radius)
        )
    return shapes


def _points(geometry) -> tuple[np.ndarray, float] | None:
    kind = type(geometry).__name__
    if kind == "Box":
        return np.array(
            [[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
        ) * geometry.halfSide, 0.0
    if kind == "Sphere":
        return np.zeros((1, 3)), float(geometry.radius)
    if kind == "Capsule":
        return np.array([[0.0, 0.0, -geometry.halfLength], [0.0, 0.0, geometry.halfLength]]), float(
            geometry.radius
        )
    if kind == "Cylinder":
        angles = np.linspace(0.0, 2.0 * np.pi, RIM_POINTS, endpoint=False)
        rim = np.column_stack([np.cos(angles), np.sin(angles)]) * geometry.radius
        ends = [
            np.column_stack([rim, np.full(RIM_POINTS, z)])
            for z in (-geometry.halfLength, geometry.halfLength)
        ]
        return np.vstack(ends), 0.0
    if hasattr(geometry, "vertices"):
        vertices = np.asarray(geometry.vertices(), dtype=float).reshape(-1, 3)
        return (vertices, 0.0) if vertices.size else None
    return None


class CollisionPoints:
    """A robot's collision shapes, placed at a configuration.

    Args:
        robot: The robot.
        collision_model: Its collision geometry (``robot.load_collision_model()`` by default).
    """

    def __init__(self, robot: RobotWrapper, collision_model: pin.GeometryModel | None = None) -> None:
        self.robot = robot
        if collision_model is None:
            collision_model = robot.load_collision_model()  # type: ignore[attr-defined]
        self.shapes = shapes_of(collision_model)
        self._data = robot.create_data()

    def place(self, q: np.ndarray) -> None:
        """Put the shapes at configuration q."""
        pin.forwardKinematics(self.robot.model, self._data, q)

    def world(self, shape: Shape) -> np.ndarray:
        """A shape's points in the world at the placed configuration (k x 3) [m]."""
        placement = self._data.oMi[shape.joint]
        return shape.points @ placement.rotation.T + placement.translation

    def lowest(self, joints: set[int] | None = None) -> tuple[float, str]:
        """The lowest z of the shapes (of ``joints`` only, when given) [m] and its shape's name."""
        best, name = np.inf, ""
        for shape in self.shapes:
            if joints is not None and shape.joint not in joints:
                continue
            z = float(self.world(shape)[:, 2].min()) - shape.radius
            if z < best:
                best, name = z, shape.name
        return best, name

    def sole(self, joint: int, band: float = SOLE_BAND, up: np.ndarray | None = None) -> np.ndarray:
        """What the body of ``joint`` stands on at the placed configuration: the points of its
        shapes within ``band`` of its lowest point along ``up`` (a unit vector, the world's z by
        default; a tilted foot's own normal), moved down ``up`` by their radius (k x 3, world) [m]."""
        up = np.array((0.0, 0.0, 1.0)) if up is None else np.asarray(up, dtype=float)
        placed = [(self.world(shape), shape.radius) for shape in self.shapes if shape.joint == joint]
        if not placed:
            return np.zeros((0, 3))
        lowest = min(float((points @ up).min()) - radius for points, radius in placed)
        found = []
        for points, radius in placed:
            found.append(points[points @ up - radius <= lowest + band] - radius * up)
        return np.vstack(found)

    def joint_placement(self, joint: int) -> pin.SE3:
        """The placement of ``joint`` in the world at the placed configuration (a copy)."""
        return pin.SE3(self._data.oMi[joint])
