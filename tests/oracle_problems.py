"""The parity scenarios, built the same way in tsid_py and in the C++ TSID (the oracle).

One :class:`Problem` describes a scenario as data (robot, contacts, tasks, gains, weights,
references); :func:`build_tsid_py` and :func:`build_oracle` interpret it with each library and
return a :class:`Controller` that solves one control step. The parity tests
(tests/test_parity_oracle.py) and the step-time benchmark (benchmarks/step_time.py) share them.
Only this module and those two import ``tsid``; the package never does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

import tsid_py as tp
from tsid_py.planning import FootstepPlan, plan_com_from_zmp, plan_straight_walk
from tsid_py.robot_specs import SpecRobot, example_robot_data_dir
from tsid_py.solvers import HqpOutput
from tsid_py.trajectories import Trajectory


@dataclass(frozen=True)
class ContactSpec:
    name: str
    frame: str
    points: int  # 4: Contact6d on the sole corners, 1: ContactPoint
    mu: float
    f_min: float
    f_max: float
    kp: float = 10.0
    force_reg_weight: float = 1e-5
    motion_weight: float = 1.0
    motion_priority: int = 0


@dataclass(frozen=True)
class WalkSpec:
    """A straight walk on the problem's two feet: footsteps and a LIPM CoM plan (tsid_py.planning).
    At lift-off a foot's contact leaves (at once, as in TSID's walking exercise: TSID and tsid_py
    time an unloading ramp one control step apart, and TSID's ramp also lowers the contact's own
    f_max), its SE3 task (``kp_foot``, ``w_foot``) follows the swing, and at touch-down the contact
    comes back, held at the planned footprint."""

    steps: int = 4
    step_length: float = 0.1  # [m]
    single_support: float = 0.8  # [s]
    double_support: float = 0.3  # [s]
    swing_height: float = 0.05  # [m]
    unload: float = 0.0  # [s] unloading ramp before lift-off (0: the contact leaves at once)
    kp_foot: float = 100.0
    w_foot: float = 1.0


@dataclass(frozen=True)
class Problem:
    """A scenario: references are functions of time; gains are scalars times ones."""

    name: str
    robot: str
    duration: float
    contacts: tuple[ContactSpec, ...] = ()
    com: tuple[float, float] | None = None  # (kp, weight)
    com_reference: Callable[[np.ndarray], Trajectory] | None = None  # c0 -> trajectory
    posture: tuple[float, float] = (10.0, 0.1)
    am: tuple[float, float] | None = None  # (kp, weight), mask (1, 1, 0)
    end_effector: tuple[str, float, float] | None = None  # (frame, kp, weight), position, world axes
    ee_offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    tau_max_scaling: float | None = None
    dt: float = 0.002
    walk: WalkSpec | None = None  # contact switches; the CoM follows the walk's plan, not com_reference


def _constant_offset(offset: tuple[float, float, float]) -> Callable[[np.ndarray], Trajectory]:
    return lambda c0: tp.TrajectoryEuclidianConstant("com", c0 + np.asarray(offset))


def _sinusoid(amplitude: float, frequency: float) -> Callable[[np.ndarray], Trajectory]:
    return lambda c0: tp.TrajectoryEuclidianSinusoid("com", c0, [0.0, amplitude, 0.0], [0.0, frequency, 0.0])


def _feet(robot: str, kp: float = 10.0, priority: int = 0) -> tuple[ContactSpec, ...]:
    spec = tp.load_robot(robot).spec
    return tuple(
        ContactSpec(
            f"contact_{side[0]}foot", spec.feet[side], 4, 0.3, 5.0, 1000.0, kp, motion_priority=priority
        )
        for side in ("right", "left")
    )


PROBLEMS = {
    p.name: p
    for p in (
        Problem(
            "talos-balance", "talos", 1.0, _feet("talos"), (10.0, 1.0), _constant_offset((0, 0, 0)),
            (10.0, 0.1), (10.0, 1e-3), tau_max_scaling=1.45,
        ),
        Problem(
            "talos-walking", "talos", 6.2, _feet("talos"), (10.0, 1.0), None, (10.0, 1e-3), (10.0, 1e-3),
            tau_max_scaling=1.45, walk=WalkSpec(),
        ),
        Problem(
            "talos-com-sinusoid", "talos", 2.0, _feet("talos"), (10.0, 1.0), _sinusoid(0.05, 0.5),
            (10.0, 0.1), (10.0, 1e-3), tau_max_scaling=1.45,
        ),
        Problem(
            "romeo-balance", "romeo", 1.5, _feet("romeo"), (10.0, 1.0), _constant_offset((0, 0.05, 0)),
            (1.0, 1e-4),
        ),
        Problem(
            "ur5-reaching", "ur5", 1.0, posture=(1.0, 1e-3), end_effector=("ee_fixed_joint", 100.0, 1.0),
            ee_offset=(0.2, 0.0, 0.0), tau_max_scaling=0.4,
        ),
        Problem(
            "solo12-com-sinusoid", "solo12", 2.0,
            tuple(
                ContactSpec(frame, frame, 1, 0.3, 1.0, 100.0, motion_priority=1)
                for frame in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
            ),
            (10.0, 1.0), _sinusoid(0.02, 0.5), (10.0, 1e-3), tau_max_scaling=1.0,
        ),
        # The rest of the benchmark's grid (robots x balance, CoM sinusoid, walking), short runs.
        Problem(
            "solo12-balance", "solo12", 1.0,
            tuple(
                ContactSpec(frame, frame, 1, 0.3, 1.0, 100.0, motion_priority=1)
                for frame in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
            ),
            (10.0, 1.0), _constant_offset((0, 0.01, 0)),
            (10.0, 1e-3), tau_max_scaling=1.0,
        ),
        Problem(
            "romeo-com-sinusoid", "romeo", 1.0, _feet("romeo"), (10.0, 1.0), _sinusoid(0.03, 0.5),
            (1.0, 1e-4),
        ),
        Problem(
            "romeo-walking", "romeo", 1.8, _feet("romeo"), (10.0, 1.0), None, (1.0, 1e-4),
            walk=WalkSpec(steps=2),
        ),
    )
}  # fmt: skip


@dataclass
class Step:
    """What one control step gave: accelerations, torques, all contact forces stacked."""

    ok: bool
    dv: np.ndarray
    tau: np.ndarray
    forces: np.ndarray


@dataclass
class Controller:
    """One library's build of a problem: ``step(t, q, v)`` sets the references and solves;
    ``control(t, q, v)`` does the same and returns only tau (what the benchmark times)."""

    model: pin.Model
    sizes: tuple[int, int, int]  # (n_var, n_eq, n_in)
    step: Callable[[float, np.ndarray, np.ndarray], Step]
    control: Callable[[float, np.ndarray, np.ndarray], np.ndarray]
    formulation: object = None  # the library's formulation and solver, for tests that go further
    solver: object = None
    keep: list[object] = field(default_factory=list)  # the oracle's robot wrapper first
    references: list[Callable[[float], None]] = field(default_factory=list)  # what step(t) sets first


def initial_state(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """q0 (feet lowered onto z = 0 for a floating base) and v0 = 0."""
    robot = tp.load_robot(problem.robot)
    q = robot.default_configuration()
    if problem.contacts:
        data = robot.create_data()
        robot.compute_all_terms(data, q, robot.zero_velocity())
        spec = robot.spec
        lz = spec.sole.lz if spec.sole is not None and problem.contacts[0].points == 4 else 0.0
        q[2] -= robot.frame_placement(data, problem.contacts[0].frame).translation[2] - lz
    return q, robot.zero_velocity()


def walk_plan(problem: Problem, q: np.ndarray) -> tuple[FootstepPlan, Trajectory]:
    """The footsteps and the CoM plan of a walking problem, from the initial configuration q."""
    robot, walk = tp.load_robot(problem.robot), problem.walk
    data = robot.create_data()
    robot.compute_all_terms(data, q, robot.zero_velocity())
    right, left = (robot.frame_placement(data, robot.spec.feet[side]) for side in ("right", "left"))
    com = robot.com(data)
    sole, steps, length = robot.spec.sole, walk.steps, walk.step_length
    plan = plan_straight_walk(sole, right, left, com, steps, length, walk.single_support, walk.double_support)
    return plan, plan_com_from_zmp(plan.zmp_reference, plan.t_end, com)


class WalkEvents:
    """The contact switches of a walk at time t, through one library's calls (the ``do`` functions),
    so that both libraries switch at the same steps. Sides map to the contacts of ``_feet``."""

    TOLERANCE = 1e-9  # [s]

    def __init__(self, plan: FootstepPlan, walk: WalkSpec, lift, follow, land) -> None:
        self.plan, self.walk = plan, walk
        self.lift, self.follow, self.land = lift, follow, land  # (side, placement/sample) -> None
        self.swings = [(s, s.swing_trajectory(walk.swing_height), [False, False]) for s in plan.steps]

    def __call__(self, t: float) -> None:
        for step, trajectory, state in self.swings:
            if not state[0] and t >= step.t_lift - self.walk.unload - self.TOLERANCE:
                self.lift(step.side, step.start)
                state[0] = True
            if state[0] and not state[1]:
                if t < step.t_land - self.TOLERANCE:
                    self.follow(step.side, trajectory.sample(t))
                else:
                    self.land(step.side, step.target)
                    state[1] = True


def _tau_max(robot: SpecRobot, problem: Problem) -> np.ndarray | None:
    return None if problem.tau_max_scaling is None else problem.tau_max_scaling * robot.effort_limit()


def _joint_reference(robot: tp.RobotWrapper, q: np.ndarray) -> np.ndarray:
    return q[7:] if robot.nv > robot.na else q.copy()


def build_tsid_py(problem: Problem, q: np.ndarray, solver: tp.Solver | None = None) -> Controller:
    """tsid_py's build of ``problem`` at the initial configuration ``q``."""
    robot = tp.load_robot(problem.robot)
    form = tp.InverseDynamicsFormulation("tsid", robot)
    data = form.data
    robot.compute_all_terms(data, q, robot.zero_velocity())
    for spec in problem.contacts:
        if spec.points == 4:
            contact = tp.Contact6d(
                spec.name,
                robot,
                spec.frame,
                robot.spec.sole.corners(),
                [0, 0, 1],
                spec.mu,
                spec.f_min,
                spec.f_max,
            )
        else:
            contact = tp.ContactPoint(
                spec.name, robot, spec.frame, [0, 0, 1], spec.mu, spec.f_min, spec.f_max
            )
            contact.use_local_frame(False)
        contact.kp = spec.kp
        contact.set_reference(robot.frame_placement(data, spec.frame))
        form.add_rigid_contact(contact, spec.force_reg_weight, spec.motion_weight, spec.motion_priority)
    references: list[Callable[[float], None]] = []
    solved: dict[str, HqpOutput] = {}  # the last solution: a ramped removal starts from its force
    if problem.walk is not None:
        plan, com_trajectory = walk_plan(problem, q)
        references.append(_tsid_py_walk(problem, robot, form, plan, solved))
    if problem.com is not None:
        com = tp.TaskComEquality("task-com", robot)
        com.kp = problem.com[0]
        form.add_motion_task(com, weight=problem.com[1], priority=1)
        if problem.walk is None:
            com_trajectory = problem.com_reference(robot.com(data))
        references.append(lambda t: com.set_reference(com_trajectory.sample(t)))
    posture = tp.TaskJointPosture("task-posture", robot)
    posture.kp = problem.posture[0]
    posture.set_reference(tp.TrajectorySample(_joint_reference(robot, q)))
    form.add_motion_task(posture, weight=problem.posture[1], priority=1)
    if problem.am is not None:
        am = tp.TaskAMEquality("task-am", robot)
        am.kp = problem.am[0] * np.array([1.0, 1.0, 0.0])
        form.add_motion_task(am, weight=problem.am[1], priority=1)
    if problem.end_effector is not None:
        frame, kp, weight = problem.end_effector
        ee = tp.TaskSE3Equality("task-ee", robot, frame)
        ee.kp = kp
        ee.mask = [1, 1, 1, 0, 0, 0]
        ee.use_local_frame(False)
        target = robot.frame_placement(data, frame)
        target.translation += np.asarray(problem.ee_offset)
        ee.set_reference(target)
        form.add_motion_task(ee, weight=weight, priority=1)
    tau_max = _tau_max(robot, problem)
    if tau_max is not None:
        bounds = tp.TaskActuationBounds("task-actuation-bounds", robot)
        bounds.set_bounds(-tau_max, tau_max)
        form.add_actuation_task(bounds, weight=1.0, priority=0)
    solver = solver or tp.SolverHQuadProg()

    def solve(t: float, q: np.ndarray, v: np.ndarray) -> HqpOutput:
        for update in references:
            update(t)
        solved["sol"] = sol = solver.solve(form.compute_problem_data(t, q, v))
        return sol

    def control(t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        return form.get_actuator_forces(solve(t, q, v))

    def step(t: float, q: np.ndarray, v: np.ndarray) -> Step:
        sol = solve(t, q, v)
        if not sol.ok:
            return Step(False, np.zeros(robot.nv), np.zeros(robot.na), np.zeros(0))
        return Step(
            True, form.get_accelerations(sol), form.get_actuator_forces(sol), form.get_contact_forces(sol)
        )

    return Controller(
        robot.model, (form.n_var, form.n_eq, form.n_in), step, control, form, solver, references=references
    )


def _tsid_py_walk(
    problem: Problem,
    robot: SpecRobot,
    form: tp.InverseDynamicsFormulation,
    plan: FootstepPlan,
    solved: dict[str, HqpOutput],
):
    walk, contacts = problem.walk, form.contacts
    names = {"right": problem.contacts[0].name, "left": problem.contacts[1].name}
    feet = {}
    for side in names:
        feet[side] = tp.TaskSE3Equality(f"task-{side}-foot", robot, robot.spec.feet[side])
        feet[side].kp = walk.kp_foot

    def lift(side: str, placement: pin.SE3) -> None:
        feet[side].set_reference(placement)
        form.add_motion_task(feet[side], weight=walk.w_foot, priority=1)
        # the last solution's force, as TSID's decodeSolution keeps it (f_max when none was solved here)
        name, contact, sol = names[side], contacts[names[side]], solved.get("sol")
        normal_force = (
            contact.max_normal_force
            if sol is None
            else contact.get_normal_force(form.get_contact_force(name, sol))
        )
        form.remove_rigid_contact(name, walk.unload, normal_force)

    def land(side: str, placement: pin.SE3) -> None:
        contact = contacts[names[side]]
        contact.set_reference(placement)
        form.remove_task(feet[side].name)
        form.add_rigid_contact(contact, problem.contacts[0].force_reg_weight)

    return WalkEvents(plan, walk, lift, lambda side, sample: feet[side].set_reference(sample), land)


def build_oracle(problem: Problem, q: np.ndarray, tsid: object) -> Controller:
    """The C++ TSID's build of ``problem`` (``tsid`` is the imported oracle module)."""
    ours = tp.load_robot(problem.robot)
    urdf = str(example_robot_data_dir() / ours.spec.urdf)
    package_dirs = [str(example_robot_data_dir())]
    if ours.nv > ours.na:
        robot = tsid.RobotWrapper(urdf, package_dirs, pin.JointModelFreeFlyer(), False)
    else:
        robot = tsid.RobotWrapper(urdf, package_dirs, False)
    form = tsid.InverseDynamicsFormulationAccForce("tsid", robot, False)
    form.computeProblemData(0.0, q, np.zeros(robot.nv))
    data = form.data()
    model = robot.model()
    keep: list[object] = [robot, form]  # the binding keeps references only: keep the objects alive
    names, by_name = [], {}
    for spec in problem.contacts:
        normal = np.array([0.0, 0.0, 1.0])
        if spec.points == 4:
            contact = tsid.Contact6d(
                spec.name,
                robot,
                spec.frame,
                ours.spec.sole.corners(),
                normal,
                spec.mu,
                spec.f_min,
                spec.f_max,
            )
        else:
            contact = tsid.ContactPoint(spec.name, robot, spec.frame, normal, spec.mu, spec.f_min, spec.f_max)
            contact.useLocalFrame(False)
        size = 6 if spec.points == 4 else 3
        contact.setKp(spec.kp * np.ones(size))
        contact.setKd(2 * np.sqrt(spec.kp) * np.ones(size))
        contact.setReference(robot.framePosition(data, model.getFrameId(spec.frame)))
        form.addRigidContact(contact, spec.force_reg_weight, spec.motion_weight, spec.motion_priority)
        keep.append(contact)
        names.append(spec.name)
        by_name[spec.name] = contact

    def gains(task: object, kp: float | np.ndarray, size: int) -> None:
        kp = kp * np.ones(size)
        task.setKp(kp)
        task.setKd(2 * np.sqrt(kp))

    com_sample = tsid.TrajectorySample(3)
    references: list[Callable[[float], None]] = []
    if problem.walk is not None:
        plan, com_trajectory = walk_plan(problem, q)
        contacts = {"right": by_name[problem.contacts[0].name], "left": by_name[problem.contacts[1].name]}
        references.append(_oracle_walk(problem, ours, robot, form, plan, contacts, gains, keep, tsid))
    if problem.com is not None:
        com = tsid.TaskComEquality("task-com", robot)
        gains(com, problem.com[0], 3)
        form.addMotionTask(com, problem.com[1], 1, 0.0)
        if problem.walk is None:
            com_trajectory = problem.com_reference(robot.com(data).copy())

        def set_com(t: float) -> None:
            ref = com_trajectory.sample(t)
            com_sample.value(ref.pos)
            com_sample.derivative(ref.vel)
            com_sample.second_derivative(ref.acc)
            com.setReference(com_sample)

        references.append(set_com)
        keep.append(com)
    posture = tsid.TaskJointPosture("task-posture", robot)
    gains(posture, problem.posture[0], robot.na)
    form.addMotionTask(posture, problem.posture[1], 1, 0.0)
    posture_sample = tsid.TrajectoryEuclidianConstant("posture", _joint_reference(ours, q)).computeNext()
    posture.setReference(posture_sample)
    keep += [posture, posture_sample, com_sample]
    if problem.am is not None:
        am = tsid.TaskAMEquality("task-am", robot)
        gains(am, problem.am[0] * np.array([1.0, 1.0, 0.0]), 3)
        form.addMotionTask(am, problem.am[1], 1, 0.0)
        am_sample = tsid.TrajectoryEuclidianConstant("am", np.zeros(3)).computeNext()
        am.setReference(am_sample)
        keep += [am, am_sample]
    if problem.end_effector is not None:
        frame, kp, weight = problem.end_effector
        ee = tsid.TaskSE3Equality("task-ee", robot, frame)
        gains(ee, kp, 6)
        ee.setMask(np.array([1.0, 1, 1, 0, 0, 0]))
        ee.useLocalFrame(False)
        form.addMotionTask(ee, weight, 1, 0.0)
        target = robot.framePosition(data, model.getFrameId(frame))
        target.translation += np.asarray(problem.ee_offset)
        ee_sample = tsid.TrajectorySE3Constant("ee", target).computeNext()
        ee.setReference(ee_sample)
        keep += [ee, ee_sample]
    tau_max = _tau_max(ours, problem)
    if tau_max is not None:
        bounds = tsid.TaskActuationBounds("task-actuation-bounds", robot)
        bounds.setBounds(-tau_max, tau_max)
        form.addActuationTask(bounds, 1.0, 0, 0.0)
        keep.append(bounds)
    solver = tsid.SolverHQuadProgFast("qp")
    sizes = [(form.nVar, form.nEq, form.nIn)]
    solver.resize(*sizes[0])
    keep.append(solver)

    def solve(t: float, q: np.ndarray, v: np.ndarray) -> object:
        for update in references:
            update(t)
        hqp = form.computeProblemData(t, q, v)
        if (form.nVar, form.nEq, form.nIn) != sizes[0]:  # a contact came or went, as TSID's exercises do
            sizes[0] = (form.nVar, form.nEq, form.nIn)
            solver.resize(*sizes[0])
        return solver.solve(hqp)

    def control(t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        return form.getActuatorForces(solve(t, q, v))

    def step(t: float, q: np.ndarray, v: np.ndarray) -> Step:
        sol = solve(t, q, v)
        if sol.status != 0:
            return Step(False, np.zeros(robot.nv), np.zeros(robot.na), np.zeros(0))
        return Step(True, form.getAccelerations(sol), form.getActuatorForces(sol), form.getContactForces(sol))

    return Controller(model, (form.nVar, form.nEq, form.nIn), step, control, form, solver, keep)


def _oracle_walk(problem, ours, robot, form, plan, contacts, gains, keep, tsid):
    walk = problem.walk
    names = {"right": problem.contacts[0].name, "left": problem.contacts[1].name}
    feet, samples = {}, {}
    for side in names:
        feet[side] = tsid.TaskSE3Equality(f"task-{side}-foot", robot, ours.spec.feet[side])
        gains(feet[side], walk.kp_foot, 6)
        samples[side] = tsid.TrajectorySample(12, 6)
    keep += [*feet.values(), *samples.values()]

    def follow(side: str, sample: tp.TrajectorySample) -> None:
        samples[side].value(sample.pos)
        samples[side].derivative(sample.vel)
        samples[side].second_derivative(sample.acc)
        feet[side].setReference(samples[side])

    def lift(side: str, placement: pin.SE3) -> None:
        follow(side, tp.TrajectorySample.from_se3(placement))
        form.addMotionTask(feet[side], walk.w_foot, 1, 0.0)
        form.removeRigidContact(names[side], walk.unload)

    def land(side: str, placement: pin.SE3) -> None:
        contacts[side].setReference(placement)
        contacts[side].setMaxNormalForce(problem.contacts[0].f_max)  # a TSID ramp would have lowered it
        form.removeTask(feet[side].name, 0.0)
        form.addRigidContact(contacts[side], problem.contacts[0].force_reg_weight)

    return WalkEvents(plan, walk, lift, follow, land)


def integrate(model: pin.Model, q: np.ndarray, v: np.ndarray, dv: np.ndarray, dt: float) -> tuple:
    """The exercises' integration: v_mean = v + dt/2 dv, q <- q (+) dt v_mean, v <- v + dt dv."""
    return pin.integrate(model, q, dt * (v + 0.5 * dt * dv)), v + dt * dv
