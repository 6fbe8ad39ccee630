"""One measured state per control step: what the plant measured, its kinematics computed once.

A closed-loop step is measure -> decide -> act (docs/architecture.md). :class:`Measurer` turns a
plant's :class:`~tsid_py.loop.plant.PlantState` into a frozen :class:`MeasuredState` with one
kinematics pass (``pinocchio.centerOfMass(model, data, q, v)``: the joints' placements and
velocities, the CoM and its velocity), and everything downstream reads it: the controller's
contact feedback, the strategies (push recovery, footsteps, a user's own), the scenarios' hooks,
the log. The :class:`~tsid_py.loop.verdict.BalanceJudge` builds its own from the truth with the
same code.

Each balance quantity has one definition, here:

- **capture point**: omega = sqrt(g / z) with z the CoM's height above the ground the feet touch
  (the mean height of their touching points: a stair's or a slope's surface, not z = 0; while no
  foot touches, the last such ground), taken at least :data:`MIN_PENDULUM_HEIGHT` so that a
  measured state is never refused; xi = c + c_dot / omega
  (:func:`~tsid_py.planning.capture.capture_point`; Pratt et al. 2006);
- **touch rule**: a foot touches when the plant says so (:class:`ContactMeasurement`); where the
  plant measures no contact at its frame, when its lowest ground point is within
  :data:`TOUCH_TOLERANCE` of the ground the feet stand on (below);
- **ground height**: z = 0, or, for a measurer that learns it (``learn_ground``: a controller's,
  for a loop that may pass no contact measurements; never the judge's, which reads the truth),
  where the feet stand: the lowest sole corner of all the feet when the foot it belongs to stands
  still (slower than :data:`STILL_SPEED`) and no contact is measured there, kept from step to step
  (0 until then). A model whose soles are not where the spec puts them (a box under the sole, a
  sole frame a few millimetres up) then still sees its feet touch, as legged-robot estimators take
  a still stance foot as the ground (Bloesch et al. 2013); a foot held still in the air above the
  lowest one is not the ground. A robot hung with its feet still in the air cannot be told from one
  standing without contact measurements: pass them (``PlantState.contacts``) where the plant has
  them;
- **ground points**: where a touching foot meets the ground: the points the plant measured, else
  the sole's corners in the world (:func:`~tsid_py.planning.support.sole_corners`, the one
  sole-to-world map), else (a point foot) the point ``point_foot_radius`` below its frame;
- **support polygon and margin**: the convex hull of the touching feet's ground points, and how
  far the capture point is inside it (:meth:`~tsid_py.geometry.HullTracker.margin`; negative
  outside, -inf when no foot touches).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from tsid_py.errors import InvalidParameterError
from tsid_py.geometry import HullTracker
from tsid_py.loop.plant import ContactMeasurement, PlantState
from tsid_py.planning.capture import capture_point, pendulum_frequency
from tsid_py.planning.support import sole_corners
from tsid_py.robot_wrapper import RobotWrapper

TOUCH_TOLERANCE = 5e-3  # [m] a foot this close to the ground touches it, where the plant measures no contact
STILL_SPEED = 0.01  # [m/s] a foot slower than this, where the plant measures no contact, shows the ground
MIN_PENDULUM_HEIGHT = 1e-3  # [m] the least CoM height of the pendulum (a CoM at or under the ground)


class FootState(NamedTuple):
    """One foot as measured (a named tuple: made for every foot at every step).

    Attributes:
        frame: The foot's frame (the spec's ``[feet]`` value).
        translation, rotation: The frame's placement in the world (``placement``: a new
            ``pinocchio.SE3`` of them at each read).
        velocity: The frame's spatial velocity, linear then angular, in world axes at the frame's
            origin (Pinocchio's LOCAL_WORLD_ALIGNED) [m/s, rad/s].
        corners: The sole's corners in the world (4 x 3) [m]; a point foot's ground point (1 x 3).
        touching: Whether it touches the ground (the touch rule of the module docstring).
        ground: Where it touches the ground (k x 3, world) [m]: the plant's points where it
            measured them, else ``corners``; empty when it does not touch.
        measurement: What the plant measured at its frame, the measured state's own copy (None:
            the plant measures no contact there).
    """

    frame: str
    translation: np.ndarray
    rotation: np.ndarray
    velocity: np.ndarray
    corners: np.ndarray
    touching: bool
    ground: np.ndarray
    measurement: ContactMeasurement | None

    @property
    def placement(self) -> pin.SE3:
        """The frame's placement in the world (a new ``pinocchio.SE3``)."""
        return pin.SE3(self.rotation, self.translation)

    @property
    def lowest(self) -> float:
        """The height of its lowest sole corner (a point foot's ground point) [m]."""
        return float(self.corners[:, 2].min())


