"""Footstep plans: which foot moves where and when, and the ZMP reference that goes with it."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.errors import InvalidParameterError, NonFiniteError
from tsid_py.planning.support import as_placement, as_sole, ground_point, sole_center
from tsid_py.planning.swing_foot import TrajectorySE3SwingFoot
from tsid_py.robot_specs import SoleGeometry
from tsid_py.validation import Copied, as_matrix, as_scalar, as_vector, lookup

SIDES = ("right", "left")


class Footstep:
    """One swing: ``side`` leaves ``start`` at ``t_lift`` and lands at ``target`` at ``t_land`` [s].

    ``start`` and ``target`` are placements of the foot frame in the world (copied in, read as
    copies); t_land > t_lift. ``height`` [m], when given, is this swing's bump (one that clears a
    step's edge: :func:`~tsid_py.planning.terrain_walk.swing_height`), else the walk's;
    ``step_over``: the swing rises, moves, then lands (onto or off a block:
    :class:`~tsid_py.planning.swing_foot.TrajectorySE3SwingFoot`). A footstep does not change once
    made.
    """

    __slots__ = ("_side", "_start", "_target", "_t_lift", "_t_land", "_height", "_step_over")
    start = Copied("Where the foot lifts off (the foot frame in the world).")
    target = Copied("Where the foot lands (the foot frame in the world).")

    def __init__(
        self,
        side: str,
        start: pin.SE3,
        target: pin.SE3,
        t_lift: float,
        t_land: float,
        height: float | None = None,
        step_over: bool = False,
    ) -> None:
        if side not in SIDES:  # a list or any other value, not only an unknown name
            lookup("side", str(side), dict.fromkeys(SIDES))
        self._side = side
        self._start, self._target = as_placement("start", start).copy(), as_placement("target", target).copy()
        self._t_lift, self._t_land = as_scalar("t_lift", t_lift), as_scalar("t_land", t_land)
        if self._t_land <= self._t_lift:
            raise InvalidParameterError(
                f"a footstep lands after it lifts off: t_land = {self._t_land} s <= t_lift = {self._t_lift} s"
            )
        self._height = None if height is None else as_scalar("height", height, minimum=0.0)
        self._step_over = bool(step_over)

    @property
    def side(self) -> str:
        """``"right"`` or ``"left"``."""
        return self._side

    @property
    def t_lift(self) -> float:
        """Lift-off time [s]."""
        return self._t_lift

    @property
    def t_land(self) -> float:
        """Touch-down time [s]."""
        return self._t_land

    def __repr__(self) -> str:
        return f"Footstep({self._side!r}, lift {self._t_lift:g} s, land {self._t_land:g} s)"

    @property
    def height(self) -> float | None:
        """This swing's own bump [m], or None (the walk's)."""
        return self._height

    def swing_trajectory(self, height: float) -> TrajectorySE3SwingFoot:
        """The swing-foot reference of this step, rising its own height, else ``height`` [m], at
        mid-swing."""
        return TrajectorySE3SwingFoot(
            f"swing-{self._side}",
            self._start,
            self._target,
            self._t_lift,
            self._t_land - self._t_lift,
            height if self._height is None else self._height,
            self._step_over,
        )


class FootstepPlan:
    """Footsteps in time order, one foot in the air at a time, and the ZMP reference that goes with them.

    :func:`plan_straight_walk`'s timeline: both feet on the ground until ``t_start``; then for
    every step a double support in which the ZMP moves to the coming stance foot and a single
    support in which the other foot swings; after the last touch-down the ZMP moves to the middle
    of the feet during one more double support and stays until ``t_end``.

    Args:
        sole: The sole rectangle in the foot frame.
        initial: Foot-frame placements in the world at t = 0, by side.
        steps: The swings, in time order.
        zmp_times, zmp_points: Knots (times [s], ZMP x-y [m]) of the piecewise-linear ZMP reference.
        t_end: When the plan ends [s].

    A plan does not change once made: it keeps copies of what it is given and hands out copies.
    """

    __slots__ = ("_sole", "_initial", "_steps", "_zmp_times", "_zmp_points", "_t_end")
    zmp_times = Copied("Times of the ZMP reference's knots [s].")
    zmp_points = Copied("ZMP x-y at the knots [m].")

    def __init__(
        self,
        sole: SoleGeometry,
        initial: dict[str, pin.SE3],
        steps: tuple[Footstep, ...],
        zmp_times: object,
        zmp_points: object,
        t_end: float,
    ) -> None:
        self._sole = as_sole(sole)  # a frozen dataclass of floats
        if not isinstance(initial, dict) or set(initial) != set(SIDES):
            raise InvalidParameterError(f"initial must map {SIDES} to foot placements, got {initial!r}")
        self._initial = {
            side: as_placement(f"initial placement of the {side} foot", initial[side]).copy()
            for side in SIDES
        }
        self._steps = tuple(steps)  # footsteps do not change
        if any(not isinstance(step, Footstep) for step in self._steps):
            raise InvalidParameterError("steps must be Footstep objects")
        for before, after in zip(self._steps, self._steps[1:], strict=False):
            if after.t_lift < before.t_land:
                raise InvalidParameterError(
                    f"footsteps overlap: one lifts off at {after.t_lift} s before the previous lands at "
                    f"{before.t_land} s (one foot must stay on the ground)"
                )
        times = as_vector("zmp_times", zmp_times)
        points = as_matrix("zmp_points", zmp_points, (times.shape[0], 2))
        if times.shape[0] < 2 or np.any(np.diff(times) < 0):
            raise InvalidParameterError(f"zmp_times must be >= 2 non-decreasing times [s], got {times}")
        self._t_end = as_scalar("t_end", t_end)
        if self._steps and self._t_end < self._steps[-1].t_land:
            raise InvalidParameterError(f"t_end = {self._t_end} s is before the last touch-down")
        self._zmp_times, self._zmp_points = times, points

    @property
    def sole(self) -> SoleGeometry:
        """The sole rectangle in the foot frame."""
        return self._sole

    @property
    def steps(self) -> tuple[Footstep, ...]:
        """The swings, in time order."""
        return self._steps

    @property
    def t_end(self) -> float:
        """When the plan ends [s]."""
        return self._t_end

    @property
    def initial(self) -> dict[str, pin.SE3]:
        """Foot-frame placements in the world at t = 0, by side (copies)."""
        return {side: placement.copy() for side, placement in self._initial.items()}

    def zmp_reference(self, t: np.ndarray | float) -> np.ndarray:
        """The planned ZMP on the ground at time(s) t, shape (..., 2) [m]."""
        t = np.asarray(t, dtype=float)
        if not np.all(np.isfinite(t)):
            raise NonFiniteError(f"times of the ZMP reference must be finite, got {t}")
        return np.stack([np.interp(t, self._zmp_times, self._zmp_points[:, k]) for k in range(2)], axis=-1)

    def swinging(self, t: float) -> Footstep | None:
        """The step whose foot is in the air at time t [s] (lift-off <= t < touch-down), if any."""
        t = as_scalar("t", t)
        for step in self.steps:
            if step.t_lift <= t < step.t_land:
                return step
        return None

    def placements(self, t: float) -> dict[str, pin.SE3]:
        """Where each foot is planned to stand (or has last stood) at time t [s]."""
        t = as_scalar("t", t)
        feet = self.initial
        for step in self.steps:
            if step.t_land <= t:
                feet[step.side] = step.target
        return feet


def plan_straight_walk(
    sole: SoleGeometry,
    right: pin.SE3,
    left: pin.SE3,
    com_xy: np.ndarray,
    n_steps: int,
    step_length: float,
    single_support: float = 0.8,
    double_support: float = 0.3,
    t_start: float = 0.5,
    t_settle: float = 1.0,
    first: str = "right",
) -> FootstepPlan:
    """Walk straight ahead (along the world x axis) in ``n_steps`` >= 2 swings.

    Footprint k (k = 1..n_steps - 1) lands step_length [m] ahead of footprint k - 1 (the first
    is ahead of the initial feet); the last swing closes, placing the trailing foot beside the
    leading one. The robot advances (n_steps - 1) step_length. Each foot keeps its lateral
    position, height and orientation. The ZMP starts under the CoM (``com_xy``), moves to the
    stance sole's centre for every single support and ends between the final feet; ``t_settle``
    [s] of standing follow the last double support.

    Args:
        sole: The sole rectangle in the foot frame.
        right, left: Initial foot-frame placements in the world.
        com_xy: Initial CoM, x-y (or x-y-z) in the world [m].
        n_steps: Number of swings, >= 2.
        step_length: Footprint spacing along x [m] (negative walks backwards).
        single_support: Swing duration [s], > 0.
        double_support: Duration of each double support [s], > 0.
        t_start: Standing time before the first double support [s].
        t_settle: Standing time after the last double support [s].
        first: The side that swings first, ``"right"`` or ``"left"``.
    """
    if not isinstance(n_steps, (int, np.integer)) or n_steps < 2:
        raise InvalidParameterError(f"n_steps must be an integer >= 2, got {n_steps!r}")
    if first not in SIDES:
        raise InvalidParameterError(f"first must be one of {SIDES}, got {first!r}")
    right, left = as_placement("right", right), as_placement("left", left)
    com_xy = ground_point("com_xy", com_xy)
    step_length = as_scalar("step_length", step_length)
    single_support = as_scalar("single_support", single_support, minimum=0.0, strict=True)
    double_support = as_scalar("double_support", double_support, minimum=0.0, strict=True)
    t_start = as_scalar("t_start", t_start, minimum=0.0)
    t_settle = as_scalar("t_settle", t_settle, minimum=0.0)

    feet = {"right": pin.SE3(right), "left": pin.SE3(left)}
    initial = dict(feet)
    x0 = max(right.translation[0], left.translation[0])
    times, points = [0.0, t_start], [com_xy] * 2
    steps = []
    side, t = first, t_start
    for k in range(1, n_steps + 1):
        stance = "left" if side == "right" else "right"
        t += double_support
        times.append(t)
        points.append(sole_center(sole, feet[stance])[:2])
        target = pin.SE3(feet[side])
        target.translation = target.translation.copy()
        target.translation[0] = x0 + min(k, n_steps - 1) * step_length
        steps.append(Footstep(side, feet[side], target, t, t + single_support))
        t += single_support
        times.append(t)
        points.append(points[-1])
        feet[side] = target
        side = stance
    t += double_support
    times.append(t)
    points.append((sole_center(sole, feet["right"])[:2] + sole_center(sole, feet["left"])[:2]) / 2)
    t += t_settle
    times.append(t)
    points.append(points[-1])
    return FootstepPlan(sole, initial, tuple(steps), np.array(times), np.array(points), t)
