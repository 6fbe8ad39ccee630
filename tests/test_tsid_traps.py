"""What a TSID user writes by habit either does what TSID does, or fails with an error naming the fix.

Each test is one of the traps met porting TSID scripts name by name: a misspelt gain that used to
create a new attribute, TrajectorySample(n), 3-D point-contact gains, joint versus frame ids,
gravity, rotor inertias and gear ratios, 1e10 bounds, np.matrix inputs. Where TSID has the
feature, its answer (the oracle) is the expected value.
"""

import numpy as np
import pinocchio as pin
import pytest
from conftest import random_state

import tsid_py as tp
from tsid_py.constraints import ConstraintBound, ConstraintEquality, ConstraintInequality
from tsid_py.robot_specs import example_robot_data_dir


def oracle():
    return pytest.importorskip("tsid", reason="the C++ TSID oracle is not installed (make oracle)")


def oracle_robot(tsid, path: str, floating: bool = True):
    root = example_robot_data_dir()
    joint = [pin.JointModelFreeFlyer()] if floating else []
    return tsid.RobotWrapper(str(root / path), [str(root)], *joint, False)


SOLE = np.array([[0.1, 0.1, -0.1, -0.1], [0.05, -0.05, 0.05, -0.05], [-0.107] * 4])


# ------------------------------------------------------------ sealed attributes
def test_a_misspelt_gain_is_an_error_and_the_right_one_works(talos):
    task = tp.TaskComEquality("com", talos)
    with pytest.raises(tp.errors.UnknownAttributeError, match="did you mean 'kp'"):
        task.Kp = 100.0
    task.kp = 100.0
    assert np.array_equal(task.kp, np.full(3, 100.0))  # exact: as set
    with pytest.raises(AttributeError):  # also an AttributeError, as Python code expects
        task.Kd = 20.0


@pytest.mark.parametrize(
    "build",
    [
        lambda r: tp.TaskAMEquality("am", r),
        lambda r: tp.TaskJointPosture("posture", r),
        lambda r: tp.TaskSE3Equality("hand", r, "gripper_left_joint"),
        lambda r: tp.Contact6d("foot", r, "leg_left_6_joint", SOLE, [0, 0, 1], 0.3, 1.0, 1e3),
        lambda r: tp.TrajectoryEuclidianConstant("ref", np.zeros(3)),
        lambda r: tp.SolverHQuadProg("solver"),
        lambda r: tp.InverseDynamicsFormulation("tsid", r),
        lambda r: r,
    ],
    ids=["am", "posture", "se3", "contact6d", "trajectory", "solver", "formulation", "robot"],
)
def test_every_public_object_refuses_unknown_attributes(talos, build):
    thing = build(talos)
    with pytest.raises(tp.errors.UnknownAttributeError):
        thing.Kd = 1.0
    with pytest.raises(tp.errors.UnknownAttributeError):
        thing.some_new_name = 1.0


def test_a_users_subclass_keeps_attributes_of_its_own_and_still_catches_a_misspelt_gain(talos):
    class Leaning(tp.TaskComEquality):  # defined outside tsid_py: a user's class
        def set_lean(self, lean: float) -> None:
            self.lean = lean  # an attribute of its own, first set after construction

    task = Leaning("com", talos)
    task.set_lean(0.1)
    task.note = "mine"
    assert task.lean == 0.1 and task.note == "mine"  # exact: as set
    with pytest.raises(tp.errors.UnknownAttributeError, match="did you mean 'kp'"):
        task.Kp = 100.0  # the library's gain but for case: the typo sealing is for
    with pytest.raises(tp.errors.UnknownAttributeError):
        task.set_reference_ = 1.0  # a public name but for underscores


def test_a_gain_handed_out_cannot_be_written_in_place(talos):
    """task.kp[0] = 99 on a copy would change nothing: the copies handed out are read-only."""
    task = tp.TaskJointPosture("posture", talos)
    contact = tp.Contact6d("foot", talos, "leg_left_6_joint", SOLE, [0, 0, 1], 0.3, 1.0, 1e3)
    am = tp.TaskAMEquality("am", talos)
    for owner, name in (
        (task, "kp"),
        (task, "kd"),
        (task, "mask"),
        (contact, "kp"),
        (contact, "kd"),
        (am, "kp"),
    ):
        with pytest.raises(ValueError, match="read-only"):
            getattr(owner, name)[0] = 99.0
    gains = task.kp.copy()
    gains[0] = 99.0
    task.kp = gains  # the way: set the whole
    assert task.kp[0] == 99.0 and contact.kp.shape == (6,)  # exact: as set


