"""task.constraint is made from the task: what its last computation kept, not the rows it filled.

The rows a task fills in a formulation are the formulation's. The task keeps only a weak
reference to them (to know it is refilling the same rows), so its constraint must come from its
own terms: the same values as the rows the QP solved, and still there once the formulation is gone.
"""

import gc
import inspect
import weakref

import numpy as np
import pytest
from conftest import random_state

import tsid_py as tp
import tsid_py.contacts
import tsid_py.tasks
from tsid_py.controllers.biped import BipedController
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
def test_every_library_task_makes_its_constraint_from_its_own_terms(cls):
    assert cls._last_constraint is not TaskBase._last_constraint, cls.__name__


def test_the_list_of_library_tasks_is_the_librarys():
    names = {cls.__name__ for cls in library_task_classes()}
    assert {"TaskComEquality", "TaskSE3Equality", "TaskSelfCollision", "TaskLineHold"} <= names
    assert len(names) >= 17


def rows_by_name(hqp: tp.HqpData) -> dict[str, object]:
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

    # the formulation's rows die with it; the tasks' constraints do not
    buffer = weakref.ref(rows[tasks[0].name].constraint.matrix.base)
    del controller, form, hqp, rows, solved, matrix
    gc.collect()
    assert buffer() is None, "a task kept the formulation's rows alive"
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
