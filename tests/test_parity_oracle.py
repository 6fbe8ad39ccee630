"""Same problem, same answer as the C++ TSID (the oracle, installed by `make oracle`).

Builds the Talos balance / CoM-sinusoid problem of the classic exercise in both libraries and
compares dv, tau and the contact forces at every step of a closed loop, and q at the end.
Runs only where the oracle is importable (`make oracle`; `.ci/run` installs it).
"""

import numpy as np
import pinocchio as pin
import pytest

import tsid_py as tp
from tsid_py.robot_specs import example_robot_data_dir

tsid = pytest.importorskip("tsid", reason="the C++ TSID oracle is not installed (make oracle)")
pytestmark = pytest.mark.oracle

FEET = (("contact_rfoot", "leg_right_sole_fix_joint"), ("contact_lfoot", "leg_left_sole_fix_joint"))
KP, W_COM, W_POSTURE, W_AM, W_REG = 10.0, 1.0, 0.1, 1e-3, 1e-5
AM_MASK = np.array([1.0, 1.0, 0.0])


def build_tsid_py(robot, q, tau_max):
    form = tp.InverseDynamicsFormulation("tsid", robot)
    robot.compute_all_terms(form.data, q, robot.zero_velocity())
    for name, frame in FEET:
        c = tp.Contact6d(name, robot, frame, robot.spec.sole.corners(), [0, 0, 1], 0.3, 5.0, 1000.0)
        c.kp = KP
        c.set_reference(robot.frame_placement(form.data, frame))
        form.add_rigid_contact(c, force_reg_weight=W_REG)
    com = tp.TaskComEquality("task-com", robot)
    com.kp = KP
    form.add_motion_task(com, weight=W_COM, priority=1)
    posture = tp.TaskJointPosture("task-posture", robot)
    posture.kp = KP
    posture.set_reference(tp.TrajectorySample(q[7:]))
    form.add_motion_task(posture, weight=W_POSTURE, priority=1)
    am = tp.TaskAMEquality("task-am", robot)
    am.kp = KP * AM_MASK
    form.add_motion_task(am, weight=W_AM, priority=1)
    bounds = tp.TaskActuationBounds("task-actuation-bounds", robot)
    bounds.set_bounds(-tau_max, tau_max)
    form.add_actuation_task(bounds, weight=1.0, priority=0)
    return form, com


def build_oracle(q, tau_max, corners):
    root = example_robot_data_dir()
    urdf = str(root / "talos_data/robots/talos_reduced.urdf")
    robot = tsid.RobotWrapper(urdf, [str(root)], pin.JointModelFreeFlyer(), False)
    form = tsid.InverseDynamicsFormulationAccForce("tsid", robot, False)
    form.computeProblemData(0.0, q, np.zeros(robot.nv))
    data = form.data()
    keep = [robot]  # the binding keeps references only: the Python objects must outlive the loop
    for name, frame in FEET:
        c = tsid.Contact6d(name, robot, frame, corners, np.array([0, 0, 1.0]), 0.3, 5.0, 1000.0)
        c.setKp(KP * np.ones(6))
        c.setKd(2 * np.sqrt(KP) * np.ones(6))
        c.setReference(robot.framePosition(data, robot.model().getFrameId(frame)))
        form.addRigidContact(c, W_REG)
        keep.append(c)
    com = tsid.TaskComEquality("task-com", robot)
    com.setKp(KP * np.ones(3))
    com.setKd(2 * np.sqrt(KP) * np.ones(3))
    form.addMotionTask(com, W_COM, 1, 0.0)
    posture = tsid.TaskJointPosture("task-posture", robot)
    posture.setKp(KP * np.ones(robot.na))
    posture.setKd(2 * np.sqrt(KP) * np.ones(robot.na))
    form.addMotionTask(posture, W_POSTURE, 1, 0.0)
    am = tsid.TaskAMEquality("task-am", robot)
    am.setKp(KP * AM_MASK)
    am.setKd(2 * np.sqrt(KP * AM_MASK))
    form.addMotionTask(am, W_AM, 1, 0.0)
    bounds = tsid.TaskActuationBounds("task-actuation-bounds", robot)
    bounds.setBounds(-tau_max, tau_max)
    form.addActuationTask(bounds, 1.0, 0, 0.0)
    posture_sample = tsid.TrajectoryEuclidianConstant("posture", q[7:]).computeNext()
    am_sample = tsid.TrajectoryEuclidianConstant("am", np.zeros(3)).computeNext()
    posture.setReference(posture_sample)
    am.setReference(am_sample)
    keep += [com, posture, am, bounds, posture_sample, am_sample]
    solver = tsid.SolverHQuadProgFast("qp")
    solver.resize(form.nVar, form.nEq, form.nIn)
    return robot, form, com, solver, keep


def relative(a, b):
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-12)


@pytest.mark.parametrize(
    ("scenario", "duration", "amplitude"), [("balance", 1.0, 0.0), ("com-sinusoid", 2.0, 0.05)]
)
def test_talos_matches_tsid_every_step(talos, scenario, duration, amplitude):
    q = talos.default_configuration()
    tau_max = 1.45 * talos.effort_limit()
    form, com = build_tsid_py(talos, q, tau_max)
    orobot, oform, ocom, osolver, _keep = build_oracle(q, tau_max, talos.spec.sole.corners())
    assert (form.n_var, form.n_eq, form.n_in) == (oform.nVar, oform.nEq, oform.nIn) == (62, 18, 66)
    solver = tp.SolverHQuadProg()
    sway = tp.TrajectoryEuclidianSinusoid("com", talos.com(form.data).copy(), [0, amplitude, 0], [0, 0.5, 0])
    sample = tsid.TrajectorySample(3)
    dt, qo, v, vo = 0.002, q.copy(), talos.zero_velocity(), talos.zero_velocity()
    worst = 0.0
    for i in range(int(round(duration / dt))):
        t = i * dt
        ref = sway.sample(t)
        com.set_reference(ref)
        sample.value(ref.pos)
        sample.derivative(ref.vel)
        sample.second_derivative(ref.acc)
        ocom.setReference(sample)
        sol = solver.solve(form.compute_problem_data(t, q, v))
        osol = osolver.solve(oform.computeProblemData(t, qo, vo))
        assert sol.status == osol.status == 0
        dv, odv = form.get_accelerations(sol), oform.getAccelerations(osol)
        tau, otau = form.get_actuator_forces(sol), oform.getActuatorForces(osol)
        for name, _ in FEET:
            worst = max(worst, relative(form.get_contact_force(name, sol), oform.getContactForce(name, osol)))
        worst = max(worst, relative(tau, otau), relative(dv, odv) if np.linalg.norm(odv) > 1e-9 else 0.0)
        q, v = tp.integrate(talos, q, v, dv, dt)
        qo = pin.integrate(orobot.model(), qo, dt * (vo + 0.5 * dt * odv))
        vo = vo + dt * odv
    assert worst < 1e-6
    assert np.linalg.norm(pin.difference(talos.model, qo, q)) < 1e-6
