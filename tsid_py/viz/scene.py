"""What a viewer draws at one instant of a run, in the world frame.

A :class:`SceneFrame` holds the configuration q, marker points (CoM and its reference, end
effector and its reference, ZMP, foot targets), one force arrow per loaded contact (the resultant
force, drawn from the contact's centre of pressure) and the support polygon (convex hull of the
loaded contact points, seen from above). :class:`SceneBuilder` computes frames from a controller's
contacts and the per-step records of a :class:`~tsid_py.scenarios.runner.RunLog`. Fields that a
log does not have (an arm has no CoM reference, a balance run no ZMP) are simply not drawn.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tsid_py.contacts.contact_base import ContactBase
from tsid_py.geometry import GRAVITY, center_of_pressure, convex_hull_indices
from tsid_py.planning.terrain import Terrain, load_terrain
from tsid_py.robot_wrapper import RobotWrapper

ARROW_LENGTH_PER_WEIGHT = 0.5  # an arrow carrying the robot's whole weight m g is 0.5 m long
LOADED_CONTACT_FORCE = 1e-3  # [N] a contact with less total normal force is drawn as unloaded

# Per-step position series a RunLog may carry (name -> attribute), drawn when present and non-empty.
POINT_SERIES = ("com", "com_ref", "ee", "ee_ref", "zmp", "zmp_ref", "capture_point")


@dataclass
class SceneFrame:
    """One instant: configuration, points [m], force arrows (origin [m], force [N]), support polygon [m]."""

    t: float
    q: np.ndarray
    points: dict[str, np.ndarray] = field(default_factory=dict)
    forces: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    support_polygon: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    footprints: dict[str, np.ndarray] = field(default_factory=dict)  # loaded contact -> its points (k, 3)


class SceneBuilder:
    """Computes :class:`SceneFrame` s of a robot and its contacts.

    Args:
        robot: The robot (its model; visuals are the viewer's business).
        contacts: Contact name -> contact, for the names under which the log records forces.
    """

    def __init__(self, robot: RobotWrapper, contacts: dict[str, ContactBase]) -> None:
        self.robot = robot
        self.contacts = dict(contacts)
        self.data = robot.create_data()
        self.arrow_scale = ARROW_LENGTH_PER_WEIGHT / max(robot.total_mass * GRAVITY, 1e-9)  # [m/N]

    @property
    def max_support_vertices(self) -> int:
        """Largest possible number of support-polygon vertices (every contact point loaded)."""
        return sum(c.local_points().shape[1] for c in self.contacts.values())

    def foot_targets(self) -> dict[str, np.ndarray]:
        """Reference positions of the contact frames [m] (where each foot is held)."""
        return {name: c.reference.translation for name, c in self.contacts.items() if c.unilateral}

    def frame(
        self, t: float, q: np.ndarray, forces: dict[str, np.ndarray | None], points: dict[str, np.ndarray]
    ) -> SceneFrame:
        """The scene at configuration q with the contact force variables of each loaded contact."""
        data = self.data
        self.robot.forward_kinematics(data, q)
        arrows, footprints = {}, {}
        for name, f in forces.items():
            contact = self.contacts.get(name)
            if contact is None or f is None or np.size(f) != contact.n_force or not np.all(np.isfinite(f)):
                continue
            if not contact.unilateral:  # two frames held together: no surface to draw
                continue
            world_points = contact.world_points(data).T
            point_forces = contact.world_forces(data, f)
            if point_forces[:, 2].sum() < LOADED_CONTACT_FORCE:
                continue
            arrows[name] = (center_of_pressure(world_points, point_forces), point_forces.sum(axis=0))
            footprints[name] = world_points
        polygon = np.zeros((0, 3))
        if footprints:
            support_points = np.vstack(list(footprints.values()))
            polygon = support_points[convex_hull_indices(support_points[:, :2])]
        return SceneFrame(float(t), np.array(q, dtype=float), dict(points), arrows, polygon, footprints)

    def frames_from_log(self, log: Any, stride: int = 1) -> list[SceneFrame]:  # a RunLog
        """Every ``stride``-th step of a run log as a scene frame (always including the last step)."""
        steps = len(log.t)
        indices = list(range(0, steps, max(1, int(stride))))
        if steps and indices[-1] != steps - 1:
            indices.append(steps - 1)
        return [self.frame_at(log, i) for i in indices]

    def frame_at(self, log: Any, i: int) -> SceneFrame:  # a RunLog (viz does not import the loop)
        """Step ``i`` of a run log; series whose length differs from the log's are left out."""
        steps = len(log.t)
        points = {}
        for name in POINT_SERIES:
            values = getattr(log, name, None)
            if values is not None and len(values) == steps:
                points[name] = _as_point(values[i])
        forces = {name: values[i] for name, values in log.forces.items() if len(values) == steps}
        return self.frame(log.t[i], log.q[i], forces, points)


def _as_point(value: object) -> np.ndarray:
    """A 3-D point [m]; a 2-D (x, y) one, such as a ZMP, is put on the ground z = 0."""
    point = np.asarray(value, dtype=float).ravel()
    return np.concatenate([point, np.zeros(3)])[:3] if point.size < 3 else point[:3]


def run_terrain(summary: dict[str, Any]) -> Terrain | None:
    """The terrain a run walked on (its summary's ``terrain``: a shipped name or a file's path),
    or None on the floor."""
    name = summary.get("terrain")
    if not name or name == "flat":
        return None
    terrain = load_terrain(str(name))
    return None if terrain.flat else terrain


def keep_pace(wall_start: float | None, t: float) -> float:
    """Sleep until simulated time ``t`` [s] has passed on the wall clock since simulated time 0,
    for a viewer that plays a run in real time. ``wall_start`` is the wall time [s] of simulated
    time 0 (None at the first frame); it is returned, for the next call."""
    if wall_start is None:
        wall_start = time.perf_counter() - t
    time.sleep(max(0.0, t - (time.perf_counter() - wall_start)))
    return wall_start
