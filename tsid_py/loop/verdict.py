"""Verdicts of a closed-loop run, from the plant's measured state: did the robot hold?

At every control step :class:`BalanceJudge` reads what the plant measured, never the
controller's plan, and dates three events:

- **lost balance**: the robot can no longer stop without a new contact. Capturability (Pratt et
  al. 2006, "Capture point: a step toward humanoid push recovery"; Koolen et al. 2012,
  "Capturability-based analysis and control of legged locomotion, part 1"): for the linear
  inverted pendulum of the CoM at height z above the ground, omega = sqrt(g / z) [1/s], and the
  instantaneous capture point xi = c + c_dot / omega (x-y) [m] is where the centre of pressure
  must be for the CoM to come to rest over it. Outside the support polygon of the contacts that
  touch, no centre of pressure the feet can make stops the CoM. Lost when xi stays outside by
  more than a margin for a persistence, or when the base tilts past a limit. While the
  controller carries out a planned step (a foot lifted on purpose, on its way to a new contact),
  capturability is judged again after the touch-down; a step a push recovery takes is no planned
  step (the controller's ``stepping`` says which).
- **fell**: a body that is not a foot touches the ground (plants that measure it: MuJoCo), or
  the base is below a fraction of its initial height, or tilted past a limit.
- **recovered**: after the last disturbance ended, the robot is at rest: CoM speed below a
  threshold, the capture point inside the support polygon and the base's tilt within the lost
  limit, held for a while (dated when that rest began).

The verdict is ``fell`` if the robot fell; else the later of ``recovered`` and ``lost`` (a loss
the robot came back from, at rest again at any time before, is no longer ``lost``); else
``undecided``: a run never reports a survival it has not seen. A run that ends with the capture
point outside the support (on its way to losing balance, not yet past the margin), or with its CoM
moving again after a rest (a CoM sinusoid that sways on after resting at its start), is
``undecided``, not ``recovered``.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import numpy as np

from tsid_py.errors import InvalidParameterError
from tsid_py.loop.measured import MeasuredState, Measurer
from tsid_py.loop.plant import PlantState
from tsid_py.robot_wrapper import RobotWrapper

VERDICTS = ("recovered", "fell", "lost", "undecided")


@dataclass(frozen=True)
class VerdictLimits:
    """When a run is judged to have lost balance, fallen or recovered.

    Attributes:
        capture_margin: [m] how far the capture point must be outside the support polygon to
            count. 2 cm: the pendulum's capture point ignores the angular momentum and the CoM's
            height changes, and the upper body can move the centre of pressure's equivalent (the
            CMP) a few centimetres past the soles for a moment.
        persistence: [s] how long the capture point must stay out. 50 ms: longer than a contact
            switch's jolt, shorter than the ~0.5 s a humanoid's capture point takes to run away.
        lost_tilt: [rad] a base tilted past this from its initial attitude has lost balance: 45
            deg. A humanoid's pelvis is no torso: Talos's pitches 20 deg walking in torque mode and
            31 deg in position mode under TSID's walking set-up (no task holds its attitude), and
            walks on; the capture point catches a fall long before the base is at 45 deg.
        fallen_tilt: [rad] past this the robot is down (60 deg).
        fallen_height: a base below this fraction of its initial height is down (0.5).
        rest_speed: [m/s] a CoM slower than this is at rest (5 cm/s: its capture point is then
            within 1.5 cm of the CoM for a humanoid).
        rest_time: [s] how long the rest must hold to call the robot recovered.
        not_touching_time: [s] a contact the controller holds that the plant measures as not
            touching for this long is reported (``contacts_not_touching``).
        settle_time: [s] how long after the last disturbance ends a run may be extended to decide
            its verdict (:class:`~tsid_py.loop.ControlLoop`).
    """

    capture_margin: float = 0.02
    persistence: float = 0.05
    lost_tilt: float = math.radians(45.0)
    fallen_tilt: float = math.radians(60.0)
    fallen_height: float = 0.5
    rest_speed: float = 0.05
    rest_time: float = 0.5
    not_touching_time: float = 0.1
    settle_time: float = 5.0

    def __post_init__(self) -> None:
        for name in ("capture_margin", "persistence", "rest_time", "not_touching_time", "settle_time"):
            _check(name, getattr(self, name), 0.0, math.inf)
        _check("rest_speed", self.rest_speed, 0.0, math.inf, strict=True)
        _check("lost_tilt", self.lost_tilt, 0.0, math.pi, strict=True)
        _check("fallen_tilt", self.fallen_tilt, self.lost_tilt, math.pi)
        _check("fallen_height", self.fallen_height, 0.0, 1.0)


def _check(name: str, value: float, low: float, high: float, strict: bool = False) -> None:
    if not isinstance(value, int | float) or not (low < value if strict else low <= value) or value > high:
        bound = f"{'>' if strict else '>='} {low:g} and <= {high:g}"
        raise InvalidParameterError(f"VerdictLimits.{name} must be a number {bound}, got {value!r}")


@dataclass(frozen=True)
class Verdict:
    """A run's verdict (one of :data:`VERDICTS`), its event times [s] (None: did not happen) and
    its reason in a few words."""

    verdict: str
    lost_balance_at: float | None
    fell_at: float | None
    recovered_at: float | None
    reason: str

    @property
    def decided(self) -> bool:
        """Whether nothing later can change it: the robot fell, or recovered from the last disturbance."""
        return self.verdict in ("recovered", "fell")


@dataclass
class _Events:
    lost: list[float] = field(default_factory=list)  # times balance was lost
    recovered: list[tuple[float, float]] = field(default_factory=list)  # (rest began, decided)
    fell: float | None = None
    fell_reason: str = ""
    lost_reasons: dict[float, str] = field(default_factory=dict)


class BalanceJudge:
    """Judges a legged robot's balance step by step from the plant's measured states.

    Args:
        robot: A floating-base robot whose spec names its feet (``spec.feet``; ``spec.sole`` for
            soles, point feet otherwise).
        q0: The configuration the run starts from (its base height and attitude are the reference).
        limits: The thresholds (:class:`VerdictLimits`).
        disturbances: (start, end) [s] of each push; the verdict is about the time after the last.
    """

    def __init__(
        self,
        robot: RobotWrapper,
        q0: np.ndarray,
        limits: VerdictLimits | None = None,
        disturbances: Sequence[tuple[float, float]] = (),
    ) -> None:
        spec = getattr(robot, "spec", None)
        if robot.is_fixed_base or spec is None or not spec.feet:
            raise InvalidParameterError(f"{robot.name}: balance is judged for a floating base on feet")
        self.robot, self.limits = robot, limits or VerdictLimits()
        self.measurer = Measurer(robot, q0)  # the truth's measured state, by the loop's own code
        self._base_height0 = float(q0[2])
        self.disturbances = sorted((float(a), float(b)) for a, b in disturbances)
        self._calm_from = max((end for _, end in self.disturbances), default=-math.inf)
        self._events = _Events()
        self._outside_since: float | None = None
        self._rest_since: float | None = None
        self._untouched: dict[str, float] = {}  # held contact frame -> since when it is not touching
        self.contacts_not_touching: dict[str, list[tuple[float, float]]] = {}  # frame -> [(from, for)] [s]
        self.last: MeasuredState | None = None
        self.t_end = 0.0

    # ------------------------------------------------------------------ measuring
    def measure(self, state: PlantState) -> MeasuredState:
        """The measured state of a plant's state (:class:`~tsid_py.loop.measured.Measurer`)."""
        return self.measurer.measure(state)

    def base_height(self, sample: MeasuredState) -> float:
        """The ratio of the base's height to its initial height."""
        return sample.base_height / self._base_height0 if self._base_height0 > 0 else math.inf

    # ------------------------------------------------------------------ judging
    def observe(
        self, state: PlantState | MeasuredState, held_frames: Collection[str] = (), stepping: bool = False
    ) -> None:
        """Judge the truth at one step: a plant's state (measured here), or the measured state the
        loop built from it (:class:`~tsid_py.loop.measured.MeasuredState`, read as it is).

        Args:
            held_frames: The contact frames the controller holds as contacts now (for
                ``contacts_not_touching``).
            stepping: Whether the controller carries out a planned step (capturability then waits
                for the touch-down).
        """
        sample = state if isinstance(state, MeasuredState) else self.measure(state)
        self.last = sample
        limits, events, t = self.limits, self._events, sample.t
        self.t_end = t
        if events.fell is not None:
            return
        self._watch_contacts(sample, held_frames, t)
        height = self.base_height(sample)
        if sample.bodies_down:
            self._fall(t, f"{', '.join(sample.bodies_down)} touched the ground")
        elif height < limits.fallen_height:
            self._fall(t, f"the base came down to {height:.0%} of its height")
        elif sample.tilt > limits.fallen_tilt:
            self._fall(t, f"the base tilted {math.degrees(sample.tilt):.0f} deg")
        if events.fell is not None:
            return
        if sample.tilt > limits.lost_tilt:
            self._lose(t, f"the base tilted past {math.degrees(limits.lost_tilt):.0f} deg")
        outside = sample.margin < -limits.capture_margin and not stepping
        self._outside_since = (
            (self._outside_since if self._outside_since is not None else t) if outside else None
        )
        if self._outside_since is not None and t - self._outside_since >= limits.persistence - 1e-9:
            self._lose(self._outside_since, _outside_reason(sample))
        resting = (
            t >= self._last_push_end(t) - 1e-9
            and not stepping
            and sample.margin >= 0.0
            and sample.tilt <= limits.lost_tilt
            and math.sqrt(sample.com_velocity.dot(sample.com_velocity)) < limits.rest_speed
        )
        self._rest_since = (self._rest_since if self._rest_since is not None else t) if resting else None
        if self._rest_since is not None and t - self._rest_since >= limits.rest_time - 1e-9:
            self._recover(self._rest_since, t)

    def _recover(self, began: float, t: float) -> None:
        """At rest since ``began``, long enough at t: recovered (once per rest, and not from a rest
        that began before balance was lost)."""
        events = self._events
        counted = bool(events.recovered) and events.recovered[-1][0] == began
        if not counted and not (events.lost and events.lost[-1] > began):
            events.recovered.append((began, t))

    def _last_push_end(self, t: float) -> float:
        """When the latest push that had started by t ends (-inf: none had)."""
        return max((end for start, end in self.disturbances if start <= t + 1e-9), default=-math.inf)

    def _fall(self, t: float, reason: str) -> None:

        self._events.fell, self._events.fell_reason = t, reason

    def _lose(self, t: float, reason: str) -> None:
        events = self._events
        if events.lost and (not events.recovered or events.lost[-1] >= events.recovered[-1][0]):
            return  # still lost since the last time
        events.lost.append(t)
        events.lost_reasons[t] = reason

    def _watch_contacts(self, state: MeasuredState, held_frames: Collection[str], t: float) -> None:
        if not state.contacts:
            return
        for frame in held_frames:
            measured = state.contacts.get(frame)
            if measured is None or measured.touching:
                self._untouched.pop(frame, None)
                continue
            since = self._untouched.setdefault(frame, t)
            if t - since >= self.limits.not_touching_time - 1e-9:
                episodes = self.contacts_not_touching.setdefault(frame, [])
                if episodes and episodes[-1][0] == since:
                    episodes[-1] = (since, t - since)  # the same episode, longer
                else:
                    episodes.append((since, t - since))
        for frame in set(self._untouched) - set(held_frames):
            del self._untouched[frame]

    # ------------------------------------------------------------------ verdicts
    def verdict(self, since: float | None = None, until: float | None = None) -> Verdict:
        """The verdict over the run up to ``until`` [s] (its end by default), recovery counted only
        from ``since`` (the end of the last disturbance by default)."""
        events = self._events
        since = self._calm_from if since is None else since
        until = self.t_end if until is None else until
        fell = events.fell if events.fell is not None and events.fell <= until + 1e-9 else None
        lost = [t for t in events.lost if t <= until + 1e-9]
        recovered = [
            began for began, decided in events.recovered if decided <= until + 1e-9 and began >= since - 1e-9
        ]
        lost_at = lost[-1] if lost else None
        recovered_at = recovered[-1] if recovered else None
        # lost, and not at rest again since (a rest after the loss, before this window, counts too)
        still_lost = lost_at is not None and not any(
            began >= lost_at - 1e-9 and decided <= until + 1e-9 for began, decided in events.recovered
        )
        if fell is not None:
            return Verdict("fell", lost_at, fell, recovered_at, events.fell_reason)
        if recovered_at is not None and (lost_at is None or recovered_at >= lost_at):
            moving = self._moving_at_end(until)
            if moving:  # not seen to hold at the end: no survival reported
                return Verdict("undecided", lost_at, None, recovered_at, moving)
            return Verdict(
                "recovered", lost_at, None, recovered_at, "at rest with the capture point inside the support"
            )
        if lost_at is not None and still_lost:
            return Verdict("lost", lost_at, None, recovered_at, events.lost_reasons[lost_at])
        return Verdict("undecided", lost_at, None, None, self._undecided_reason(since))

    def _moving_at_end(self, until: float) -> str:
        """Why a rest the run had does not make it ``recovered`` when the run ends moving (empty if
        it does): the capture point outside the support, or the CoM moving again (a run whose CoM
        sways on, a sinusoid, after a rest at its start)."""
        sample = self.last
        if until < self.t_end - 1e-9 or sample is None:
            return ""
        if sample.margin < 0.0:
            return "the capture point was outside the support when the run ended"
        speed = float(np.linalg.norm(sample.com_velocity))
        if speed >= self.limits.rest_speed:
            return f"the CoM moved again after its rest: {speed:.2f} m/s when the run ended"
        return ""

    def _undecided_reason(self, since: float) -> str:
        sample = self.last
        if sample is None:
            return "no step was judged"
        if sample.t < since:
            return "the run ended before the last push did"
        speed = float(np.linalg.norm(sample.com_velocity))
        if speed >= self.limits.rest_speed:
            return f"the CoM still moved at {speed:.2f} m/s when the run ended"
        return f"the run ended before the robot was at rest for {self.limits.rest_time:g} s"

    def push_verdicts(self) -> list[Verdict]:
        """One verdict per disturbance, over the time up to the next one (or the run's end)."""
        if not self.disturbances:
            return []
        starts = [start for start, _ in self.disturbances][1:] + [math.inf]
        return [
            self.verdict(since=end, until=min(next_start - 1e-9, self.t_end))
            for (_, end), next_start in zip(self.disturbances, starts, strict=True)
        ]

    @property
    def fell(self) -> bool:
        """Whether the robot fell (the verdict is ``fell`` from then on)."""
        return self._events.fell is not None

    def decided(self) -> bool:
        """Whether the run's verdict can no longer change (fell, or recovered after the last push)."""
        return self.verdict().decided


def _outside_reason(sample: MeasuredState) -> str:
    if not math.isfinite(sample.margin):
        return "no contact touched the ground"
    return f"the capture point left the support polygon by {-sample.margin * 100:.0f} cm"
