"""Smooth transitions: linear ramps of task weights and contact force caps over time.

The C++ TSID accepts transition durations when tasks are added, removed or re-weighted and
ignores them; it ramps only the removal of a contact. tsid_py honours all of them. A ramp starts
at the time t of the first ``compute_problem_data`` after the call that created it and moves
its value linearly,

    value(t) = start + (end - start) * clamp((t - t_start) / duration, 0, 1),

so the value equals ``end`` from t_start + duration on. What the value means:

- a task weight (``add_motion_task``, ``update_task_weight``, ``remove_task``): the weight of
  the task's entry in its cost level;
- a contact force cap (``add_rigid_contact``, ``remove_rigid_contact``): an extra upper bound on
  the contact's total normal force, applied in the formulation's copy of its force inequality
  (the contact object keeps its own f_max).

A ramp with ``remove_at_end`` takes its task or contact out of the problem at the first
``compute_problem_data`` whose t is past the end of the ramp.
"""

from __future__ import annotations

from dataclasses import dataclass

from tsid_py.errors import InvalidParameterError
from tsid_py.validation import as_scalar

END_TOLERANCE = 1e-9  # [s] t counts as past the end of a ramp only beyond this margin (t = i dt rounding)


@dataclass
class LinearRamp:
    """A value moving linearly from ``start`` to ``end`` over ``duration`` [s] >= 0, from its first use."""

    start: float
    end: float
    duration: float
    t_start: float | None = None

    def __post_init__(self) -> None:
        self.start, self.end = as_scalar("ramp start", self.start), as_scalar("ramp end", self.end)
        self.duration = as_scalar("ramp duration", self.duration, minimum=0.0)

    def value(self, t: float) -> float:
        """The value at time t [s]; the first call fixes t_start = t."""
        if self.t_start is None:
            self.t_start = t
        alpha = min(max((t - self.t_start) / self.duration, 0.0), 1.0) if self.duration > 0 else 1.0
        return self.start + alpha * (self.end - self.start)

    def is_past_end(self, t: float) -> bool:
        """Whether t is later than t_start + duration (False before the first use)."""
        return self.t_start is not None and t > self.t_start + self.duration + END_TOLERANCE

    def is_at_end(self, t: float) -> bool:
        """Whether the ramp has reached its end value at time t."""
        return self.t_start is not None and t >= self.t_start + self.duration - END_TOLERANCE


@dataclass
class _Ramp:
    ramp: LinearRamp
    remove_at_end: bool


class Transitions:
    """The ramps in progress of one problem, by task or contact name (the names are unique).

    What a ramp's value means is its owner's business (a task weight, a contact's force cap);
    :meth:`advance` reports the values at time t.
    """

    def __init__(self) -> None:
        self._ramps: dict[str, _Ramp] = {}

    def start(
        self, name: str, start: float, end: float, duration: float, remove_at_end: bool = False
    ) -> None:
        """Move the value of ``name`` from ``start`` to ``end`` over ``duration`` [s]; with
        ``remove_at_end``, ``name`` is due for removal once the ramp is over."""
        if self.is_leaving(name):
            raise InvalidParameterError(
                f"{name!r} is already being ramped out of the problem; remove it now (duration 0) or wait "
                "until it has left"
            )
        self._ramps[name] = _Ramp(LinearRamp(start, end, duration), remove_at_end)

    def cancel(self, name: str) -> None:
        """Forget any ramp of this task or contact."""
        self._ramps.pop(name, None)

    def __bool__(self) -> bool:
        """Whether a ramp is in progress."""
        return bool(self._ramps)

    def is_leaving(self, name: str) -> bool:
        """Whether the task or contact is being ramped out of the problem."""
        ramp = self._ramps.get(name)
        return ramp is not None and ramp.remove_at_end

    def advance(self, t: float) -> tuple[dict[str, float], set[str], list[str]]:
        """(values, ended, due) at time t [s].

        ``values``: the value of every ramp that does not remove its owner now; ``ended``: those of
        them that reached their end value (and are dropped: the value stays); ``due``: the names to
        remove now (their ramp is over, and dropped).
        """
        values: dict[str, float] = {}
        ended: set[str] = set()
        due: list[str] = []
        for name, item in list(self._ramps.items()):
            if item.remove_at_end and item.ramp.is_past_end(t):
                due.append(name)
                del self._ramps[name]
                continue
            values[name] = item.ramp.value(t)
            if not item.remove_at_end and item.ramp.is_at_end(t):
                ended.add(name)
                del self._ramps[name]
        return values, ended, due
