"""Push recovery for a standing biped: capture point feedback at the ankles, and a step when it must.

:class:`PushRecovery` is a strategy (:class:`~tsid_py.controllers.strategies.strategy.Strategy`)
that a :class:`~tsid_py.controllers.biped.BipedController` adds for its ``recovery`` argument.
At every control step it reads the measured state and the feet's phases and decides the CoM
reference and the steps (:class:`~tsid_py.controllers.feet.StepRequest`); the controller applies
them, and the feet (:class:`~tsid_py.controllers.feet.FootSchedule`) carry the steps out:

- **ankle** (``recovery="ankle"``): the CoM task follows DCM feedback instead of a CoM PD
  (:func:`~tsid_py.planning.capture.dcm_feedback`, Englsberger et al. 2015): its reference
  acceleration is the one that brings the capture point back to rest over the centre of the feet
  at the rate ``gain``. The centre of pressure moves within the soles to give it; where the CMP it
  asks for is outside them, the soles' forces stop at the edge and the QP takes the rest from the
  angular momentum (TSID's task, weight 1e-3, yields): the upper body turns, and the posture and
  angular-momentum tasks bring it back afterwards (the hip strategy). A foot a push lifted
  (released by contact feedback), or that rolled on an edge (tilted more than ``tilt``), is put
  down again flat where it is.
- **step** (``recovery="step"``): the same, and when the measured capture point leaves the
  support polygon of the feet that stand, or a push lifted a foot and the other alone will not
  hold it, a step: the foot whose
  landing misses the predicted capture point least (:func:`~tsid_py.planning.capture.choose_step`:
  the capture point at touch-down, with the stance foot's CoP at its nearest point; within the
  leg's reach and clear of the other foot). Its contact unloads over ``unload_time``, it swings
  for ``swing_time`` on a swing-foot trajectory whose landing keeps following the capture point
  for the first ``replan`` of the swing, goes on down until the plant says it touches, and its
  contact comes back there with a loading ramp; then, if the capture point is still outside,
  another step. A foot going back beside the other (lifted by a push, or rolled) steps instead if
  a new push sends the capture point past where the two feet will stand. The robot comes to rest
  over the centre of its feet where they landed. With no foot standing (both lifted or rolled) there
  is nothing to step from: only the DCM feedback acts, and the run's verdict says what came of it.

With ``recovery="none"`` (the default) the controller is TSID's, untouched.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from tsid_py.controllers.feet import FootSchedule, StepRequest
from tsid_py.controllers.strategies.strategy import Decision
from tsid_py.errors import InvalidParameterError, RobotSpecError
from tsid_py.geometry import SupportPolygon, convex_hull, flat_rotation, heading
from tsid_py.loop.measured import MeasuredState
from tsid_py.planning.capture import (
    StepLimits,
    choose_step,
    dcm_feedback,
    predicted_capture_point,
)
from tsid_py.planning.support import as_placement, sole_center, sole_polygon
from tsid_py.planning.swing_foot import TrajectorySE3SwingFoot
from tsid_py.robot_specs import SoleGeometry, SpecRobot
from tsid_py.trajectories import TrajectorySample
from tsid_py.validation import lookup

RECOVERIES = ("none", "ankle", "step")
SIDES = ("right", "left")


@dataclass(frozen=True)
class RecoveryParams:
    """The push recovery's gains, times [s] and distances [m].

    Attributes:
        gain: k [1/s] of the DCM feedback: the capture point's error decays as exp(-k t).
        trigger: A step starts when the capture point is less than this inside the support
            polygon of the feet that stand [m] (0: when it reaches the polygon's edge); a foot
            going back beside the other steps instead when the capture point predicted at its
            touch-down is less than this inside the support the two feet will make.
        unload_time, swing_time, load_time: Of a step: the contact's unloading, the swing, the
            contact's loading after touch-down.
        swing_height: The foot's lift at mid-swing (None: 5 % of the leg's length).
        replan: The fraction of the swing during which the landing follows the capture point.
        tilt: [rad] A foot in contact whose sole tilts more than this from the ground rolls on
            an edge: it no longer stands, and, while the other foot stands, is lifted and put
            down again flat, as a foot a push lifted.
        descent_speed: [m/s] a foot that has not touched at the planned time goes on down at it.
        reach, max_width: How far a foot may land from the other, forward or backward and sideways
            (None: 0.6 of the leg's length, each).
        min_width: How close sideways (None: the feet's distance when standing).
        ankle_share: While walking (:class:`~tsid_py.controllers.strategies.walk_recovery.WalkRecovery`):
            how far toward its sole's nearer edge, as a fraction, the stance foot's centre of
            pressure is counted on to move the capture point before a landing moves.

    While walking, ``gain``, ``replan``, ``reach``, ``min_width``, ``max_width`` and
    ``ankle_share`` are read; the walk's plan sets the rest (its swings' times and height).
    """

    gain: float = 3.0
    trigger: float = 0.0
    unload_time: float = 0.03
    swing_time: float = 0.3
    load_time: float = 0.05
    swing_height: float | None = None
    replan: float = 0.6
    tilt: float = 0.05
    descent_speed: float = 0.2
    reach: float | None = None
    min_width: float | None = None
    max_width: float | None = None
    ankle_share: float = 0.8

    def __post_init__(self) -> None:
        for name in ("gain", "swing_time", "descent_speed"):
            if not getattr(self, name) > 0.0:
                raise InvalidParameterError(f"RecoveryParams.{name} must be > 0, got {getattr(self, name)!r}")
        for name in ("unload_time", "load_time", "tilt"):
            if not getattr(self, name) >= 0.0:
                raise InvalidParameterError(
                    f"RecoveryParams.{name} must be >= 0, got {getattr(self, name)!r}"
                )
        for name in ("replan", "ankle_share"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise InvalidParameterError(
                    f"RecoveryParams.{name} must be in [0, 1], got {getattr(self, name)!r}"
                )

    def step_limits(self, leg: float, width: float) -> StepLimits:
        """Where a foot may land from the other (:class:`StepLimits`), for a leg of length ``leg``
        and feet ``width`` apart when standing [m]: the given limits, else reach 0.6 leg, min_width
        the standing width, max_width max(0.6 leg, width)."""
        return StepLimits(
            reach=self.reach if self.reach is not None else 0.6 * leg,
            min_width=self.min_width if self.min_width is not None else width,
            max_width=self.max_width if self.max_width is not None else max(0.6 * leg, width),
        )


@dataclass(frozen=True)
class Step:
    """A step taken: the foot, when it lifted and landed [s], where its foot frame landed (world)
    [m], and whether a push lifted it (a foot put back) or the recovery chose it."""

    foot: str
    t_lift: float
    t_land: float
    landing: np.ndarray
    chosen: bool = True

    def summary(self) -> dict[str, object]:
        return {
            "foot": self.foot,
            "t_lift_s": self.t_lift,
            "t_land_s": self.t_land,
            "landing_m": [float(x) for x in self.landing],
            "chosen": self.chosen,
        }


@dataclass
class _Catch:
    """The recovery's own step under way: the request it made, and what it knows of it."""

    request: StepRequest
    chosen: bool  # a step it chose (to answer a lost balance); else a foot put back down
    # a foot put back: the stance sole's hull, and the support the two feet will make (when asked)
    after: tuple[np.ndarray, SupportPolygon] | None = None

    @property
    def side(self) -> str:
        return self.request.side

    @property
    def landing(self) -> pin.SE3:
        return self.request.trajectory.end


@dataclass
class _Measured:
    """What the recovery reads of the measured state at one step."""

    com: list[float]  # [m]
    com_velocity: list[float]  # [m/s]
    omega: float
    xi: np.ndarray
    margin: float  # of xi in the support polygon of the feet that stand [m] (-inf: none stands)
    feet: dict[str, pin.SE3]

    standing: list[str]
    rolled: list[str]  # in contact, tilted on an edge


class PushRecovery:
    """The push recovery strategy of a biped (see the module docstring): at each step it reads
    the measured state and the feet's phases, and decides the CoM reference and the steps.

    Args:
        robot: The biped (its spec's ``[feet]`` right and left, and ``[sole]``).
        feet: Where the feet stand at the start (``right``, ``left``: foot frames, world).
        mode: "ankle" or "step".
        params: Its gains, times and distances.
    """

    def __init__(
        self, robot: SpecRobot, feet: dict[str, pin.SE3], mode: str, params: RecoveryParams | None = None
    ) -> None:
        if mode not in RECOVERIES[1:]:
            raise InvalidParameterError(f"recovery must be one of {RECOVERIES}, got {mode!r}")
        if not isinstance(robot, SpecRobot) or not isinstance(feet, dict):
            raise InvalidParameterError(
                "PushRecovery needs a SpecRobot and its feet's placements by side (a dict), got "
                f"{type(robot).__name__} and {type(feet).__name__}"
            )
        if params is not None and not isinstance(params, RecoveryParams):
            raise InvalidParameterError(f"params must be a RecoveryParams, got {type(params).__name__}")
        self.mode = mode
        self.params = params = params or RecoveryParams()
        if robot.spec.sole is None:
            raise RobotSpecError(f"{robot.spec.name}: the push recovery needs the feet's [sole]")
        self.robot, self.sole = robot, robot.spec.sole
        leg = robot.leg_length()
        feet = {side: as_placement(f"the {side} foot", lookup("foot", side, feet)).copy() for side in SIDES}
        width = float(
            np.linalg.norm(
                sole_center(self.sole, feet["left"])[:2] - sole_center(self.sole, feet["right"])[:2]
            )
        )
        self.limits = params.step_limits(leg, width)
        self.swing_height = params.swing_height if params.swing_height is not None else 0.05 * leg
        self._flat_enough = math.cos(params.tilt)  # the least z-z entry of a flat foot's rotation
        self._feet = _Feet(self.sole, feet)  # their support polygon, and how far they moved
        self._stance = {  # each sole's centre from the other's, in the other's axes: standing
            side: feet[other].rotation[:2, :2].T
            @ (sole_center(self.sole, feet[side]) - sole_center(self.sole, feet[other]))[:2]
            for side, other in (("right", "left"), ("left", "right"))
        }
        self._nominal_values: tuple[float, float, float, float, float] | None = None
        self._rest = (0.0, 0.0)  # where the CoM comes to rest (x-y) [m]
        self._catch: _Catch | None = None

        self.steps: list[Step] = []
        self.last: _Measured | None = None

    @property
    def stepping_side(self) -> str | None:
        """The side of the foot of a step this recovery chose (unloading, swinging: it answers a
        lost balance), else None; a foot only put back down after a push lifted it is no such step."""
        catch = self._catch
        return catch.side if catch is not None and catch.chosen else None

    # ------------------------------------------------------------------ one step
    def decide(self, state: MeasuredState, feet: FootSchedule, com: TrajectorySample) -> Decision:
        """The steps and the CoM reference at the measured state: DCM feedback toward ``com`` (the
        nominal CoM, moved with the feet), a step when the capture point leaves the feet."""
        self._nominal_values = _nominal_floats(com)
        t = state.t
        catch = self._catch
        if catch is not None and feet.request(catch.side) is not catch.request:  # it landed
            landing = next((ld for ld in reversed(feet.landings) if ld.request is catch.request), None)
            if landing is not None:  # (else put down by hand: no step of its own)
                where = landing.placement.translation.copy()
                self.steps.append(Step(catch.side, catch.request.t_lift, landing.t, where, catch.chosen))
            self._catch = None
        measured = self.last = self._measure(state, feet)
        request = None
        if self._catch is not None:
            request = self._continue(t, measured)
        elif feet.released:
            request = self._take_over(t, measured, min(feet.released), unload=0.0)
        elif measured.rolled and measured.standing:
            request = self._take_over(t, measured, measured.rolled[0], unload=self.params.unload_time)
        elif self.mode == "step" and len(measured.standing) == 2 and measured.margin < self.params.trigger:
            request = self._start_step(t, measured, SIDES, unload=self.params.unload_time)
        return Decision(self._com_reference(measured), () if request is None else (request,))

    def _measure(self, state: MeasuredState, feet: FootSchedule) -> _Measured:
        placements = {side: state.feet[side].placement for side in SIDES}
        standing, rolled = [], []  # of the feet held in contact: flat and touching, or tilted
        for side in feet.held():
            if placements[side].rotation[2, 2] < self._flat_enough:
                rolled.append(side)
            elif state.feet[side].touching:
                standing.append(side)
        support = self._feet.at(self._placed(placements), standing).polygon
        margin = support.margin(state.capture_point) if support is not None else -math.inf
        com, velocity = state.com.tolist(), state.com_velocity.tolist()
        return _Measured(
            com, velocity, state.omega, state.capture_point, margin, placements, standing, rolled
        )

    def _placed(self, feet: dict[str, pin.SE3]) -> dict[str, pin.SE3]:
        """The feet where they stand, a swinging one where it lands."""
        return feet if self._catch is None else {**feet, self._catch.side: self._catch.landing}

    # ------------------------------------------------------------------ steps
    def _take_over(self, t: float, measured: _Measured, side: str, unload: float) -> StepRequest:
        """A foot the push lifted or rolled on an edge: it steps where the capture point needs it
        (step mode, when the other foot alone will not hold it), or goes down flat beside the other
        foot as they stood at the start (step mode: after a step, the trailing foot closes the
        stance), or where it is (ankle mode)."""
        if self.mode == "step" and len(measured.standing) == 1 and measured.margin < self.params.trigger:
            return self._start_step(t, measured, (side,), unload=unload)

        placement = measured.feet[side]
        if self.mode == "step":
            other = "left" if side == "right" else "right"
            stance = measured.feet[other]
            centre = (
                sole_center(self.sole, stance)[:2]
                + flat_rotation(heading(stance.rotation))[:2, :2] @ self._stance[side]
            )
            return self._begin(t, side, placement, self._landing(stance, centre), unload, chosen=False)
        down = self._landing(placement, sole_center(self.sole, placement)[:2])  # flat, where it is
        return self._begin(t, side, placement, down, unload, chosen=False)

    def _start_step(
        self, t: float, measured: _Measured, sides: tuple[str, ...], unload: float
    ) -> StepRequest:
        duration = unload + self.params.swing_time
        choice = choose_step(
            measured.xi, measured.omega, duration, self._soles(measured.feet), self.limits, sides
        )
        start = measured.feet[choice.side]
        return self._begin(t, choice.side, start, self._landing(start, choice.landing), unload, chosen=True)

    def _begin(
        self, t: float, side: str, start: pin.SE3, end: pin.SE3, unload: float, chosen: bool
    ) -> StepRequest:
        trajectory = TrajectorySE3SwingFoot(
            f"recovery-{side}", start, end, t + unload, self.params.swing_time, self.swing_height
        )
        request = self._request(side, trajectory, unload, chosen)
        self._catch = _Catch(request, chosen)
        return request

    def _request(
        self, side: str, trajectory: TrajectorySE3SwingFoot, unload: float, chosen: bool
    ) -> StepRequest:
        params = self.params
        return StepRequest(
            side,
            trajectory,
            unload=unload,
            load=params.load_time,
            land_on_touch=True,
            descent_speed=params.descent_speed,
            planned=not chosen,  # a chosen step answers a lost balance: the verdict goes on judging
            flat_tilt=params.tilt,  # one flatness: a foot landed early is not taken as rolled
        )

    def _continue(self, t: float, measured: _Measured) -> StepRequest | None:
        """A step under way: while the stance foot holds the robot alone, in the first ``replan``
        of the swing, a foot put back steps instead when it would miss the capture point, and a
        chosen step's landing follows the capture point (a new request for the same swing)."""
        catch, params = self._catch, self.params
        assert catch is not None
        request = catch.request
        replanning = t < request.t_lift + params.replan * params.swing_time and len(measured.standing) == 1
        if not replanning:
            return None
        if not catch.chosen and self.mode == "step":
            catch.chosen = self._will_not_hold(catch, measured, request.t_land - t)
        if not catch.chosen:
            return None
        choice = choose_step(
            measured.xi,
            measured.omega,
            request.t_land - t,
            self._soles(measured.feet),
            self.limits,
            (catch.side,),
        )
        old = request.trajectory
        landing = self._landing(old.start, choice.landing)
        trajectory = TrajectorySE3SwingFoot(
            old.name, old.start, landing, old.t0, old.duration, old.height, old.step_over
        )
        catch.request = self._request(catch.side, trajectory, request.unload, chosen=True)
        return catch.request

    def _will_not_hold(self, catch: _Catch, measured: _Measured, remaining: float) -> bool:
        """Whether a foot put back will miss the capture point: the capture point at its touch-down
        (the stance foot's CoP at its point nearest to it) outside the support the two feet will
        make (by more than ``trigger``). It then steps where the capture point needs it."""
        if catch.after is None:  # the stance foot holds still in a swing: made once
            stance = sole_polygon(self.sole, measured.feet[measured.standing[0]])
            landing = sole_polygon(self.sole, catch.landing)
            catch.after = convex_hull(stance), SupportPolygon(np.vstack([stance, landing]))
        stance_hull, after = catch.after
        predicted = predicted_capture_point(measured.xi, measured.omega, remaining, stance_hull)
        return after.margin(predicted) < self.params.trigger

    def _soles(self, feet: dict[str, pin.SE3]) -> dict[str, tuple[np.ndarray, np.ndarray, float]]:
        return {
            side: (
                convex_hull(sole_polygon(self.sole, placement)),
                sole_center(self.sole, placement)[:2],
                heading(placement.rotation),
            )
            for side, placement in feet.items()
        }

    def _landing(self, start: pin.SE3, centre: np.ndarray) -> pin.SE3:
        """The foot frame's placement whose flat sole is centred on ``centre`` (x-y) on the ground."""
        rotation = flat_rotation(heading(start.rotation))
        offset = rotation @ sole_center(self.sole, pin.SE3.Identity())  # the sole's centre from the frame
        return pin.SE3(rotation, np.array([centre[0], centre[1], 0.0]) - offset)

    # ------------------------------------------------------------------ the CoM
    def _com_reference(self, measured: _Measured) -> TrajectorySample:
        """DCM feedback toward the nominal CoM, moved with the feet (x-y; rest over where a swinging
        foot lands); the nominal height."""
        dx, dy = self._feet.at(self._placed(measured.feet), measured.standing).moved
        assert self._nominal_values is not None
        x, y, z, z_dot, z_ddot = self._nominal_values
        rest = self._rest = (x + dx, y + dy)
        command = dcm_feedback(measured.com, measured.xi, measured.omega, rest, self.params.gain)

        # x-y measured (position, velocity) and from the feedback (acceleration), z the nominal's
        (cx, cy, _), (vx, vy, _) = measured.com, measured.com_velocity
        ax, ay = command.com_acceleration.tolist()
        return TrajectorySample(np.array((cx, cy, z)), np.array((vx, vy, z_dot)), np.array((ax, ay, z_ddot)))

    def resting_com(self) -> np.ndarray:
        """The CoM the robot comes to rest over now: the nominal one moved with the feet (where a
        swinging foot lands) [m] (before the first decision: NaN)."""
        if self._nominal_values is None:
            return np.full(3, np.nan)
        return np.array([self._rest[0], self._rest[1], self._nominal_values[2]])

    def standing_feet(self, start: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Where each foot frame stands (x-y-z) [m]: where it last landed, else ``start``; a foot
        in its swing is left out."""
        feet = dict(start)
        for step in self.steps:
            feet[step.foot] = step.landing.copy()
        if self._catch is not None:
            del feet[self._catch.side]
        return feet

    def summary(self) -> dict[str, object]:
        """The steps taken (chosen, and feet put back) for a run's summary."""
        return {
            "recovery": self.mode,
            "recovery_steps": sum(step.chosen for step in self.steps),
            "steps_taken": [step.summary() for step in self.steps],
        }


def _nominal_floats(nominal: TrajectorySample) -> tuple[float, float, float, float, float]:
    """The nominal CoM's x, y [m] and its z, z_dot, z_ddot (the z the recovery leaves as is)."""
    pos, vel, acc = nominal.pos, nominal.vel, nominal.acc
    return float(pos[0]), float(pos[1]), float(pos[2]), float(vel[2]), float(acc[2])


class _Feet:
    """Where the feet stand, kept between control steps: the support polygon of those that stand
    (their soles' corners, x-y) and how far the middle of both soles' centres moved from where it
    was at the start (x-y) [m]; made again only when a foot moved or the feet that stand changed.

    Args:
        sole: The soles' geometry.
        start: The feet's placements at the start (``right``, ``left``).
    """

    MOVED = 1e-4  # [m, rad] a foot that moved less than this has not moved: the polygon is as good

    def __init__(self, sole: SoleGeometry, start: dict[str, pin.SE3]) -> None:
        self._sole = sole
        self._centre = sole_center(sole, pin.SE3.Identity())  # of a sole, in its foot frame
        self._home = self._middle(start)
        self._placements: tuple[pin.SE3, pin.SE3]  # those the polygon was made at
        self._standing: list[str] = []
        self._asked: tuple[list[str], pin.SE3, pin.SE3] | None = None  # the last call's arguments
        self.polygon: SupportPolygon | None = None
        self.moved = (0.0, 0.0)

    def at(self, feet: dict[str, pin.SE3], standing: list[str]) -> _Feet:
        """Kept up to date for the feet at ``feet`` (``right``, ``left``), those in ``standing`` on
        the ground."""
        right, left = feet["right"], feet["left"]
        asked, self._asked = self._asked, (standing, right, left)
        if asked is not None:
            if standing is asked[0] and right is asked[1] and left is asked[2]:
                return self  # asked again within a control step
            old_right, old_left = self._placements
            if (
                standing == self._standing
                and old_right.actInv(right).isIdentity(self.MOVED)
                and old_left.actInv(left).isIdentity(self.MOVED)
            ):
                return self
        self._placements, self._standing = (right, left), standing
        if standing:
            self.polygon = SupportPolygon(np.vstack([sole_polygon(self._sole, feet[s]) for s in standing]))
        else:
            self.polygon = None
        dx, dy = self._middle(feet) - self._home
        self.moved = float(dx), float(dy)
        return self

    def _middle(self, feet: dict[str, pin.SE3]) -> np.ndarray:
        """The middle of the two soles' centres (x-y) [m]."""
        return 0.5 * (feet["right"].act(self._centre) + feet["left"].act(self._centre))[:2]
