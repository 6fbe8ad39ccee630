"""Walking on terrain: footholds on its surfaces, swings that clear its edges, a CoM that follows it.

:func:`plan_walk_on` plans a walk straight ahead (along x, each foot keeping its y) over a
:class:`~tsid_py.planning.terrain.Terrain`:

- **footholds**: each swing takes the trailing foot as far ahead of the other as it can, at most
  ``step_length`` [m], to where its sole, grown by EDGE_MARGIN all round, lies on one surface
  (its points, SEARCH_STEP apart, on the plane of the ground under its centre, within
  FLAT_TOLERANCE) and rises or drops at most ``max_rise`` [m]; the farthest such place, down to
  just ahead of where the foot is (beside the other foot on stairs: a step-to). The
  foot lands with its sole on the surface: its z axis along the surface's normal, its sole's
  centre on the surface;
- **timing and ZMP**: as :func:`~tsid_py.planning.footsteps.plan_straight_walk`'s (a double
  support moving the ZMP to the coming stance sole, a single support on it), until the leading
  foot reaches ``distance`` ahead and the trailing one closes beside it; where an edge leaves no
  foothold within ``step_length``, the nearest one up to LONG_STEP step lengths ahead;
- **swings** (:func:`swing_height`): the foot's bump above the straight line from lift-off to
  touch-down is raised, by 1 cm at a time, until its whole sole stays above the terrain all
  along the swing (CLEARANCE at mid-swing);
- **CoM height** (:class:`TerrainComPlan`): the CoM keeps its height above the stance foot's
  surface, moving from one stance's to the next with a minimum-jerk blend between the times the
  ZMP arrives on them; x-y from the ZMP preview (the LIPM at the starting height above the
  ground).
"""

from __future__ import annotations

import copy

import numpy as np
import pinocchio as pin

from tsid_py.errors import InvalidParameterError
from tsid_py.planning.footsteps import SIDES, Footstep, FootstepPlan
from tsid_py.planning.lipm import LipmPlan
from tsid_py.planning.support import as_placement, ground_point, sole_center, sole_center_local
from tsid_py.planning.swing_foot import TrajectorySE3SwingFoot, bump_shape
from tsid_py.planning.terrain import Terrain
from tsid_py.robot_specs import SoleGeometry
from tsid_py.trajectories import Trajectory, TrajectorySample, min_jerk_shape
from tsid_py.validation import as_matrix, as_scalar

EDGE_MARGIN = 0.02  # [m] a sole keeps this far from a surface's edge
FLAT_TOLERANCE = 1e-3  # [m] a sole's corners this close to the plane under its centre lie on it
SEARCH_STEP = 0.01  # [m] how finely footholds are searched
CLEARANCE = 0.05  # [m] the least height of a swinging sole's corners above the terrain
MAX_SWING = 0.3  # [m] the highest bump a swing is given
STANDING_DEPTH = 1e-3  # [m] how far into the ground a standing sole may start (the controller's q0: 0.1 mm)
LONG_STEP = 1.75  # the longest step, in step lengths, taken where an edge or a gap is in the way


def foothold(terrain: Terrain, sole: SoleGeometry, like: pin.SE3, x: float) -> pin.SE3 | None:
    """The foot frame's placement with its sole's centre at (x, y of ``like``) on the terrain and
    its z axis along the surface's normal (``like``'s heading kept), if the sole, grown by
    EDGE_MARGIN, lies on one surface there; else None."""
    y = float(sole_center(sole, like)[1])
    normal = terrain.normal(x, y)
    rotation = _turned(like.rotation, normal)
    ground = np.array((x, y, terrain.height(x, y)))
    placement = pin.SE3(rotation, ground - rotation @ sole_center_local(sole))
    grown = SoleGeometry(
        sole.lxp + EDGE_MARGIN,
        sole.lxn + EDGE_MARGIN,
        sole.lyp + EDGE_MARGIN,
        sole.lyn + EDGE_MARGIN,
        sole.lz,
    )
    for point in _sole_grid(grown, placement):
        expected = ground[2] - (normal[0] * (point[0] - x) + normal[1] * (point[1] - y)) / normal[2]
        if abs(terrain.height(point[0], point[1]) - expected) > FLAT_TOLERANCE:
            return None
    return placement


def _sole_grid(sole: SoleGeometry, placement: pin.SE3) -> np.ndarray:
    """Points over the sole rectangle (world), SEARCH_STEP apart or nearer: a gap between two
    surfaces under it shows."""
    across = np.linspace(-sole.lyn, sole.lyp, int(np.ceil((sole.lyp + sole.lyn) / SEARCH_STEP)) + 1)
    along = np.linspace(-sole.lxn, sole.lxp, int(np.ceil((sole.lxp + sole.lxn) / SEARCH_STEP)) + 1)
    local = np.array([(x, y, -sole.lz) for x in along for y in across])
    return local @ placement.rotation.T + placement.translation


