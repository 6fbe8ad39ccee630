"""TaskCopEquality: its matrix against known centres of pressure, and in a formulation as a force task."""

import numpy as np
import pytest
from conftest import feet_to_wrench_contacts, random_state

import tsid_py as tsid
from tsid_py.contacts.pressure import contacts_center_of_pressure as center_of_pressure
from tsid_py.controllers import BipedController
from tsid_py.physics import check_solution


def contacts_with_offsets(controller):
    return [(c, 12 * k) for k, c in enumerate(controller.contacts.values())]


def test_equal_vertical_corner_forces_put_the_cop_at_the_centroid(talos):
    controller = BipedController(talos)
    task = tsid.TaskCopEquality("cop", talos)
    task.set_contacts(contacts_with_offsets(controller))
    forces = np.zeros(24)
    corners = []
    for k, contact in enumerate(controller.contacts.values()):
        placement = controller.data.oMf[contact.frame_id]
        for j in range(4):
            forces[12 * k + 3 * j : 12 * k + 3 * j + 3] = placement.rotation.T @ [0.0, 0.0, 100.0]
            corners.append(placement.act(contact.contact_points[:, j]))
    centroid = np.mean(corners, axis=0)
    reference = np.array([0.01, -0.02, 0.0])
    task.set_reference(reference)
    A = task.compute(0.0, controller.q0, talos.zero_velocity(), controller.data).matrix
    assert A.shape == (3, 24)
    np.testing.assert_allclose(A @ forces, 800.0 * (centroid - reference), atol=1e-9)
    task.set_reference(centroid)
    np.testing.assert_allclose(
        task.compute(0.0, controller.q0, talos.zero_velocity(), controller.data).matrix @ forces,
        0.0,
        atol=1e-9,
    )
    np.testing.assert_allclose(
        center_of_pressure(
            [(c, forces[k : k + 12]) for c, k in contacts_with_offsets(controller)], controller.data
        ),
        centroid,
        atol=1e-12,
    )


def test_cop_task_moves_the_centre_of_pressure_of_the_solution(talos):
    controller = BipedController(talos)
    form = controller.formulation
    q, v = controller.q0, talos.zero_velocity()

    def solve_and_cop():
        sol = controller.solver.solve(form.compute_problem_data(0.0, q, v))
        assert sol.ok
        forces = {n: form.get_contact_force(n, sol) for n in form.contacts}
        contacts = {n: (form.contacts[n], f) for n, f in forces.items()}
        check = check_solution(
            talos,
            q,
            v,
            form.get_accelerations(sol),
            form.get_actuator_forces(sol),
            contacts,
            controller.tau_max,
        )
        assert check.dynamics_residual < 1e-8 and check.max_pyramid_violation < 1e-6
        return center_of_pressure(contacts.values(), controller.data)

    free = solve_and_cop()
    target = np.array([free[0] + 0.01, free[1] + 0.03, 0.0])
    task = tsid.TaskCopEquality("task-cop", talos)
    task.set_reference(target)
    form.add_force_task(task, weight=1.0, priority=1)
    assert "task-cop" in form.tasks
    moved = solve_and_cop()
    np.testing.assert_allclose(moved[:2], target[:2], atol=1e-4)
    assert np.linalg.norm(free[:2] - target[:2]) > 0.03


def test_cop_task_follows_the_contacts_that_come_and_go(talos):
    controller = BipedController(talos)
    form = controller.formulation
    task = tsid.TaskCopEquality("task-cop", talos)
    form.add_force_task(task, weight=1e-3, priority=1, transition_duration=0.1)
    q, v = controller.q0, talos.zero_velocity()
    form.compute_problem_data(0.0, q, v)
    assert task.constraint.matrix.shape == (3, 24)
    form.remove_rigid_contact("contact_rfoot")
    hqp = form.compute_problem_data(0.05, q, v)
    assert task.constraint.matrix.shape == (3, 12)
    (weight,) = [w for level in hqp for w, c in level if c.name == "task-cop"]
    assert weight == pytest.approx(0.5e-3)


