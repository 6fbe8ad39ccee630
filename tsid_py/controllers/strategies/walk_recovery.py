"""Push recovery while walking: a footstep plan carried out with its landings moved (and, when
they must, made sooner or held back) where the measured capture point needs them, and the CoM on
DCM feedback around the plan.

:class:`WalkRecovery` carries out a :class:`~tsid_py.planning.footsteps.FootstepPlan` as
:class:`~tsid_py.controllers.strategies.footsteps.Footsteps` does (the same swings at the same
times, when nothing pushes it), and decides from the measured state at every control step:

- **the CoM** follows DCM feedback (Englsberger et al. 2015) around the plan's divergent component
  of motion: with the plan's CoM c_p, xi_p = c_p + c_p_dot / omega, the reference xi_r (xi_p moved
  with the footsteps, below) and the measured xi, the CMP

      r = xi_r - xi_r_dot / omega + (1 + k / omega) (xi - xi_r),    c_ddot = omega^2 (c - r)

  makes the error xi - xi_r decay as exp(-k t) (k: ``RecoveryParams.gain``); on the plan it is the
  plan's acceleration. Where r is outside the feet, the QP takes the rest from the angular
  momentum (the hip strategy, as the standing recovery).
- **the landings**: a landing moved by delta moves every later ZMP of the plan by delta, which
  moves the plan's DCM, omega * integral of exp(-omega (s - t)) p(s) ds, by
  delta exp(-omega (t_land - t)) before the touch-down and by delta after it. During the
  unloading and the first ``replan`` of each swing, the capture point's error at touch-down,
  E = (xi - xi_r') exp(omega (t_land - t)) (xi_r' without this step's own move), is what the
  landing must move so that the robot is on the moved plan when it lands (Khadiv et al. 2020,
  "Walking control based on step timing adaptation"). The stance sole's centre of pressure takes
  a share: held ``ankle_share`` of the way to the sole's edge it moves xi at touch-down by that
  much times exp(omega T) - 1; the step takes the rest, within the step limits of the stance foot
  (:class:`~tsid_py.planning.capture.StepLimits`: no crossing, within the leg's reach). Once
  landed (where the foot touched), the move stays: the rest of the plan walks on moved.
- **the timing**: where the limits cut a landing short of the capture point (beyond the leg's
  reach), the swing lands sooner, down to :data:`MIN_REMAINING` from now, on a new swing from
  where the foot is: the capture point runs less far (their timing adaptation, made shorter
  only). A landing cut short of crossing over the standing foot (a push toward it) keeps its time.
  A swing lands on touch (:class:`~tsid_py.controllers.feet.StepRequest`'s ``land_on_touch``).
  A footstep due waits in double support while its landing could not catch the capture point (at
  most :data:`MAX_WAIT`): the plan's clock stands, both feet stay down and the feedback brings the
  capture point back; the plan then goes on that much later (:attr:`WalkRecovery.delay`).

The ground is the plan's: flat. With no push the capture point's error stays within what the
ankles take, and the footsteps land where and when they were planned.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import cast

import numpy as np
import pinocchio as pin

from tsid_py.controllers.feet import FootSchedule, StepRequest
from tsid_py.controllers.strategies.footsteps import Footsteps
from tsid_py.controllers.strategies.push_recovery import RecoveryParams
from tsid_py.controllers.strategies.strategy import Decision
from tsid_py.errors import InvalidParameterError
from tsid_py.geometry import flat_rotation, heading
from tsid_py.loop.measured import MeasuredState
from tsid_py.planning.footsteps import Footstep, FootstepPlan
from tsid_py.planning.support import sole_center
from tsid_py.planning.swing_foot import TrajectorySE3SwingFoot
from tsid_py.robot_specs import SpecRobot
from tsid_py.trajectories import TrajectorySample

MOVE_TOLERANCE = 1e-4  # [m] a landing moved less than this since its last request is not asked again
REACHABLE = 0.01  # [m] a step goes when the step limits cut at most this off the landing it needs
MAX_WAIT = 2.0  # [s] the longest a footstep waits in double support for the capture point
MIN_REMAINING = 0.3  # [s] the shortest a swing's rest may be made, to land sooner
TIMINGS = 7  # the remaining times tried, from the planned one down to MIN_REMAINING
WALK_DEFAULTS = RecoveryParams(replan=0.8)  # (0.6, the standing default, misses pushes late in a swing)
MOVED = 0.01  # [m] a landing moved more than this is reported


class _Swing:
    """The footstep under way: its lift-off and touch-down [s] (the plan's, later by the walk's
    wait), where its sole's centre lands on the moved plan (x-y) [m], where the swing starts (the
    foot frame, world), the stance sole (centre x-y [m], yaw rotation 2x2), the move chosen so far
    (x-y) [m] and the request that carries it."""

    __slots__ = (
        "move",
        "nominal",
        "request",
        "stance_centre",
        "stance_rotation",
        "start",
        "step",
        "t_land",
        "t_lift",
        "t_start",
    )

    def __init__(
        self,
        step: Footstep,
        delay: float,
        nominal: np.ndarray,
        start: pin.SE3,
        stance: pin.SE3,
        sole_centre: np.ndarray,
    ) -> None:
        self.step, self.nominal, self.start = step, nominal, start
        self.t_lift, self.t_land = step.t_lift + delay, step.t_land + delay
        self.t_start = self.t_lift  # of the swing's trajectory (a sooner landing starts another)
        self.stance_centre = sole_centre
        self.stance_rotation = flat_rotation(heading(stance.rotation))[:2, :2]
        self.move = np.zeros(2)
        self.request: StepRequest | None = None


class WalkRecovery(Footsteps):
    """Carries out a footstep plan and recovers from pushes on the way (the module docstring).

    Args:
        plan, swing_height, unload, load: As :class:`Footsteps`.
        com_plan: The plan's CoM (pos [m], vel [m/s], acc [m/s^2], world) as a function of the
            plan's time [s] (which runs behind the clock by the walk's waits).
        robot: The biped (its leg's length sets the default step limits).
        params: The recovery's gain, ``replan`` fraction, step limits, ``ankle_share`` and
            ``descent_speed`` (:class:`RecoveryParams`; its standing-only fields are not read).
            None: :data:`WALK_DEFAULTS`, RecoveryParams' defaults with ``replan`` 0.8.

    Attributes:
        moves: Each landing moved more than :data:`MOVED`: (side, its touch-down [s], the move
            x-y [m]).
        delay: How far the plan runs behind the clock [s]: the sum of the waits.
    """

    def __init__(
        self,
        plan: FootstepPlan,
        swing_height: float,
        unload: float,
        load: float,
        com_plan: Callable[[float], TrajectorySample],
        robot: SpecRobot,
        params: RecoveryParams | None = None,
    ) -> None:
        super().__init__(plan, swing_height, unload, load)
        if not callable(com_plan) or not isinstance(robot, SpecRobot):
            raise InvalidParameterError(
                "WalkRecovery needs the plan's CoM as a function of time and the SpecRobot"
            )
        if params is not None and not isinstance(params, RecoveryParams):
            raise InvalidParameterError(f"params must be a RecoveryParams, got {type(params).__name__}")
        self.params = params = params or WALK_DEFAULTS
        self.sole = sole = plan.sole
        self._com_plan = com_plan
        initial = plan.initial
        centres = [sole_center(sole, initial[side])[:2] for side in ("right", "left")]
        self.limits = params.step_limits(robot.leg_length(), float(np.linalg.norm(centres[1] - centres[0])))
        self._ankle = params.ankle_share * np.array(  # how far the CoP may go from the sole's centre
            [min(sole.lxp, sole.lxn), min(sole.lyp, sole.lyn)]  # forward, sideways [m]
        )
        self._shift = np.zeros(2)  # the plan's move: the sum of the landed moves (x-y) [m]
        self._swing: _Swing | None = None
        self.delay = 0.0
        self._wait_from: float | None = None  # when the footstep due began to wait [s]
        self._held = False  # whether the plan's clock stands at this step (a footstep waits)
        self.moves: list[tuple[str, float, np.ndarray]] = []

    # ------------------------------------------------------------------ one step
    def decide(self, state: MeasuredState, feet: FootSchedule, com: TrajectorySample) -> Decision:
        """The steps (a footstep due, or the one under way moved) and the CoM reference on the
        moved plan; ``com``, the caller's reference on the clock's time, is not read."""
        for step, landing in self._record_landings(feet):
            swing = self._swing
            if swing is not None and swing.step is step:  # where it landed: the plan walks on moved
                move = sole_center(self.sole, landing.placement)[:2] - swing.nominal
                self._shift = self._shift + move
                if float(np.linalg.norm(move)) > MOVED:
                    self.moves.append((step.side, landing.t, move))
                self._swing = None
        t, omega = state.t, state.omega
        plan = self._com_plan(t - self.delay)
        xi_plan = plan.pos[:2] + plan.vel[:2] / omega  # the plan's DCM
        requests: list[StepRequest] = []
        swing, self._held = self._swing, False
        if swing is None and self._waiting:
            step = self._waiting[0]
            if self._is_due(step, t - self.delay):
                swing = self._start(step, state, feet, xi_plan)
                if swing is not None:
                    requests.append(self._request(swing))
        elif swing is not None and t < swing.t_lift + self.params.replan * (swing.t_land - swing.t_lift):
            remaining, move = self._adapt(swing, state, xi_plan)
            if remaining < swing.t_land - t - MOVE_TOLERANCE:  # sooner: a new swing from here
                swing.start, swing.t_start = state.feet[swing.step.side].placement, t
                swing.t_land, swing.move = t + remaining, move
                requests.append(self._request(swing))
            elif float(np.abs(move - swing.move).max()) > MOVE_TOLERANCE:
                swing.move = move
                requests.append(self._request(swing))
        return Decision(self._com_reference(state, plan, xi_plan), tuple(requests))

    # ------------------------------------------------------------------ the footsteps
    def _start(
        self, step: Footstep, state: MeasuredState, feet: FootSchedule, xi_plan: np.ndarray
    ) -> _Swing | None:
        """A footstep due: it goes (its times later by the plan's delay) when the other foot stands
        and the step limits let its landing catch the capture point, to :data:`REACHABLE`, or
        once it waited :data:`MAX_WAIT`; else it waits (None) and the plan's clock stands: the feet
        stay down and the feedback brings the capture point back toward the plan's. It never
        goes while the other foot does not stand (a push lifted it): both would be off the ground."""
        other = "left" if step.side == "right" else "right"
        stance = state.feet[other].placement
        swing = _Swing(
            step,
            self.delay,
            sole_center(self.sole, step.target)[:2] + self._shift,
            state.feet[step.side].placement,
            stance,
            sole_center(self.sole, stance)[:2],
        )
        swing.move, cut, _ = self._move(swing, state, xi_plan, swing.t_land - state.t)
        if self._wait_from is None:
            self._wait_from = state.t
        standing = other in feet.held() and state.feet[other].touching
        if not standing or (cut > REACHABLE and state.t - self._wait_from < MAX_WAIT):
            self.delay = state.t - (step.t_lift - self.unload)  # the plan's clock held at the due time
            self._held = True
            return None
        self._wait_from = None
        self._waiting.pop(0)
        self._swing = swing
        return swing

    def _adapt(self, swing: _Swing, state: MeasuredState, xi_plan: np.ndarray) -> tuple[float, np.ndarray]:
        """The swing's remaining time [s] and its landing's move (x-y) [m]: as planned when the step
        limits let the landing catch the capture point (to :data:`REACHABLE`); else, once the foot
        lifted off, the longest shorter swing that does, down to :data:`MIN_REMAINING` from now (a
        sooner landing, where the capture point has run less far: Khadiv et al.'s timing
        adaptation), or the one that misses least; a landing cut short of crossing over the
        standing foot (a push toward it) keeps its time: a sooner one would not catch it either."""
        planned = swing.t_land - state.t
        shortest = planned if state.t < swing.t_lift else min(planned, MIN_REMAINING)  # (off the ground)
        best: tuple[float, float, np.ndarray] | None = None
        for remaining in np.linspace(planned, shortest, TIMINGS):
            move, cut, crossing = self._move(swing, state, xi_plan, float(remaining))
            if cut <= REACHABLE:
                return float(remaining), move
            if best is None:  # as planned: a landing cut short of crossing over keeps its time
                best = (cut, float(remaining), move)
                if crossing:
                    break
            elif cut < best[0]:
                best = (cut, float(remaining), move)
        assert best is not None
        return best[1], best[2]

    def _move(
        self, swing: _Swing, state: MeasuredState, xi_plan: np.ndarray, remaining: float
    ) -> tuple[np.ndarray, float, bool]:
        """The landing's move (x-y) [m], touching down ``remaining`` [s] from now, how much of it
        the step limits cut [m], and whether they cut it short of crossing over the standing foot:
        the capture point's error at touch-down, less the ankle's share, the landing kept within
        the step limits of the stance foot (the planned landing first: a stance foot that landed
        elsewhere may put it out of them)."""
        rotation = swing.stance_rotation
        growth = math.exp(state.omega * max(remaining, 0.0))
        error = rotation.T @ ((state.capture_point - xi_plan - self._shift) * growth)  # stance axes
        side_sign = 1.0 if swing.step.side == "left" else -1.0
        nominal = self.limits.clip(rotation.T @ (swing.nominal - swing.stance_centre), side_sign)
        wanted = nominal + np.sign(error) * np.maximum(np.abs(error) - self._ankle * (growth - 1.0), 0.0)
        offset = self.limits.clip(wanted, side_sign)
        move = swing.stance_centre + rotation @ offset - swing.nominal
        crossing = side_sign * float(wanted[1]) < self.limits.min_width - 1e-9
        return move, float(np.linalg.norm(offset - wanted)), crossing

    def _request(self, swing: _Swing) -> StepRequest:
        """The request of the swing: its times, the landing moved by the plan's move and its own."""
        step = swing.step
        target = cast(pin.SE3, step.target)
        target.translation = target.translation + np.append(self._shift + swing.move, 0.0)
        trajectory = TrajectorySE3SwingFoot(
            f"swing-{step.side}",
            swing.start,
            target,
            swing.t_start,
            swing.t_land - swing.t_start,
            self.swing_height if step.height is None else step.height,
        )
        if swing.request is not None:
            self._forget(swing.request)
        swing.request = request = self._keep(step, trajectory, self.params.descent_speed)  # on touch
        return request

    # ------------------------------------------------------------------ the CoM
    def _com_reference(
        self, state: MeasuredState, plan: TrajectorySample, xi_plan: np.ndarray
    ) -> TrajectorySample:
        """DCM feedback around the moved plan: x-y measured (position, velocity) and from the
        feedback (acceleration), z the plan's. While a footstep waits the plan's clock stands:
        its DCM is held (no rate)."""
        omega, gain = state.omega, self.params.gain
        xi_ref = xi_plan + self._shift
        xi_ref_rate = np.zeros(2) if self._held else plan.vel[:2] + plan.acc[:2] / omega
        swing = self._swing
        if swing is not None:  # its move reaches the DCM before the touch-down
            remaining = swing.t_land - state.t
            decay = math.exp(-omega * max(remaining, 0.0))
            xi_ref = xi_ref + swing.move * decay
            if remaining > 0.0:
                xi_ref_rate = xi_ref_rate + swing.move * omega * decay
        cmp = xi_ref - xi_ref_rate / omega + (1.0 + gain / omega) * (state.capture_point - xi_ref)
        c, v = state.com, state.com_velocity
        acc = omega * omega * (c[:2] - cmp)
        return TrajectorySample(
            np.array((c[0], c[1], plan.pos[2])),
            np.array((v[0], v[1], plan.vel[2])),
            np.array((acc[0], acc[1], plan.acc[2])),
        )

    # ------------------------------------------------------------------ the run
    def summary(self) -> dict[str, object]:
        """The moved landings (how many, the largest move [m], each one) and the waits [s]."""
        return {
            "recovery": "step",
            "recovery_moves": len(self.moves),
            "recovery_move_max_m": max((float(np.linalg.norm(m)) for _, _, m in self.moves), default=0.0),
            "recovery_waited_s": self.delay,
            "recovery_moved_landings": [
                {"foot": side, "t_land_s": t, "move_m": [float(x) for x in move]}
                for side, t, move in self.moves
            ],
        }
