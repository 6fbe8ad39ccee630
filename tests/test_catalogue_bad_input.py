"""Bad input to the catalogue tasks, contacts, measured forces and backends raises a named TsidError."""

from types import SimpleNamespace

import numpy as np
import pytest

import tsid_py as tsid
from tsid_py.constraints import ConstraintEquality, ConstraintInequality
from tsid_py.contacts import Measured6dWrench
from tsid_py.errors import (
    DimensionError,
    DuplicateNameError,
    InvalidParameterError,
    NonFiniteError,
    UnknownFrameError,
    UnknownNameError,
)
from tsid_py.hqp import HqpData, WeightedConstraint
from tsid_py.solvers import QPStatus, SolverDAQP, installed_backends

NAN = float("nan")
HANDS = ("gripper_left_joint", "gripper_right_joint")


@pytest.fixture
def kit(talos, ur5):
    """Robots, a foot contact, a formulation and one instance of each new class, fresh per case."""
    foot = tsid.Contact6d(
        "foot", talos, "leg_right_sole_fix_joint", talos.spec.sole.corners(), [0, 0, 1], 0.3, 5.0, 1000.0
    )
    form = tsid.InverseDynamicsFormulation("form", talos)
    push = Measured6dWrench("push", talos, "torso_2_joint")
    form.add_measured_force(push)
    return SimpleNamespace(
        talos=talos,
        ur5=ur5,
        foot=foot,
        form=form,
        push=push,
        bounds=tsid.TaskJointPosVelAccBounds("bounds", ur5, 0.002),
        torque=tsid.TaskActuationEquality("torque", ur5),
        force=tsid.TaskContactForceEquality("force", talos, 0.002, foot),
        hands=tsid.TaskTwoFramesEquality("hands", talos, *HANDS),
        capture=tsid.TaskCapturePointInequality("capture", talos, 0.002),
        grasp=tsid.ContactTwoFramePositions("grasp", talos, *HANDS, -100.0, 100.0),
    )


