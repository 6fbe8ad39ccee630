"""A footstep plan as a strategy: each footstep asked of the feet when its unloading starts."""

from __future__ import annotations

from typing import cast

import numpy as np
import pinocchio as pin

from tsid_py.controllers.feet import EVENT_TOLERANCE, FootSchedule, StepRequest
from tsid_py.controllers.strategies.strategy import Decision
from tsid_py.errors import InvalidParameterError
from tsid_py.loop.measured import MeasuredState
from tsid_py.planning.footsteps import Footstep, FootstepPlan
from tsid_py.trajectories import TrajectorySample
from tsid_py.validation import as_scalar


class Footsteps:
    """Carries out a :class:`~tsid_py.planning.footsteps.FootstepPlan`: at ``t_lift - unload`` of
    each footstep it asks the feet for the step (unload over ``unload``, swing on the footstep's
    trajectory rising ``swing_height`` [m], land at ``t_land`` where the foot is, load over
    ``load``); it leaves the CoM reference as it is given.

    Attributes:
        touchdown_errors: Each landing's distance from its footstep's target [m], by side.
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
        if feet.landed > self._seen:  # touch-downs since the last step: the errors of those it asked for
            for landing in feet.landings[self._seen :]:
                step = self._asked.pop(id(landing.request), None)
                if step is not None:
                    target = cast(pin.SE3, step.target)
                    error = float(np.linalg.norm(landing.placement.translation - target.translation))
                    self.touchdown_errors.setdefault(step.side, []).append(error)
                    self.landed += 1
            self._seen = feet.landed
        requests = []
        while self._waiting and state.t >= self._waiting[0].t_lift - self.unload - EVENT_TOLERANCE:
            step = self._waiting.pop(0)
            request = StepRequest(
                step.side, step.swing_trajectory(self.swing_height), unload=self.unload, load=self.load
            )
            self._asked[id(request)] = step
            requests.append(request)
        return Decision(steps=tuple(requests))
