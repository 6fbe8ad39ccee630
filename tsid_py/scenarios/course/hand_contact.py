"""Hand contact: Talos pushes a wall in front of it with one gripper (30 N) while its CoM sways.

The TSID course asks: "add a contact on the hand". Talos starts with one arm raised forward (its
gripper about 0.4 m in front of the base, 1 m high); a wall, a vertical plane facing the robot, is
where the gripper is. A :class:`~tsid_py.contacts.Contact6d` holds the gripper on the wall (hard,
level 0, like the feet; a 4 cm square patch, friction mu, the wall only pushes), and a
:class:`~tsid_py.tasks.TaskContactForceEquality` (a cost of level 1) asks its wrench to be a
normal force of ``--hand-force`` newtons (30 N, raised over the first ``--ramp`` seconds) with no
tangential force and no moment. The CoM sways as ``com-sinusoid`` meanwhile.

The summary gives the hand's force error (its normal force against the reference, max and rms,
and the largest error of the 3-D force), the hand's drift on the wall and the CoM tracking error.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

import numpy as np

from tsid_py.contacts.contact_6d import Contact6d
from tsid_py.controllers.biped import BipedController, BipedParams
from tsid_py.errors import InvalidParameterError, RobotSpecError
from tsid_py.loop.control_loop import StepHooks
from tsid_py.loop.controller import ControlOutput
from tsid_py.loop.measured import MeasuredState
from tsid_py.robot_specs import SpecRobot, load_robot
from tsid_py.scenarios.course.common import (
    Balance,
    Chain,
    CourseResult,
    new_log,
    run_loop,
    sway,
)
from tsid_py.scenarios.parameters import param, simulated_time
from tsid_py.scenarios.runner import summary_header
from tsid_py.scenarios.scenario import RunOptions, Scenario
from tsid_py.scenarios.sway import SwayParams
from tsid_py.solvers import make_solver
from tsid_py.tasks.task_contact_force_equality import TaskContactForceEquality
from tsid_py.trajectories import TrajectorySample
from tsid_py.validation import as_scalar
from tsid_py.viz.style import finish, new_figure

NAME = "hand-contact"
HANDS = ("right", "left")
# Talos's arm joints 1-4 that raise the right gripper forward (0.4 m ahead of the base, 1 m high);
# the left arm mirrors them (joints 1-3 change sign, the elbow keeps it).
ARM_FORWARD = (0.2, -0.13, -0.09, -1.34)  # [rad]
PATCH = 0.02  # [m] half the side of the square the gripper touches the wall with


def raised_arm_configuration(robot: SpecRobot, hand: str) -> np.ndarray:
    """The spec's reference posture with the ``hand`` arm raised forward, lowered so that the
    lowest foot touches z = 0 (as the legged controllers place their default posture)."""
    q = robot.default_configuration()
    model = robot.model
    for k, angle in enumerate(ARM_FORWARD, start=1):
        name = f"arm_{hand}_{k}_joint"
        if not model.existJointName(name):
            raise RobotSpecError(
                f"{robot.name} has no joint {name!r}: the hand-contact scenario needs Talos's arms"
            )
        sign = -1.0 if hand == "left" and k < 4 else 1.0
        q[model.joints[model.getJointId(name)].idx_q] = sign * angle
    return robot.standing_configuration(q)


class _Hand(StepHooks):
    """Before each step, the force reference (ramped); after, the hand's wrench and drift."""

    def __init__(
        self,
        controller: BipedController,
        contact: Contact6d,
        task: TaskContactForceEquality,
        force: float,
        ramp: float,
    ) -> None:
        self.controller, self.contact, self.task = controller, contact, task
        self.normal = contact.contact_normal  # in the contact frame
        self.force, self.ramp = force, ramp
        self.start = contact.reference.translation
        self.reference = 0.0
        self.t, self.normal_force, self.normal_reference = array("d"), array("d"), array("d")
        self.tangential = array("d")
        self.error_max = self.error_squares = self.force_error_max = self.drift_max = 0.0
        self.steps = 0

    def before_step(self, state: MeasuredState) -> None:
        t = state.t
        self.reference = self.force * (min(t / self.ramp, 1.0) if self.ramp > 0 else 1.0)
        self.task.set_reference(TrajectorySample(np.concatenate([self.reference * self.normal, np.zeros(3)])))

    def after_step(self, state: MeasuredState, out: ControlOutput) -> None:
        t = state.t
        force = self.contact.wrench(out.forces[self.contact.name])[:3]  # contact frame [N]
        normal = float(force @ self.normal)
        error = normal - self.reference
        self.error_max = max(self.error_max, abs(error))
        self.error_squares += error * error
        self.force_error_max = max(
            self.force_error_max, float(np.linalg.norm(force - self.reference * self.normal))
        )
        self.steps += 1
        placement = self.controller.robot.frame_placement(self.controller.data, self.contact.frame_id)
        self.drift_max = max(self.drift_max, float(np.linalg.norm(placement.translation - self.start)))
        self.t.append(t)
        self.normal_force.append(normal)
        self.normal_reference.append(self.reference)
        self.tangential.append(float(np.linalg.norm(force - normal * self.normal)))

    def summary(self) -> dict[str, float]:
        return {
            "hand_force_error_max_n": self.error_max,
            "hand_force_error_rms_n": float(np.sqrt(self.error_squares / max(self.steps, 1))),
            "hand_force_vector_error_max_n": self.force_error_max,
            "hand_normal_force_min_n": min(self.normal_force, default=float("nan")),
            "hand_normal_force_max_n": max(self.normal_force, default=float("nan")),
            "hand_drift_max_m": self.drift_max,
        }


