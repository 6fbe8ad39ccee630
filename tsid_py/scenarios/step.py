"""Step: a biped shifts its CoM over the left foot, lifts the right foot and puts it back.

The classic third TSID exercise. Phases (times for the defaults):

1. 0-1.5 s: the CoM moves (minimum jerk) above the centre of the left sole;
2. 1.6-1.8 s: the right-foot contact is unloaded (its normal-force cap ramps down to f_min)
   and then leaves the problem;
3. 1.8-3.0 s: the right foot follows a swing trajectory rising ``height`` (0.1 m) and coming back
   down where it was;
4. 3.0 s: touch-down; the contact is added back with a loading ramp (0.2 s);
5. 3.3-4.8 s: the CoM moves back to where it started; the robot stands until 5.3 s.

The CoM must stay above the support polygon of the feet in contact all along.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tsid_py.controllers.biped import BipedController, BipedParams
from tsid_py.planning.footsteps import Footstep, FootstepPlan
from tsid_py.planning.support import sole_center
from tsid_py.scenarios.parameters import ScenarioParams, param, robot_spec
from tsid_py.scenarios.runner import RunResult
from tsid_py.scenarios.scenario import RunOptions, Scenario
from tsid_py.scenarios.stepping import run_footsteps, stepping_controller
from tsid_py.trajectories import TrajectoryEuclidianMinJerk, TrajectorySample

SHIFT = 1.5  # [s] CoM shift, each way
UNLOAD = 0.2  # [s] contact unloading before lift-off
LOAD = 0.2  # [s] contact loading after touch-down
SWING = 1.2  # [s] foot in the air
SETTLE = 0.5  # [s] standing at the end


MAX_HEIGHT = 0.1  # [m] the default lift of TSID's exercise (Talos)
HEIGHT_PER_LEG = 0.14  # a shorter leg lifts its foot this fraction of its length


@dataclass(frozen=True)
class StepParams(ScenarioParams):
    """One step in place with the right foot (the phases set the length)."""

    robot: str = robot_spec("talos")
    height: float | None = param(
        None, "swing-foot lift", unit="m", shown="14% of the leg's length, at most 0.1"
    )
    params: BipedParams | None = param(
        None, "the biped's parameters (default: for stepping)", python_only=True
    )


def simulate(p: StepParams, options: RunOptions) -> RunResult:
    """Take one step in place with the right foot, lifting it ``height`` [m] (by default
    HEIGHT_PER_LEG of the leg's length, at most MAX_HEIGHT)."""
    controller = stepping_controller(p.robot, p.params, p.backend)
    height = p.height
    if height is None:
        height = min(MAX_HEIGHT, HEIGHT_PER_LEG * controller.robot.leg_length())
    sole = controller.robot.spec.sole
    right, left = controller.foot_placement("right"), controller.foot_placement("left")
    com0 = controller.com_initial
    over_left = np.append(sole_center(sole, left)[:2], com0[2])
    t_lift = SHIFT + 0.1 + UNLOAD
    t_land = t_lift + SWING
    t_back = t_land + LOAD + 0.1
    t_end = t_back + SHIFT + SETTLE
    shift = TrajectoryEuclidianMinJerk("com-shift", com0, over_left, 0.0, SHIFT)
    back = TrajectoryEuclidianMinJerk("com-back", over_left, com0, t_back, SHIFT)

    def com_reference(t: float) -> TrajectorySample:
        return shift.sample(t) if t < t_back else back.sample(t)

    plan = FootstepPlan(
        sole,
        {"right": right, "left": left},
        (Footstep("right", right, right, t_lift, t_land),),
        np.array([0.0, SHIFT, t_back, t_back + SHIFT, t_end]),
        np.array([com0[:2], over_left[:2], over_left[:2], com0[:2], com0[:2]]),
        t_end,
    )
    return run_footsteps(
        controller,
        plan,
        com_reference,
        "step",
        p.dt,
        swing_height=height,
        unload_duration=UNLOAD,
        load_duration=LOAD,
        com_support="contacts",
        progress=options.progress,
        observer=options.observer,
        setup=options.setup,
    )


SCENARIO = Scenario(
    "step", StepParams, simulate, BipedController, __doc__, plan="the phases of TSID's exercise"
)
run, main = SCENARIO.run, SCENARIO.main
