"""Bad input to transitions, planning, the CoP task and the stepping loop: one TsidError per mistake."""

import numpy as np
import pinocchio as pin
import pytest

import tsid_py as tsid
from tsid_py import planning
from tsid_py.contacts.pressure import contacts_center_of_pressure as center_of_pressure
from tsid_py.controllers import BipedController
from tsid_py.planning.lipm import cart_table_model, solve_dare
from tsid_py.robot_specs import SoleGeometry
from tsid_py.scenarios import walk
from tsid_py.scenarios.stepping import run_footsteps
from tsid_py.transitions import LinearRamp

SOLE = SoleGeometry(0.10, 0.10, 0.065, 0.065, 0.0)
RIGHT = pin.SE3(np.eye(3), np.array([0.0, -0.085, 0.0]))
LEFT = pin.SE3(np.eye(3), np.array([0.0, 0.085, 0.0]))
NAN = float("nan")


def leaving_contact(b: BipedController) -> None:
    b.formulation.remove_rigid_contact("contact_rfoot", 0.1, normal_force=400.0)


def leaving_task(b: BipedController) -> None:
    b.formulation.remove_task("task-posture", 0.1)


def step(t_lift=1.0, t_land=1.8, side="right"):
    return planning.Footstep(side, RIGHT if side == "right" else LEFT, RIGHT, t_lift, t_land)


def plan(steps=(), times=(0.0, 3.0), points=((0.0, 0.0), (0.0, 0.0)), t_end=3.0):
    return planning.FootstepPlan(
        SOLE, {"right": RIGHT, "left": LEFT}, tuple(steps), np.array(times), np.array(points), t_end
    )


def swing(**overrides):
    args = {"name": "swing", "start": RIGHT, "end": RIGHT, "t0": 0.0, "duration": 0.8, "height": 0.1}
    return planning.TrajectorySE3SwingFoot(**{**args, **overrides})


def hands(b: BipedController) -> tsid.ContactTwoFramePositions:
    return tsid.ContactTwoFramePositions(
        "hands", b.robot, "gripper_left_base_link_joint", "gripper_right_base_link_joint", -100.0, 100.0
    )


def bilateral_ramp(b: BipedController) -> None:
    b.formulation.add_rigid_contact(hands(b), transition_duration=0.1)


def cop_with_bilateral_contact(b: BipedController) -> None:
    b.formulation.add_rigid_contact(hands(b))
    b.formulation.add_force_task(tsid.TaskCopEquality("cop", b.robot), weight=1e-3)
    b.formulation.compute_problem_data(0.0, b.q0, b.robot.zero_velocity())


def walk_plan(**overrides):
    args = {
        "sole": SOLE,
        "right": RIGHT,
        "left": LEFT,
        "com_xy": [0.0, 0.0],
        "n_steps": 4,
        "step_length": 0.2,
    }
    return planning.plan_straight_walk(**{**args, **overrides})