class MeasuredState(NamedTuple):
    """What one control step knows of the robot (a named tuple, its arrays read-only: the state is
    shared by every reader of the step; ``state._replace(...)`` makes another).

    Attributes:
        t: Time [s].
        q, v: The configuration and velocity (Pinocchio's conventions).
        com, com_velocity: The CoM [m] and its velocity [m/s], world frame.
        omega: sqrt(g / z) [1/s] of the CoM's height z above the ground its feet touch.
        capture_point: xi = c + c_dot / omega, x-y [m].
        feet: Each foot by its key of the spec's ``[feet]`` (empty for a robot without feet).
        support: The touching feet's ground points (k x 3, world) [m].
        margin: How far the capture point is inside their support polygon [m] (negative:
            outside; -inf: no foot touches).
        tilt: The base's tilt from its reference attitude [rad] (0 for a fixed base).
        base_height: The base's height [m] (its q[2]; 0 for a fixed base).
        contacts: The plant's contact measurements by frame (empty: it measures none).
        bodies_down: Bodies other than the feet touching the ground, as the plant measures them
            (named as the joints that move them).
        ground_height: The height of the ground the unmeasured feet's touch rule uses [m] (the
            ground height of the module docstring; 0 where the plant measures every contact).
    """

    t: float
    q: np.ndarray
    v: np.ndarray
    com: np.ndarray
    com_velocity: np.ndarray
    omega: float
    capture_point: np.ndarray
    feet: Mapping[str, FootState]
    support: np.ndarray
    margin: float
    tilt: float
    base_height: float
    contacts: Mapping[str, ContactMeasurement]
    bodies_down: tuple[str, ...] = ()
    ground_height: float = 0.0

    @property
    def touching(self) -> tuple[str, ...]:
        """The keys of the feet that touch the ground, in the spec's order."""
        return tuple(key for key, foot in self.feet.items() if foot.touching)

    @property
    def measures_contacts(self) -> bool:
        """Whether the plant measured its contacts (else touching comes from the feet's heights)."""
        return bool(self.contacts)


