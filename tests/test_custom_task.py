"""A task written the way docs/architecture.md says, outside the package: keep the torso upright.

It uses only public names (a test below reads this file and refuses any ``._name``), is checked
with the shipped finite-difference checker, and runs in closed loop beside the library's tasks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from conftest import random_state

import tsid_py as tsid
from tsid_py.constraints import ConstraintBound, ConstraintInequality
from tsid_py.controllers import BipedController
from tsid_py.loop import ControlLoop, StepHooks
from tsid_py.testing import assert_task_derivatives, check_task_derivatives


class TaskTorsoUpright(tsid.TaskMotionTracking):
    """Keep a frame's z axis along the world's: e = (x, y) components of z_b - z_ref (2 rows).

    With z_b = R e_z the frame's z axis in the world and w its angular velocity in world axes,
    dz_b/dt = w x z_b, so J = -[z_b]_x J_w (first two rows) and the drift is
    (a_w x z_b + w x (w x z_b)) (first two rows), a_w the angular acceleration at dv = 0.
    """

    def __init__(self, name: str, robot: tsid.RobotWrapper, frame: str) -> None:
        super().__init__(name, robot, 2)
        self.frame = frame
        self.target = np.zeros(2)  # the wanted (x, y) of z_b: zero is upright

    def axis(self, data: pin.Data) -> np.ndarray:
        return self.robot.frame_placement(data, self.frame).rotation[:, 2]

    def compute_error(self, t, q, v, data):
        return self.axis(data)[:2] - self.target

    def compute_jacobian(self, t, q, v, data):
        angular = self.robot.frame_jacobian_world_oriented(data, self.frame)[3:]
        return -pin.skew(self.axis(data)).dot(angular)[:2]

    def compute_drift(self, t, q, v, data):
        z = self.axis(data)
        w = self.robot.frame_velocity_world_oriented(data, self.frame).angular
        a = self.robot.frame_classic_acceleration_world_oriented(data, self.frame).angular
        return (np.cross(a, z) + np.cross(w, np.cross(w, z)))[:2]


BASE = "root_joint"


def test_the_task_matches_its_finite_differences(talos, rng):
    task = TaskTorsoUpright("torso-upright", talos, BASE)
    for _ in range(3):
        q, v = random_state(talos, rng)
        check = assert_task_derivatives(task, q, v)
        assert check.jacobian_error < 1e-6 and check.drift_error < 1e-6


def test_the_checker_catches_a_wrong_sign_and_a_missing_drift(talos, rng):
    """The checker is not a rubber stamp: a flipped Jacobian or a drift left out is reported."""

    class WrongSign(TaskTorsoUpright):
        def compute_jacobian(self, t, q, v, data):
            return -super().compute_jacobian(t, q, v, data)

    class NoDrift(TaskTorsoUpright):
        def compute_drift(self, t, q, v, data):
            return np.zeros(2)

    q, v = random_state(talos, rng)
    assert check_task_derivatives(WrongSign("w", talos, BASE), q, v).jacobian_error > 0.1
    with pytest.raises(AssertionError, match="Jacobian"):
        assert_task_derivatives(WrongSign("w", talos, BASE), q, v)
    with pytest.raises(AssertionError, match="drift"):
        assert_task_derivatives(NoDrift("n", talos, BASE), q, v)


def test_a_wrong_shape_is_a_dimension_error_naming_the_task(talos):
    class ThreeRows(TaskTorsoUpright):
        def compute_error(self, t, q, v, data):
            return np.zeros(3)

    controller = BipedController(talos)
    controller.formulation.add_motion_task(ThreeRows("lopsided", talos, BASE), weight=1.0)
    with pytest.raises(tsid.errors.DimensionError, match="lopsided.*error must have shape"):
        controller.compute(0.0, controller.q0, talos.zero_velocity())

    class NarrowJacobian(TaskTorsoUpright):
        def compute_jacobian(self, t, q, v, data):
            return super().compute_jacobian(t, q, v, data)[:, :-1]

    class NoNumbers(TaskTorsoUpright):
        def compute_drift(self, t, q, v, data):
            return "drift"

    q, v = controller.q0, talos.zero_velocity()  # the checker says the same, naming the method
    for task, words in (
        (ThreeRows("lopsided", talos, BASE), r"'lopsided': compute_error returned shape \(3,\), expected 2"),
        (
            NarrowJacobian("narrow", talos, BASE),
            r"'narrow': compute_jacobian returned shape \(2, 37\), expected m x 38",
        ),
        (NoNumbers("words", talos, BASE), "'words': compute_drift returned str, not an array of numbers"),
    ):
        with pytest.raises(tsid.errors.DimensionError, match=words):
            assert_task_derivatives(task, q, v)


class Tilt(StepHooks):
    """Record the base's tilt (x, y of its z axis) after every step."""

    def __init__(self, controller: BipedController) -> None:
        self.controller, self.tilts = controller, []

    def after_step(self, state, out):
        robot = self.controller.robot
        self.tilts.append(robot.frame_placement(self.controller.data, BASE).rotation[:2, 2])


