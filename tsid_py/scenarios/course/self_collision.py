"""Self-collision: a task drives Talos's hand into its torso; the self-collision task keeps the limit.

A :class:`~tsid_py.tasks.TaskTwoFramesEquality` (position rows, a cost of level 1) pulls the origin
of a gripper frame onto the torso's (``torso_2_link``): the arm swings into the body. The posture
gains of that arm are lowered to ``--arm-kp`` (Talos's shoulders have 500-1000 1/s^2, which would
hold the arm still). With :class:`~tsid_py.tasks.TaskSelfCollision` (hard, level 0; the pairs of
the robot spec's ``[self_collision]``: hands and forearms against the torso and the pelvis, the
two hands) a velocity damper slows every pair down from ``--d-influence`` and the distance stays
above ``--d-min``; with ``--no-avoidance`` nothing stops the arm and it goes into the body (the
distance turns negative: the geometries overlap).

The summary gives the smallest distance over the run, its pair and when, the limit, and the
distance left between the hand and the torso's origin.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

import numpy as np

from tsid_py.controllers.biped import BipedController
from tsid_py.errors import InvalidParameterError
from tsid_py.loop.control_loop import StepHooks
from tsid_py.loop.controller import ControlOutput
from tsid_py.loop.measured import MeasuredState
from tsid_py.robot_specs import load_robot
from tsid_py.scenarios.course.common import (
    Balance,
    Chain,
    CourseResult,
    new_log,
    run_loop,
)
from tsid_py.scenarios.parameters import ScenarioParams, param, robot_spec, simulated_time
from tsid_py.scenarios.runner import summary_header
from tsid_py.scenarios.scenario import RunOptions, Scenario
from tsid_py.solvers import make_solver
from tsid_py.tasks.task_self_collision import TaskSelfCollision
from tsid_py.tasks.task_two_frames_equality import TaskTwoFramesEquality
from tsid_py.trajectories import TrajectoryEuclidianConstant
from tsid_py.validation import as_scalar
from tsid_py.viz.style import finish, new_figure

NAME = "self-collision"
HANDS = ("right", "left")
TORSO = "torso_2_link"


class _Distances(StepHooks):
    """After each step: the distance of every pair (coal, at the step's state), the smallest and its
    pair, and the hand's distance to the torso's origin."""

    def __init__(
        self, controller: BipedController, task: TaskSelfCollision, hand: TaskTwoFramesEquality
    ) -> None:
        self.controller, self.task, self.hand = controller, task, hand
        self.t, self.minimum, self.hand_torso = array("d"), array("d"), array("d")
        self.pairs: dict[tuple[str, str], array] = {names: array("d") for names in task.pair_names}
        self.min_distance, self.min_pair, self.min_at = np.inf, None, None

    def after_step(self, state: MeasuredState, out: ControlOutput) -> None:
        t, robot, data = state.t, self.controller.robot, self.controller.data
        pairs = self.task.compute_distances(data)
        closest = min(pairs, key=lambda pair: pair.distance)
        if closest.distance < self.min_distance:
            self.min_distance, self.min_pair, self.min_at = closest.distance, closest.names, t
        for pair in pairs:
            self.pairs[pair.names].append(pair.distance)
        self.t.append(t)
        self.minimum.append(closest.distance)
        gap = (
            robot.frame_placement(data, self.hand.frame_id2).translation
            - robot.frame_placement(data, self.hand.frame_id1).translation
        )
        self.hand_torso.append(float(np.linalg.norm(gap)))


@dataclass(frozen=True)
class SelfCollisionParams(ScenarioParams):
    """A gripper pulled onto the torso, with or without the self-collision task."""

    robot: str = robot_spec("talos")
    duration: float = simulated_time(2.0)
    hand: str = param("right", "the hand pulled into the torso", choices=HANDS)
    avoidance: bool = param(
        True, "with the self-collision task", option_help="leave the self-collision task out"
    )
    d_min: float = param(0.02, "distance kept between the pairs", unit="m")
    d_influence: float = param(0.1, "distance where the damper starts", unit="m")
    damping: float = param(0.5, "largest approach speed at d-influence", unit="m/s")
    kp_hand: float = param(20.0, "gain of the hand task", unit="1/s^2")
    w_hand: float = param(1.0, "weight of the hand task")
    arm_kp: float = param(10.0, "cap on the posture gains of that arm", unit="1/s^2")


def simulate(p: SelfCollisionParams, options: RunOptions) -> CourseResult:
    """Pull the ``hand`` gripper onto the torso for ``duration`` [s] (gain ``kp_hand`` [1/s^2],
    weight ``w_hand``; the arm's posture gains capped at ``arm_kp`` [1/s^2]), with the self-collision
    task (``d_min``, ``d_influence`` [m], ``damping`` [m/s]) when ``avoidance``."""
    hand, setup = p.hand, options.setup
    if hand not in HANDS:
        raise InvalidParameterError(f"hand must be one of {HANDS}, got {hand!r}")
    kp_hand = as_scalar("kp_hand", p.kp_hand, minimum=0.0, strict=True)
    w_hand = as_scalar("w_hand", p.w_hand, minimum=0.0, strict=True)
    arm_kp = as_scalar("arm_kp", p.arm_kp, minimum=0.0)
    dt = as_scalar("dt", p.dt, minimum=0.0, strict=True)
    model = load_robot(p.robot)
    controller = BipedController(model, solver=make_solver(p.backend))
    gains = controller.posture_task.kp.copy()
    for k in range(1, 8):
        name = f"arm_{hand}_{k}_joint"
        if not model.model.existJointName(name):
            raise InvalidParameterError(
                f"{model.name} has no joint {name!r}: the scenario needs Talos's arms"
            )
        index = model.model.joints[model.model.getJointId(name)].idx_v - (model.nv - model.na)
        gains[index] = min(gains[index], arm_kp)
    controller.posture_task.kp = gains
    collision = TaskSelfCollision(
        "task-self-collision", model, dt, d_min=p.d_min, d_influence=p.d_influence, damping=p.damping
    )
    if p.avoidance:
        controller.formulation.add_motion_task(collision, weight=1.0, priority=0)
    pull = TaskTwoFramesEquality(f"task-{hand}-hand-to-torso", model, f"gripper_{hand}_base_link", TORSO)
    pull.kp = kp_hand
    pull.mask = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])
    controller.formulation.add_motion_task(pull, weight=w_hand, priority=1)
    log = new_log(controller, setup)
    balance = Balance(controller, TrajectoryEuclidianConstant("com", controller.com_initial).sample, log)
    distances = _Distances(controller, collision, pull)
    outcome = run_loop(controller, p.duration, dt, Chain(balance, distances), log, options, NAME)
    summary = {
        **summary_header(controller, NAME, dt, p.duration),
        "hand": hand,
        "avoidance": p.avoidance,
        "pairs": len(collision.pair_names),
        "d_min_m": collision.d_min,
        "d_influence_m": collision.d_influence,
        "damping_m_s": collision.damping,
        "min_distance_m": float(distances.min_distance) if np.isfinite(distances.min_distance) else None,
        "min_distance_pair": list(distances.min_pair) if distances.min_pair else None,
        "min_distance_time_s": distances.min_at,
        "below_limit_m": max(0.0, collision.d_min - distances.min_distance) if distances.t else None,
        "hand_torso_start_m": distances.hand_torso[0] if distances.t else None,
        "hand_torso_final_m": distances.hand_torso[-1] if distances.t else None,
        **balance.summary(),
        **setup.summary(),
        **outcome.summary(),
    }
    result = CourseResult(summary, log, controller)
    result.outcome_figure = lambda: _figure(summary, distances)
    return result


def _figure(summary: dict, distances: _Distances):
    """The distance of the closest pairs and the smallest one against time, with the limit; the
    hand's distance to the torso."""
    title = (
        f"{summary['robot']}, {NAME}: {'with' if summary['avoidance'] else 'without'} the self-collision task"
    )
    figure, axes = new_figure(2, 1, title, 8.0, 2.8)
    pairs_ax, hand_ax = axes[:, 0]
    t = np.array(distances.t)
    if t.size:
        closest = sorted(distances.pairs.items(), key=lambda item: min(item[1]))[:4]
        for names, values in closest:
            pairs_ax.plot(t, np.array(values), linewidth=1, label=" / ".join(names))
        pairs_ax.plot(t, np.array(distances.minimum), color="k", linewidth=2, label="smallest distance")
        hand_ax.plot(t, np.array(distances.hand_torso), label="hand to the torso's origin")
    pairs_ax.axhline(summary["d_min_m"], color="r", linestyle="--", label="d_min")
    pairs_ax.axhline(summary["d_influence_m"], color="0.5", linestyle=":", label="d_influence")
    pairs_ax.axhline(0.0, color="k", linewidth=0.8)
    pairs_ax.set_ylim(top=max(3.0 * summary["d_influence_m"], 0.05))
    pairs_ax.set_ylabel("distance [m]")
    hand_ax.set_ylabel("distance [m]")
    hand_ax.set_xlabel("time [s]")
    finish(axes[:, 0])
    return figure


SCENARIO = Scenario(NAME, SelfCollisionParams, simulate, BipedController, __doc__)
run, main = SCENARIO.run, SCENARIO.main
