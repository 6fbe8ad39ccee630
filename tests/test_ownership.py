"""Values at the API are the caller's: what comes out is a copy, what goes in is copied.

The pattern that bit a TSID user first (a reference taken from ``robot.com(data)`` before the loop),
then a walk over the public API: every accessor's result, changed or left while the robot moves,
leaves the object alone; every array given to a constructor or setter, changed afterwards, too.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from conftest import random_state

import tsid_py as tsid
from tsid_py.analysis import (
    contact_forward_dynamics,
    contact_inverse_dynamics,
    force_torque_map,
    forward_dynamics,
    inverse_dynamics,
    multi_contact_inverse_dynamics,
    velocities_and_accelerations,
)
from tsid_py.constraints import ConstraintBase, ConstraintBound, ConstraintEquality, ConstraintInequality
from tsid_py.contacts import Measured6dWrench
from tsid_py.controllers import ArmController, BipedController, QuadrupedController
from tsid_py.planning import plan_com_from_zmp, plan_straight_walk

DT = 0.002


# ------------------------------------------------------------------ the pattern of TSID's ex_2
def com_sinusoid_port(robot: tsid.RobotWrapper, copy_offset: bool, steps: int = 1000) -> np.ndarray:
    """TSID's ex_2 (CoM sinusoid) ported name by name: the offset is read from robot.com(data)
    once, before the loop, with or without an explicit copy. The CoM at every step."""
    controller = BipedController(robot)
    form, solver = controller.formulation, tsid.SolverHQuadProg()
    q, v = controller.q0, robot.zero_velocity()
    form.compute_problem_data(0.0, q, v)
    offset = robot.com(form.data)
    if copy_offset:
        offset = offset.copy()
    trajectory = tsid.TrajectoryEuclidianConstant("traj_com", robot.com(form.data))
    sample = trajectory.compute_next()
    amplitude, omega = np.array([0.0, 0.05, 0.0]), 2 * np.pi * 0.5
    coms = []
    for i in range(steps):
        t = i * DT
        sample.pos = offset + amplitude * np.sin(omega * t)
        sample.vel = amplitude * omega * np.cos(omega * t)
        sample.acc = -amplitude * omega**2 * np.sin(omega * t)
        controller.com_task.set_reference(sample)
        sol = solver.solve(form.compute_problem_data(t, q, v))
        coms.append(robot.com(form.data))
        q, v = tsid.integrate(robot, q, v, form.get_accelerations(sol), DT)
    return np.array(coms)


@pytest.mark.slow
def test_a_reference_read_before_the_loop_stays_put(romeo):
    """1000 steps of Romeo: the offset read without a copy tracks exactly as with one."""
    uncopied, copied = com_sinusoid_port(romeo, False), com_sinusoid_port(romeo, True)
    np.testing.assert_allclose(uncopied, copied, rtol=0, atol=1e-12)
    assert np.ptp(copied[:, 1]) > 0.05  # the CoM did sway: the reference was not frozen to the robot


# -------------------------------------------------------------------------- the accessors
def mutate(value: object) -> None:
    """Change a returned value in place, whatever it is."""
    if isinstance(value, np.ndarray):
        if value.size and value.flags.writeable:  # a read-only array (a spec's) cannot be changed at all
            value.flat[0] = 12345.0 if value.dtype != bool else not value.flat[0]
    elif isinstance(value, pin.SE3):
        value.translation = value.translation + 1.0
    elif isinstance(value, tsid.TrajectorySample):  # an immutable value: its arrays are read-only
        value.pos = value.pos + 1.0
    elif isinstance(value, ConstraintBase):
        value.matrix[...] += 1.0
    elif isinstance(value, dict):
        for item in value.values():
            mutate(item)


def frozen(value: object) -> object:
    """An independent picture of a value, to compare before and after."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, pin.SE3):
        return value.homogeneous.copy()
    if isinstance(value, tsid.TrajectorySample):
        return np.concatenate([value.pos, value.vel, value.acc])
    if isinstance(value, ConstraintBase):
        return np.concatenate([value.matrix.ravel(), *(getattr(value, n) for n in value.vector_names)])
    if isinstance(value, dict):
        return {key: frozen(item) for key, item in value.items()}
    return value


