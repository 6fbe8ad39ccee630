"""The capture point of the linear inverted pendulum: where to put the centre of pressure, and the
foot, to stop a CoM that moves.

For a CoM c at height z above the ground, omega = sqrt(g / z) [1/s] and the capture point (the
divergent component of motion, DCM) is xi = c + c_dot / omega (x-y). With the CMP r (the centre
of pressure, shifted by the rate of change of angular momentum) the pendulum moves as

    c_ddot = omega^2 (c - r),     xi_dot = omega (xi - r),

so xi runs away from r: xi(t) = r + (xi_0 - r) exp(omega t) (Pratt et al. 2006; Koolen et al.
2012). DCM feedback (Englsberger et al. 2015, "Three-dimensional bipedal walking control based on
divergent component of motion") asks for r = xi + (k / omega) (xi - xi_ref): then
xi_dot = -k (xi - xi_ref), and the CoM follows xi at rate omega.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from tsid_py.errors import InvalidParameterError
from tsid_py.geometry import GRAVITY, clamp_into_polygon


def pendulum_frequency(com_height: float) -> float:
    """omega = sqrt(g / z) [1/s] of a CoM ``com_height`` [m] above the ground."""
    if not com_height > 0.0:
        raise InvalidParameterError(f"the CoM must be above the ground, got a height of {com_height} m")
    return math.sqrt(GRAVITY / com_height)


Point = np.ndarray | Sequence[float]  # a point or vector given by its x-y (x-y-z allowed) [m]


def _xy(point: Point) -> tuple[float, float]:
    """A point's x and y as floats: the pendulum's few products are faster on floats than arrays."""
    return float(point[0]), float(point[1])


def capture_point(com: Point, com_velocity: Point, omega: float) -> np.ndarray:
    """xi = c + c_dot / omega, x-y [m]."""
    (cx, cy), (vx, vy) = _xy(com), _xy(com_velocity)
    return np.array((cx + vx / omega, cy + vy / omega))


def capture_point_after(xi: np.ndarray, cmp: np.ndarray, omega: float, duration: float) -> np.ndarray:
    """The capture point ``duration`` [s] later with the CMP held at ``cmp``: r + (xi - r) e^(omega T)."""
    return cmp + (xi - cmp) * math.exp(omega * duration)


def predicted_capture_point(
    xi: np.ndarray, omega: float, duration: float, stance_hull: np.ndarray
) -> np.ndarray:
    """The capture point ``duration`` [s] later, on one foot: its centre of pressure held at the
    point of its sole (``stance_hull``, counter-clockwise n x 2) nearest the capture point [m]."""
    cop = clamp_into_polygon(xi, stance_hull)
    return capture_point_after(np.asarray(xi, dtype=float), cop, omega, duration)


class DcmCommand(NamedTuple):
    """One step of DCM feedback: the CMP it asks for (x-y) [m] and the CoM acceleration that CMP
    gives, omega^2 (c - r) (x-y) [m/s^2]. (A named tuple: made every control step.)"""

    cmp: np.ndarray
    com_acceleration: np.ndarray


def dcm_feedback(com: Point, xi: Point, omega: float, xi_ref: Point, gain: float) -> DcmCommand:
    """The CMP r = xi + (gain / omega) (xi - xi_ref) for a resting reference (xi_ref_dot = 0), and
    the CoM acceleration it gives, omega^2 (c - r).

    The CMP is not clipped into the support polygon: where it is outside, the feet's centre of
    pressure stops at the soles' edge and the rest of the moment has to come from the angular
    momentum (the upper body), which a whole-body QP with a soft angular-momentum task gives.

    Args:
        com: The CoM [m] (x-y used).
        xi: Its capture point [m].
        omega: sqrt(g / z) [1/s].
        xi_ref: Where the capture point should come to rest [m] (x-y).
        gain: k [1/s], the capture point's error decays as exp(-k t).
    """
    (cx, cy), (x, y), (x_ref, y_ref) = _xy(com), _xy(xi), _xy(xi_ref)
    rx, ry = x + (gain / omega) * (x - x_ref), y + (gain / omega) * (y - y_ref)
    w2 = omega * omega
    return DcmCommand(np.array((rx, ry)), np.array((w2 * (cx - rx), w2 * (cy - ry))))


@dataclass(frozen=True)
class StepLimits:
    """Where a foot may land, relative to the stance foot's sole centre, in the stance foot's
    axes [m]: forward and backward at most ``reach``; sideways, on its own side, between
    ``min_width`` (the feet clear of each other, no crossing) and ``max_width``."""

    reach: float
    min_width: float
    max_width: float

    def __post_init__(self) -> None:
        if not (0.0 < self.min_width <= self.max_width and self.reach > 0.0):
            raise InvalidParameterError(
                f"step limits need 0 < min_width <= max_width and reach > 0, got {self}"
            )

    def clip(self, offset: np.ndarray, side_sign: float) -> np.ndarray:
        """An offset (stance axes, x-y) kept within the limits, for a foot on side ``side_sign``
        (+1 left of the stance foot, -1 right)."""
        x = float(np.clip(offset[0], -self.reach, self.reach))
        y = side_sign * float(np.clip(side_sign * offset[1], self.min_width, self.max_width))
        return np.array([x, y])


@dataclass(frozen=True)
class StepChoice:
    """A step chosen: the foot, its landing point (the sole's centre, x-y) [m], the capture point
    predicted at touch-down [m], and how far the landing misses it (the limits' cost) [m]."""

    side: str
    landing: np.ndarray
    predicted: np.ndarray
    miss: float


def choose_step(
    xi: np.ndarray,
    omega: float,
    duration: float,
    stance_soles: dict[str, tuple[np.ndarray, np.ndarray, float]],
    limits: StepLimits,
    sides: tuple[str, ...] = ("right", "left"),
) -> StepChoice:
    """Which foot steps and where, to stop a capture point ``xi`` [m] that left (or is leaving) the
    support.

    For each foot that may step (``sides``), the other stands: its CoP goes to the point of its
    sole nearest the capture point, and the capture point runs on for ``duration`` [s] (lift-off
    to touch-down); the foot should land with its sole centred on that predicted capture point,
    kept within ``limits`` of the stance foot. The step that misses it least is chosen (on a tie,
    the shorter one).

    Args:
        stance_soles: For each foot: (its sole's polygon in the world, counter-clockwise n x 2;
            its sole's centre, x-y; its yaw [rad]).
    """
    best: tuple[float, StepChoice] | None = None
    for side in sides:
        stance = "left" if side == "right" else "right"
        polygon, centre, yaw = stance_soles[stance]
        predicted = predicted_capture_point(xi, omega, duration, polygon)
        rotation = np.array([[math.cos(yaw), -math.sin(yaw)], [math.sin(yaw), math.cos(yaw)]])
        wanted = rotation.T @ (predicted - centre)
        offset = limits.clip(wanted, 1.0 if side == "left" else -1.0)
        landing = centre + rotation @ offset
        miss = float(np.linalg.norm(offset - wanted))
        length = float(np.linalg.norm(landing - stance_soles[side][1]))
        cost = miss + 1e-3 * length
        if best is None or cost < best[0]:
            best = (cost, StepChoice(side, landing, predicted, miss))
    if best is None:
        raise InvalidParameterError("choose_step needs a foot that may step")
    return best[1]