def test_angular_momentum_task_has_no_kd_to_ignore(talos):
    """TSID's TaskAMEquality stores a Kd it never uses; here there is none to set."""
    task = tp.TaskAMEquality("am", talos)
    with pytest.raises(tp.errors.UnknownAttributeError):
        task.kd = np.ones(3)


# ------------------------------------------------------------------ samples
def test_trajectory_sample_of_an_integer_is_refused_and_zeros_gives_tsids_meaning():
    with pytest.raises(tp.errors.InvalidParameterError, match=r"TrajectorySample.zeros\(3\)|zeros\(n\)"):
        tp.TrajectorySample(3)
    sample = tp.TrajectorySample.zeros(12, 6)
    assert sample.pos.shape == (12,) and sample.vel.shape == (6,) and not sample.acc.any()
    assert np.array_equal(tp.TrajectorySample([3.0]).pos, [3.0])  # exact: as set


def test_trajectories_say_when_they_end_and_a_constant_placement_can_be_set_later():
    jerk = tp.TrajectoryEuclidianMinJerk("jerk", np.zeros(2), np.ones(2), t0=1.0, duration=2.0)
    assert not jerk.has_ended(2.9) and jerk.has_ended(3.0)
    assert tp.TrajectoryEuclidianConstant("c", np.zeros(2)).has_ended(0.0)
    assert not tp.TrajectoryEuclidianSinusoid("s", np.zeros(1), 1.0, 1.0).has_ended(1e6)
    placement = tp.TrajectorySE3Constant("foot")
    with pytest.raises(tp.errors.UnsetReferenceError):
        placement.compute_next()
    target = pin.SE3(np.eye(3), np.array([0.1, 0.2, 0.3]))
    placement.set_reference(target)
    target.translation[:] = 0.0  # the trajectory kept a copy
    assert np.array_equal(placement.sample(5.0).pos[:3], [0.1, 0.2, 0.3])  # exact: a copy
    constant = tp.TrajectoryEuclidianConstant("c", np.zeros(2))
    constant.set_reference([1.0, 2.0])
    assert np.array_equal(constant.compute_next().pos, [1.0, 2.0])  # exact: as set


# -------------------------------------------------------------- constraints
def test_constraints_are_built_from_sizes_or_from_arrays_as_in_tsid():
    A, b = np.arange(6.0).reshape(2, 3), np.array([1.0, 2.0])
    equality = ConstraintEquality("eq", A, b)
    inequality = ConstraintInequality("in", A, -b, b)
    bound = ConstraintBound("bound", -b, b)
    A[:], b[:] = 0.0, 0.0  # the constraints kept copies
    assert np.array_equal(equality.matrix[1], [3.0, 4.0, 5.0])  # exact: copies
    assert np.array_equal(equality.vector, [1, 2])  # exact: copies
    assert np.array_equal(inequality.lower_bound, [-1, -2])  # exact: copies
    assert np.array_equal(bound.upper_bound, [1, 2])  # exact: copies
    assert ConstraintEquality("eq", 2, 3).matrix.shape == (2, 3)
    assert ConstraintInequality("in", 2, 3).upper_bound.tolist() == [np.inf, np.inf]
    assert ConstraintBound("bound", 4).rows == 4
    with pytest.raises(tp.errors.InvalidParameterError):
        ConstraintInequality("in", A, b)  # one bound missing
    with pytest.raises(tp.errors.InvalidParameterError, match="lower > upper"):
        ConstraintBound("bound", [1.0], [0.0])


