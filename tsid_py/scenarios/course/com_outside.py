"""CoM outside: the CoM reference is set 20 cm to the side, outside the support polygon.

The TSID course asks: "set the CoM reference outside the support polygon: what happens, and why?"
The target is c_0 + (0, offset, 0) (offset 0.2 m by default); Talos's support polygon, the convex
hull of its two soles, reaches 0.15 m to the side, so the target is 5 cm beyond it.

- ``--level 1`` (default): the CoM task is a cost, as in TSID. The contact forces only push, so
  the centre of pressure stays in the polygon and the CoM cannot be held beyond its edge; the QP
  still follows the CoM reference as well as it can, helped by the angular momentum (a task of
  weight 1e-3): the CoM reaches the edge, crosses it, and the robot falls over its foot (the
  loop measures the fall). With ``--capture-point`` a capture-point inequality (hard, level 0,
  TSID's TaskCapturePointInequality on the box of the polygon, ``--margin`` inside its edges) keeps
  the CoM's capture point in the polygon: the CoM then stops at the edge, ``--margin`` (1 cm)
  inside it. With no margin the CoM stops on the edge itself, where the centre of pressure must
  sit on the sole's outer edge: the robot then sinks on its loaded knee and falls after a few
  seconds.
- ``--level 0``: the CoM task is hard. Once the CoM nears the edge the hard constraints (contacts,
  force cones, torque bounds, the CoM) conflict and the QP fails: the run stops with exit 3 and a
  line that says by how much the target is outside the support polygon.

The summary gives the target's distance outside the polygon, the final distance of the CoM to the
target and its signed margin in the polygon (> 0 inside), when the CoM left the polygon and
whether the robot fell.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, replace

import numpy as np

from tsid_py.controllers.biped import BipedController, BipedParams
from tsid_py.errors import InvalidParameterError
from tsid_py.geometry import polygon_margin
from tsid_py.loop.control_loop import StepHooks
from tsid_py.loop.controller import ControlOutput
from tsid_py.loop.measured import MeasuredState
from tsid_py.robot_specs import load_robot
from tsid_py.scenarios.course.common import (
    Balance,
    Chain,
    CourseResult,
    distance_outside,
    draw_polygon,
    finite_or_none,
    new_log,
    run_loop,
    support_polygon,
)
from tsid_py.scenarios.parameters import ScenarioParams, param, robot_spec, simulated_time
from tsid_py.scenarios.runner import summary_header
from tsid_py.scenarios.scenario import RunOptions, Scenario
from tsid_py.solvers import make_solver
from tsid_py.tasks.task_capture_point_inequality import TaskCapturePointInequality
from tsid_py.trajectories import TrajectoryEuclidianConstant
from tsid_py.validation import as_scalar
from tsid_py.viz.style import finish, new_figure

NAME = "com-outside"


class _Support(StepHooks):
    """After each step: the CoM's margin in the support polygon (> 0 inside) and its path."""

    def __init__(self, controller: BipedController, hull: np.ndarray) -> None:
        self.controller, self.hull = controller, hull
        self.t, self.margin, self.path = array("d"), array("d"), array("d")  # path: x, y, z per step
        self.margin_min = np.inf
        self.left_at: float | None = None

    def after_step(self, state: MeasuredState, out: ControlOutput) -> None:
        t, com = state.t, state.com
        margin = polygon_margin(com, self.hull)
        self.t.append(t)
        self.margin.append(margin)
        self.path.extend(com)
        self.margin_min = min(self.margin_min, margin)
        if margin < 0.0 and self.left_at is None:
            self.left_at = t

    def com(self) -> np.ndarray:
        """The CoM at every step, (steps, 3) [m]."""
        return np.array(self.path).reshape(-1, 3)


@dataclass(frozen=True)
class ComOutsideParams(ScenarioParams):
    """The CoM target c_0 + (0, ``offset``, 0) with the CoM task at ``level``."""

    robot: str = robot_spec("talos")
    duration: float = simulated_time(5.0)
    offset: float = param(0.2, "CoM target to the side of c_0, along y", unit="m")
    level: int = param(1, "priority of the CoM task: 1 a cost, 0 hard", choices=(0, 1))
    capture_point: bool = param(
        False, "add a capture-point inequality at level 0 (level 1 only): the CoM stops at the edge"
    )
    margin: float = param(0.01, "with --capture-point: distance kept from the polygon's edges", unit="m")
    kp_com: float | None = param(None, "CoM gain", unit="1/s^2", shown="the robot's")


