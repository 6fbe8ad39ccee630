"""task.constraint is a copy of the rows the task last wrote: the rows the QP solved.

The rows a task fills in a formulation are the formulation's; the task keeps a reference to the
last ones it wrote, and hands out copies. Each task writes its rows in one place (its ``fill``),
so there is nothing to keep in step by hand.
"""

import gc
import inspect

import numpy as np
import pinocchio as pin
import pytest
from conftest import random_state

import tsid_py as tp
import tsid_py.contacts
import tsid_py.tasks
from tsid_py.controllers.biped import BipedController
from tsid_py.hqp import HqpData
from tsid_py.tasks import TaskMotion
from tsid_py.tasks.task_base import TaskBase


def library_task_classes() -> list[type]:
    """Every task class the library defines that fills rows, the contacts' motion tasks included
    (not the bases that fill nothing: TaskMotion, TaskActuation, ...)."""
    found: set[type] = {tsid_py.contacts.contact_line.TaskLineHold}
    for module in (tsid_py.tasks, tsid_py.contacts):
        for name in dir(module):
            value = getattr(module, name)
            if inspect.isclass(value) and issubclass(value, TaskBase) and value.fill is not TaskBase.fill:
                found.add(value)
    return sorted(found, key=lambda cls: cls.__name__)


@pytest.mark.parametrize("cls", library_task_classes(), ids=lambda cls: cls.__name__)
def test_every_library_task_has_at_most_four_classes_above_it(cls):
    """Mixins included: a reader reaches any task's code through at most four classes."""
    above = [base.__name__ for base in cls.__mro__[1:] if base is not object]
    assert len(above) <= 4, (cls.__name__, above)


def test_the_list_of_library_tasks_is_the_librarys():
    names = {cls.__name__ for cls in library_task_classes()}
    assert {"TaskComEquality", "TaskSE3Equality", "TaskSelfCollision", "TaskLineHold"} <= names
    assert len(names) >= 17


def rows_by_name(hqp: HqpData) -> dict[str, object]:
    """The problem's constraints by the name of the task that fills them (a contact's motion task
    is named as its contact; its rows, ``<contact>_motion_task``)."""
    rows = {entry.constraint.name: entry for level in hqp.levels for entry in level}
    suffix = "_motion_task"
    rows.update({name[: -len(suffix)]: e for name, e in rows.items() if name.endswith(suffix)})
    return rows


def build(talos):
    """The biped's problem with a task of every family on x added (those on tau are mapped onto x,
    so they are compared with their own computation below)."""
    controller = BipedController(talos)
    form = controller.formulation
    right = controller.contacts["right"]
    force = tp.TaskContactForceEquality("force-right", talos, 0.002, right)
    force.kp = 1.0
    force.set_reference(tp.TrajectorySample(np.full(6, 1.0), np.zeros(6)))
    form.add_force_task(force, weight=1e-3, priority=1)
    bounds = tp.TaskJointBounds("joint-bounds", talos, 0.002)
    bounds.set_velocity_bounds(-np.full(talos.na, 5.0), np.full(talos.na, 5.0))
    form.add_motion_task(bounds, priority=0)
    capture = tp.TaskCapturePointInequality("capture", talos, 0.002)
    form.add_motion_task(capture, priority=0)
    envelope = tp.TaskMotorEnvelope("envelope", talos)
    form.add_actuation_task(envelope, priority=0)
    hand = tp.TaskSE3Equality("hand", talos, "gripper_left_joint")
    hand.kp = 10.0
    hand.mask = [1, 1, 1, 0, 1, 0]
    form.add_motion_task(hand, weight=1e-2, priority=1)
    tasks = [
        controller.com_task,
        controller.posture_task,
        controller.am_task,
        controller.contacts["left"].motion_task,
        right.motion_task,
        force,
        bounds,
        capture,
        hand,
    ]
    return controller, tasks, envelope