def run(talos, target: np.ndarray | None) -> tuple[np.ndarray, dict]:
    """1.5 s of Talos balance with the torso task (target tilt) or without it (None)."""
    controller = BipedController(talos)
    if target is not None:
        task = TaskTorsoUpright("torso-upright", talos, BASE)
        task.kp = 20.0
        task.target = target
        controller.formulation.add_motion_task(task, weight=10.0, priority=1)
    hooks = Tilt(controller)
    outcome = ControlLoop(controller, 0.002).run(750, hooks)
    return np.array(hooks.tilts), outcome.summary()


@pytest.mark.slow
def test_the_task_tilts_the_torso_in_closed_loop_beside_the_library_tasks(talos):
    """Asked for a tilt of 0.03 (x component of the base's z axis, about 1.7 degrees of pitch),
    the torso gets there; without the task it stays where the posture task holds it."""
    target = np.array([0.03, 0.0])
    tilts, summary = run(talos, target)
    free, _ = run(talos, None)
    assert summary["qp_failures"] == 0
    assert summary["dynamics_residual_max"] < 1e-8
    assert np.linalg.norm(tilts[-1] - target) < 1e-3
    assert np.linalg.norm(free[-1] - free[0]) < 1e-3  # the posture task alone keeps the tilt
    assert np.linalg.norm(tilts[-1] - free[-1]) > 0.02


class TaskTorsoLean(tsid.TaskMotionTracking):
    """The torso's z axis at a pitch set by a method after construction (a state of the task's
    own, which the library does not know): e = x, y of z_b - (sin pitch, 0)."""

    def __init__(self, name: str, robot: tsid.RobotWrapper, frame: str) -> None:
        super().__init__(name, robot, 2)
        self.upright = TaskTorsoUpright(f"{name}-axis", robot, frame)  # its Jacobian and drift

    def lean_to(self, pitch: float) -> None:
        self.lean = np.array([np.sin(pitch), 0.0])  # first set here, after construction

    def compute_error(self, t, q, v, data):
        return self.upright.axis(data)[:2] - self.lean

    def compute_jacobian(self, t, q, v, data):
        return self.upright.compute_jacobian(t, q, v, data)

    def compute_drift(self, t, q, v, data):
        return self.upright.compute_drift(t, q, v, data)