@pytest.mark.parametrize(
    ("attribute", "value", "error", "message"),
    [
        ("vector", [1.0, 2.0, 3.0], "DimensionError", "vector of constraint 'eq' must have size 2"),
        ("vector", [np.nan, 1.0], "NonFiniteError", "vector of constraint 'eq' contains NaN"),
        ("vector", [np.inf, 1.0], "NonFiniteError", "vector of constraint 'eq' contains NaN or infinity"),
        ("matrix", np.ones((3, 3)), "DimensionError", "matrix of constraint 'eq' must be a 2x3 matrix"),
        ("matrix", [[np.nan, 0, 0], [0, 0, 0]], "NonFiniteError", "matrix of constraint 'eq'"),
        ("lower_bound", [np.nan, 0.0], "NonFiniteError", "lower_bound of constraint 'in' contains NaN"),
        ("upper_bound", [1.0], "DimensionError", "upper_bound of constraint 'in' must have size 2"),
        ("bound matrix", np.eye(2), "InvalidParameterError", "the matrix of bound 'bound' is the identity"),
    ],
)
def test_constraint_setters_check_what_they_are_given(attribute, value, error, message):
    """A constraint keeps its shape and finite values (a bound may be infinite, never NaN); a
    refused value leaves the constraint as it was."""
    constraints = {
        "eq": ConstraintEquality("eq", 2, 3),
        "in": ConstraintInequality("in", 2, 3),
        "bound": ConstraintBound("bound", 2),
    }
    target = constraints[{"vector": "eq", "matrix": "eq", "bound matrix": "bound"}.get(attribute, "in")]
    before = target.copy()
    with pytest.raises(getattr(tp.errors, error), match=message):
        setattr(target, attribute.removeprefix("bound "), value)
    assert np.array_equal(target.matrix, before.matrix)  # exact: unchanged
    inequality = constraints["in"]
    inequality.lower_bound, inequality.upper_bound = [-np.inf, 0.0], [1e10, np.inf]  # no bound: allowed
    assert inequality.lower_bound.tolist() == [-np.inf, 0.0]  # exact: the values given, copied


def test_a_bound_of_1e10_is_no_bound_as_in_tsid(ur5):
    """Posture task plus torque bounds written with +-1e10 or +-inf on one side: same solution,
    same active set (the 1e10 side never enters the QP)."""
    solutions = []
    for far in (1e10, np.inf):
        form, q, v = _arm(ur5)
        bounds = tp.TaskActuationBounds("torque", ur5)
        lower = np.full(ur5.na, -far)
        lower[1] = -5.0  # the shoulder needs more than 5 N m against gravity: this side binds
        bounds.set_bounds(lower, np.full(ur5.na, far))
        form.add_actuation_task(bounds, 1.0, 0)
        sol = tp.SolverHQuadProg("qp").solve(form.compute_problem_data(0.0, q, v))
        solutions.append((sol.x, sol.active_set, form.get_actuator_forces(sol)))
    (x1, active1, tau1), (x2, active2, tau2) = solutions
    assert np.array_equal(active1, active2) and active1.size == 1  # exact: indices
    np.testing.assert_allclose(x1, x2, rtol=0, atol=1e-12)
    assert tau1[1] == pytest.approx(-5.0, abs=1e-9)


def _arm(ur5):
    form = tp.InverseDynamicsFormulation("tsid", ur5)
    posture = tp.TaskJointPosture("posture", ur5)
    posture.kp = 10.0
    q, v = ur5.default_configuration(), ur5.zero_velocity()
    posture.set_reference(tp.TrajectorySample(q[ur5.nq - ur5.nq_actuated :] + 0.2))
    form.add_motion_task(posture, 1e-3, 1)
    return form, q, v


# --------------------------------------------------------------- formulation
def test_check_contact_with_a_solution_and_a_ramped_actuation_task(talos):
    form, q, v = _standing(talos)
    sol = tp.SolverHQuadProg("qp").solve(form.compute_problem_data(0.0, q, v))
    assert form.check_contact("left", sol) and not form.check_contact("nope", sol)
    torque = tp.TaskActuationEquality("torque", talos)
    torque.set_reference(np.zeros(talos.na))
    form.add_actuation_task(torque, 1e-2, 1, transition_duration=1.0)
    form.compute_problem_data(0.5, q, v)  # the ramp starts at the first problem after the call
    problem = form.compute_problem_data(1.0, q, v)
    weights = {c.constraint.name: c.weight for level in problem.levels[1:] for c in level}
    assert weights["torque"] == pytest.approx(0.5e-2)
    form.remove_rigid_contact("left")
    with pytest.raises(tp.errors.SolverFailedError):  # a solution of the old layout
        form.check_contact("right", sol)


def _standing(robot):
    form = tp.InverseDynamicsFormulation("tsid", robot)
    q, v = robot.default_configuration(), robot.zero_velocity()
    data = robot.create_data()
    robot.compute_all_terms(data, q, v)
    for side, frame in (("left", "leg_left_6_joint"), ("right", "leg_right_6_joint")):
        contact = tp.Contact6d(side, robot, frame, SOLE, [0, 0, 1], 0.3, 1.0, 1e3)
        contact.kp = 10.0
        contact.set_reference(robot.frame_placement(data, frame))
        form.add_rigid_contact(contact, 1e-5)
    return form, q, v