@pytest.mark.slow
def test_a_tasks_constraint_is_the_rows_the_qp_solved_and_outlives_the_formulation(talos, rng):
    controller, tasks, envelope = build(talos)
    form = controller.formulation
    q, v = random_state(talos, rng)
    q[:7] = controller.q0[:7]
    hqp = form.compute_problem_data(0.0, q, v)
    rows = rows_by_name(hqp)
    read = {task.name: task.constraint for task in tasks}
    for task in tasks:
        solved, got = rows[task.name].constraint, read[task.name]
        columns = rows[task.name].columns
        matrix = solved.matrix if columns is None else solved.matrix[:, columns]
        if task.kind == tp.constraints.Kind.BOUND:  # held as rows of an inequality on dv
            assert got.is_bound()
        else:
            np.testing.assert_allclose(got.matrix, matrix, atol=1e-15, err_msg=task.name)
        if solved.is_equality():
            np.testing.assert_allclose(got.vector, solved.vector, atol=1e-12, err_msg=task.name)
        else:
            np.testing.assert_allclose(got.lower_bound, solved.lower_bound, atol=1e-12, err_msg=task.name)
            np.testing.assert_allclose(got.upper_bound, solved.upper_bound, atol=1e-12, err_msg=task.name)
    # on tau: the task's constraint is its own computation at the same state
    on_tau = envelope.constraint
    fresh = envelope.compute(0.0, q, v, form.data)
    np.testing.assert_array_equal(on_tau.lower_bound, fresh.lower_bound)  # exact: same task, same state

    # the tasks' constraints outlive the formulation: a task holds the rows it last wrote
    del controller, form, hqp, rows, solved, matrix
    gc.collect()
    for task in tasks:
        again, before = task.constraint.matrix, read[task.name].matrix
        np.testing.assert_array_equal(again, before, err_msg=task.name)  # exact: kept as computed


def test_a_constraint_read_after_the_settings_changed_is_the_one_computed(talos, rng):
    """The constraint is the last computation's, not one made with the settings of now."""
    controller = BipedController(talos)
    form = controller.formulation
    q, v = random_state(talos, rng)
    q[:7] = controller.q0[:7]
    com = controller.com_task
    form.compute_problem_data(0.0, q, v)
    before = com.constraint
    com.kp = 3.0 * com.kp + 1.0
    com.set_reference(tp.TrajectorySample(np.ones(3), np.ones(3), np.ones(3)))
    np.testing.assert_array_equal(com.constraint.vector, before.vector)  # exact: the same arrays
    com.mask = [1, 0, 1]
    assert com.constraint.rows == 2 and not com.constraint.matrix.any()  # a new mask: nothing yet


# ---------------------------------------------------------------------- every task, every path
def _sample(rng, size, tangent=None):
    return tp.TrajectorySample(*(rng.standard_normal(n) for n in (size, tangent or size, tangent or size)))


def _com(talos, rng, mask):
    task = tp.TaskComEquality("com", talos)
    task.kp, task.mask = [1.0, 2.0, 3.0], mask
    task.set_reference(_sample(rng, 3))
    return task, lambda: task.set_reference(_sample(rng, 3))