def same(a: object, b: object) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return a.shape == np.shape(b) and np.array_equal(a, b, equal_nan=True)  # exact: copies
    return a == b


ZERO_ARGUMENT_ACCESSORS = ("local_points", "compute_next", "corners")  # methods that read, walked too


def public_readouts(obj: object) -> dict[str, object]:
    """Every public attribute, property or zero-argument read method of ``obj`` whose value is an
    array, a placement, a sample, a constraint or a dict of arrays (the accessors to walk)."""
    found = {}
    names = set(dir(type(obj))) | (set(vars(obj)) if hasattr(obj, "__dict__") else set())
    for name in sorted(names):
        if name.startswith("_"):
            continue
        attribute = getattr(type(obj), name, None)
        method = callable(attribute) and not isinstance(attribute, property)
        if method and name not in ZERO_ARGUMENT_ACCESSORS:
            continue
        try:
            value = getattr(obj, name)() if method else getattr(obj, name)
        except (tsid.TsidError, NotImplementedError):
            continue
        if isinstance(value, (np.ndarray, pin.SE3, tsid.TrajectorySample, ConstraintBase, dict)):
            found[name] = value
    return found


def catalogue(talos, solo12, ur5) -> list[object]:
    """One of every public object that holds arrays, set up and computed once."""
    biped = BipedController(talos)
    quadruped = QuadrupedController(solo12)
    arm = ArmController(ur5, DT)
    for controller in (biped, quadruped, arm):
        controller.compute(0.0, controller.q0, controller.robot.zero_velocity())
    contact = biped.contacts["right"]
    force_task = tsid.TaskContactForceEquality("force", talos, DT, contact)
    cop = tsid.TaskCopEquality("cop", talos)
    cop.set_reference([0.0, 0.0, 0.0])
    biped.formulation.add_force_task(force_task, weight=1e-6)
    biped.formulation.add_force_task(cop, weight=1e-6)
    two_frames = tsid.TaskTwoFramesEquality("hands", talos, "arm_left_7_joint", "arm_right_7_joint")
    capture = tsid.TaskCapturePointInequality("capture", talos, DT)
    bounds = tsid.TaskJointPosVelAccBounds("pva", talos, DT)
    joint_bounds = tsid.TaskJointBounds("joint-bounds", talos, DT)
    torque = tsid.TaskActuationEquality("torque", talos)
    for task in (two_frames, capture, bounds, joint_bounds):
        biped.formulation.add_motion_task(task, weight=1e-6, priority=0 if task.kind != "equality" else 1)
    biped.formulation.add_actuation_task(torque, weight=1e-6)
    biped.compute(0.002, biped.q0, talos.zero_velocity())
    wrench = Measured6dWrench("push", talos, "torso_2_joint")
    wrench.set_measured_contact_force(np.ones(6))
    linked = tsid.ContactTwoFramePositions("link", talos, "arm_left_7_joint", "arm_right_7_joint", -10, 10)
    right, left = biped.foot_placement("right"), biped.foot_placement("left")
    plan = plan_straight_walk(talos.spec.sole, right, left, biped.com_initial, 3, 0.1)
    planning = [plan, *plan.steps, plan.steps[0].swing_trajectory(0.05), talos.spec.sole]
    planning.append(plan_com_from_zmp(plan.zmp_reference, plan.t_end, biped.com_initial))
    trajectories = [
        tsid.TrajectoryEuclidianConstant("c", np.ones(3)),
        tsid.TrajectorySE3Constant("s", pin.SE3.Random()),
        tsid.TrajectoryEuclidianSinusoid("sin", np.ones(3), 0.1, 1.0),
        tsid.TrajectoryEuclidianMinJerk("jerk", np.zeros(3), np.ones(3), 0.0, 1.0),
    ]
    return [
        biped,
        quadruped,
        arm,
        biped.formulation,
        *biped.contacts.values(),
        *quadruped.contacts.values(),
        *biped.formulation.tasks.values(),
        *arm.formulation.tasks.values(),
        contact.motion_task,
        wrench,
        linked,
        *trajectories,
        *planning,
        talos.spec,
    ]