def simulate(p: ComOutsideParams, options: RunOptions) -> CourseResult:
    """Track the CoM target for ``duration`` [s] with the CoM task at ``level`` (1: a cost, 0:
    hard); ``capture_point`` adds the capture-point inequality (level 1 only), kept ``margin`` [m]
    inside the edges; ``kp_com`` [1/s^2] the CoM gain (the robot's default when None)."""
    level, capture_point, kp_com, dt, setup = p.level, p.capture_point, p.kp_com, p.dt, options.setup
    offset = as_scalar("offset", p.offset)
    margin = as_scalar("margin", p.margin, minimum=0.0)
    if level not in (0, 1):
        raise InvalidParameterError(f"level must be 0 (hard) or 1 (a cost), got {level!r}")
    if capture_point and level == 0:
        raise InvalidParameterError("capture_point needs level 1: with a hard CoM task both cannot hold")
    model = load_robot(p.robot)
    params = BipedParams.for_robot(model)
    if kp_com is not None:
        params = replace(params, kp_com=as_scalar("kp_com", kp_com, minimum=0.0))
    controller = BipedController(model, params, solver=make_solver(p.backend))
    if level == 0:
        controller.formulation.remove_task(controller.com_task.name)
        controller.formulation.add_motion_task(controller.com_task, weight=1.0, priority=0)
    hull = support_polygon(controller)
    if capture_point:
        task = TaskCapturePointInequality("task-capture-point", controller.robot, dt)
        low, high = hull.min(axis=0), hull.max(axis=0)
        task.set_support_limits_x_axis(low[0], high[0])
        task.set_support_limits_y_axis(low[1], high[1])
        task.set_safety_margin(margin, margin)
        controller.formulation.add_motion_task(task, weight=1.0, priority=0)
    target = controller.com_initial + np.array([0.0, offset, 0.0])
    target_outside = distance_outside(target, hull)
    log = new_log(controller, setup)
    balance = Balance(controller, TrajectoryEuclidianConstant("com", target).sample, log)
    support = _Support(controller, hull)
    outcome = run_loop(controller, p.duration, dt, Chain(balance, support), log, options, NAME)
    common = outcome.summary()
    if outcome.failure and target_outside > 0.0:
        common["qp_failure"] = (
            f"the CoM target is {target_outside:.3f} m outside the support polygon (the convex hull "
            f"of the soles) and the CoM task is hard (level 0): contact forces push and never pull, "
            f"so no contact force holds the CoM there; {outcome.failure}"
        )
    com = support.com()[-1] if support.t else controller.com_initial
    summary = {
        **summary_header(controller, NAME, dt, p.duration),
        "level": level,
        "capture_point": capture_point,
        "capture_point_margin_m": margin if capture_point else None,
        "offset_m": offset,
        "target_margin_m": polygon_margin(target, hull),
        "target_outside_m": target_outside,
        "com_target_distance_m": float(np.linalg.norm((com - target)[:2])),
        "com_margin_final_m": polygon_margin(com, hull),
        "com_margin_min_m": finite_or_none(support.margin_min),
        "com_left_support_s": support.left_at,
        "com_height_change_m": float(com[2] - controller.com_initial[2]),
        **balance.summary(),
        **setup.summary(),
        **common,
        **balance.limits.summary(),
    }
    result = CourseResult(summary, log, controller)
    result.outcome_figure = lambda: _figure(summary, hull, target, support)
    return result


def _figure(summary: dict, hull: np.ndarray, target: np.ndarray, support: _Support):
    """Seen from above: the polygon, the CoM's path and the target; below, the CoM's margin in the
    polygon and its distance to the target against time."""
    figure, axes = new_figure(2, 1, f"{summary['robot']}, {NAME}: level {summary['level']}", 7.0, 3.2)
    top, margins = axes[0, 0], axes[1, 0]
    draw_polygon(top, hull, color="tab:blue", label="support polygon")
    if support.t:
        com = support.com()
        top.plot(com[:, 0], com[:, 1], color="tab:red", linewidth=2, label="CoM")
        top.plot(com[-1, 0], com[-1, 1], "o", color="tab:red")
    top.plot(target[0], target[1], "x", color="k", markersize=10, label="CoM target")
    top.set_aspect("equal", adjustable="datalim")
    top.set_xlabel("x [m]")
    top.set_ylabel("y [m]")
    if support.t:
        t = np.array(support.t)
        distance = np.linalg.norm((support.com() - target)[:, :2], axis=1)
        margins.plot(t, np.array(support.margin), label="CoM margin in the polygon (> 0 inside)")
        margins.plot(t, distance, label="CoM distance to the target (x-y)")
        margins.axhline(0.0, color="k", linewidth=1)
        margins.axhline(-summary["target_outside_m"], color="k", linestyle=":", linewidth=1)
    margins.set_xlabel("time [s]")
    margins.set_ylabel("[m]")
    finish(axes[:, 0])
    return figure


SCENARIO = Scenario(NAME, ComOutsideParams, simulate, BipedController, __doc__)
run, main = SCENARIO.run, SCENARIO.main