@dataclass(frozen=True)
class HandContactParams(SwayParams):
    """A gripper pushing the wall while the CoM sways as ``com-sinusoid``."""

    duration: float = simulated_time(4.0)
    hand: str = param("right", "the gripper on the wall", choices=HANDS)
    force: float = param(30.0, "normal force on the wall", unit="N", option="--hand-force")
    ramp: float = param(0.5, "time the force is raised over", unit="s")
    w_force: float = param(1.0, "weight of the hand's force task")


def simulate(p: HandContactParams, options: RunOptions) -> CourseResult:
    """Hold the ``hand`` gripper on the wall pushing ``force`` [N] (raised over ``ramp`` [s]; the force
    task's weight ``w_force``) while the CoM sways (``amplitude`` [m], ``frequency`` [Hz]) for
    ``duration`` [s]."""
    hand, setup = p.hand, options.setup
    if hand not in HANDS:
        raise InvalidParameterError(f"hand must be one of {HANDS}, got {hand!r}")
    force = as_scalar("force", p.force, minimum=0.0)
    ramp = as_scalar("ramp", p.ramp, minimum=0.0)
    w_force = as_scalar("w_force", p.w_force, minimum=0.0, strict=True)
    dt = as_scalar("dt", p.dt, minimum=0.0, strict=True)
    model = load_robot(p.robot)
    params = BipedParams.for_robot(model)
    controller = BipedController(model, params, raised_arm_configuration(model, hand), make_solver(p.backend))
    frame = f"gripper_{hand}_base_link"
    placement = model.frame_placement(controller.data, frame)
    rotation = placement.rotation
    # The wall: the vertical plane through the gripper, facing the robot (its normal -x, world).
    normal = rotation.T @ np.array([-1.0, 0.0, 0.0])
    corners = np.array([[0.0, s * PATCH, u * PATCH] for s, u in ((1, 1), (-1, 1), (-1, -1), (1, -1))])
    contact = Contact6d(
        f"contact_{hand}_hand",
        model,
        frame,
        rotation.T @ corners.T,
        normal,
        params.mu,
        0.0,
        controller.params.f_max,
    )
    contact.kp = params.kp_contact
    contact.set_reference(placement)
    contact.set_force_reference(np.concatenate([force * normal, np.zeros(3)]))
    controller.formulation.add_rigid_contact(contact, force_reg_weight=params.w_force_reg)
    task = TaskContactForceEquality(f"task-{hand}-hand-force", model, dt, contact)
    controller.formulation.add_force_task(task, weight=w_force, priority=1)
    log = new_log(controller, setup)
    balance = Balance(controller, sway(controller, p.amplitude, p.frequency), log)
    hand_hook = _Hand(controller, contact, task, force, ramp)
    outcome = run_loop(controller, p.duration, dt, Chain(hand_hook, balance), log, options, NAME)
    summary = {
        **summary_header(controller, NAME, dt, p.duration),
        "hand": hand,
        "hand_frame": frame,
        "wall_x_m": float(placement.translation[0]),
        "hand_force_n": force,
        "hand_force_weight": w_force,
        "amplitude_m": p.amplitude,
        "frequency_hz": p.frequency,
        **hand_hook.summary(),
        **balance.summary(),
        **setup.summary(),
        **outcome.summary(),
        **balance.limits.summary(),
    }
    result = CourseResult(summary, log, controller)
    result.outcome_figure = lambda: _figure(summary, hand_hook, log)
    return result


def _figure(summary: dict, hand: _Hand, log):
    """The hand's normal force and its reference, its tangential force, and the CoM's sway."""
    figure, axes = new_figure(
        2,
        1,
        f"{summary['robot']}, {NAME}: {summary['hand']} gripper on the wall, {summary['hand_force_n']:g} N",
        8.0,
        2.6,
    )
    forces, com = axes[:, 0]
    t = np.array(hand.t)
    forces.plot(t, np.array(hand.normal_force), label="normal force")
    forces.plot(t, np.array(hand.normal_reference), "--", label="reference")
    forces.plot(t, np.array(hand.tangential), label="tangential force")
    forces.set_ylabel("hand force [N]")
    if log.steps == len(t) and len(t):  # the whole run, read back if the log streams to disk
        com.plot(t, log.series("com")[:, 1], label="CoM y")
        com.plot(t, log.series("com_ref")[:, 1], "--", label="reference")
    com.set_ylabel("CoM y [m]")
    com.set_xlabel("time [s]")
    finish(axes[:, 0])
    return figure


SCENARIO = Scenario(NAME, HandContactParams, simulate, BipedController, __doc__)
run, main = SCENARIO.run, SCENARIO.main