@pytest.fixture(scope="module")
def objects(talos, solo12, ur5):
    return catalogue(talos, solo12, ur5)


def test_every_accessor_hands_out_a_copy(objects):
    walked = 0
    for obj in objects:
        for name, value in public_readouts(obj).items():
            before = frozen(value)
            mutate(value)
            again = frozen(getattr(obj, name)() if name in ZERO_ARGUMENT_ACCESSORS else getattr(obj, name))
            assert same(again, before), f"{type(obj).__name__}.{name} handed out its own array"
            walked += 1
    assert walked > 80  # the walk did find the accessors


def test_trajectories_hand_out_new_samples(objects):
    for trajectory in [o for o in objects if isinstance(o, tsid.TrajectoryEuclidianConstant)]:
        first = trajectory.compute_next()
        with pytest.raises(ValueError, match="read-only"):
            first.pos[0] = -7.0
        first.pos = np.full(first.pos.shape, -7.0)
        assert not np.any(trajectory.compute_next().pos == -7.0)  # exact: the value written
        assert trajectory.sample(0.3) is not trajectory.sample(0.3)


ROBOT_ACCESSORS = [
    "mass",
    "nonlinear_effects",
    "com",
    "com_vel",
    "com_acc",
    "com_jacobian",
    "momentum_jacobian",
    "centroidal_momentum",
    "angular_momentum_time_variation",
]
FRAME_ACCESSORS = [
    "frame_placement",
    "frame_velocity",
    "frame_velocity_world_oriented",
    "frame_acceleration",
    "frame_classic_acceleration",
    "frame_classic_acceleration_world_oriented",
    "frame_jacobian_local",
    "frame_jacobian_world_oriented",
]


def test_robot_accessors_do_not_follow_the_robot(talos, rng):
    """What robot.com(data) and the others return stays put when the robot moves, and changing it
    leaves data alone."""
    data = talos.create_data()
    q, v = random_state(talos, rng)
    talos.compute_all_terms(data, q, v)
    read = {name: getattr(talos, name)(data) for name in ROBOT_ACCESSORS}
    read |= {name: getattr(talos, name)(data, "arm_left_7_joint") for name in FRAME_ACCESSORS}
    pictures = {
        name: frozen(np.array(value.vector) if isinstance(value, pin.Motion) else value)
        for name, value in read.items()
    }
    for name, value in read.items():
        mutate(value.vector if isinstance(value, pin.Motion) else value)
        again = getattr(talos, name)(data, *(["arm_left_7_joint"] if name in FRAME_ACCESSORS else []))
        again = np.array(again.vector) if isinstance(again, pin.Motion) else again
        assert same(frozen(again), pictures[name]), f"robot.{name} handed out data's own array"
    talos.compute_all_terms(data, *random_state(talos, rng))  # the robot moves
    for name in ROBOT_ACCESSORS:
        assert not same(frozen(getattr(talos, name)(data)), pictures[name]) or name == "mass"
    for name in ("mass", "com", "com_jacobian"):
        value = getattr(talos, name)(data)
        value.flat[0] += 1.0  # ours to change
    for name in ("reference_configuration",):
        q_ref = getattr(talos, name)("half_sitting")
        q_ref[0] = 99.0
        assert getattr(talos, name)("half_sitting")[0] != 99.0  # exact: the value written
    for name in ("effort_limit", "velocity_limit", "neutral_configuration", "zero_velocity"):
        value = getattr(talos, name)()
        value[0] = 99.0
        assert getattr(talos, name)()[0] != 99.0  # exact: the value written


# ------------------------------------------------------------------- constructors and setters
def fingerprint(obj: object) -> dict[str, object]:
    return {name: frozen(value) for name, value in public_readouts(obj).items()}