# (what is wrong, the call on a fresh BipedController (Talos), error type, words in the message)
CASES = [
    (
        "ramp with a negative duration",
        lambda b: LinearRamp(0.0, 1.0, -0.1),
        tsid.errors.InvalidParameterError,
        "duration",
    ),
    ("ramp from NaN", lambda b: LinearRamp(NAN, 1.0, 0.1), tsid.errors.NonFiniteError, "start"),
    (
        "task added with a negative transition",
        lambda b: b.formulation.add_motion_task(b.foot_tasks["right"], 1.0, 1, transition_duration=-0.1),
        tsid.errors.InvalidParameterError,
        "transition_duration",
    ),
    (
        "task added with a NaN transition",
        lambda b: b.formulation.add_motion_task(b.foot_tasks["right"], 1.0, 1, transition_duration=NAN),
        tsid.errors.NonFiniteError,
        "transition_duration",
    ),
    (
        "weight ramp on a hard task",
        lambda b: b.formulation.add_motion_task(b.foot_tasks["right"], 1.0, 0, transition_duration=0.1),
        tsid.errors.InvalidParameterError,
        "cost level",
    ),
    (
        "remove an unknown task",
        lambda b: b.formulation.remove_task("task-nose", 0.1),
        tsid.errors.UnknownNameError,
        "task",
    ),
    (
        "re-weight an unknown task",
        lambda b: b.formulation.update_task_weight("task-coom", 1.0, 0.1),
        tsid.errors.UnknownNameError,
        "task-com",
    ),
    (
        "remove an unknown contact",
        lambda b: b.formulation.remove_rigid_contact("contact_nose", 0.1),
        tsid.errors.UnknownNameError,
        "contact",
    ),
    (
        "remove a contact with a negative ramp",
        lambda b: b.formulation.remove_rigid_contact("contact_rfoot", -1.0),
        tsid.errors.InvalidParameterError,
        "transition_duration",
    ),
    (
        "remove a contact twice during its ramp",
        lambda b: (leaving_contact(b), leaving_contact(b)),
        tsid.errors.InvalidParameterError,
        "already being ramped out",
    ),
    (
        "remove a task twice during its ramp",
        lambda b: (leaving_task(b), leaving_task(b)),
        tsid.errors.InvalidParameterError,
        "already being ramped out",
    ),
    (
        "re-weight a task being removed",
        lambda b: (leaving_task(b), b.formulation.update_task_weight("task-posture", 1.0)),
        tsid.errors.InvalidParameterError,
        "being removed",
    ),
    (
        "add back a contact during its removal ramp",
        lambda b: (leaving_contact(b), b.formulation.add_rigid_contact(b.contacts["right"])),
        tsid.errors.DuplicateNameError,
        "ramped out",
    ),
    ("ramp a bilateral contact", bilateral_ramp, tsid.errors.InvalidParameterError, "bilateral"),
    (
        "CoP task with a bilateral contact",
        cop_with_bilateral_contact,
        tsid.errors.InvalidParameterError,
        "unilateral",
    ),
    ("lift an unknown foot", lambda b: b.remove_contact("middle", 0.1), tsid.errors.UnknownNameError, "foot"),
    (
        "lift a foot twice",
        lambda b: (b.remove_contact("right", 0.1), b.remove_contact("right", 0.1)),
        tsid.errors.InvalidParameterError,
        "already lifted",
    ),
    (
        "lift a foot with a NaN ramp",
        lambda b: b.remove_contact("right", NAN),
        tsid.errors.NonFiniteError,
        "transition",
    ),
    (
        "put down a foot in contact",
        lambda b: b.add_contact("left", 0.1),
        tsid.errors.InvalidParameterError,
        "in contact",
    ),
    (
        "swing-foot reference of the wrong size",
        lambda b: b.set_foot_reference("right", np.zeros(5)),
        tsid.errors.DimensionError,
        "size 12",
    ),
    (
        "placement of an unknown foot",
        lambda b: b.foot_placement("nose"),
        tsid.errors.UnknownNameError,
        "foot",
    ),
    (
        "swing from a non-placement",
        lambda b: swing(start=np.zeros(3)),
        tsid.errors.InvalidParameterError,
        "SE3",
    ),
    ("swing of zero duration", lambda b: swing(duration=0.0), tsid.errors.InvalidParameterError, "duration"),
    ("swing to a NaN height", lambda b: swing(height=NAN), tsid.errors.NonFiniteError, "height"),
    ("swing sampled at NaN", lambda b: swing().sample(NAN), tsid.errors.NonFiniteError, "t"),
    ("footstep of an unknown side", lambda b: step(side="middle"), tsid.errors.UnknownNameError, "side"),
    (
        "footstep landing before lift-off",
        lambda b: step(1.0, 0.9),
        tsid.errors.InvalidParameterError,
        "t_land",
    ),
    (
        "overlapping footsteps",
        lambda b: plan([step(1.0, 1.8), step(1.5, 2.3, "left")]),
        tsid.errors.InvalidParameterError,
        "overlap",
    ),
    (
        "ZMP times going back",
        lambda b: plan(times=(3.0, 0.0)),
        tsid.errors.InvalidParameterError,
        "non-decreasing",
    ),
    (
        "ZMP points of the wrong shape",
        lambda b: plan(points=((0.0,), (0.0,))),
        tsid.errors.DimensionError,
        "zmp_points",
    ),
    (
        "plan ending before a touch-down",
        lambda b: plan([step(1.0, 3.5)]),
        tsid.errors.InvalidParameterError,
        "t_end",
    ),
    (
        "plan without one foot",
        lambda b: planning.FootstepPlan(SOLE, {"right": RIGHT}, (), np.zeros(2), np.zeros((2, 2)), 1.0),
        tsid.errors.InvalidParameterError,
        "initial",
    ),
    (
        "ZMP reference at NaN",
        lambda b: walk_plan().zmp_reference([0.0, NAN]),
        tsid.errors.NonFiniteError,
        "finite",
    ),
    ("swinging foot at NaN", lambda b: walk_plan().swinging(NAN), tsid.errors.NonFiniteError, "t"),
    ("zero steps", lambda b: walk_plan(n_steps=0), tsid.errors.InvalidParameterError, "n_steps"),
    (
        "negative double support",
        lambda b: walk_plan(double_support=-0.1),
        tsid.errors.InvalidParameterError,
        "double_support",
    ),
    (
        "zero single support",
        lambda b: walk_plan(single_support=0.0),
        tsid.errors.InvalidParameterError,
        "single_support",
    ),
    ("NaN step length", lambda b: walk_plan(step_length=NAN), tsid.errors.NonFiniteError, "step_length"),
    ("unknown first foot", lambda b: walk_plan(first="middle"), tsid.errors.InvalidParameterError, "first"),
    ("CoM of one coordinate", lambda b: walk_plan(com_xy=[0.0]), tsid.errors.InvalidParameterError, "com_xy"),
    (
        "feet that are not placements",
        lambda b: walk_plan(right=[0.0, 0.0, 0.0]),
        tsid.errors.InvalidParameterError,
        "SE3",
    ),
    (
        "ZMP reference of the wrong shape",
        lambda b: planning.plan_com_from_zmp(lambda t: np.zeros(len(t)), 1.0, [0.0, 0.0, 0.88]),
        tsid.errors.DimensionError,
        "zmp_reference",
    ),
    (
        "ZMP reference not a function",
        lambda b: planning.plan_com_from_zmp(np.zeros((5, 2)), 1.0, [0, 0, 0.88]),
        tsid.errors.InvalidParameterError,
        "function",
    ),
    (
        "CoM below the ground",
        lambda b: planning.plan_com_from_zmp(lambda t: np.zeros((len(t), 2)), 1.0, [0, 0, -0.1]),
        tsid.errors.InvalidParameterError,
        "above the ground",
    ),
    (
        "preview with a negative CoM height",
        lambda b: planning.ZmpPreviewController(-0.88),
        tsid.errors.InvalidParameterError,
        "com_height",
    ),
    (
        "preview of an empty reference",
        lambda b: planning.ZmpPreviewController(0.88).run([], [0, 0, 0]),
        tsid.errors.InvalidParameterError,
        "empty",
    ),
    (
        "preview from a 2-D state",
        lambda b: planning.ZmpPreviewController(0.88).run([0.0], [0, 0]),
        tsid.errors.DimensionError,
        "state",
    ),
    ("cart-table with dt 0", lambda b: cart_table_model(0.88, 0.0), tsid.errors.InvalidParameterError, "dt"),
    (
        "Riccati with a non-square A",
        lambda b: solve_dare(np.zeros((3, 2)), np.zeros((3, 1)), np.eye(3), np.eye(1)),
        tsid.errors.DimensionError,
        "A",
    ),
    (
        "Riccati with R = 0",
        lambda b: solve_dare(np.eye(3), np.ones((3, 1)), np.eye(3), np.zeros((1, 1))),
        tsid.errors.InvalidParameterError,
        "positive definite",
    ),
    (
        "LIPM plan of mismatched shapes",
        lambda b: planning.LipmPlan(0.0, 0.01, np.zeros((3, 3, 2)), np.zeros((3, 2)), 0.88, 0.88),
        tsid.errors.DimensionError,
        "states",
    ),
    (
        "LIPM plan sampled at NaN",
        lambda b: planning.LipmPlan(0.0, 0.01, np.zeros((2, 3, 2)), np.zeros((1, 2)), 0.88, 0.88).sample(NAN),
        tsid.errors.NonFiniteError,
        "t",
    ),
    (
        "hull with a NaN point",
        lambda b: planning.convex_hull([[0, 0], [1, NAN], [0, 1]]),
        tsid.errors.NonFiniteError,
        "points",
    ),
    (
        "hull of two points",
        lambda b: planning.convex_hull([[0, 0], [1, 1]]),
        tsid.errors.InvalidParameterError,
        "3 distinct",
    ),
    (
        "margin of a 4-D point",
        lambda b: planning.polygon_margin(np.zeros(4), np.eye(3)[:, :2]),
        tsid.errors.InvalidParameterError,
        "point",
    ),
    (
        "sole at a non-placement",
        lambda b: planning.sole_polygon(SOLE, np.eye(4)),
        tsid.errors.InvalidParameterError,
        "SE3",
    ),
    (
        "CoP reference of size 2",
        lambda b: tsid.TaskCopEquality("cop", b.robot).set_reference([0, 0]),
        tsid.errors.DimensionError,
        "size 3",
    ),
    (
        "CoP normal of zero",
        lambda b: tsid.TaskCopEquality("cop", b.robot).set_contact_normal(np.zeros(3)),
        tsid.errors.InvalidParameterError,
        "non-zero",
    ),
    (
        "CoP of a wrong force size",
        lambda b: center_of_pressure([(b.contacts["right"], np.zeros(3))], b.data),
        tsid.errors.DimensionError,
        "size 12",
    ),
    (
        "CoP without load",
        lambda b: center_of_pressure([(b.contacts["right"], np.zeros(12))], b.data),
        tsid.errors.InvalidParameterError,
        "normal force",
    ),
    (
        "walk with a double support shorter than the unloading ramp",
        lambda b: run_footsteps(
            b, walk_plan(double_support=0.1), lambda t: None, "walk", unload_duration=0.2
        ),
        tsid.errors.InvalidParameterError,
        "double support",
    ),
    (
        "negative swing height",
        lambda b: run_footsteps(b, walk_plan(), lambda t: None, "walk", swing_height=-0.1),
        tsid.errors.InvalidParameterError,
        "swing_height",
    ),
    (
        "unknown CoM support",
        lambda b: run_footsteps(b, walk_plan(), lambda t: None, "walk", com_support="air"),
        tsid.errors.InvalidParameterError,
        "com_support",
    ),
    ("walk of one step", lambda b: walk.run("talos", steps=1), tsid.errors.InvalidParameterError, "n_steps"),
]


