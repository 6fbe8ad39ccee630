"""One revision of what a problem is made of, one step id per problem.

A change of the problem's constant parts (a weight, a contact's parameter, a task's rows) moves
the structure's revision and reaches the next problem; a contact of one's own with a parameter of
its own needs no counter for it; per-step values (gains, references, a step) leave the revision.
"""

import numpy as np
import pytest
from conftest import arm_with_posture

import tsid_py as tsid
from tsid_py.contacts.contact_base import friction_pyramid
from tsid_py.controllers import QuadrupedController
from tsid_py.physics import SolutionChecker
from tsid_py.solvers.dense_qp import dense_qp


class GrippyPoint(tsid.ContactPoint):
    """A point contact of one's own: its friction pyramid is that of ``grip`` times mu and, with
    ``max_shear`` [N] set, two more rows bound |f_x| and |f_y| (before the last row, the total
    normal force). Plain attributes, read where the rows are written: no counter anywhere."""

    def __init__(self, *args, grip=1.0, max_shear=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.grip = grip
        self.max_shear = max_shear

    @property
    def force_constraint(self):
        pyramid = friction_pyramid(self.contact_normal, self.grip * self.mu, 1)
        rows, lower, upper = [pyramid[:-1]], [np.full(4, -np.inf)], [np.zeros(4)]
        if self.max_shear is not None:
            rows.append(np.eye(3)[:2])
            lower.append(np.full(2, -self.max_shear))
            upper.append(np.full(2, self.max_shear))
        rows.append(pyramid[-1:])
        lower.append([self.min_normal_force])
        upper.append([self.max_normal_force])
        return tsid.constraints.ConstraintInequality(
            self.name, np.vstack(rows), np.hstack(lower), np.hstack(upper)
        )

    @property
    def force_inequality_rows(self):
        return 5 if self.max_shear is None else 7

    def write_force_constraints(self, inequality, regularization):
        mine, cost = self.force_constraint, self.force_regularization
        inequality.matrix[...], inequality.lower_bound[...] = mine.matrix, mine.lower_bound
        inequality.upper_bound[...] = mine.upper_bound
        regularization.matrix[...], regularization.vector[...] = cost.matrix, cost.vector


def with_a_grippy_foot(robot, **options):
    """Solo12 standing, its first foot a GrippyPoint of the same parameters and reference."""
    controller = QuadrupedController(robot)
    form = controller.formulation
    foot = next(iter(form.contacts.values()))
    toy = GrippyPoint(
        foot.name,
        robot,
        foot.frame_name,
        foot.contact_normal,
        foot.mu,
        foot.min_normal_force,
        foot.max_normal_force,
        **options,
    )
    toy.kp = foot.kp
    toy.use_local_frame(False)
    toy.set_reference(foot.reference)
    form.remove_rigid_contact(foot.name)
    form.add_rigid_contact(toy, force_reg_weight=controller.params.w_force_reg)
    return controller, toy


def force_rows(hqp, name):
    """A contact's force inequality in a problem, and its matrix on the contact's columns."""
    (entry,) = [e for e in hqp[0] if e.constraint.name == f"{name}_force_constraint"]
    return entry.constraint, entry.constraint.matrix[:, entry.columns]


def assert_same_qp(a, b):
    """Two problems give the same dense QP, to rounding."""
    qa, qb = dense_qp(a), dense_qp(b)
    np.testing.assert_allclose(qa.H, qb.H, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(qa.g, qb.g, rtol=1e-12, atol=1e-12)
    for name in ("A_eq", "b_eq", "A_in", "lb", "ub"):
        np.testing.assert_allclose(
            getattr(qa.constraints, name), getattr(qb.constraints, name), rtol=1e-12, atol=1e-12
        )


@pytest.mark.slow
def test_a_parameter_of_ones_own_contact_reaches_the_next_problem(solo12):
    """The grip set after a step: the next problem's rows are those of the new grip, in place;
    the shear bound set: two more rows, in a new layout. Each time the problem is the one of a
    contact built with those parameters from the start."""
    controller, toy = with_a_grippy_foot(solo12)
    form, solver = controller.formulation, controller.solver
    q, v = controller.q0, solo12.zero_velocity()
    first = form.compute_problem_data(0.0, q, v)
    assert solver.solve(first).ok
    pyramid = friction_pyramid(toy.contact_normal, toy.mu, 1)
    np.testing.assert_array_equal(force_rows(first, toy.name)[1], pyramid)  # exact: the rows written

    toy.grip = 0.5
    second = form.compute_problem_data(0.002, q, v)
    assert second.id.layout == first.id.layout  # the same rows: copied in place
    expected = friction_pyramid(toy.contact_normal, 0.5 * toy.mu, 1)
    np.testing.assert_array_equal(force_rows(second, toy.name)[1], expected)  # exact: the rows written
    assert solver.solve(second).ok
    reference, _ = with_a_grippy_foot(solo12, grip=0.5)
    assert_same_qp(second, reference.formulation.compute_problem_data(0.002, q, v))
    with pytest.raises(tsid.errors.StaleProblemError):
        _ = first.levels

    toy.max_shear = 2.0
    third = form.compute_problem_data(0.004, q, v)
    assert third.id.layout != second.id.layout and third.id.layout.variables == second.id.layout.variables
    rows, matrix = force_rows(third, toy.name)
    assert rows.rows == 7
    np.testing.assert_array_equal(matrix[4:6], np.eye(3)[:2])  # exact: the shear rows
    np.testing.assert_array_equal(rows.upper_bound[4:6], [2.0, 2.0])  # exact: as set
    sol = solver.solve(third)
    assert sol.ok
    assert np.abs(form.get_contact_force(toy.name, sol)[:2]).max() <= 2.0 + 1e-6
    reference, _ = with_a_grippy_foot(solo12, grip=0.5, max_shear=2.0)
    assert_same_qp(third, reference.formulation.compute_problem_data(0.004, q, v))


def test_a_kept_checker_follows_a_parameter_of_ones_own_contact(solo12):
    """The physics checker keeps the contacts' pyramid rows: the grip set reaches its next check.
    A force at 0.8 mu is inside the pyramid of grip 1, 0.3 mu f_z outside that of grip 0.5."""
    controller, toy = with_a_grippy_foot(solo12)
    q, v = controller.q0, solo12.zero_velocity()
    checker = SolutionChecker(solo12)
    f_z = 10.0
    sliding = {toy.name: (toy, np.array([0.8 * toy.mu * f_z, 0.0, f_z]))}
    dv, tau = np.zeros(solo12.nv), np.zeros(solo12.na)
    assert checker.check(q, v, dv, tau, sliding).max_pyramid_violation == 0.0  # exact: none, clipped at 0
    toy.grip = 0.5
    violation = checker.check(q, v, dv, tau, sliding).max_pyramid_violation
    assert violation == pytest.approx(0.3 * toy.mu * f_z, rel=1e-12)


def test_the_revision_moves_with_what_the_problem_is_made_of(solo12):
    """Weights, contact parameters and a task's rows move it; gains, references and steps do not
    (the workspace copies nothing for them); a contact out of the problem no longer moves it."""
    controller, toy = with_a_grippy_foot(solo12)
    form, com = controller.formulation, controller.com_task
    structure = form._structure
    q, v = controller.q0, solo12.zero_velocity()
    form.compute_problem_data(0.0, q, v)

    def moves(change):
        before = structure.revision
        change()
        return structure.revision != before

    assert not moves(lambda: form.compute_problem_data(0.002, q, v))
    assert not moves(lambda: setattr(com, "kp", 20.0))  # read at every step
    assert not moves(lambda: setattr(toy, "kp", 5.0))  # its motion task's gains
    assert not moves(lambda: toy.set_reference(toy.reference))
    assert not moves(lambda: com.set_reference(tsid.TrajectorySample(np.zeros(3))))
    assert moves(lambda: setattr(com, "mask", [1.0, 1.0, 0.0]))  # one row fewer
    assert not moves(lambda: setattr(com, "mask", [1.0, 0.0, 1.0]))  # as many rows: refilled each step
    assert moves(lambda: setattr(toy, "grip", 0.8))
    assert moves(lambda: toy.set_friction_coefficient(0.4))
    assert moves(lambda: form.update_task_weight(com.name, 2.0))
    assert moves(lambda: form.update_rigid_contact_weights(toy.name, force_reg_weight=1e-4))
    assert moves(lambda: form.remove_rigid_contact(toy.name))
    assert not moves(lambda: setattr(toy, "grip", 0.3))  # no longer in the problem


def test_a_solution_is_read_by_the_formulation_that_solved_it(solo12):
    """Step ids are unique in the process: two formulations of the same layout at their first
    step do not read each other's solutions."""
    a, b = QuadrupedController(solo12), QuadrupedController(solo12)
    q, v = a.q0, solo12.zero_velocity()
    sol_a = a.solver.solve(a.formulation.compute_problem_data(0.0, q, v))
    sol_b = b.solver.solve(b.formulation.compute_problem_data(0.0, q, v))
    assert sol_a.problem_id.step != sol_b.problem_id.step
    for read in (a.formulation.get_actuator_forces, a.formulation.get_accelerations):
        with pytest.raises(tsid.errors.SolverFailedError, match="before a contact was added or removed"):
            read(sol_b)
    tau_a, tau_b = a.formulation.get_actuator_forces(sol_a), b.formulation.get_actuator_forces(sol_b)
    np.testing.assert_array_equal(tau_a, tau_b)  # exact: the same problem, solved the same way


class FirstJoints(tsid.tasks.TaskMotion):
    """A task of one's own: ddq of the first ``n`` joints to zero; ``n`` a plain attribute."""

    def __init__(self, name, robot, n):
        super().__init__(name, robot)
        self.n = n

    @property
    def dim(self):
        return self.n

    def fill(self, t, q, v, data, out):
        out.matrix[...] = np.eye(self.n, self.robot.nv)
        out.vector[...] = 0.0


def test_a_task_of_ones_own_whose_rows_change_with_an_attribute(ur5):
    """Setting ``n`` changes dim: the task tells the formulation, which lays its rows out anew."""
    form, q, v = arm_with_posture(ur5)
    task = FirstJoints("first-joints", ur5, 2)
    form.add_motion_task(task, weight=1.0, priority=1)
    first = form.compute_problem_data(0.0, q, v)
    task.n = 4
    second = form.compute_problem_data(0.002, q, v)
    assert second.id.layout.rows[1] == first.id.layout.rows[1] + 2
    (rows,) = [c for _, c in second[1] if c.name == "first-joints"]
    np.testing.assert_array_equal(rows.matrix, np.eye(4, ur5.nv))  # exact: the rows it wrote
    with pytest.raises(tsid.errors.StaleProblemError):
        _ = first.levels
