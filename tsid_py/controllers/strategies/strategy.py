"""What a strategy is: it reads the step's measured state and the feet's phases, and decides.

A legged controller's step is measure -> decide -> act. A strategy decides: from the
:class:`~tsid_py.loop.measured.MeasuredState` and the :class:`~tsid_py.controllers.feet.FootSchedule`
(read-only for it), it returns a :class:`Decision`: the CoM reference (or None: leave it) and the
steps it asks for. It writes into nothing; the controller applies every decision in one place
(:meth:`~tsid_py.controllers.legged.LeggedController.observe`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from tsid_py.controllers.feet import FootSchedule, StepRequest
from tsid_py.loop.measured import MeasuredState
from tsid_py.trajectories import TrajectorySample


@dataclass(frozen=True)
class Decision:
    """A strategy's decision at one step: the CoM reference (pos [m], vel [m/s], acc [m/s^2],
    world; None: the one it was given) and the steps it asks for."""

    com: TrajectorySample | None = None
    steps: tuple[StepRequest, ...] = ()


@runtime_checkable
class Strategy(Protocol):
    """Anything with ``decide``: called once per control step, in the order the strategies were
    added (:meth:`~tsid_py.controllers.legged.LeggedController.add_strategy`)."""

    def decide(self, state: MeasuredState, feet: FootSchedule, com: TrajectorySample) -> Decision:
        """The decision at ``state``; ``com`` is the CoM reference so far (the caller's, or an
        earlier strategy's at this step)."""
        ...
