"""Self-collision avoidance: a velocity damper on the distance between collision geometries.

The geometries are Pinocchio's ``GeometryModel`` from the URDF; coal gives the distances and
witness points. A pair at distance d [m] has witness points p_1, p_2 (world) and the normal
n = (p_1 - p_2) / d. The distance moves as the two material points under the witnesses do
(Faverjon and Tournassoud, "A local based approach for path planning of manipulators with a high
number of degrees of freedom", ICRA 1987; Kanoun, Lamiraux and Wieber, "Kinematic control of
redundant manipulators: generalizing the task-priority framework to inequality tasks", IEEE T-RO
2011):

    dd/dt = J_d v,          J_d = n^T (J_p1 - J_p2)          (1 x nv)
    d2d/dt2 = J_d dv + n^T (a_p1 - a_p2)                      (a_p: classical acceleration at dv = 0)

The velocity damper keeps dd/dt >= -xi (d - d_s) / (d_i - d_s) while d < d_i. Here
d_s = ``d_min``, d_i = ``d_influence``, and xi = ``damping`` is the largest approach speed allowed
at d_i [m/s]. The approach slows down exponentially, and d never crosses d_s. At acceleration
level, the damper is asked of the next control step. With gamma = xi / (d_i - d_s) [1/s],
dd+ = dd + dt dd2 and d+ = d + dt dd + dt^2 / 2 dd2:

    dd+ >= -gamma (d+ - d_s)
    <=>  J_d dv >= -(dd + gamma (d + dt dd - d_s)) / (dt + gamma dt^2 / 2) - n^T (a_p1 - a_p2)

Integrated as the plants do (v+ = v + dt dv, q+ = q (+) dt (v + dt/2 dv)), this gives
(1 + gamma dt / 2)(d+ - d_s) >= (1 - gamma dt / 2)(d - d_s): d stays above d_s for gamma dt < 2.

The drift n^T (a_p1 - a_p2) is that of the witness points frozen on their bodies, with n frozen.
The exact second derivative of |p_1 - p_2| for those points adds (|dr|^2 - (n . dr)^2) / d >= 0,
with dr = v_p1 - v_p2. The sliding of the witnesses over curved surfaces adds curvature terms.
Leaving the first out makes the bound conservative: it never predicts more separation than there
is.

Meshes are replaced by their convex hulls by default (``convex=True``). GJK on hulls is fast, and
its witness points move continuously. A hull contains its mesh, so the mesh distance is at least
the hull distance the task keeps above d_min.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from tsid_py.constraints import ConstraintInequality, Kind
from tsid_py.errors import InvalidParameterError, RobotSpecError, UnknownNameError
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.tasks.task_base import TaskMotion, TaskState
from tsid_py.validation import as_scalar, unknown_name_message

GJK_TOLERANCE = 1e-9  # [m] coal's default 1e-6 shows in finite differences of the distance
TOUCHING = 1e-9  # [m] below this the witness points coincide and coal's normal gives n


@dataclass(frozen=True)
class PairDistance:
    """The distance of one pair of collision geometries at one configuration.

    Attributes:
        names: The two geometry objects' names.
        distance: Their distance d [m] (negative when they intersect, signed by coal).
        point1: The witness point on the first geometry, world frame [m].
        point2: The witness point on the second, world frame [m].
        normal: n, the unit direction along which moving point1 increases d (world axes).
    """

    names: tuple[str, str]
    distance: float
    point1: np.ndarray
    point2: np.ndarray
    normal: np.ndarray


def point_jacobian(model: pin.Model, data: pin.Data, joint: int, point: np.ndarray) -> np.ndarray:
    """J_p (3 x nv, world axes): the velocity of the material point of ``joint``'s body now at
    ``point`` (world [m]) is J_p v. ``data`` holds the joint Jacobians (``compute_all_terms``)."""
    if joint == 0:
        return np.zeros((3, model.nv))
    J = pin.getJointJacobian(model, data, joint, pin.LOCAL_WORLD_ALIGNED)
    return J[:3] - pin.skew(point - data.oMi[joint].translation).dot(J[3:])


def point_drift(model: pin.Model, data: pin.Data, joint: int, point: np.ndarray) -> np.ndarray:
    """The classical acceleration at dv = 0 of a material point of ``joint``'s body [m/s^2].

    The point is now at ``point`` (world [m]). The acceleration is a + alpha x r + w x (v + w x r)
    in the joint's frame, rotated to world axes. ``data`` is filled by ``compute_all_terms``, at
    zero acceleration.
    """
    if joint == 0:
        return np.zeros(3)
    placement = data.oMi[joint]
    r = placement.actInv(point)
    velocity, acceleration = data.v[joint], data.a[joint]
    w = velocity.angular
    point_velocity = velocity.linear + np.cross(w, r)
    local = acceleration.linear + np.cross(acceleration.angular, r) + np.cross(w, point_velocity)
    return placement.rotation.dot(local)


@dataclass(slots=True, kw_only=True)
class DistanceState(TaskState):
    """The distance of every pair at the last computation [m] (inf: not handed to coal)."""

    distances: np.ndarray


class TaskSelfCollision(TaskMotion):
    """Keep pairs of collision geometries at least ``d_min`` apart (module docstring).

    One inequality row per pair, or per ``max_active`` closest pairs: J_d dv >= lb for a pair
    closer than ``d_influence``. A farther pair's row is 0 with infinite bounds, which the backends
    skip. Add the task at priority 0. Pairs whose bounding spheres are further apart than
    d_influence are not handed to coal at all.

    Args:
        name: The task's name.
        robot: The robot.
        dt: The control period [s] (the damper is asked of the next step).
        pairs: Pairs of names. A name is a geometry object's (``"torso_2_link_0"``), or a link's
            (``"torso_2_link"``: every geometry of that link). Every geometry of the first is kept
            from every geometry of the second. ``"all"``: every pair of geometries on different,
            non-adjacent joints, less the SRDF's ``disable_collisions``, and less the pairs closer
            than d_min in the robot's default configuration (they touch by design). ``None``: the
            robot spec's ``[self_collision] pairs`` if it has some, else ``"all"``.
        d_min: The distance kept, d_s [m] (>= 0).
        d_influence: Where the damper starts, d_i > d_min [m].
        damping: xi, the largest approach speed at d_influence [m/s] (> 0); gamma dt must stay < 1.
        geometry_model: The collision geometries (cloned); the URDF's when None.
        convex: Replace meshes by their convex hulls (faster, and conservative).
        max_active: At most this many rows (the closest pairs); one row per pair when None.
    """

    kind = Kind.INEQUALITY

    _state: DistanceState

    def __init__(
        self,
        name: str,
        robot: RobotWrapper,
        dt: float,
        pairs: Iterable[Sequence[str]] | str | None = None,
        d_min: float = 0.02,
        d_influence: float = 0.1,
        damping: float = 0.5,
        geometry_model: pin.GeometryModel | None = None,
        convex: bool = True,
        max_active: int | None = None,
    ) -> None:
        super().__init__(name, robot)
        self._dt = as_scalar("dt", dt, minimum=0.0, strict=True)
        self._d_min, self._d_influence, self._damping = 0.0, np.inf, 1.0
        self.set_damper(d_min, d_influence, damping)
        if geometry_model is None:
            load = getattr(robot, "load_collision_model", None)
            if load is None:
                raise InvalidParameterError(
                    f"task {name!r}: the robot has no spec to load its collision geometries from; "
                    "pass geometry_model (pinocchio.buildGeomFromUrdf(..., pinocchio.COLLISION))"
                )
            geometry_model = load()
        else:
            geometry_model = geometry_model.clone()
        self.geometry_model = geometry_model
        if pairs is None:
            spec_pairs = getattr(getattr(robot, "spec", None), "self_collision", {}).get("pairs")
            pairs = spec_pairs if spec_pairs else "all"
        if isinstance(pairs, str):
            if pairs != "all":
                raise InvalidParameterError(
                    f"pairs must be a list of name pairs, None or 'all', got {pairs!r}"
                )
            ids = all_pairs(robot, geometry_model, self._d_min)
        else:
            ids = resolve_pairs(robot, geometry_model, pairs)
        if not ids:
            raise InvalidParameterError(f"task {name!r}: no pair of geometries to keep apart")
        involved = sorted({g for pair in ids for g in pair})
        for g in involved:
            geometry = geometry_model.geometryObjects[g].geometry
            if convex and hasattr(geometry, "buildConvexRepresentation"):
                geometry.buildConvexRepresentation(False)
                geometry_model.geometryObjects[g].geometry = geometry = geometry.convex
            geometry.computeLocalAABB()
        geometry_model.removeAllCollisionPairs()
        for first, second in ids:
            geometry_model.addCollisionPair(pin.CollisionPair(first, second))
        self._geometry_data = pin.GeometryData(geometry_model)
        for request in self._geometry_data.distanceRequests:
            request.gjk_tolerance = GJK_TOLERANCE
        objects = geometry_model.geometryObjects
        self._pairs = ids
        self._joints = [(int(objects[a].parentJoint), int(objects[b].parentJoint)) for a, b in ids]
        self._involved = involved
        self._sphere_centres = [np.array(objects[g].geometry.aabb_center) for g in involved]
        slot = {g: i for i, g in enumerate(involved)}
        self._pair_slots = np.array([[slot[a], slot[b]] for a, b in ids])
        radii = np.array([objects[g].geometry.aabb_radius for g in involved])
        self._pair_radii = radii[self._pair_slots].sum(axis=1)
        self._names = [(objects[a].name, objects[b].name) for a, b in ids]
        if max_active is not None and (isinstance(max_active, bool) or int(max_active) < 1):
            raise InvalidParameterError(f"max_active must be a positive integer or None, got {max_active!r}")
        self._dim = len(ids) if max_active is None else min(len(ids), int(max_active))
        self._state = DistanceState(distances=np.full(len(ids), np.inf))

    # ------------------------------------------------------------------ parameters
    @property
    def dt(self) -> float:
        """The control period [s]."""
        return self._dt

    @property
    def d_min(self) -> float:
        """d_s, the distance kept [m]."""
        return self._d_min

    @property
    def d_influence(self) -> float:
        """d_i, the distance where the damper starts [m]."""
        return self._d_influence

    @property
    def damping(self) -> float:
        """xi, the largest approach speed at d_influence [m/s]."""
        return self._damping

    def set_damper(self, d_min: float, d_influence: float, damping: float) -> None:
        """Set the damper.

        Args:
            d_min: d_s, the distance kept [m], >= 0.
            d_influence: d_i, where the damper starts [m], > d_s.
            damping: xi, the largest approach speed at d_i [m/s], > 0.

        Raises:
            InvalidParameterError: d_i <= d_s, or gamma dt = xi dt / (d_i - d_s) >= 1.
        """
        d_min = as_scalar("d_min", d_min, minimum=0.0)
        d_influence = as_scalar("d_influence", d_influence)
        damping = as_scalar("damping", damping, minimum=0.0, strict=True)
        if d_influence <= d_min:
            raise InvalidParameterError(f"d_influence must be > d_min = {d_min} m, got {d_influence} m")
        gamma_dt = damping / (d_influence - d_min) * self._dt
        if gamma_dt >= 1.0:
            raise InvalidParameterError(
                f"damping {damping} m/s over d_influence - d_min = {d_influence - d_min} m at "
                f"dt = {self._dt} s gives gamma dt = {gamma_dt:.3g}: it must be < 1 (lower the damping "
                "or widen the band)"
            )
        self._d_min, self._d_influence, self._damping = d_min, d_influence, damping

    @property
    def pair_names(self) -> list[tuple[str, str]]:
        """The pairs kept apart, by geometry object names (a new list)."""
        return list(self._names)

    @property
    def distances(self) -> np.ndarray:
        """The distance of every pair at the last computation [m] (inf where the bounding spheres
        were farther apart than d_influence; a copy)."""
        return self._state.distances.copy()

    @property
    def min_distance(self) -> float:
        """The smallest distance at the last computation [m]."""
        return float(self._state.distances.min())

    # ------------------------------------------------------------------- distances
    def compute_distances(self, data: pin.Data, every_pair: bool = True) -> list[PairDistance | None]:
        """The distance of each pair, with its witness points and normal.

        Args:
            data: Holds the joint placements.
            every_pair: False: a pair whose bounding spheres are farther apart than d_influence
                gives None; it is not handed to coal.
        """
        model, geometry_model, geometry_data = self.robot.model, self.geometry_model, self._geometry_data
        pin.updateGeometryPlacements(model, data, geometry_model, geometry_data)
        placements = geometry_data.oMg
        near = np.ones(len(self._pairs), dtype=bool)
        if not every_pair:  # bounding spheres farther apart than d_influence: not handed to coal
            centres = np.array(
                [placements[g].act(c) for g, c in zip(self._involved, self._sphere_centres, strict=True)]
            )
            ends = centres[self._pair_slots]
            gaps = np.linalg.norm(ends[:, 0] - ends[:, 1], axis=1) - self._pair_radii
            near = gaps <= self._d_influence
        results: list[PairDistance | None] = []
        for k in range(len(self._pairs)):
            if not near[k]:
                results.append(None)
                continue
            pin.computeDistance(geometry_model, geometry_data, k)
            result = geometry_data.distanceResults[k]
            p1, p2 = np.array(result.getNearestPoint1()), np.array(result.getNearestPoint2())
            separation = p1 - p2
            norm = float(np.linalg.norm(separation))
            normal = separation / norm if norm > TOUCHING else -np.array(result.normal)
            results.append(PairDistance(self._names[k], float(result.min_distance), p1, p2, normal))
        return results

    def distance_jacobian(self, data: pin.Data, k: int, pair: PairDistance) -> tuple[np.ndarray, float]:
        """The distance's Jacobian and drift for pair k, at its witness points (module docstring).

        Returns:
            jacobian: J_d, size nv.
            drift: n^T (a_p1 - a_p2) [m/s^2].
        """
        model = self.robot.model
        first, second = self._joints[k]
        jacobian = pair.normal.dot(
            point_jacobian(model, data, first, pair.point1) - point_jacobian(model, data, second, pair.point2)
        )
        drift = pair.normal.dot(
            point_drift(model, data, first, pair.point1) - point_drift(model, data, second, pair.point2)
        )
        return jacobian, float(drift)

    def fill(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data, out: ConstraintInequality) -> None:
        pairs = self.compute_distances(data, every_pair=False)
        distances = np.array([np.inf if p is None else p.distance for p in pairs])
        self._state.distances = distances
        active = [k for k in np.argsort(distances, kind="stable") if distances[k] < self._d_influence]
        out.matrix[...], out.lower_bound[...], out.upper_bound[...] = 0.0, -np.inf, np.inf  # no bound yet
        dt, d_s = self._dt, self._d_min
        gamma = self._damping / (self._d_influence - d_s)
        for row, k in enumerate(active[: self._dim]):
            pair = pairs[k]
            jacobian, drift = self.distance_jacobian(data, k, pair)
            speed = float(jacobian.dot(v))
            out.matrix[row] = jacobian
            out.lower_bound[row] = (
                -(speed + gamma * (pair.distance + dt * speed - d_s)) / (dt + gamma * dt**2 / 2) - drift
            )


# ------------------------------------------------------------------------ which pairs
def _geometries(robot: RobotWrapper, geometry_model: pin.GeometryModel, name: str) -> list[int]:
    """The geometry objects a name stands for: the object of that name, or every object of a link."""
    if not isinstance(name, str):
        raise InvalidParameterError(f"a collision pair names geometries or links by str, got {name!r}")
    if geometry_model.existGeometryName(name):
        return [geometry_model.getGeometryId(name)]
    frames = robot.model.frames
    ids = [k for k, g in enumerate(geometry_model.geometryObjects) if frames[g.parentFrame].name == name]
    if not ids:
        known = [g.name for g in geometry_model.geometryObjects] + sorted(
            {frames[g.parentFrame].name for g in geometry_model.geometryObjects}
        )
        raise UnknownNameError(unknown_name_message("collision geometry or link", name, known))
    return ids


def resolve_pairs(
    robot: RobotWrapper, geometry_model: pin.GeometryModel, pairs: Iterable[Sequence[str]]
) -> list[tuple[int, int]]:
    """Geometry index pairs of name pairs (each name a geometry object or a link), in order, without
    duplicates or pairs on one joint."""
    ids: list[tuple[int, int]] = []
    seen: set[tuple[int, int]] = set()
    objects = geometry_model.geometryObjects
    for pair in pairs:
        if isinstance(pair, str) or len(pair) != 2:
            raise InvalidParameterError(f"a collision pair is two names, got {pair!r}")
        for a, b in itertools.product(*(_geometries(robot, geometry_model, n) for n in pair)):
            key = (min(a, b), max(a, b))
            if a != b and objects[a].parentJoint != objects[b].parentJoint and key not in seen:
                seen.add(key)
                ids.append((a, b))
    if not ids and pairs:
        raise InvalidParameterError(f"the pairs {list(pairs)!r} name no two geometries on different joints")
    return ids


def all_pairs(
    robot: RobotWrapper, geometry_model: pin.GeometryModel, clearance: float
) -> list[tuple[int, int]]:
    """Every pair of geometries on different, non-adjacent joints, less the SRDF's
    ``disable_collisions`` and those closer than ``clearance`` [m] in the robot's default configuration."""
    model = robot.model
    objects = geometry_model.geometryObjects
    candidates = geometry_model.clone()
    candidates.removeAllCollisionPairs()
    for a, b in itertools.combinations(range(len(objects)), 2):
        ja, jb = objects[a].parentJoint, objects[b].parentJoint
        if ja != jb and model.parents[ja] != jb and model.parents[jb] != ja:
            candidates.addCollisionPair(pin.CollisionPair(a, b))
    srdf = getattr(robot, "srdf_path", lambda: None)()
    if srdf is not None:
        if not srdf.is_file():
            raise RobotSpecError(f"the SRDF {srdf} of {robot.name} is missing")
        pin.removeCollisionPairs(model, candidates, str(srdf))
    data = model.createData()
    q = (
        robot.default_configuration()
        if hasattr(robot, "default_configuration")
        else robot.neutral_configuration()
    )
    pin.forwardKinematics(model, data, q)
    geometry_data = pin.GeometryData(candidates)
    pin.updateGeometryPlacements(model, data, candidates, geometry_data)
    pin.computeDistances(candidates, geometry_data)
    return [
        (pair.first, pair.second)
        for pair, result in zip(candidates.collisionPairs, geometry_data.distanceResults, strict=True)
        if result.min_distance > clearance
    ]
