"""Meshcat objects for a :class:`~tsid_py.viz.scene.SceneFrame`: the robot's meshes and the markers.

Shared by the live viewer (poses sent as transforms) and the HTML replay (poses recorded as
animation keyframes). Every marker is a unit primitive placed by (position, rotation, scale):
spheres for points, a cylinder stretched to the force magnitude plus a cone for each force arrow,
and thin cylinders between consecutive vertices for the support polygon (unused edges are shrunk
to nothing, so the polygon can change shape during an animation).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.errors import InvalidParameterError
from tsid_py.viz.scene import SceneBuilder, SceneFrame

MARKERS = "markers"
# name -> (radius [m], colour 0xRRGGBB, opacity)
POINT_STYLES = {
    "com": (0.035, 0xE03030, 1.0),
    "com_ref": (0.045, 0x30C030, 0.5),
    "ee": (0.03, 0xFF8000, 1.0),
    "ee_ref": (0.04, 0xE03030, 0.5),
    "zmp": (0.02, 0x8030E0, 1.0),
    "zmp_ref": (0.025, 0x30C0C0, 0.5),
    "capture_point": (0.025, 0xE030E0, 0.9),  # on the ground
}

FOOT_TARGET_STYLE = (0.02, 0x3060F0, 0.6)
ARROW_COLOR, ARROW_RADIUS, HEAD_LENGTH = 0xF0C000, 0.008, 0.03  # [m]
POLYGON_COLOR, POLYGON_RADIUS = 0x2090F0, 0.004  # [m]
HIDDEN = 1e-6  # scale of a marker that is not shown
TERRAIN, TERRAIN_COLOR = "terrain", 0xB0A898  # the terrain's node and its blocks' colour


def _material(color: int, opacity: float):
    import meshcat.geometry as mg

    return mg.MeshLambertMaterial(color=color, opacity=opacity, transparent=opacity < 1.0)


def _rotation_y_to(direction: np.ndarray) -> np.ndarray:
    """A rotation taking the y axis (meshcat's cylinder axis) onto ``direction``."""
    norm = np.linalg.norm(direction)
    if norm < 1e-12:
        return np.eye(3)
    return pin.Quaternion.FromTwoVectors(np.array([0.0, 1.0, 0.0]), direction / norm).matrix()


def place(node, position: np.ndarray, rotation: np.ndarray | None = None, scale: object = 1.0) -> None:
    """Pose a meshcat node: live (a transform T R S) or inside an animation frame (keyframes)."""
    from meshcat.animation import AnimationFrameVisualizer, js_quaternion

    rotation = np.eye(3) if rotation is None else rotation
    scale = np.broadcast_to(np.asarray(scale, dtype=float), (3,))
    matrix = np.eye(4)
    matrix[:3, :3] = rotation
    matrix[:3, 3] = position
    if isinstance(node, AnimationFrameVisualizer):
        node.set_property("position", "vector3", [float(x) for x in position])
        node.set_property("quaternion", "quaternion", [float(x) for x in js_quaternion(matrix)])
        node.set_property("scale", "vector3", [float(x) for x in scale])
    else:
        matrix[:3, :3] = rotation * scale
        node.set_transform(matrix)


class MeshcatScene:
    """The robot and the markers in one meshcat tree.

    Args:
        visualizer: A ``meshcat.Visualizer`` (live, or recording for a replay).
        robot: The robot; its visual meshes come from the example-robot-data files of its spec.
        builder: Computes the scene frames (contacts, point names, arrow scale).
        point_names: The marker points to create (a subset of ``POINT_STYLES``).
    """

    def __init__(self, visualizer, robot, builder: SceneBuilder, point_names: list[str]) -> None:
        import meshcat.geometry as mg
        from pinocchio.visualize import MeshcatVisualizer

        self.visualizer = visualizer
        self.builder = builder
        load = getattr(robot, "load_visual_model", None)  # a spec robot loads its meshes on demand
        self.visual_model = load() if load is not None else robot.visual_model
        if self.visual_model is None:
            raise InvalidParameterError(f"{robot.name} has no visual model: build it with load_visuals=True")
        self.pin_viz = MeshcatVisualizer(robot.model, None, self.visual_model)
        self.pin_viz.initViewer(viewer=visualizer, loadModel=True)
        self.geometry_nodes = [
            (i, self.pin_viz.getViewerNodeName(g, pin.GeometryType.VISUAL), np.array(g.meshScale))
            for i, g in enumerate(self.visual_model.geometryObjects)
        ]
        markers = visualizer[MARKERS]
        self.point_names = [name for name in point_names if name in POINT_STYLES]
        for name in self.point_names:
            radius, color, opacity = POINT_STYLES[name]
            markers["points"][name].set_object(mg.Sphere(radius), _material(color, opacity))
        radius, color, opacity = FOOT_TARGET_STYLE
        for name, target in builder.foot_targets().items():
            markers["foot_targets"][name].set_object(mg.Sphere(radius), _material(color, opacity))
            place(markers["foot_targets"][name], target)
        for name in builder.contacts:
            markers["forces"][name]["shaft"].set_object(
                mg.Cylinder(1.0, ARROW_RADIUS), _material(ARROW_COLOR, 1)
            )
            cone = mg.Cylinder(HEAD_LENGTH, radiusTop=0.0, radiusBottom=2.5 * ARROW_RADIUS)
            markers["forces"][name]["head"].set_object(cone, _material(ARROW_COLOR, 1))
        self.n_edges = builder.max_support_vertices
        for k in range(self.n_edges):
            edge = mg.Cylinder(1.0, POLYGON_RADIUS)
            markers["support_polygon"][f"edge{k}"].set_object(edge, _material(POLYGON_COLOR, 1))

    def draw_terrain(self, terrain) -> None:
        """The blocks of ``terrain`` (a :class:`~tsid_py.planning.terrain.Terrain`) as boxes, where
        the MuJoCo plant has them (centre, size, pitch about y); the floor is meshcat's grid."""
        import meshcat.geometry as mg

        node = self.visualizer[TERRAIN]
        node.delete()
        for k, block in enumerate(terrain.blocks):
            box = node[f"block{k}"]
            box.set_object(mg.Box(list(block.size)), _material(TERRAIN_COLOR, 1.0))
            place(box, np.array(block.center), block.rotation)

    def look_at(self, target: np.ndarray, distance: float) -> None:
        """Point the default camera at ``target`` [m] from ``distance`` [m] (see :func:`look_at`)."""
        look_at(self.visualizer, target, distance)

    def draw(self, frame: SceneFrame, node=None) -> None:
        """Pose everything as in ``frame``; ``node`` is an animation frame, or None for the live tree."""
        root = self.visualizer if node is None else node
        model, data = self.pin_viz.model, self.pin_viz.data
        pin.forwardKinematics(model, data, frame.q)
        pin.updateGeometryPlacements(model, data, self.visual_model, self.pin_viz.visual_data)
        for index, path, scale in self.geometry_nodes:
            placement = self.pin_viz.visual_data.oMg[index]
            place(root[path], placement.translation, placement.rotation, scale)
        markers = root[MARKERS]
        for name in self.point_names:
            point = frame.points.get(name)
            visible = point is not None
            position = point if point is not None else np.zeros(3)
            place(markers["points"][name], position, None, 1.0 if visible else HIDDEN)
        for name in self.builder.contacts:
            self._draw_arrow(markers["forces"][name], frame.forces.get(name))
        polygon = frame.support_polygon
        for k in range(self.n_edges):
            edge = markers["support_polygon"][f"edge{k}"]
            if k < len(polygon) and len(polygon) >= 2:
                start, end = polygon[k], polygon[(k + 1) % len(polygon)]
                self._segment(edge, start, end)
            else:
                place(edge, np.zeros(3), None, HIDDEN)

    def _draw_arrow(self, node, arrow: tuple[np.ndarray, np.ndarray] | None) -> None:
        if arrow is None:
            place(node["shaft"], np.zeros(3), None, HIDDEN)
            place(node["head"], np.zeros(3), None, HIDDEN)
            return
        origin, force = arrow
        length = self.builder.arrow_scale * float(np.linalg.norm(force))
        rotation = _rotation_y_to(force)
        direction = rotation[:, 1]
        place(node["shaft"], origin + 0.5 * length * direction, rotation, (1.0, length, 1.0))
        place(node["head"], origin + (length + 0.5 * HEAD_LENGTH) * direction, rotation, 1.0)

    @staticmethod
    def _segment(node, start: np.ndarray, end: np.ndarray) -> None:
        vector = end - start
        place(node, 0.5 * (start + end), _rotation_y_to(vector), (1.0, float(np.linalg.norm(vector)), 1.0))


def look_at(visualizer, target: np.ndarray, distance: float) -> None:
    """Centre meshcat's view on ``target`` [m], seen from ``distance`` [m]: in front, to the side, above.

    meshcat's camera always looks at the world origin (three.js ``lookAt`` takes world
    coordinates), so the scene is shifted instead: the robot and markers (``/meshcat``), the grid
    and the axes move by -target. The camera position is given in its y-up frame: world
    (x, y, z) is (x, z, -y) there.
    """
    shift = pin.SE3(np.eye(3), -np.asarray(target, dtype=float))
    for path in ("/meshcat", "/Axes", "/Grid"):
        visualizer[path].set_transform(shift.homogeneous)
    offset = distance * np.array([0.75, 0.35, 0.55])
    camera = visualizer["/Cameras/default/rotated/<object>"]
    camera.set_property("position", [float(offset[0]), float(offset[2]), float(-offset[1])])


def camera_target(robot, frame) -> tuple[np.ndarray, float]:
    """Where to look [m] and from how far [m]: the middle of the robot, at a distance fitting its size."""
    data = robot.create_data()
    robot.forward_kinematics(data, frame.q)
    positions = np.array([robot.joint_placement(data, j).translation for j in range(1, robot.model.njoints)])
    low, high = positions.min(axis=0), positions.max(axis=0)
    low[2] = min(low[2], 0.0)
    size = float(np.linalg.norm(high - low))
    return 0.5 * (low + high), max(1.2 * size, 0.5)