class Measurer:
    """Builds the :class:`MeasuredState` of a robot, one kinematics pass a call (its own Data).

    Args:
        robot: The robot (a spec's ``[feet]`` and ``[sole]`` give its feet; none: no feet).
        q0: The configuration whose base attitude the tilt is measured from (the robot's neutral
            one when None).
        learn_ground: Whether the ground's height is learned from the feet that stand still,
            where no contact is measured (the module docstring), or z = 0.
    """

    def __init__(self, robot: RobotWrapper, q0: np.ndarray | None = None, learn_ground: bool = False) -> None:
        if not isinstance(robot, RobotWrapper):
            raise InvalidParameterError(f"Measurer needs a RobotWrapper, got {type(robot).__name__}")
        self.robot = robot
        self._data = robot.create_data()
        model = robot.model
        spec = getattr(robot, "spec", None)
        feet = dict(getattr(spec, "feet", None) or {})
        self._floating = not robot.is_fixed_base
        self._feet = [(key, frame, robot.frame_id(frame)) for key, frame in feet.items()]
        self._foot_bodies = frozenset(
            model.names[model.frames[frame_id].parentJoint] for _, _, frame_id in self._feet
        )
        self._sole = getattr(spec, "sole", None)
        self._below = np.array([0.0, 0.0, float(getattr(spec, "point_foot_radius", 0.0))])
        q0 = robot.neutral_configuration() if q0 is None else robot.check_state(q0, robot.zero_velocity())[0]
        self._up = base_up(q0) if self._floating else (0.0, 0.0, 1.0)  # the world's up, base frame
        self._hulls = HullTracker()  # the support of one step is much like the last one's
        self.ground_height = 0.0  # [m] where the unmeasured feet stand (the module docstring)
        self._pendulum_ground = 0.0  # [m] the ground the feet touched last: the pendulum's
        self._learn_ground = bool(learn_ground)

    @property
    def foot_bodies(self) -> frozenset[str]:
        """The joints that move the feet (their bodies' names as plants report them)."""
        return self._foot_bodies

    def measure(self, state: PlantState) -> MeasuredState:
        """The measured state of ``state`` (its q and v are copied, read-only)."""
        if not isinstance(state, PlantState):
            raise InvalidParameterError(f"measure needs a PlantState, got {type(state).__name__}")
        robot, data = self.robot, self._data
        model = robot.model
        q, v = robot.check_state(state.q, state.v)
        q, v = q.copy(), v.copy()
        pin.centerOfMass(model, data, q, v)  # the one kinematics pass: placements, velocities, CoM
        com, velocity = data.com[0].copy(), data.vcom[0].copy()
        contacts = {frame: _own(measured) for frame, measured in state.contacts.items()}
        seen = []  # (key, frame, placement, velocity, corners, its lowest, measurement) of each foot
        lowest, standing = math.inf, False  # the feet's lowest corner; whether its foot shows the ground
        for key, frame, frame_id in self._feet:
            placement = pin.updateFramePlacement(model, data, frame_id)
            speed = pin.getFrameVelocity(model, data, frame_id, pin.LOCAL_WORLD_ALIGNED).vector
            if self._sole is None:
                corners = (placement.translation - self._below)[None, :]
            else:
                corners = sole_corners(self._sole, placement)
            measurement = contacts.get(frame)
            low = float(corners[:, 2].min())
            if low < lowest:
                lowest = low
                standing = measurement is None and speed[:3].dot(speed[:3]) < STILL_SPEED**2
            seen.append((key, frame, placement, speed, corners, low, measurement))
        if standing and self._learn_ground:
            self.ground_height = lowest
        feet, touching_points = {}, []
        for key, frame, placement, speed, corners, low, measurement in seen:
            if measurement is not None:
                touching = bool(measurement.touching)
            else:
                touching = low <= self.ground_height + TOUCH_TOLERANCE
            ground = corners
            if touching and measurement is not None and measurement.points is not None:
                ground = measurement.points  # (the measured state's own copy, read-only)
            if touching:
                touching_points.append(ground)
            feet[key] = FootState(
                frame,
                _frozen(placement.translation.copy()),
                _frozen(placement.rotation.copy()),
                _frozen(speed),
                _frozen(corners),
                touching,
                _frozen(ground) if touching else _NO_POINTS,
                measurement,
            )
        support = np.vstack(touching_points) if touching_points else _NO_POINTS
        if touching_points:  # the pendulum's ground: where the feet touch
            self._pendulum_ground = float(support[:, 2].mean())
        omega = pendulum_frequency(max(float(com[2]) - self._pendulum_ground, MIN_PENDULUM_HEIGHT))
        xi = capture_point(com, velocity, omega)
        bodies: tuple[str, ...] = ()
        if state.ground_bodies is not None:
            bodies = tuple(sorted(set(state.ground_bodies) - self._foot_bodies))
        tilt, height = 0.0, 0.0
        if self._floating:
            (a, b, c), (d, e, f) = base_up(q), self._up
            tilt, height = math.acos(min(1.0, max(-1.0, a * d + b * e + c * f))), float(q[2])
        return MeasuredState(
            float(state.t),
            _frozen(q),
            _frozen(v),
            _frozen(com),
            _frozen(velocity),
            omega,
            _frozen(xi),
            MappingProxyType(feet),
            _frozen(support),
            self._hulls.margin(xi, support),
            tilt,
            height,
            MappingProxyType(contacts),
            bodies,
            self.ground_height,
        )


_NO_POINTS = np.zeros((0, 3))
_NO_POINTS.flags.writeable = False


def _own(measured: ContactMeasurement) -> ContactMeasurement:
    """A copy of a plant's contact measurement, its arrays read-only (the measured state's own)."""
    points = measured.points
    if points is not None:
        points = _frozen(np.array(points, dtype=float).reshape(-1, 3))
    wrench = _frozen(np.array(measured.wrench, dtype=float))
    return ContactMeasurement(wrench, bool(measured.touching), float(measured.friction_ratio), points)


def _frozen(array: np.ndarray) -> np.ndarray:
    """``array`` made read-only (the measured state's own arrays: every reader shares them)."""
    array.flags.writeable = False
    return array


def base_up(q: np.ndarray) -> tuple[float, float, float]:
    """The world's up in the free-flyer base's frame: the last row of its rotation matrix R (q's
    quaternion x, y, z, w, normalized), R^T e_z = (2 (xz - wy), 2 (yz + wx), 1 - 2 (x^2 + y^2)) / n
    for a quaternion of squared norm n (floats: a tilt is their dot product with the reference's)."""
    x, y, z, w = q[3:7].tolist()
    n = x * x + y * y + z * z + w * w
    return 2.0 * (x * z - w * y) / n, 2.0 * (y * z + w * x) / n, 1.0 - 2.0 * (x * x + y * y) / n
