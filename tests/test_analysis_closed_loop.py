"""Closed-loop consistency: the analysis of a controller's recorded motion recovers what it applied.

The balance and CoM-sinusoid scenarios log q, v, dv, tau and the foot forces of every control step.
Fed the logged (q, v, dv), the over-time analysis must reproduce the controller's total contact
wrench exactly; with the controller's own force-distribution cost it also reproduces each foot's
wrench and the joint torques. Fed the positions alone, the differences are the finite-difference
error: the semi-implicit integrator makes the central difference of step k the mean
(dv_{k-1} + dv_k) / 2, an O(dt) error of dt/2 times the jerk (dt = 2 ms here).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from tsid_py.analysis import multi_contact_inverse_dynamics_over_time
from tsid_py.controllers.biped import BipedController
from tsid_py.scenarios import balance, com_sinusoid, step
from tsid_py.solvers.dense_qp import HESSIAN_REGULARIZATION

DT = 0.002
pytestmark = pytest.mark.slow  # every test runs the closed loops of its module fixture, or its own


@pytest.fixture(scope="module")
def recordings(talos) -> dict[str, dict[str, np.ndarray]]:
    runs = {"balance": balance.run(duration=0.4), "com-sinusoid": com_sinusoid.run(duration=1.0)}
    for result in runs.values():
        assert result.summary["qp_failures"] == 0
    return {name: result.log.arrays() for name, result in runs.items()}


@pytest.fixture(scope="module")
def controller(talos) -> BipedController:
    return BipedController(talos)


def applied_wrenches(talos, controller, log) -> tuple[np.ndarray, np.ndarray]:
    """Per-foot wrenches (T, 2, 6, foot frames) and their total in the world frame (T, 6)."""
    contacts = list(controller.contacts.values())
    data = talos.create_data()
    per_foot = np.zeros((len(log["q"]), 2, 6))
    total = np.zeros((len(log["q"]), 6))
    for k, q in enumerate(log["q"]):
        pin.framesForwardKinematics(talos.model, data, q)
        for c, contact in enumerate(contacts):
            per_foot[k, c] = contact.wrench(log[f"forces/{contact.name}"][k])
            total[k] += data.oMf[contact.frame_id].act(pin.Force(per_foot[k, c])).vector
    return per_foot, total


def controller_cost(controller) -> dict[str, np.ndarray]:
    """The controller's force-distribution cost, as the analysis' weights and guesses.

    Per foot the QP minimizes w_reg |W (w - w_ref)|^2 plus its Hessian regularization eps |f|^2 on
    the 12 corner forces f, which is eps w^T (T T^T)^-1 w for the least-norm corners of a wrench w.
    """
    contacts = list(controller.contacts.values())
    w_reg = controller.params.w_force_reg
    generator = contacts[0].force_generator
    corner_metric = np.linalg.inv(generator @ generator.T)
    assert np.max(np.abs(corner_metric - np.diag(np.diag(corner_metric)))) < 1e-12  # symmetric sole
    weights = w_reg * contacts[0].regularization_weights ** 2 + HESSIAN_REGULARIZATION * np.diag(
        corner_metric
    )
    guesses = np.stack(
        [w_reg * contacts[0].regularization_weights ** 2 / weights * c._force_reference for c in contacts]
    )
    return {"force_weight": weights[:3], "min_torque_weight": weights[3:], "guesses": guesses}


def analyze_with_controller_cost(talos, controller, log, **measured):
    """The over-time analysis of a log, unsmoothed, with the controller's cost; ``measured`` v and dv."""
    cost = controller_cost(controller)
    return multi_contact_inverse_dynamics_over_time(
        talos,
        log["q"],
        [c.frame_name for c in controller.contacts.values()],
        DT,
        smoothing_weight=0.0,
        min_torque_weight=cost["min_torque_weight"],
        force_weight=cost["force_weight"],
        wrench_guesses=np.broadcast_to(cost["guesses"], (len(log["q"]), 2, 6)),
        **measured,
    )


