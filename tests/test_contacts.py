"""Contacts: force generator, friction pyramid, parameter validation."""

import numpy as np
import pinocchio as pin
import pytest

import tsid_py as tsid


def foot(robot, **kwargs):
    params = {"mu": 0.3, "f_min": 5.0, "f_max": 1000.0, **kwargs}
    return tsid.Contact6d(
        "rf", robot, "leg_right_sole_fix_joint", robot.spec.sole.corners(), [0, 0, 1], **params
    )


def test_force_generator_sums_forces_and_moments(talos, rng):
    contact = foot(talos)
    forces = rng.standard_normal(12)
    points = talos.spec.sole.corners()
    per_corner = forces.reshape(4, 3)
    expected_moment = sum(np.cross(points[:, i], per_corner[i]) for i in range(4))
    wrench = contact.wrench(forces)
    np.testing.assert_allclose(wrench[:3], per_corner.sum(axis=0), atol=1e-12)
    np.testing.assert_allclose(wrench[3:], expected_moment, atol=1e-12)


def test_friction_pyramid_accepts_inside_and_rejects_outside(talos):
    contact = foot(talos)
    inside = np.tile([0.2, -0.2, 1.0], 4) * 10  # |f_t,i| = 0.2 f_n < 0.3 f_n on each axis
    outside = np.tile([0.4, 0.0, 1.0], 4) * 10
    c = contact.force_constraint
    assert c.check(inside)
    assert not c.check(outside)
    assert contact.get_normal_force(inside) == pytest.approx(40.0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mu": 0.0}, "mu must be > 0"),
        ({"f_min": 10.0, "f_max": 5.0}, "f_min must be <= f_max"),
        ({"f_min": -1.0}, "f_min"),
    ],
)
def test_bad_contact_parameters(talos, kwargs, message):
    with pytest.raises(tsid.errors.InvalidParameterError, match=message):
        foot(talos, **kwargs)


def test_contact_points_must_be_3x4(talos):
    with pytest.raises(tsid.errors.DimensionError, match="3x4"):
        tsid.Contact6d("rf", talos, "leg_right_sole_fix_joint", np.zeros((3, 3)), [0, 0, 1], 0.3, 5, 100)


def test_contact_normal_is_normalized_and_must_have_a_direction(solo12):
    contact = tsid.ContactPoint("fl", solo12, "FL_FOOT", [0, 0, 2], 0.5, 1.0, 100.0)
    np.testing.assert_allclose(contact.contact_normal, [0.0, 0.0, 1.0], rtol=0, atol=1e-15)  # n / |n|
    with pytest.raises(tsid.errors.InvalidParameterError, match="contact_normal must be a non-zero 3-vector"):
        contact.set_contact_normal([0.0, 0.0, 1e-12])
    with pytest.raises(tsid.errors.InvalidParameterError, match="contact_normal must be a non-zero 3-vector"):
        tsid.ContactPoint("fr", solo12, "FR_FOOT", [0, 0, 0], 0.5, 1.0, 100.0)


def test_point_contact_has_three_forces(solo12):
    contact = tsid.ContactPoint("fl", solo12, "FL_FOOT", [0, 0, 1], 0.5, 1.0, 100.0)
    assert contact.n_force == 3 and contact.motion_constraint.rows == 3
    np.testing.assert_allclose(contact.force_generator, np.eye(3))


def test_the_normal_force_setters_set_their_own_bound_and_the_solution_keeps_it(talos):
    """set_min/max_normal_force each change their bound, read back and in the force constraint's
    last row; standing Talos with one foot capped at 200 N puts the rest of its weight on the other."""
    from tsid_py.controllers import BipedController

    contact = foot(talos)
    contact.set_max_normal_force(700.0)
    contact.set_min_normal_force(20.0)
    assert (contact.min_normal_force, contact.max_normal_force) == pytest.approx((20.0, 700.0))
    row = contact.force_constraint
    assert (row.lower_bound[-1], row.upper_bound[-1]) == pytest.approx((20.0, 700.0))
    contact.set_min_normal_force(0.0)  # a contact that may unload fully, as the constructor allows
    assert contact.force_constraint.lower_bound[-1] == 0.0  # exact: the value set
    with pytest.raises(tsid.errors.InvalidParameterError, match="f_min"):
        contact.set_min_normal_force(-1.0)
    contact.set_min_normal_force(20.0)

    biped = BipedController(talos)
    left = biped.contacts["left"]
    out = biped.compute(0.0, biped.q0, talos.zero_velocity())
    assert left.get_normal_force(out.forces[left.name]) > 300.0  # half of ~870 N
    left.set_max_normal_force(200.0)
    out = biped.compute(0.0, biped.q0, talos.zero_velocity())
    right = biped.contacts["right"]
    weight = talos.total_mass * 9.81
    assert left.get_normal_force(out.forces[left.name]) <= 200.0 + 1e-6
    assert left.get_normal_force(out.forces[left.name]) + right.get_normal_force(
        out.forces[right.name]
    ) == pytest.approx(weight, rel=0.05)


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        (lambda M: setattr(M, "translation", np.array([np.nan, 0.0, 0.0])), "NonFiniteError", "NaN"),
        (lambda M: setattr(M, "rotation", 3.0 * M.rotation), "DimensionError", "rotation matrix"),
    ],
    ids=["nan-translation", "scaled-rotation"],
)
def test_a_placement_reference_is_checked_as_a_sample_is(talos, change, error, message):
    """An SE3 reference is checked like the 12-vector of an SE3 sample: finite, a rotation."""
    contact = foot(talos)
    placement = pin.SE3(pin.rpy.rpyToMatrix(0.1, -0.2, 0.3), np.array([0.1, -0.1, 0.0]))
    contact.set_reference(placement)
    bad = pin.SE3(placement)
    change(bad)
    for target in (contact, tsid.TrajectorySE3Constant("foot")):
        with pytest.raises(getattr(tsid.errors, error), match=message):
            target.set_reference(bad)
    with pytest.raises(getattr(tsid.errors, error), match=message):
        contact.set_reference(tsid.TrajectorySample.from_se3(bad))
    assert contact.reference.isApprox(placement, 1e-12)  # the last good one is kept