# ------------------------------------------------------------ TSID's answers
@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_point_contact_takes_3d_gains_and_computes_what_tsid_computes(solo12, rng):
    tsid = oracle()
    theirs_robot = oracle_robot(tsid, "solo_description/robots/solo12.urdf")
    q, v = random_state(solo12, rng)
    data, odata = solo12.create_data(), theirs_robot.data()
    solo12.compute_all_terms(data, q, v)
    theirs_robot.computeAllTerms(odata, q, v)
    ours = tp.ContactPoint("foot", solo12, "FL_FOOT", [0, 0, 1], 0.5, 1.0, 100.0)
    theirs = tsid.ContactPoint("foot", theirs_robot, "FL_FOOT", np.array([0, 0, 1.0]), 0.5, 1.0, 100.0)
    for contact in (ours, theirs):
        contact.useLocalFrame(False) if contact is theirs else contact.use_local_frame(False)
    kp, kd = np.array([10.0, 20.0, 30.0]), np.array([1.0, 2.0, 3.0])
    ours.kp, ours.kd = kp, kd
    theirs.setKp(kp)
    theirs.setKd(kd)
    reference = pin.SE3(np.eye(3), np.array([0.1, 0.2, 0.0]))
    ours.set_reference(reference)
    theirs.setReference(reference)
    mine = ours.compute_motion_task(0.0, np.asmatrix(q).T, np.asmatrix(v).T, data)  # np.matrix too
    other = theirs.computeMotionTask(0.0, q, v, odata)
    np.testing.assert_allclose(mine.matrix, other.matrix, atol=1e-12)
    np.testing.assert_allclose(mine.vector, other.vector, atol=1e-10)
    assert np.array_equal(ours.kp, kp) and np.array_equal(ours.kd, kd)  # exact: as set


def test_joint_placement_is_tsids_position_and_differs_from_the_frame_of_that_index(romeo, rng):
    tsid = oracle()
    theirs = oracle_robot(tsid, "romeo_description/urdf/romeo.urdf")
    q, _ = random_state(romeo, rng)
    data, odata = romeo.create_data(), theirs.data()
    romeo.compute_all_terms(data, q, np.zeros(romeo.nv))
    theirs.computeAllTerms(odata, q, np.zeros(romeo.nv))
    joint = romeo.joint_id("LAnkleRoll")
    np.testing.assert_allclose(
        romeo.joint_placement(data, joint).homogeneous, theirs.position(odata, joint).homogeneous
    )
    assert not np.allclose(
        romeo.frame_placement(data, joint).homogeneous, theirs.position(odata, joint).homogeneous, atol=1e-3
    )


def test_gravity_rotor_inertias_and_gear_ratios_as_in_tsid(rng):
    tsid = oracle()
    ours = tp.load_robot("talos")
    theirs = oracle_robot(tsid, "talos_data/robots/talos_reduced.urdf")
    rotor, gears = rng.uniform(1e-5, 1e-4, ours.na), rng.uniform(50.0, 100.0, ours.na)
    for robot in (ours, theirs):
        robot.set_rotor_inertias(rotor)
        robot.set_gear_ratios(gears)
    lunar = pin.Motion(np.array([0.0, 0.0, -1.62]), np.zeros(3))
    ours.set_gravity(lunar)
    theirs.setGravity(lunar)
    q, v = random_state(ours, rng)
    data, odata = ours.create_data(), theirs.data()
    ours.compute_all_terms(data, q, v)
    theirs.computeAllTerms(odata, q, v)
    np.testing.assert_allclose(ours.mass(data), theirs.mass(odata), atol=1e-10)
    np.testing.assert_allclose(ours.nonlinear_effects(data), theirs.nonLinearEffect(odata), atol=1e-9)
    assert np.array_equal(ours.rotor_inertias, rotor)  # exact: as set
    assert np.array_equal(ours.gear_ratios, gears)  # exact: as set
    assert ours.gravity.linear[2] == -1.62  # exact: as set


def test_the_robot_keeps_its_own_model():
    model = pin.buildSampleModelManipulator()
    robot = tp.RobotWrapper(model)
    robot.set_gravity([0.0, 0.0, -1.62])
    robot.set_rotor_inertias(np.full(robot.na, 1e-3))
    assert model.gravity.linear[2] == pytest.approx(-9.81) and not model.armature.any()
    data = robot.create_data()
    robot.compute_all_terms(data, pin.neutral(model), np.zeros(model.nv))
    assert np.allclose(
        robot.nonlinear_effects(data),
        pin.rnea(model, model.createData(), pin.neutral(model), np.zeros(model.nv), np.zeros(model.nv))
        * 1.62
        / 9.81,
    )
