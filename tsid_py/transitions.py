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

from tsid_py.hqp import WeightedConstraint

END_TOLERANCE = 1e-9  # [s] t counts as past the end of a ramp only beyond this margin (t = i dt rounding)


@dataclass
class LinearRamp:
    """A value moving linearly from ``start`` to ``end`` over ``duration`` [s], from its first use."""

    start: float
    end: float
    duration: float
    t_start: float | None = None

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
class _WeightRamp:
    entry: WeightedConstraint
    ramp: LinearRamp
    remove_at_end: bool


@dataclass
class _ForceCapRamp:
    ramp: LinearRamp
    remove_at_end: bool


class Transitions:
    """The ramps in progress of one formulation, by task or contact name."""

    def __init__(self) -> None:
        self._weights: dict[str, _WeightRamp] = {}
        self._caps: dict[str, _ForceCapRamp] = {}
        self.force_caps: dict[str, float] = {}  # contact name -> normal-force cap at the last advance [N]

    def ramp_weight(
        self, name: str, entry: WeightedConstraint, end: float, duration: float, remove_at_end: bool = False
    ) -> None:
        """Move the weight of ``entry`` from its current value to ``end`` over ``duration`` [s]."""
        self._weights[name] = _WeightRamp(entry, LinearRamp(entry.weight, end, duration), remove_at_end)

    def ramp_force_cap(
        self, name: str, start: float, end: float, duration: float, remove_at_end: bool = False
    ) -> None:
        """Cap the contact's total normal force by a value moving from ``start`` to ``end`` [N]."""
        self._caps[name] = _ForceCapRamp(LinearRamp(start, end, duration), remove_at_end)
        self.force_caps.pop(name, None)

    def cancel(self, name: str) -> None:
        """Forget any ramp of this task or contact (its current weight stays)."""
        self._weights.pop(name, None)
        self._caps.pop(name, None)
        self.force_caps.pop(name, None)

    def is_leaving(self, name: str) -> bool:
        """Whether the task or contact is being ramped out of the problem."""
        ramp = self._weights.get(name) or self._caps.get(name)
        return ramp is not None and ramp.remove_at_end

    def advance(self, t: float) -> list[str]:
        """Set the weights and caps at time t [s]; return the names due for removal now.

        Finished ramps that do not remove anything are dropped, leaving their end value.
        """
        due = []
        for name, item in list(self._weights.items()):
            if item.remove_at_end and item.ramp.is_past_end(t):
                due.append(name)
                del self._weights[name]
                continue
            item.entry.weight = item.ramp.value(t)
            if not item.remove_at_end and item.ramp.is_at_end(t):
                del self._weights[name]
        for name, cap in list(self._caps.items()):
            if cap.remove_at_end and cap.ramp.is_past_end(t):
                due.append(name)
                self.cancel(name)
                continue
            self.force_caps[name] = cap.ramp.value(t)
            if not cap.remove_at_end and cap.ramp.is_past_end(t):
                self.cancel(name)
        return due