CASES = {
    # TaskJointPosVelAccBounds
    "bounds: dt = 0": (
        lambda k: tsid.TaskJointPosVelAccBounds("b", k.ur5, 0.0),
        InvalidParameterError,
        "dt of task 'b' must be > 0",
    ),
    "bounds: dt set to 0": (lambda k: setattr(k.bounds, "dt", 0.0), InvalidParameterError, "dt of task"),
    "joint bounds: dt set to 0": (
        lambda k: setattr(tsid.TaskJointBounds("jb", k.ur5, 0.002), "dt", 0.0),
        InvalidParameterError,
        "dt of task 'jb' must be > 0",
    ),
    "bounds: dt NaN": (lambda k: tsid.TaskJointPosVelAccBounds("b", k.ur5, NAN), NonFiniteError, "dt"),
    "bounds: position size": (
        lambda k: k.bounds.set_position_bounds(-np.ones(5), np.ones(5)),
        DimensionError,
        "size 6",
    ),
    "bounds: lower > upper": (
        lambda k: k.bounds.set_position_bounds(np.ones(6), -np.ones(6)),
        InvalidParameterError,
        "lower > upper",
    ),
    "bounds: NaN position": (
        lambda k: k.bounds.set_position_bounds([NAN] * 6, np.ones(6)),
        NonFiniteError,
        "indices",
    ),
    "bounds: negative velocity": (
        lambda k: k.bounds.set_velocity_bounds(-np.ones(6)),
        InvalidParameterError,
        "> 0",
    ),
    "bounds: zero acceleration": (
        lambda k: k.bounds.set_acceleration_bounds(np.zeros(6)),
        InvalidParameterError,
        "> 0",
    ),
    "bounds: mask values": (
        lambda k: setattr(k.bounds, "mask", [2, 0, 0, 0, 0, 0]),
        InvalidParameterError,
        "0 and 1",
    ),
    "bounds: state size": (
        lambda k: k.bounds.acceleration_bounds(np.zeros(7), np.zeros(6)),
        DimensionError,
        "positions",
    ),
    "bounds: negative time step": (lambda k: k.bounds.set_time_step(-0.001), InvalidParameterError, "dt"),
    # TaskActuationEquality
    "torque: reference size": (lambda k: k.torque.set_reference(np.zeros(5)), DimensionError, "size 6"),
    "torque: NaN reference": (
        lambda k: k.torque.set_reference([NAN] * 6),
        NonFiniteError,
        "torque reference",
    ),
    "torque: negative weight": (
        lambda k: k.torque.set_weight_vector(-np.ones(6)),
        InvalidParameterError,
        ">= 0",
    ),
    "torque: mask size": (lambda k: setattr(k.torque, "mask", np.ones(3)), DimensionError, "size 6"),
    # TaskContactForceEquality
    "force: not a contact": (
        lambda k: tsid.TaskContactForceEquality("f", k.talos, 0.002, "foot"),
        InvalidParameterError,
        "needs a contact",
    ),
    "force: dt < 0": (
        lambda k: tsid.TaskContactForceEquality("f", k.talos, -1.0, k.foot),
        InvalidParameterError,
        "dt",
    ),
    "force: negative kp": (
        lambda k: setattr(k.force, "kp", -1.0),
        InvalidParameterError,
        "kp of 'force' must be >= 0",
    ),
    "force: ki size": (lambda k: setattr(k.force, "ki", np.ones(3)), DimensionError, "size 6"),
    "force: negative leak": (lambda k: k.force.set_leak_rate(-0.1), InvalidParameterError, "leak_rate"),
    "force: leak set NaN": (lambda k: setattr(k.force, "leak_rate", NAN), NonFiniteError, "leak_rate of"),
    "force: dt set to 0": (lambda k: setattr(k.force, "dt", 0.0), InvalidParameterError, "dt of task"),
    "force: reference size": (
        lambda k: k.force.set_reference(tsid.TrajectorySample(np.zeros(3))),
        DimensionError,
        "reference",
    ),
    # TaskTwoFramesEquality
    "hands: unknown frame": (
        lambda k: tsid.TaskTwoFramesEquality("h", k.talos, "gripper_left", "gripper_right_joint"),
        UnknownFrameError,
        "did you mean",
    ),
    "hands: one frame twice": (
        lambda k: tsid.TaskTwoFramesEquality("h", k.talos, HANDS[0], HANDS[0]),
        InvalidParameterError,
        "twice",
    ),
    "hands: negative kd": (lambda k: setattr(k.hands, "kd", -np.ones(6)), InvalidParameterError, "kd"),
    # TaskCapturePointInequality
    "capture: dt = 0": (
        lambda k: tsid.TaskCapturePointInequality("c", k.talos, 0.0),
        InvalidParameterError,
        "dt",
    ),
    "capture: dt set to 0": (lambda k: setattr(k.capture, "dt", 0.0), InvalidParameterError, "dt of task"),
    "capture: x_min > x_max": (
        lambda k: k.capture.set_support_limits_x_axis(0.1, -0.1),
        InvalidParameterError,
        "no room",
    ),
    "capture: NaN limit": (lambda k: k.capture.set_support_limits_y_axis(NAN, 0.1), NonFiniteError, "y_min"),
    "capture: negative margin": (
        lambda k: k.capture.set_safety_margin(-0.01, 0.0),
        InvalidParameterError,
        "x_margin",
    ),
    "capture: margin wider than support": (
        lambda k: (k.capture.set_support_limits_y_axis(-0.05, 0.05), k.capture.set_safety_margin(0.0, 0.06)),
        InvalidParameterError,
        "along y",
    ),
    # ContactTwoFramePositions
    "grasp: f_min > f_max": (
        lambda k: tsid.ContactTwoFramePositions("g", k.talos, *HANDS, 10.0, -10.0),
        InvalidParameterError,
        "f_min",
    ),
    "grasp: unknown frame": (
        lambda k: tsid.ContactTwoFramePositions("g", k.talos, "hand", HANDS[1], -1.0, 1.0),
        UnknownFrameError,
        "hand",
    ),
    "grasp: f_min above f_max later": (
        lambda k: k.grasp.set_min_normal_force(200.0),
        InvalidParameterError,
        "f_min",
    ),
    "grasp: a reference placement": (
        lambda k: k.grasp.set_reference(None),
        InvalidParameterError,
        "no reference",
    ),
    "grasp: negative kp": (lambda k: setattr(k.grasp, "kp", -1.0), InvalidParameterError, "kp"),
    "grasp: a loading ramp": (
        lambda k: k.form.add_rigid_contact(k.grasp, transition_duration=0.1),
        InvalidParameterError,
        "bilateral",
    ),
    # Measured6dWrench and the formulation
    "push: unknown frame": (
        lambda k: Measured6dWrench("p", k.talos, "torso"),
        UnknownFrameError,
        "torso",
    ),
    "push: wrench size": (lambda k: k.push.set_measured_contact_force(np.zeros(3)), DimensionError, "size 6"),
    "push: NaN wrench": (
        lambda k: k.push.set_measured_contact_force([NAN] * 6),
        NonFiniteError,
        "measured wrench",
    ),
    "push: added twice": (lambda k: k.form.add_measured_force(k.push), DuplicateNameError, "push"),
    "push: not a wrench": (
        lambda k: k.form.add_measured_force(k.foot),
        InvalidParameterError,
        "Measured6dWrench or a Measured3dForce",
    ),
    "push: other robot": (
        lambda k: k.form.add_measured_force(Measured6dWrench("arm", k.ur5, "ee_fixed_joint")),
        DimensionError,
        "nv = 6",
    ),
    "push: remove unknown": (lambda k: k.form.remove_measured_force("pull"), UnknownNameError, "push"),
    # priority levels
    "priority < 0": (
        lambda k: k.form.add_motion_task(k.hands, priority=-1),
        InvalidParameterError,
        "priority",
    ),
    "priority not an integer": (
        lambda k: k.form.add_motion_task(k.hands, priority=1.5),
        InvalidParameterError,
        "priority",
    ),
    "force task as a motion task": (
        lambda k: k.form.add_motion_task(k.force),
        InvalidParameterError,
        "TaskMotion",
    ),
    # backends
    "unknown backend": (lambda k: tsid.make_solver("osqp"), UnknownNameError, "installed QP backend"),
    "unknown backend option": (
        lambda k: tsid.make_solver("quadprog", tolerance=1e-9),
        InvalidParameterError,
        "tolerance",
    ),
}
if "daqp" in installed_backends():
    CASES |= {
        "daqp: setting of the wrong type": (
            lambda k: SolverDAQP(primal_tol="tight"),
            InvalidParameterError,
            "primal_tol",
        ),
        "daqp: fractional iteration limit": (
            lambda k: SolverDAQP(iter_limit=10.5),
            InvalidParameterError,
            "integer",
        ),
        "daqp: unknown setting": (
            lambda k: tsid.make_solver("daqp", primal_tl=1e-6),
            UnknownNameError,
            "primal_tol",
        ),
        "daqp: NaN setting": (lambda k: SolverDAQP(dual_tol=NAN), NonFiniteError, "dual_tol"),
    }


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_raises_a_named_error(kit, case):
    action, error, message = CASES[case]
    with pytest.raises(error, match=message):
        action(kit)


@pytest.mark.skipif("daqp" not in installed_backends(), reason="the daqp extra is not installed")
def test_daqp_settings_reach_the_solver():
    """A valid setting is passed through: an iteration limit of 1 stops a QP that needs more."""
    box = ConstraintInequality.from_arrays("box", np.eye(3), -np.ones(3), np.ones(3))
    cost = ConstraintEquality.from_arrays("far", np.eye(3), [5.0, -5.0, 5.0])
    hqp = HqpData([[WeightedConstraint(1.0, box)], [WeightedConstraint(1.0, cost)]], 3)
    assert SolverDAQP(iter_limit=1000).solve(hqp).ok
    limited = SolverDAQP(iter_limit=1).solve(hqp)
    assert limited.status == QPStatus.MAX_ITER_REACHED