@pytest.mark.slow
def test_a_task_with_its_own_state_set_after_construction_runs_and_checks(talos, rng):
    task = TaskTorsoLean("lean", talos, BASE)
    task.lean_to(0.03)
    for _ in range(2):
        assert_task_derivatives(task, *random_state(talos, rng))
    task.kp = 20.0
    controller = BipedController(talos)
    controller.formulation.add_motion_task(task, weight=10.0, priority=1)
    task.kp = np.array([25.0, 18.0])  # a gain vector replaced once the task is in the formulation
    hooks = Tilt(controller)
    summary = ControlLoop(controller, 0.002).run(750, hooks).summary()
    assert summary["qp_failures"] == 0 and summary["dynamics_residual_max"] < 1e-8
    assert np.linalg.norm(hooks.tilts[-1] - [np.sin(0.03), 0.0]) < 1e-3
    # the last step's rows used the replaced gains, and kd their critical damping
    np.testing.assert_allclose(task.kd, 2.0 * np.sqrt([25.0, 18.0]), rtol=1e-15)
    expected = -task.kp * task.position_error - task.kd * task.velocity_error
    np.testing.assert_allclose(task.desired_acceleration, expected, atol=1e-12)
    np.testing.assert_allclose(task.constraint.vector, expected - task.drift, atol=1e-12)


def test_this_file_touches_no_underscore_name():

    tree = ast.parse(Path(__file__).read_text())
    private = [
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
    ]
    assert private == []


def test_a_task_of_an_unknown_kind_is_refused_when_added(talos):
    """A kind is a Kind or its string (the enum compares equal to it); a misspelt one is refused at
    add time, naming the task and the kinds (it once became a bound, silently)."""
    assert tsid.constraints.Kind.INEQUALITY == "inequality"  # exact: a string enum

    class Misspelt(TaskTorsoUpright):
        kind = "inequalty"

    controller = BipedController(talos)
    with pytest.raises(
        tsid.errors.InvalidParameterError, match="kind of task 'typo'.*'equality', 'inequality', 'bound'"
    ):
        controller.formulation.add_motion_task(Misspelt("typo", talos, BASE), weight=1.0)
    with pytest.raises(tsid.errors.InvalidParameterError, match="got 'equalty'"):
        tsid.constraints.new_constraint("equalty", "c", 1, 1)
    assert isinstance(tsid.constraints.new_constraint("inequality", "c", 1, 2), ConstraintInequality)

    class BoundsByString(tsid.TaskJointBounds):
        kind = "bound"  # the string, not Kind.BOUND: the same kind

    bounds = BoundsByString("bounds", talos, dt=0.01)
    controller.formulation.add_motion_task(bounds, weight=0.0, priority=0)
    controller.compute(0.0, controller.q0, talos.zero_velocity())
    assert isinstance(bounds.constraint, ConstraintBound)  # (the formulation held it as rows)

    class FiveBounds(BoundsByString):
        @property
        def dim(self) -> int:
            return 5  # a bound is on every variable: 5 would bound the base's first five

    with pytest.raises(tsid.errors.InvalidParameterError, match="bound task 'five' .* dim must be"):
        controller.formulation.add_motion_task(FiveBounds("five", talos, dt=0.01), 0.0, priority=0)
    BoundsByString.kind = "bund"  # changed once added: refused, naming the task, in the next layout
    controller.formulation.add_motion_task(tsid.TaskJointBounds("other", talos, dt=0.01), 0.0, priority=0)
    with pytest.raises(tsid.errors.InvalidParameterError, match="the kind of task 'bounds' must be one of"):
        controller.compute(0.002, controller.q0, talos.zero_velocity())


def test_a_complex_error_or_a_wrong_reference_is_a_dimension_error(talos):
    class Complex(TaskTorsoUpright):
        def compute_error(self, t, q, v, data):
            return super().compute_error(t, q, v, data).astype(complex)

    class Moving(TaskTorsoUpright):
        def reference_derivatives(self, t):
            return np.zeros(3), np.zeros(2)

    for task, words in ((Complex("c", talos, BASE), "c.*error"), (Moving("m", talos, BASE), "m.*reference")):
        controller = BipedController(talos)
        controller.formulation.add_motion_task(task, weight=1.0)
        with pytest.raises(tsid.errors.DimensionError, match=words):
            controller.compute(0.0, controller.q0, talos.zero_velocity())