def _posture(talos, rng, masked):
    task = tp.TaskJointPosture("posture", talos)
    task.kp = rng.random(talos.na)
    if masked:
        task.mask = [1.0, 0.0] * (talos.na // 2)
    q, _ = random_state(talos, rng)
    task.set_reference(
        tp.TrajectorySample(q[7:], rng.standard_normal(talos.na), rng.standard_normal(talos.na))
    )
    return task, lambda: setattr(task, "kp", 2.0)


def _se3(talos, rng, local, moving):
    task = tp.TaskSE3Equality("hand", talos, "gripper_left_joint")
    task.kp, task.mask = rng.random(6), [1, 0, 1, 1, 0, 1]
    task.use_local_frame(local)
    M = pin.SE3.Random()
    if moving:
        pos = np.concatenate([M.translation, M.rotation.reshape(-1)])
        task.set_reference(
            tp.TrajectorySample(pos, rng.standard_normal(6), rng.standard_normal(6), tangent_size=6)
        )
    else:
        task.set_reference(M)
    return task, lambda: task.set_reference(pin.SE3.Random())


def _two_frames(talos, rng):
    task = tp.TaskTwoFramesEquality("two", talos, "gripper_left_joint", "gripper_right_joint")
    task.kp, task.mask = 3.0, [1, 1, 0, 1, 0, 1]
    return task, lambda: setattr(task, "kd", 1.0)


def _line(talos, rng):
    points = [[0.1, 0.1], [-0.065, 0.065], [0.0, 0.0]]
    line = tp.ContactLine("toe", talos, "leg_left_sole_fix_joint", points, [0, 0, 1], 0.3, 5.0, 1e3)
    line.kp = 10.0
    line.set_reference(pin.SE3.Random())
    return line.motion_task, lambda: line.set_reference(pin.SE3.Random())


def _coupling(talos, rng):
    task = tp.TaskJointCoupling("mimic", talos, "arm_left_4_joint", "arm_left_3_joint", -0.7, 0.1)
    task.kp = 4.0
    return task, lambda: setattr(task, "ratio", 0.5)


def _am(talos, rng):
    task = tp.TaskAMEquality("am", talos)
    task.kp = [1.0, 1.0, 0.0]
    task.set_reference(tp.TrajectorySample(rng.standard_normal(3), rng.standard_normal(3)))
    return task, lambda: setattr(task, "kp", 5.0)


def _capture_point(talos, rng):
    task = tp.TaskCapturePointInequality("cp", talos, 0.002)
    task.set_support_limits_x_axis(-0.1, 0.1)
    task.set_support_limits_y_axis(-0.2, 0.15)
    task.set_safety_margin(0.01, 0.02)
    return task, lambda: task.set_safety_margin(0.0, 0.0)


def _joint_bounds(talos, rng):
    task = tp.TaskJointBounds("jb", talos, 0.002)
    task.set_velocity_bounds(-np.ones(talos.na), np.ones(talos.na))
    task.set_acceleration_bounds(-50 * np.ones(talos.na), 50 * np.ones(talos.na))
    return task, lambda: task.set_velocity_bounds(-np.full(talos.na, 2.0), np.full(talos.na, 2.0))


def _pos_vel_acc(talos, rng):
    task = tp.TaskJointPosVelAccBounds("pva", talos, 0.002)
    lower, upper = talos.position_limits()
    task.set_position_bounds(lower, upper)
    task.set_velocity_bounds(np.full(talos.na, 2.0))
    task.set_acceleration_bounds(np.full(talos.na, 30.0))
    task.set_impose_bounds(True, True, False, True)
    task.mask = [1, 0] * (talos.na // 2)
    return task, lambda: task.set_acceleration_bounds(np.full(talos.na, 10.0))


def _actuation_bounds(talos, rng):
    task = tp.TaskActuationBounds("ab", talos)
    task.set_bounds(-np.arange(1.0, talos.na + 1), np.arange(1.0, talos.na + 1))
    task.mask = [1, 1, 0, 1] * (talos.na // 4)
    return task, lambda: task.set_bounds(-np.ones(talos.na), np.ones(talos.na))


def _actuation_equality(talos, rng):
    task = tp.TaskActuationEquality("ae", talos)
    task.set_reference(rng.standard_normal(talos.na))
    task.set_weight_vector(rng.random(talos.na))
    task.mask = [0, 1] * (talos.na // 2)
    return task, lambda: task.set_weight_vector(np.ones(talos.na))


def _envelope(talos, rng, braking):
    task = tp.TaskMotorEnvelope("me", talos, braking=braking)
    task.mask = [1, 1, 1, 0] * (talos.na // 4)
    return task, lambda: setattr(task, "braking", not braking)


def _self_collision(talos, rng):
    task = tp.TaskSelfCollision("sc", talos, 0.002, "all", max_active=10, d_min=0.05, d_influence=0.5)
    return task, lambda: None


TASKS = {
    "com": lambda r, g: _com(r, g, [1, 1, 1]),
    "com-masked": lambda r, g: _com(r, g, [1, 0, 1]),
    "posture": lambda r, g: _posture(r, g, False),
    "posture-masked": lambda r, g: _posture(r, g, True),
    "se3-local": lambda r, g: _se3(r, g, True, False),
    "se3-world-moving": lambda r, g: _se3(r, g, False, True),
    "se3-local-moving": lambda r, g: _se3(r, g, True, True),
    "two-frames": _two_frames,
    "line-hold": _line,
    "coupling": _coupling,
    "am": _am,
    "capture-point": _capture_point,
    "joint-bounds": _joint_bounds,
    "pos-vel-acc": _pos_vel_acc,
    "actuation-bounds": _actuation_bounds,
    "actuation-equality": _actuation_equality,
    "envelope": lambda r, g: _envelope(r, g, False),
    "envelope-braking": lambda r, g: _envelope(r, g, True),
    "self-collision": _self_collision,
}


def assert_same_constraint(got, filled, label):
    """Exactly the rows the task's fill wrote: the same arrays computed once."""
    assert got.kind == filled.kind and got.rows == filled.rows, label
    if not filled.is_bound():
        np.testing.assert_array_equal(got.matrix, filled.matrix, err_msg=label)  # exact: the same values
    for name in filled.vector_names:
        np.testing.assert_array_equal(
            getattr(got, name), getattr(filled, name), err_msg=label
        )  # exact: the same


@pytest.mark.parametrize(
    "case", [pytest.param(c, marks=pytest.mark.slow) if c == "self-collision" else c for c in TASKS]
)
def test_each_tasks_constraint_is_exactly_what_its_fill_wrote_and_stays_so(talos, rng, case):
    """Every library task and path: the constraint is the rows its last fill wrote; changing the
    task's settings afterwards or writing in what was read leaves it so."""
    task, change = TASKS[case](talos, rng)
    q, v = random_state(talos, rng)
    if case in ("capture-point", "pos-vel-acc", "self-collision"):
        q = talos.reference_configuration("half_sitting")  # CoM above the ground, within the limits
    data = talos.create_data()
    talos.compute_all_terms(data, q, v)
    filled = tp.constraints.new_constraint(task.kind, task.name, task.dim, task.cols)
    task.compute_into(0.0, q, v, data, filled)
    got = task.constraint
    assert_same_constraint(got, filled, case)
    for name in ("matrix", *got.vector_names):
        getattr(got, name)[...] = 123.0  # the caller's: it changes nothing in the task
    change()
    assert_same_constraint(task.constraint, filled, case)


def test_the_contact_force_tasks_constraint_is_the_one_before_its_integral_advanced(talos):
    controller = BipedController(talos)
    task = tp.TaskContactForceEquality("force", talos, 0.002, controller.contacts["right"])
    task.kp, task.ki = 1.0, 2.0
    task.set_reference(tp.TrajectorySample(np.full(6, 1.0), np.ones(6)))
    task.set_external_force(tp.TrajectorySample(np.full(6, 3.0), np.zeros(6)))
    for _ in range(3):  # the integral term non-zero
        filled = tp.constraints.new_constraint(task.kind, task.name, task.dim, task.cols)
        task.compute_into(0.0, None, None, controller.data, filled)
    assert np.abs(task.integral_error).max() > 0.0
    assert_same_constraint(task.constraint, filled, "force")


def test_the_cop_tasks_constraint_is_what_it_filled(talos):
    controller = BipedController(talos)
    task = tp.TaskCopEquality("cop", talos)
    task.set_contacts([(contact, 12 * k) for k, contact in enumerate(controller.contacts.values())])
    task.set_reference([0.01, 0.02, 0.0])
    talos.compute_all_terms(controller.data, controller.q0, np.zeros(talos.nv))
    filled = tp.constraints.new_constraint(task.kind, task.name, task.dim, task.cols)
    task.compute_into(0.0, None, None, controller.data, filled)
    assert np.abs(filled.matrix).max() > 0.0
    assert_same_constraint(task.constraint, filled, "cop")


# -------------------------------------------------------------------------- tasks of one's own
class ShiftedHand(tp.TaskSE3Equality):  # a user's: its own fill, on the library's
    def fill(self, t, q, v, data, out):
        super().fill(t, q, v, data, out)
        out.vector[...] += 1.0


class OwnRowsCom(tp.TaskComEquality):  # a user's: writes its rows itself
    def fill(self, t, q, v, data, out):
        out.matrix[...] = 1.0
        out.vector[...] = 2.0


class WideBounds(tp.TaskActuationBounds):  # a user's: its own bounds
    def fill(self, t, q, v, data, out):
        out.matrix[...] = np.eye(out.rows, out.cols)
        out.lower_bound[...], out.upper_bound[...] = -7.0, 7.0


@pytest.mark.parametrize(
    "build",
    [
        lambda r: ShiftedHand("hand", r, "gripper_left_joint"),
        lambda r: OwnRowsCom("com", r),
        lambda r: WideBounds("bounds", r),
    ],
    ids=["se3-then-shifted", "com-own-rows", "bounds-own"],
)
def test_a_subclass_that_writes_its_own_fill_reads_the_rows_it_wrote(talos, rng, build):
    """A subclass's own fill is read back from the rows it wrote (after compute, from the rows
    compute filled)."""
    task = build(talos)
    q, v = random_state(talos, rng)
    data = talos.create_data()
    talos.compute_all_terms(data, q, v)
    computed = task.compute(0.0, q, v, data)
    assert_same_constraint(task.constraint, computed, type(task).__name__)


def test_a_raw_task_reads_back_what_compute_filled(talos):
    class Lean(TaskMotion):  # a user's task written on the family base
        @property
        def dim(self):
            return 2

        def fill(self, t, q, v, data, out):
            out.matrix[...] = 0.0
            out.vector[...] = 2.0

    task = Lean("lean", talos)
    assert not task.constraint.vector.any()  # before the first computation: zeros
    task.compute(0.0, talos.default_configuration(), talos.zero_velocity(), talos.create_data())
    np.testing.assert_array_equal(task.constraint.vector, [2.0, 2.0])  # exact: as written


def test_after_a_failed_computation_the_constraint_says_nothing(talos, rng):
    """A fill that raises leaves no constraint behind: zeros, not the one before it."""
    task = tp.TaskCapturePointInequality("cp", talos, 0.002)
    data, q, v = talos.create_data(), talos.reference_configuration("half_sitting"), talos.zero_velocity()
    talos.compute_all_terms(data, q, v)
    task.compute(0.0, q, v, data)
    assert task.constraint.matrix.any()
    q[2] = -5.0  # the CoM under the ground: no capture point
    talos.compute_all_terms(data, q, v)
    with pytest.raises(tp.errors.InvalidParameterError, match="CoM height"):
        task.compute(0.0, q, v, data)
    assert not task.constraint.matrix.any()
