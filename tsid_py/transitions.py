"""Smooth transitions: linear ramps of task weights and contact force caps over time.

What ramps, when, and how tsid_py differs from the C++ TSID: docs/concepts/transitions.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from tsid_py.errors import InvalidParameterError
from tsid_py.validation import as_scalar

END_TOLERANCE = 1e-9  # [s] t counts as past the end of a ramp only beyond this margin (t = i dt rounding)


@dataclass
class LinearRamp:
    """A value moving linearly from ``start`` to ``end`` over ``duration`` [s] >= 0.

    The ramp starts at its first use: the first :meth:`value` fixes t_start.
    """

    start: float
    end: float
    duration: float
    t_start: float | None = None

    def __post_init__(self) -> None:
        self.start, self.end = as_scalar("ramp start", self.start), as_scalar("ramp end", self.end)
        self.duration = as_scalar("ramp duration", self.duration, minimum=0.0)

    def value(self, t: float) -> float:
        """The value at time t [s]: start + (end - start) clamp((t - t_start) / duration, 0, 1).

        The first call fixes t_start = t.
        """
        if self.t_start is None:
            self.t_start = t
        alpha = min(max((t - self.t_start) / self.duration, 0.0), 1.0) if self.duration > 0 else 1.0
        return self.start + alpha * (self.end - self.start)

    def is_past_end(self, t: float) -> bool:
        """Whether t [s] is past t_start + duration, beyond END_TOLERANCE (False before the first use)."""
        return self.t_start is not None and t > self.t_start + self.duration + END_TOLERANCE

    def is_at_end(self, t: float) -> bool:
        """Whether the ramp has reached its end value at time t [s]."""
        return self.t_start is not None and t >= self.t_start + self.duration - END_TOLERANCE


@dataclass
class _Ramp:
    ramp: LinearRamp
    remove_at_end: bool


class Transitions:
    """The ramps in progress of one problem, by task or contact name (the names are unique).

    What a value means is its owner's business: a task weight, or a contact's force cap.
    """

    def __init__(self) -> None:
        self._ramps: dict[str, _Ramp] = {}

    def start(
        self, name: str, start: float, end: float, duration: float, remove_at_end: bool = False
    ) -> None:
        """Start a ramp of the value of ``name``.

        Args:
            name: The task or contact.
            start: The value at the ramp's first use.
            end: The value from t_start + duration on.
            duration: The ramp's duration [s], >= 0.
            remove_at_end: Whether ``name`` is due for removal once the ramp is over.

        Raises:
            InvalidParameterError: ``name`` is already being ramped out of the problem.
        """
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
        """The ramps' values at time t [s]; the ramps that are over are dropped.

        Returns:
            values: The value of every ramp that does not remove its owner now, by name.
            ended: Those of them at their end value (dropped; the value stays).
            due: The names to remove now (their ramp is over).
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