@pytest.mark.parametrize(("call", "error", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_a_tsid_error_naming_the_problem(talos, call, error, words):
    with pytest.raises(error, match=words):
        call(BipedController(talos))


def test_an_unloading_ramp_after_a_change_of_contacts_starts_from_f_max(talos):
    """The last solution's force layout is stale once contacts change: the ramp must not read it."""
    b = BipedController(talos)
    form, q, v = b.formulation, b.q0, talos.zero_velocity()
    sol = b.solver.solve(form.compute_problem_data(0.0, q, v))
    left = b.contacts["left"].get_normal_force(form.get_contact_force("contact_lfoot", sol))
    form.remove_rigid_contact("contact_rfoot")
    form.add_rigid_contact(b.contacts["right"], force_reg_weight=1e-5)  # now after the left foot in x
    right_max = b.contacts["right"].max_normal_force
    form.remove_rigid_contact("contact_rfoot", transition_duration=0.1, normal_force=right_max)
    hqp = form.compute_problem_data(0.002, q, v)
    (force,) = [c for _, c in hqp[0] if c.name == "contact_rfoot_force_constraint"]
    # the ramp's first value, start + 0 (end - start), start = f_max
    assert force.upper_bound[-1] == pytest.approx(b.contacts["right"].max_normal_force, rel=1e-15)
    assert left < 500.0
    assert b.solver.solve(hqp).ok


def test_an_immediate_removal_ends_a_removal_ramp(talos):
    b = BipedController(talos)
    form = b.formulation
    form.remove_rigid_contact("contact_rfoot", 0.1, normal_force=400.0)
    form.remove_rigid_contact("contact_rfoot")
    assert not form.check_contact("contact_rfoot")
    form.compute_problem_data(0.0, b.q0, talos.zero_velocity())
    form.add_rigid_contact(b.contacts["right"], transition_duration=0.1)  # no ramp left behind
    assert form.check_contact("contact_rfoot")