def setter_cases(talos):
    """(object, call that hands it arrays, the arrays) for every constructor and setter taking arrays."""
    contact = BipedController(talos).contacts["right"]
    robot = talos
    se3 = tsid.TaskSE3Equality("ee", robot, "arm_left_7_joint")
    com = tsid.TaskComEquality("com", robot)
    posture = tsid.TaskJointPosture("posture", robot)
    torque = tsid.TaskActuationEquality("torque", robot)
    torque_bounds = tsid.TaskActuationBounds("bounds", robot)
    joint_bounds = tsid.TaskJointBounds("joint-bounds", robot, DT)
    pva = tsid.TaskJointPosVelAccBounds("pva", robot, DT)
    cop = tsid.TaskCopEquality("cop", robot)
    force = tsid.TaskContactForceEquality("force", robot, DT, contact)
    wrench = Measured6dWrench("push", robot, "torso_2_joint")
    na = robot.na
    q_min, q_max = robot.position_limits()
    cases = [
        (
            se3,
            "set_reference",
            [np.concatenate([[0.1, 0.2, 0.3], np.eye(3).ravel()]), np.ones(6), np.ones(6)],
        ),
        (com, "set_reference", [np.ones(3), np.ones(3), np.ones(3)]),
        (posture, "set_reference", [np.ones(robot.nq_actuated), np.ones(na), np.ones(na)]),
        (se3, "kp", [np.full(6, 3.0)]),
        (se3, "kd", [np.full(6, 3.0)]),
        (com, "mask", [np.array([1.0, 0.0, 1.0])]),
        (torque, "set_reference", [np.ones(na)]),
        (torque, "set_weight_vector", [np.ones(na)]),
        (torque_bounds, "set_bounds", [-np.ones(na), np.ones(na)]),
        (joint_bounds, "set_velocity_bounds", [-np.ones(na), np.ones(na)]),
        (joint_bounds, "set_acceleration_bounds", [-np.ones(na), np.ones(na)]),
        (pva, "set_position_bounds", [q_min, q_max]),
        (pva, "set_velocity_bounds", [np.ones(na)]),
        (pva, "set_acceleration_bounds", [np.ones(na)]),
        (cop, "set_reference", [np.ones(3)]),
        (cop, "set_contact_normal", [np.array([0.0, 0.0, 1.0])]),
        (force, "set_reference", [np.ones(6), np.ones(6), np.ones(6)]),
        (force, "set_external_force", [np.ones(6), np.ones(6), np.ones(6)]),
        (force, "kp", [np.ones(6)]),
        (contact, "set_force_reference", [np.ones(6)]),
        (contact, "set_regularization_task_weight_vector", [np.ones(6)]),
        (contact, "set_contact_points", [0.5 * contact.contact_points]),
        (contact, "set_contact_normal", [np.array([0.0, 0.0, 1.0])]),
        (contact, "kp", [np.ones(6)]),
        (wrench, "set_measured_contact_force", [np.ones(6)]),
    ]
    equality = ConstraintEquality("e", 2, 3)
    inequality = ConstraintInequality("i", 2, 3)
    bound = ConstraintBound("b", 2)
    cases += [(equality, "matrix", [np.ones((2, 3))]), (equality, "vector", [np.ones(2)])]
    cases += [(inequality, "matrix", [np.ones((2, 3))])]
    cases += [(c, side, [np.ones(2)]) for c in (inequality, bound) for side in ("lower_bound", "upper_bound")]
    return cases


def apply(obj: object, name: str, arrays: list[np.ndarray]):
    """Hand ``arrays`` to the setter; return what the caller then does to reuse what it handed."""

    def reuse_arrays() -> None:
        for array in arrays:
            array[...] = 0.25 * array + 7.0

    if name in ("kp", "kd", "mask", "matrix", "vector", "lower_bound", "upper_bound"):
        setattr(obj, name, arrays[0])
    elif name in ("set_reference", "set_external_force") and len(arrays) == 3:
        sample = tsid.TrajectorySample(*arrays, tangent_size=arrays[1].shape[0])
        getattr(obj, name)(sample)

        def reuse_sample() -> None:  # a sample is changed by giving it new values
            sample.pos, sample.vel, sample.acc = sample.pos + 7.0, sample.vel + 7.0, sample.acc + 7.0
            reuse_arrays()

        return reuse_sample
    else:
        getattr(obj, name)(*arrays)
    return reuse_arrays