def test_cop_rows_vanish_at_the_centre_of_pressure_of_any_forces_on_tilted_feet(talos, rng):
    """A f = (p - p_ref) sum_j n . f_j for random feet placements and forces, p from center_of_pressure."""
    controller = BipedController(talos)
    q, v = random_state(talos, rng)
    talos.compute_all_terms(controller.data, q, v)
    contacts = contacts_with_offsets(controller)
    task = tsid.TaskCopEquality("cop", talos)
    task.set_contacts(contacts)
    forces = rng.standard_normal(24) + np.tile([0.0, 0.0, 50.0], 8)  # mostly along each foot's normal
    world_normal = sum(
        (controller.data.oMf[c.frame_id].rotation @ forces[k : k + 12].reshape(4, 3).T)[2].sum()
        for c, k in contacts
    )
    cop = center_of_pressure([(c, forces[k : k + 12]) for c, k in contacts], controller.data)
    task.set_reference(cop)
    np.testing.assert_allclose(task.compute(0.0, q, v, controller.data).matrix @ forces, 0.0, atol=1e-9)
    reference = cop + rng.standard_normal(3)
    task.set_reference(reference)
    A = task.compute(0.0, q, v, controller.data).matrix
    np.testing.assert_allclose(A @ forces, (cop - reference) * world_normal, rtol=1e-12, atol=1e-9)


def test_cop_rows_of_wrench_contacts_vanish_at_their_centre_of_pressure_on_tilted_feet(talos, rng):
    """A y = (p - p_ref) sum_j n . f_j for wrench variables y, f_j the least-norm corner forces of
    the wrenches and p from center_of_pressure, as for point forces."""
    controller = BipedController(talos)
    feet_to_wrench_contacts(controller)
    contacts = [(c, 6 * k) for k, c in enumerate(controller.formulation.contacts.values())]
    q, v = random_state(talos, rng)
    talos.compute_all_terms(controller.data, q, v)
    task = tsid.TaskCopEquality("cop", talos)
    task.set_contacts(contacts)
    forces = rng.standard_normal(12) + np.tile([0.0, 0.0, 300.0, 0.0, 0.0, 0.0], 2)
    cop = center_of_pressure([(c, forces[k : k + 6]) for c, k in contacts], controller.data)
    world_normal = sum(c.world_forces(controller.data, forces[k : k + 6])[:, 2].sum() for c, k in contacts)
    reference = cop + rng.standard_normal(3)
    task.set_reference(reference)
    A = task.compute(0.0, q, v, controller.data).matrix
    assert A.shape == (3, 12)
    np.testing.assert_allclose(A @ forces, (cop - reference) * world_normal, rtol=1e-12, atol=1e-9)


def test_cop_task_moves_the_centre_of_pressure_of_wrench_feet(talos):
    """With ContactWrench feet the task puts the CoP of the solved wrenches, c + n x tau_c / (n . f)
    on each sole (ContactWrench.center_of_pressure), on the reference."""
    controller = BipedController(talos)
    feet_to_wrench_contacts(controller)
    form = controller.formulation
    q, v = controller.q0, talos.zero_velocity()

    def solve_and_cop():
        sol = controller.solver.solve(form.compute_problem_data(0.0, q, v))
        assert sol.ok
        weighted, total = np.zeros(3), 0.0
        for name, contact in form.contacts.items():
            force = form.get_contact_force(name, sol)
            sole = talos.frame_placement(form.data, contact.frame_id)
            x, y = contact.center_of_pressure(force)
            normal_force = sole.rotation[2].dot(contact.wrench(force)[:3])
            weighted += normal_force * sole.act(np.array([x, y, contact.contact_points[2, 0]]))
            total += normal_force
        return weighted / total

    free = solve_and_cop()
    target = np.array([free[0] + 0.01, free[1] + 0.03, 0.0])
    task = tsid.TaskCopEquality("task-cop", talos)
    task.set_reference(target)
    form.add_force_task(task, weight=1.0, priority=1)
    moved = solve_and_cop()
    np.testing.assert_allclose(moved[:2], target[:2], atol=1e-5)
    assert np.linalg.norm(free[:2] - target[:2]) > 0.03
