"""The physics checks a closed loop keeps across steps (SolutionChecker) are those computed from
scratch: the same numbers, the same violations, after contacts and their parameters change."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import tsid_py as tsid
from tsid_py.controllers import BipedController, QuadrupedController
from tsid_py.physics import FRICTION_RATIO_MIN_NORMAL_FORCE, SolutionCheck, SolutionChecker

DT = 0.002
FIELDS = (
    "dynamics_residual",
    "min_normal_force",
    "max_friction_ratio",
    "max_pyramid_violation",
    "max_normal_bound_violation",
    "max_torque_ratio",
)


def _from_scratch(robot, q, v, dv, tau, contacts, tau_max) -> SolutionCheck:
    """The checks written out with nothing kept: Pinocchio's placements and RNEA, each contact's
    force constraint as it is now."""
    data = robot.create_data()
    pin.forwardKinematics(robot.model, data, q)
    fext = robot.zero_external_forces()
    normal, friction, pyramid, bounds = [np.inf], [0.0], [0.0], [0.0]
    for contact, forces in contacts.values():
        wrench = contact.wrench(forces)
        if wrench.shape[0] == 3:  # a force at the frame's origin, in the axes of force_rotation
            world = contact.force_rotation(data) @ wrench
            rotation = pin.updateFramePlacement(robot.model, data, contact.frame_id).rotation
            wrench = np.concatenate([rotation.T @ world, np.zeros(3)])
        frame = robot.model.frames[contact.frame_id]
        fext[frame.parentJoint] += frame.placement.act(pin.Force(wrench))
        points, n = contact.point_forces(forces), contact.contact_normal
        f_n = points @ n
        f_t = np.linalg.norm(points - np.outer(f_n, n), axis=1)
        loaded = f_n > FRICTION_RATIO_MIN_NORMAL_FORCE
        friction.append(float((f_t[loaded] / (contact.mu * f_n[loaded])).max()) if loaded.any() else 0.0)
        pyramid.append(max(float((contact.force_constraint.matrix[:-1] @ forces).max()), 0.0))
        normal.append(float(f_n.sum()))
        bounds.append(max(contact.min_normal_force - normal[-1], normal[-1] - contact.max_normal_force, 0.0))
    residual = pin.rnea(robot.model, data, q, v, dv, fext).copy()
    residual[robot.nv - robot.na :] -= tau
    scale = max(1.0, float(np.abs(pin.nonLinearEffects(robot.model, data, q, v)).max()))
    return SolutionCheck(
        float(np.abs(residual).max()) / scale,
        min(normal),
        max(friction),
        max(pyramid),
        max(bounds),
        float((np.abs(tau) / tau_max).max()),
    )


def _assert_same(check: SolutionCheck, expected: SolutionCheck) -> None:
    for name in FIELDS:
        assert getattr(check, name) == pytest.approx(getattr(expected, name), rel=1e-12, abs=1e-12), name


def _steps(controller, steps: int):
    """(q, v, out, contacts) of a few steps of the controller on the integrator."""
    robot, q, v = controller.robot, controller.q0, controller.robot.zero_velocity()
    for i in range(steps):
        out = controller.compute(i * DT, q, v)
        active = controller.formulation.contacts
        yield q, v, out, {name: (active[name], f) for name, f in out.forces.items()}
        q, v = tsid.integrate(robot, q, v, out.dv, DT)


def test_a_kept_checker_flags_what_checks_from_scratch_flag(talos):
    """Steps of a biped, then the same solutions made wrong: a torque off (the residual), the
    forces pushed out of the pyramid after mu changed (the cached rows are taken again), a contact
    gone from one step to the next (no force of it left on its joint)."""
    controller = BipedController(talos)
    tau_max = controller.tau_max
    checker = SolutionChecker(talos, tau_max)
    for q, v, out, contacts in _steps(controller, 3):
        _assert_same(
            checker.check(q, v, out.dv, out.tau, contacts),
            _from_scratch(talos, q, v, out.dv, out.tau, contacts, tau_max),
        )
    wrong_tau = out.tau.copy()
    wrong_tau[3] += 5.0
    check = checker.check(q, v, out.dv, wrong_tau, contacts)
    assert check.dynamics_residual > 1e-3
    _assert_same(check, _from_scratch(talos, q, v, out.dv, wrong_tau, contacts, tau_max))
    name, (contact, forces) = next(iter(contacts.items()))
    contact.set_friction_coefficient(0.01)  # the same forces now leave the narrower pyramid
    sliding = forces.copy()
    sliding[0::3] += 20.0  # 20 N along x at each corner
    changed = {**contacts, name: (contact, sliding)}
    check = checker.check(q, v, out.dv, out.tau, changed)
    assert check.max_pyramid_violation > 1.0 and check.max_friction_ratio > 1.0
    _assert_same(check, _from_scratch(talos, q, v, out.dv, out.tau, changed, tau_max))
    one_foot = dict(list(contacts.items())[1:])
    _assert_same(
        checker.check(q, v, out.dv, out.tau, one_foot),
        _from_scratch(talos, q, v, out.dv, out.tau, one_foot, tau_max),
    )


def test_a_kept_checker_of_point_feet(solo12):
    """Point contacts: 3-D forces rotated with the feet's placements at q."""
    controller = QuadrupedController(solo12)
    tau_max = controller.tau_max
    checker = SolutionChecker(solo12, tau_max)
    for q, v, out, contacts in _steps(controller, 2):
        assert all(c.wrench(f).shape == (3,) for c, f in contacts.values())
        _assert_same(
            checker.check(q, v, out.dv, out.tau, contacts),
            _from_scratch(solo12, q, v, out.dv, out.tau, contacts, tau_max),
        )


def test_a_kept_checker_follows_a_contact_whose_normal_points_and_force_bounds_change(talos):
    """Each setter that changes a contact's rows (the normal, the points, f_min and f_max) between
    two checks: the kept checker gives the checks from scratch of the contact as it is now."""
    controller = BipedController(talos)
    tau_max = controller.tau_max
    checker = SolutionChecker(talos, tau_max)
    q, v, out, contacts = next(iter(_steps(controller, 1)))
    name, (contact, forces) = next(iter(contacts.items()))
    changes = (
        lambda: contact.set_contact_normal(np.array([0.0, 0.2, 1.0]) / np.linalg.norm([0.0, 0.2, 1.0])),
        lambda: contact.set_contact_points(0.5 * contact.contact_points),
        lambda: contact.set_max_normal_force(200.0),  # below the foot's load: the bound is violated
        lambda: contact.set_min_normal_force(150.0),
    )
    for change in changes:
        checker.check(q, v, out.dv, out.tau, contacts)  # kept as the contact was
        change()
        _assert_same(
            checker.check(q, v, out.dv, out.tau, contacts),
            _from_scratch(talos, q, v, out.dv, out.tau, contacts, tau_max),
        )
    assert checker.check(q, v, out.dv, out.tau, contacts).max_normal_bound_violation > 100.0
