"""A footstep plan as a strategy: each footstep asked of the feet when its unloading starts."""

from __future__ import annotations

from dataclasses import replace
from typing import cast

import numpy as np
import pinocchio as pin

from tsid_py.controllers.feet import EVENT_TOLERANCE, FootSchedule, Landing, StepRequest
from tsid_py.controllers.strategies.strategy import Decision
from tsid_py.errors import InvalidParameterError
from tsid_py.loop.measured import MeasuredState
from tsid_py.planning.footsteps import Footstep, FootstepPlan
from tsid_py.planning.swing_foot import TrajectorySE3SwingFoot
from tsid_py.trajectories import TrajectorySample
from tsid_py.validation import as_scalar


class Footsteps:
    """Carries out a :class:`~tsid_py.planning.footsteps.FootstepPlan`: at ``t_lift - unload`` of
    each footstep it asks the feet for the step (unload over ``unload``, swing on the footstep's
    trajectory rising ``swing_height`` [m], land at ``t_land`` where the foot is, load over
    ``load``); it leaves the CoM reference as it is given.

    Attributes:
        touchdown_errors: Each landing's distance from its request's target [m], by side (the
            footstep's target, or where a strategy built on it moved it).
        landed: The footsteps landed.

    Raises:
        InvalidParameterError: a double support shorter than ``unload`` (the next foot would start
            unloading before the other has landed), or a negative duration or height.
    """

    def __init__(self, plan: FootstepPlan, swing_height: float, unload: float, load: float) -> None:
        if not isinstance(plan, FootstepPlan):
            raise InvalidParameterError(f"Footsteps needs a FootstepPlan, got {type(plan).__name__}")
        self.swing_height = as_scalar("swing_height", swing_height, minimum=0.0)
        self.unload = as_scalar("unload_duration", unload, minimum=0.0)
        self.load = as_scalar("load_duration", load, minimum=0.0)
        for before, after in zip(plan.steps, plan.steps[1:], strict=False):
            gap = after.t_lift - before.t_land
            if gap < self.unload - EVENT_TOLERANCE:
                raise InvalidParameterError(
                    f"the double support before the lift-off at {after.t_lift:g} s lasts {gap:g} s, shorter "
                    f"than the {self.unload:g} s unloading ramp: both feet would leave the ground"
                )
        self._waiting = list(plan.steps)  # not asked for yet, in order
        self._asked: dict[int, Footstep] = {}  # id of its request -> the footstep
        self._seen = 0  # landings of the feet read so far
        self.touchdown_errors: dict[str, list[float]] = {}
        self.landed = 0

    def decide(self, state: MeasuredState, feet: FootSchedule, com: TrajectorySample) -> Decision:
        self._record_landings(feet)
        return Decision(steps=tuple(self._ask(step, state) for step in self._due(state)))

    def _record_landings(self, feet: FootSchedule) -> list[tuple[Footstep, Landing]]:
        """The footsteps this strategy asked for that touched down since the last step, with their
        landings; each one's distance from its request's target goes into ``touchdown_errors``."""
        landed = []
        if feet.landed > self._seen:
            for landing in feet.landings[self._seen :]:
                step = self._asked.pop(id(landing.request), None)
                if step is not None:
                    target = cast(pin.SE3, landing.request.trajectory.end)
                    error = float(np.linalg.norm(landing.placement.translation - target.translation))
                    self.touchdown_errors.setdefault(step.side, []).append(error)
                    self.landed += 1
                    landed.append((step, landing))
            self._seen = feet.landed
        return landed

    def _due(self, state: MeasuredState) -> list[Footstep]:
        """The footsteps whose unloading starts at this step (taken off the waiting list)."""
        due = []
        while self._waiting and self._is_due(self._waiting[0], state.t):
            due.append(self._waiting.pop(0))
        return due

    def _is_due(self, step: Footstep, t: float) -> bool:
        """Whether ``step``'s unloading starts by time ``t`` [s] (the plan's time)."""
        return t >= step.t_lift - self.unload - EVENT_TOLERANCE

    def _ask(self, step: Footstep, state: MeasuredState) -> StepRequest:
        """The request of a footstep due: its own swing, as planned."""
        return self._keep(step, step.swing_trajectory(self.swing_height))

    def _forget(self, request: StepRequest) -> None:
        """A request replaced by another for the same footstep (the feet carry the newer)."""
        self._asked.pop(id(request), None)

    def _keep(
        self, step: Footstep, trajectory: TrajectorySE3SwingFoot, descent_speed: float | None = None
    ) -> StepRequest:
        """A request for ``step`` swinging along ``trajectory``, remembered as the footstep's; with a
        ``descent_speed`` [m/s] it lands on touch (:class:`StepRequest`'s ``land_on_touch``)."""
        request = StepRequest(step.side, trajectory, unload=self.unload, load=self.load)
        if descent_speed is not None:
            request = replace(request, land_on_touch=True, descent_speed=descent_speed)
        self._asked[id(request)] = step
        return request