def test_setters_copy_what_they_are_given(talos):
    for obj, name, arrays in setter_cases(talos):
        reuse = apply(obj, name, arrays)
        before = fingerprint(obj)
        reuse()  # the caller changes what it handed in
        assert same(fingerprint(obj), before), f"{type(obj).__name__}.{name} kept the caller's array"


def test_constructors_copy_what_they_are_given(talos):
    q0 = talos.default_configuration()
    center, amplitude = np.ones(3), np.full(3, 0.1)
    start, end, reference = np.zeros(3), np.ones(3), np.ones(3)
    A, b, lb, ub = np.eye(3), np.ones(3), -np.ones(3), np.ones(3)
    pos, vel, acc = np.ones(3), np.ones(3), np.ones(3)
    built = [
        (tsid.TrajectoryEuclidianConstant("c", reference), [reference]),
        (tsid.TrajectoryEuclidianSinusoid("s", center, amplitude, 1.0), [center, amplitude]),
        (tsid.TrajectoryEuclidianMinJerk("j", start, end, 0.0, 1.0), [start, end]),
        (ConstraintEquality.from_arrays("e", A, b), [A, b]),
        (ConstraintInequality.from_arrays("i", A, lb, ub), [A, lb, ub]),
        (ConstraintBound.from_arrays("b", lb, ub), [lb, ub]),
        (tsid.TrajectorySample(pos, vel, acc), [pos, vel, acc]),
        (BipedController(talos, q0=q0), [q0]),
    ]
    for obj, arrays in built:
        before = frozen(obj) if isinstance(obj, (ConstraintBase, tsid.TrajectorySample)) else fingerprint(obj)
        if isinstance(obj, tsid.TrajectoryEuclidianConstant):
            before = frozen(obj.compute_next())
        for array in arrays:
            array[...] = -3.0
        if isinstance(obj, tsid.TrajectoryEuclidianConstant):
            after = frozen(obj.compute_next())
        elif isinstance(obj, (ConstraintBase, tsid.TrajectorySample)):
            after = frozen(obj)
        else:
            after = fingerprint(obj)
        assert same(after, before), f"{type(obj).__name__} kept the caller's array"


def test_a_formulation_keeps_none_of_q_and_v(talos):
    controller = BipedController(talos)
    q, v = controller.q0, np.full(talos.nv, 0.01)
    hqp = controller.formulation.compute_problem_data(0.0, q, v)
    picture = frozen(hqp[0][0].constraint)
    q[:] = 0.0
    v[:] = 5.0
    assert same(frozen(hqp[0][0].constraint), picture)


# ------------------------------------------------------------------------------- analysis
def test_analysis_leaves_its_inputs_as_they_were(talos, rng):
    """Every analysis entry point, given arrays, hands them back unchanged (force_torque_map once
    zeroed the caller's other_torques in place)."""
    q, v = random_state(talos, rng)
    a, tau = rng.standard_normal(talos.nv), rng.standard_normal(talos.na)
    feet = ["leg_right_sole_fix_joint", "leg_left_sole_fix_joint"]
    hips = ["leg_right_1_joint", "leg_right_2_joint"]
    wrench_guesses = rng.standard_normal((2, 6))
    positions = np.array([pin.integrate(talos.model, q, 0.01 * k * v) for k in range(6)])
    positions[:, 3:7] *= 1.0 + 1e-6  # slightly unnormalized quaternions, normalized by the analysis
    inputs = [q, v, a, tau, wrench_guesses, positions]
    pictures = [x.copy() for x in inputs]
    inverse_dynamics(talos, q, v, a)
    forward_dynamics(talos, q, v, tau)
    contact_forward_dynamics(talos, q, v, tau, feet)
    contact_inverse_dynamics(talos, q, v, a, feet[0])
    multi_contact_inverse_dynamics(talos, q, v, a, feet, wrench_guesses=wrench_guesses)
    force_torque_map(talos, q, v, feet[0], hips, tau)
    velocities_and_accelerations(talos, positions, DT)
    for x, picture in zip(inputs, pictures, strict=True):
        np.testing.assert_array_equal(x, picture)  # exact: untouched