def _turned(rotation: np.ndarray, normal: np.ndarray) -> np.ndarray:
    """``rotation`` turned (about the horizontal axis e_z x n) so that its z axis is ``normal``
    (the foot's heading kept)."""
    z = rotation[:, 2]
    axis = np.cross(z, normal)
    if np.linalg.norm(axis) < 1e-12:
        return rotation.copy()
    angle = np.arctan2(np.linalg.norm(axis), float(z @ normal))
    return pin.exp3(axis / np.linalg.norm(axis) * angle) @ rotation


def swing_height(
    terrain: Terrain,
    sole: SoleGeometry,
    start: pin.SE3,
    target: pin.SE3,
    height: float,
    step_over: bool = False,
) -> float:
    """The least bump [m], from ``height`` up by 1 cm, that keeps the whole sole (its points
    SEARCH_STEP apart) above the terrain all along the swing from ``start`` to ``target`` (33
    instants of it), by CLEARANCE at mid-swing and less towards the ends, where the sole stands
    on it (the bump's own shape, :func:`~tsid_py.planning.swing_foot.bump_shape`)."""
    bump = as_scalar("height", height, minimum=0.0)
    if bump > MAX_SWING:
        raise InvalidParameterError(f"a swing height of {bump} m is above the highest, {MAX_SWING} m")
    instants = np.linspace(0.0, 1.0, 33)
    margins = CLEARANCE * np.array([bump_shape(float(s))[0] for s in instants])
    while bump <= MAX_SWING + 1e-9:
        swing = TrajectorySE3SwingFoot("probe", start, target, 0.0, 1.0, bump, step_over)
        if all(
            _clears(terrain, sole, swing.sample(float(s)).pos, margin)
            for s, margin in zip(instants, margins, strict=True)
        ):
            return bump
        bump += 0.01
    raise InvalidParameterError(f"no swing up to {MAX_SWING} m high clears the terrain on this step")


def _clears(terrain: Terrain, sole: SoleGeometry, pose: np.ndarray, margin: float) -> bool:
    """Whether the sole, at a swing sample's placement (12-vector), is ``margin`` above the
    terrain at every one of its points (the standing feet start 0.1 mm into the floor)."""
    points = _sole_grid(sole, pin.SE3(pose[3:].reshape(3, 3, order="F"), pose[:3]))
    return bool(np.all(points[:, 2] >= terrain.heights(points) + margin - STANDING_DEPTH))


class TerrainComPlan(Trajectory):
    """A LIPM plan's x-y with a height that follows the stance surfaces: z(t) = z0 + h(t), h
    blended (minimum jerk) from one knot (time [s], surface height [m]) to the next."""

    def __init__(self, lipm: LipmPlan, knots: list[tuple[float, float]]) -> None:
        super().__init__("terrain-com")
        self._lipm = copy.deepcopy(lipm)  # its own: the caller's plan may change after
        table = as_matrix(
            "the CoM's height knots", np.asarray(knots, dtype=float).reshape(-1, 2), (len(knots), 2)
        )
        self._times, self._heights = table[:, 0].copy(), table[:, 1].copy()
        if self._times.size < 1 or np.any(np.diff(self._times) <= 0):
            raise InvalidParameterError("the CoM's height knots must have increasing times")

    def height(self, t: float) -> tuple[float, float, float]:
        """The surface height h(t) [m] and its first two derivatives."""
        times, heights = self._times, self._heights
        if t <= times[0]:
            return float(heights[0]), 0.0, 0.0
        if t >= times[-1]:
            return float(heights[-1]), 0.0, 0.0
        k = int(np.searchsorted(times, t, side="right")) - 1
        span = times[k + 1] - times[k]
        blend, d_blend, dd_blend = min_jerk_shape((t - times[k]) / span)
        rise = heights[k + 1] - heights[k]
        return float(heights[k] + rise * blend), rise * d_blend / span, rise * dd_blend / span**2

    def sample(self, t: float) -> TrajectorySample:
        sample = self._lipm.sample(t)
        h, dh, ddh = self.height(float(t))
        pos, vel, acc = sample.pos.copy(), sample.vel.copy(), sample.acc.copy()
        pos[2] += h
        vel[2] += dh
        acc[2] += ddh
        return TrajectorySample(pos, vel, acc)


