"""Swing-foot SE3 trajectory from lift-off to touch-down."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.planning.support import as_placement
from tsid_py.trajectories import TimedTrajectory, TrajectorySample, min_jerk_shape
from tsid_py.validation import Copied, as_scalar

STEP_OVER_MOVE = 0.5  # the share of a step-over swing the foot moves across in, in its middle


def bump_shape(s: float) -> tuple[float, float, float]:
    """64 s^3 (1 - s)^3: 0 at both ends with zero slope and curvature, 1 at s = 0.5; and its derivatives."""
    return (
        64 * s**3 * (1 - s) ** 3,
        192 * s**2 * (1 - s) ** 2 * (1 - 2 * s),
        384 * s * (1 - s) * (1 - 5 * s + 5 * s**2),
    )


class TrajectorySE3SwingFoot(TimedTrajectory):
    """A foot moving from ``start`` (lift-off at t0) to ``end`` (touch-down at t0 + duration).

    With s = (t - t0) / duration clamped to [0, 1] and b(s) the minimum-jerk blend:

    - position p = p0 + (p1 - p0) b(s) + height * 64 s^3 (1 - s)^3 e_z: the foot rises ``height``
      [m] above the straight line at mid-swing; velocity and acceleration are zero at both ends;
    - orientation R = R0 exp3(b(s) log3(R0^T R1)), a geodesic on SO(3); its world angular
      velocity is b'(s)/duration R0 log3(R0^T R1) (the rotation axis is fixed).

    ``step_over`` (a step onto or off a block): the foot first rises, then moves, then comes down.
    z goes from z0 up to max(z0, z1) + ``height`` (minimum jerk) over the first half of the swing
    and down to z1 over the second; x, y and the orientation blend (minimum jerk) over the middle
    STEP_OVER_MOVE of it only, the foot still while it lifts and lands.

    Samples are SE3 samples (12-vector placement, 6-vector world velocity and classical
    acceleration), the reference a :class:`TaskSE3Equality` takes.
    """

    start = Copied("Where the foot lifts off (a copy).")
    end = Copied("Where the foot lands (a copy).")

    def __init__(
        self,
        name: str,
        start: pin.SE3,
        end: pin.SE3,
        t0: float,
        duration: float,
        height: float,
        step_over: bool = False,
    ) -> None:
        super().__init__(name, t0, duration)
        self.step_over = bool(step_over)
        self._start, self._end = as_placement("start", start).copy(), as_placement("end", end).copy()
        self.height = as_scalar("height", height)
        self._relative_rotation = pin.log3(start.rotation.T @ end.rotation)  # R0 to R1, start axes [rad]
        self._rotation_axis_world = start.rotation @ self._relative_rotation  # [rad]
        p0, p1 = self._start.translation, self._end.translation
        self._linear_basis = np.array([p0, p1 - p0, (0.0, 0.0, self.height)])  # p = (1, b, bump) . basis

    def sample(self, t: float) -> TrajectorySample:
        s = self.phase(t)
        T, T2 = self.duration, self.duration**2
        if self.step_over:
            return self._step_over(s, T, T2)
        blend, d_blend, dd_blend = min_jerk_shape(s)
        bump, d_bump, dd_bump = bump_shape(s)
        shapes = ((1.0, blend, bump), (0.0, d_blend / T, d_bump / T), (0.0, dd_blend / T2, dd_bump / T2))
        position, linear_vel, linear_acc = np.dot(shapes, self._linear_basis)
        return self._sample(position, linear_vel, linear_acc, blend, d_blend / T, dd_blend / T2)

    def _step_over(self, s: float, T: float, T2: float) -> TrajectorySample:
        """Rise, move, land (the class docstring)."""
        p0, p1 = self._start.translation, self._end.translation
        margin = 0.5 * (1.0 - STEP_OVER_MOVE)
        u = min(max((s - margin) / STEP_OVER_MOVE, 0.0), 1.0)
        blend, d_blend, dd_blend = min_jerk_shape(u)
        d_blend, dd_blend = d_blend / (STEP_OVER_MOVE * T), dd_blend / (STEP_OVER_MOVE * T) ** 2
        position, linear_vel, linear_acc = p0 + (p1 - p0) * blend, (p1 - p0) * d_blend, (p1 - p0) * dd_blend
        apex = max(p0[2], p1[2]) + self.height
        low, rising = (p0[2], True) if s < 0.5 else (p1[2], False)
        h, dh, ddh = min_jerk_shape(2.0 * s if rising else 2.0 * (1.0 - s))
        sign = 1.0 if rising else -1.0
        position[2] = low + (apex - low) * h
        linear_vel[2] = sign * (apex - low) * dh * 2.0 / T
        linear_acc[2] = (apex - low) * ddh * 4.0 / T2
        return self._sample(position, linear_vel, linear_acc, blend, d_blend, dd_blend)

    def _sample(
        self,
        position: np.ndarray,
        linear_vel: np.ndarray,
        linear_acc: np.ndarray,
        blend: float,
        d_blend: float,
        dd_blend: float,
    ) -> TrajectorySample:
        """The SE3 sample at a position [m], its velocity and acceleration, and the orientation's
        blend b with its time derivatives [1/s, 1/s^2]."""
        placement, vel, acc = np.empty(12), np.empty(6), np.empty(6)  # new: the sample's own
        placement[:3], vel[:3], acc[:3] = position, linear_vel, linear_acc
        rotation = self._start.rotation @ pin.exp3(blend * self._relative_rotation)
        placement[3:] = rotation.ravel(order="F")  # column-major, as se3_to_vector
        vel[3:], acc[3:] = self._rotation_axis_world * d_blend, self._rotation_axis_world * dd_blend
        return TrajectorySample._owning(placement, vel, acc)