@pytest.mark.parametrize("scenario", ["balance", "com-sinusoid"])
def test_logged_motion_gives_back_the_applied_wrenches_and_torques(scenario, recordings, talos, controller):
    log = recordings[scenario]
    per_foot, total = applied_wrenches(talos, controller, log)
    exact = analyze_with_controller_cost(talos, controller, log, velocities=log["v"], accelerations=log["dv"])
    assert np.max(np.abs(exact.total_contact_wrench - total)) < 1e-8
    assert np.max(np.abs(exact.contact_wrenches - per_foot)) < 1e-7
    assert np.max(np.abs(exact.joint_torques - log["tau"])) < 1e-8
    assert np.max(np.abs(exact.root_residual)) < 1e-9


@pytest.mark.parametrize(
    ("scenario", "force_error", "moment_error", "torque_error"),
    # Measured: balance 1.5e-5 N, 1.7e-5 N m, 1.1e-5 N m; sway 0.32 N, 0.34 N m, 0.28 N m.
    [("balance", 1e-4, 1e-4, 1e-4), ("com-sinusoid", 0.5, 0.5, 0.5)],  # [N], [N m], [N m]
)
def test_positions_alone_match_within_the_finite_difference_error(
    scenario, force_error, moment_error, torque_error, recordings, talos, controller
):
    log = recordings[scenario]
    feet = [c.frame_name for c in controller.contacts.values()]
    _, total = applied_wrenches(talos, controller, log)
    smoothed = multi_contact_inverse_dynamics_over_time(talos, log["q"], feet, DT)
    guided = analyze_with_controller_cost(talos, controller, log)
    weight = talos.total_mass * 9.81
    for result in (smoothed, guided):
        assert np.max(np.abs(result.root_residual)) < 1e-9
        error = np.abs(result.total_contact_wrench - total)
        assert np.max(error[:, :3]) < force_error < 1e-3 * weight
        assert np.max(error[:, 3:]) < moment_error
    assert np.max(np.abs(guided.joint_torques - log["tau"])) < torque_error


@pytest.mark.slow
def test_step_recording_with_its_contact_schedule(talos, controller):
    """The step scenario lifts the right foot: the schedule switches a contact off and on again.

    In single support the contact wrench and the joint torques are unique, so with the logged
    (v, dv) they come back exactly; from the positions alone the error peaks at touch-down, where
    dv jumps (measured: 0.31 N, 0.14 N m, torques 0.05 N m in single support).
    """
    log = step.run().log.arrays()
    schedule = np.stack([log["in_contact/right"], log["in_contact/left"]], axis=1)
    assert schedule.sum(axis=1).min() == 1  # the right foot was really lifted
    single = schedule.sum(axis=1) == 1
    feet = [controller.contacts[side].frame_name for side in ("right", "left")]
    _, total = applied_wrenches(talos, controller, log)
    exact = multi_contact_inverse_dynamics_over_time(
        talos, log["q"], feet, DT, smoothing_weight=0.0, min_torque_weight=1.0,
        contact_schedule=schedule, velocities=log["v"], accelerations=log["dv"],
    )  # fmt: skip
    assert np.max(np.abs(exact.total_contact_wrench - total)) < 1e-8
    assert np.max(np.abs(exact.joint_torques - log["tau"])[single]) < 1e-8
    assert np.max(np.abs(exact.root_residual)) < 1e-9
    from_positions = multi_contact_inverse_dynamics_over_time(
        talos, log["q"], feet, DT, contact_schedule=schedule
    )
    error = np.abs(from_positions.total_contact_wrench - total)
    assert np.max(error[:, :3]) < 1.0 and np.max(error[:, 3:]) < 0.5  # [N] (m g = 886 N), [N m]
    assert np.max(np.abs(from_positions.joint_torques - log["tau"])[single]) < 0.2  # [N m]