def plan_walk_on(
    terrain: Terrain,
    sole: SoleGeometry,
    right: pin.SE3,
    left: pin.SE3,
    com_xy: np.ndarray,
    distance: float,
    step_length: float,
    single_support: float = 0.8,
    double_support: float = 0.3,
    max_rise: float = 0.12,
    swing: float = 0.05,
    t_start: float = 0.5,
    t_settle: float = 1.0,
    first: str = "right",
) -> tuple[FootstepPlan, list[tuple[float, float]]]:
    """Walk ``distance`` [m] ahead over ``terrain`` (the module docstring), swinging the feet
    ``swing`` [m] above the straight line, or more where the terrain needs it.

    Returns:
        The footstep plan, and the CoM's height knots (time [s], stance surface height [m]) for
        :class:`TerrainComPlan`.

    Raises:
        InvalidParameterError: No foothold ahead within ``step_length`` fits (a gap wider than a
            step, a rise higher than ``max_rise``).
    """
    right, left = as_placement("right", right), as_placement("left", left)
    com_xy = ground_point("com_xy", com_xy)
    distance = as_scalar("distance", distance, minimum=0.0, strict=True)
    step_length = as_scalar("step_length", step_length, minimum=0.0, strict=True)
    single_support = as_scalar("single_support", single_support, minimum=0.0, strict=True)
    double_support = as_scalar("double_support", double_support, minimum=0.0, strict=True)
    max_rise = as_scalar("max_rise", max_rise, minimum=0.0, strict=True)
    if first not in SIDES:
        raise InvalidParameterError(f"first must be one of {SIDES}, got {first!r}")
    feet = {"right": pin.SE3(right), "left": pin.SE3(left)}
    for side, placement in feet.items():  # the terrain must leave the feet where they stand
        centre = sole_center(sole, placement)
        ground = terrain.height(centre[0], centre[1])
        if abs(centre[2] - ground) > 0.01:
            raise InvalidParameterError(
                f"the {side} foot starts at z = {centre[2]:.3f} m where terrain {terrain.name} is "
                f"{ground:.3f} m high: a terrain must leave the robot's starting feet where they stand"
            )
    initial = {side: pin.SE3(placement) for side, placement in feet.items()}

    def x_of(side: str) -> float:
        return float(sole_center(sole, feet[side])[0])

    def ground_of(side: str) -> float:
        centre = sole_center(sole, feet[side])
        return terrain.height(centre[0], centre[1])

    goal = max(x_of("right"), x_of("left")) + distance
    times, points = [0.0, t_start], [com_xy] * 2
    knots = [(0.0, 0.5 * (ground_of("right") + ground_of("left")))]
    steps: list[Footstep] = []
    side, t = first, t_start
    while True:
        stance = "left" if side == "right" else "right"
        closing = x_of(stance) >= goal - SEARCH_STEP  # (footholds are on a SEARCH_STEP grid)
        target = _next_foothold(terrain, sole, feet, side, stance, step_length, max_rise, goal, closing)
        t += double_support
        times.append(t)
        points.append(sole_center(sole, feet[stance])[:2])
        knots.append((t, ground_of(stance)))
        step_over = abs(float(target.translation[2] - feet[side].translation[2])) > FLAT_TOLERANCE
        bump = swing_height(terrain, sole, feet[side], target, swing, step_over)
        steps.append(Footstep(side, feet[side], target, t, t + single_support, bump, step_over))
        t += single_support
        times.append(t)
        points.append(points[-1])
        feet[side] = target
        if closing:
            break
        side = stance
    t += double_support
    times.append(t)
    points.append((sole_center(sole, feet["right"])[:2] + sole_center(sole, feet["left"])[:2]) / 2)
    knots.append((t, 0.5 * (ground_of("right") + ground_of("left"))))
    t += t_settle
    times.append(t)
    points.append(points[-1])
    plan = FootstepPlan(sole, initial, tuple(steps), np.array(times), np.array(points), t)
    return plan, knots


def _next_foothold(
    terrain: Terrain,
    sole: SoleGeometry,
    feet: dict[str, pin.SE3],
    side: str,
    stance: str,
    step_length: float,
    max_rise: float,
    goal: float,
    closing: bool,
) -> pin.SE3:
    """Where ``side`` lands: beside the stance foot when ``closing``; else the farthest foothold
    from ``step_length`` ahead of the stance foot (at most ``goal``) back to just ahead of where it
    is; else (an edge in the way) the nearest one beyond, up to LONG_STEP step lengths ahead.
    Within ``max_rise`` of where it is."""
    stance_x = float(sole_center(sole, feet[stance])[0])
    here = sole_center(sole, feet[side])
    if closing:
        candidates = np.array([stance_x])
    else:  # whole SEARCH_STEPs from the stance foot: the same candidates wherever it stands
        grid = stance_x + SEARCH_STEP * np.arange(
            -round(0.5 / SEARCH_STEP), round(LONG_STEP * step_length / SEARCH_STEP) + 1
        )
        ahead = grid[(grid > here[0] + 0.5 * SEARCH_STEP) & (grid <= goal + 1e-9)]  # every one a step forward
        near = ahead[ahead <= stance_x + step_length + 1e-9][::-1]
        candidates = np.concatenate([near, ahead[ahead > stance_x + step_length + 1e-9]])
    for x in candidates:
        placement = foothold(terrain, sole, feet[side], float(x))
        if placement is not None and abs(sole_center(sole, placement)[2] - here[2]) <= max_rise:
            return placement
    raise InvalidParameterError(
        f"no foothold for the {side} foot within {LONG_STEP * step_length:.2f} m of the {stance} one at "
        f"x = {stance_x:.2f} m (its sole and a {EDGE_MARGIN * 100:.0f} cm margin on one surface, rising at "
        f"most {max_rise} m)"
    )
