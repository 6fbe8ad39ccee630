"""tsid_py.compat is TSID's Python API: TSID's own tests and course exercises run through it.

- TSID 1.10.0's tests/python/test_*.py run with ``tsid`` = tsid_py.compat (tests/tsid_upstream.py
  downloads the sdist from PyPI once, checks its sha256, and runs each script in a subprocess);
- the exercises run headless through compat and through the C++ TSID (the oracle, where
  installed), and their logged trajectories agree to 1e-8 (relative to each array's scale);
- the migration guide's name table names only what exists, in compat and in tsid_py;
- compat objects refuse attribute writes (``task.Kp = 100``) and take TSID's inputs.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import subprocess
import sys
import warnings
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import tsid_upstream as upstream

import tsid_py
import tsid_py.compat as tsid
from tsid_py.errors import UnknownAttributeError

HERE = Path(__file__).resolve().parent
ORACLE = importlib.util.find_spec("tsid") is not None
IMPLS = ("compat", "oracle") if ORACLE else ("compat",)

# Two of TSID's tests fail with the C++ TSID 1.10.0 too, at the same line (upstream's
# tests/python/CMakeLists.txt leaves them out): they use np.matrix-era arithmetic on arrays.
UPSTREAM_FAILURES = {
    "test_Contact.py": (
        'test_Contact.py", line 67',
        "AssertionError",
        "compares an (n, 1) np.matrix product with the (n,) upper bound by broadcasting",
    ),
    "test_ContactPoint.py": (
        'test_ContactPoint.py", line 57',
        "ValueError: operands could not be broadcast",
        "multiplies the 5x3 force matrix by a 3-vector elementwise",
    ),
}
# Logged values compat gives differently from TSID, on purpose (docs/migrating-from-tsid.md).
KNOWN_DIFFERENCES = {
    "com_acc": "TSID's TaskComEquality.getAcceleration(dv) is J dv - drift (task-com-equality.cpp); "
    "compat's is tsid_py's J dv + drift",
}
TOLERANCE = 1e-8  # relative to max(1, the array's largest entry)
# TSID's scripts pass np.matrix inputs, which NumPy flags
pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")


@dataclass
class Run:
    returncode: int
    output: str
    npz: Path

    def tail(self) -> str:
        return "\n".join(self.output.splitlines()[-25:])


def _run(what: str, target: str, impl: str, out: Path) -> Run:
    npz = out / f"{Path(target).stem}-{impl}.npz"
    command = [sys.executable, str(HERE / "tsid_upstream.py"), what, target, "--impl", impl]
    if what == "exercise":
        command += ["--out", str(npz)]
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    return Run(done.returncode, done.stdout + done.stderr, npz)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str, str], Future]:
    """Every script, started at once on every core (each test waits for its own)."""
    try:
        upstream.sdist_root()
    except upstream.SdistUnavailableError as error:
        pytest.skip(f"TSID's tests and exercises are not available: {error}")
    out = tmp_path_factory.mktemp("upstream")
    jobs = [("test", f"tests/python/{name}", "compat") for name in upstream.TESTS]
    jobs += [("exercise", name, impl) for name in upstream.RECIPES for impl in IMPLS]
    pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2)
    yield {job: pool.submit(_run, *job, out) for job in jobs}
    pool.shutdown(cancel_futures=True)


# ------------------------------------------------------------------------- TSID's own tests
@pytest.mark.slow
@pytest.mark.parametrize("name", upstream.TESTS)
def test_tsid_python_test_passes_through_compat(runs: dict, name: str) -> None:
    run = runs[("test", f"tests/python/{name}", "compat")].result()
    if name in UPSTREAM_FAILURES:
        where, error, why = UPSTREAM_FAILURES[name]
        assert run.returncode != 0 and where in run.output and error in run.output, run.tail()
        pytest.xfail(f"fails at the same line with the C++ TSID 1.10.0: it {why}")
    assert run.returncode == 0, run.tail()


# ------------------------------------------------------------------------------- exercises
def _load(run: Run, name: str) -> dict[str, np.ndarray]:
    assert run.returncode == 0, run.tail()
    with np.load(run.npz) as arrays:
        return {key: arrays[key] for key in arrays.files}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(upstream.RECIPES))
def test_exercise_runs_through_compat(runs: dict, name: str) -> None:
    """It runs to its end and the robot keeps its footing (the base height stays within 5 cm of the
    first control step's: the first display may come before the robot is set on the ground)."""
    arrays = _load(runs[("exercise", name, "compat")].result(), name)
    shown = arrays["displayed"]
    assert len(shown) > 5 and np.all(np.isfinite(shown))
    if shown.shape[1] in (15, 38, 39):  # floating base: quadruped, Romeo, Talos
        assert np.abs(shown[1:, 2] - shown[1, 2]).max() < 0.05
    if "com_pos" in arrays:
        height = arrays["com_pos"][2]
        assert np.nanmax(height) - np.nanmin(height) < 0.05


@pytest.mark.oracle
@pytest.mark.skipif(
    not ORACLE, reason="the C++ TSID oracle is not installed (make oracle): nothing to compare"
)
@pytest.mark.parametrize("name", list(upstream.RECIPES))
def test_exercise_matches_tsid(runs: dict, name: str) -> None:
    ours = _load(runs[("exercise", name, "compat")].result(), name)
    theirs = _load(runs[("exercise", name, "oracle")].result(), name)
    assert ours.keys() == theirs.keys()
    worst = {}
    for key in sorted(set(ours) - set(KNOWN_DIFFERENCES)):
        a, b = ours[key], theirs[key]
        assert a.shape == b.shape and np.array_equal(np.isnan(a), np.isnan(b)), key  # exact: booleans
        worst[key] = float(np.nanmax(np.abs(a - b), initial=0.0)) / max(
            1.0, np.nanmax(np.abs(b), initial=0.0)
        )
    print(f"{name}: largest relative difference per array {worst}")
    assert max(worst.values()) <= TOLERANCE, worst


# ------------------------------------------------------------------------ migration guide
def _guide_section(title: str) -> list[str]:
    """The lines of the migration guide's section whose heading starts with ``title``."""
    text = (HERE.parent / "docs/migrating-from-tsid.md").read_text()
    section = text.split(f"\n## {title}", 1)[1]
    return section.split("\n## ", 1)[0].splitlines()


def _guide_rows() -> list[tuple[list[str], list[str] | None]]:
    """(TSID name, tsid_py name) of each row of the guide's table (Step 2), as dotted parts."""
    rows = []
    for line in _guide_section("Step 2"):
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].startswith("`"):
            names = [re.match(r"`([A-Za-z_][\w.]*)", cell) for cell in cells[:2]]
            assert names[0], line
            rows.append((names[0].group(1).split("."), names[1].group(1).split(".") if names[1] else None))
    return rows


# Where the guide's table finds a tsid_py name (it says so above the table): the package, or one of
# these modules.
GUIDE_MODULES = ("constraints", "hqp", "solvers", "contacts")


def _main_owner(name: str) -> object:
    """The tsid_py object the guide's table names ``name``: exported by the package (not a deprecated
    name), of one of GUIDE_MODULES, or a module."""
    if name in tsid_py.__all__:
        return getattr(tsid_py, name)
    for module in GUIDE_MODULES:
        found = getattr(importlib.import_module(f"tsid_py.{module}"), name, None)
        if found is not None:
            return found
    return importlib.import_module(f"tsid_py.{name}")


def _main_instances(ur5: tsid_py.robot_specs.SpecRobot) -> dict[str, object]:
    """tsid_py objects whose attributes are set when built (not class attributes)."""
    return {
        "RobotWrapper": ur5,
        "InverseDynamicsFormulation": tsid_py.InverseDynamicsFormulation("f", ur5),
        "HqpOutput": tsid_py.solvers.HqpOutput(tsid_py.solvers.QPStatus.OPTIMAL),
        "ConstraintEquality": tsid_py.constraints.ConstraintEquality("c", 1, 1),
        "ConstraintBound": tsid_py.constraints.ConstraintBound("c", 1),
    }


def test_the_names_the_guide_says_compat_lacks_are_absent() -> None:
    """Step 1's table of TSID names tsid_py.compat does not have: each is really absent (a script
    using one stops there with an AttributeError, as the guide says)."""
    lacking = [
        name
        for line in _guide_section("Step 1")
        if line.startswith("| `")
        for name in re.findall(r"`([A-Za-z_]\w*)`", line.split("|")[1])
    ]
    assert "SolverProxQP" in lacking and len(lacking) >= 8
    for name in lacking:
        assert not hasattr(tsid, name), name


def test_migration_guide_names_exist(ur5: tsid_py.robot_specs.SpecRobot) -> None:
    rows = _guide_rows()
    assert len(rows) > 40
    instances = _main_instances(ur5)
    for tsid_name, main_name in rows:
        assert hasattr(tsid, tsid_name[0]), tsid_name
        if len(tsid_name) > 1:
            assert tsid_name[1] in getattr(tsid, tsid_name[0]).tsid_names(), tsid_name
        if main_name is None:
            continue
        owner = _main_owner(main_name[0])
        if len(main_name) > 1:
            found = hasattr(owner, main_name[1]) or hasattr(instances.get(main_name[0]), main_name[1])
            assert found, main_name


# ---------------------------------------------------------------------- compat in-process
@pytest.fixture(scope="module")
def arm() -> tsid.RobotWrapper:
    robots = upstream._erd()
    return tsid.RobotWrapper(robots / "ur_description/urdf/ur5_robot.urdf", [robots / "../.."], False)


@pytest.fixture(scope="module")
def biped() -> tsid.RobotWrapper:
    robots = upstream._erd()
    dirs = pin.StdVec_StdString()
    dirs.append(str(robots / "../.."))
    return tsid.RobotWrapper(
        str(robots / "romeo_description/urdf/romeo.urdf"), dirs, pin.JointModelFreeFlyer(), False
    )


def test_setting_a_tsid_property_raises_naming_its_setter(arm: tsid.RobotWrapper) -> None:
    task = tsid.TaskComEquality("com", arm)
    with pytest.raises(UnknownAttributeError, match=r"Kp.*setKp\(value\).*tsid_py: kp = value"):
        task.Kp = 100
    with pytest.raises(UnknownAttributeError, match="did you mean"):
        task.kp = 100  # tsid_py's name is not TSID's
    with pytest.raises(UnknownAttributeError, match="Kdd"):
        task.Kdd  # noqa: B018
    task.setKp(100 * np.ones(3))
    assert np.array_equal(task.Kp, 100 * np.ones(3))  # exact: as set
    np.testing.assert_allclose(task.Kd, 20 * np.ones(3), rtol=1e-15)  # 2 sqrt(kp), computed


def test_every_compat_object_is_sealed(arm: tsid.RobotWrapper) -> None:
    formulation = tsid.InverseDynamicsFormulationAccForce("f", arm, False)
    objects = [
        arm,
        formulation,
        tsid.SolverHQuadProgFast("qp"),
        tsid.TrajectorySample(3),
        tsid.TrajectoryEuclidianConstant("c", np.zeros(3)),
        tsid.TrajectorySE3Constant("s", pin.SE3.Identity()),
        tsid.TaskJointPosture("posture", arm),
        tsid.TaskSE3Equality("ee", arm, "ee_fixed_joint"),
        tsid.ContactPoint("p", arm, "ee_fixed_joint", np.array([0, 0, 1.0]), 0.3, 1.0, 100.0),
        tsid.ConstraintEquality("c", np.eye(2), np.zeros(2)),
        tsid.ConstraintLevel(),
        tsid.HQPData(),
        formulation.computeProblemData(0.0, np.zeros(6), np.zeros(6)),
    ]
    for obj in objects:
        with pytest.raises(UnknownAttributeError):
            obj.name = "renamed"
        with pytest.raises(UnknownAttributeError):
            obj.anything = 1


def test_robot_constructors_and_joint_vs_frame_indices(
    arm: tsid.RobotWrapper, biped: tsid.RobotWrapper
) -> None:
    model = arm.model()
    assert (arm.nq, arm.nv, arm.na, arm.is_fixed_base) == (6, 6, 6, True)
    assert (biped.nv, biped.na, biped.is_fixed_base) == (biped.nv, biped.nv - 6, False)
    assert tsid.RobotWrapper(biped.model(), False).na == biped.nv - 6  # TSID: a floating base
    assert tsid.RobotWrapper(model, tsid.FIXED_BASE_SYSTEM, False).na == 6
    data, q = arm.data(), np.matrix([0.1, -1.0, 0.7, 0.2, 0.3, 0.4]).T  # np.matrix, as TSID's exercises
    arm.computeAllTerms(data, q, np.zeros(6))
    joint, frame = model.getJointId("wrist_3_joint"), model.getFrameId("ee_fixed_joint")
    assert arm.position(data, joint).isApprox(data.oMi[joint])
    assert arm.framePosition(data, frame).isApprox(data.oMf[frame])
    model.gravity = pin.Motion.Zero()  # model() is a copy
    assert np.linalg.norm(arm.model().gravity.linear) > 9


def test_samples_and_trajectories() -> None:
    sample = tsid.TrajectorySample(12, 6)
    assert sample.value().shape == (12,) and sample.derivative().shape == (6,)
    sample.value(pin.SE3.Identity())
    assert np.array_equal(sample.value(), tsid.SE3ToVector(pin.SE3.Identity()))  # exact: a copy
    value = sample.value()
    value[0] = 5.0  # a copy
    assert sample.value()[0] == 0.0  # exact: untouched by the write
    with pytest.warns(UserWarning, match="use value"):
        sample.pos(np.ones(12))
    with pytest.warns(DeprecationWarning, match="use derivative"):
        assert np.array_equal(sample.vel(), np.zeros(6))  # exact: as set
    assert np.array_equal(sample.value(), np.ones(12))  # exact: as set
    trajectory = tsid.TrajectorySE3Constant("se3")
    trajectory.setReference(pin.SE3.Identity())
    assert trajectory.has_trajectory_ended()
    identity = tsid.SE3ToVector(pin.SE3.Identity())
    assert np.array_equal(trajectory.getSample(1.0).value(), identity)  # exact: a copy
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tsid.TrajectorySample(3).value(np.zeros(3))  # the current spellings do not warn


def test_formulation_solution_and_data_copy(biped: tsid.RobotWrapper) -> None:
    model = biped.model()
    q = pin.neutral(model)
    q[2] = 0.9
    formulation = tsid.InverseDynamicsFormulationAccForce("f", biped, False)
    formulation.computeProblemData(0.0, q, np.zeros(biped.nv))
    data = formulation.data()
    points = np.matrix([[-0.05, -0.05, 0.1, 0.1], [-0.05, 0.05, -0.05, 0.05], [-0.07] * 4])
    contact = tsid.Contact6d("rf", biped, "RAnkleRoll", points, np.matrix([0, 0, 1.0]).T, 0.3, 5.0, 1000.0)
    contact.setKp(np.matrix(10 * np.ones(6)).T)
    contact.setReference(biped.framePosition(data, model.getFrameId("RAnkleRoll")))
    formulation.addRigidContact(contact, 1e-5)
    posture = tsid.TaskJointPosture("posture", biped)
    posture.setKp(np.ones(biped.na))
    posture.setReference(tsid.TrajectoryEuclidianConstant("q", q[7:]).computeNext())
    formulation.addMotionTask(posture, 1e-3, 1, 0.0)
    solver = tsid.SolverHQuadProgFast("qp")
    solver.resize(formulation.nVar, formulation.nEq, formulation.nIn)
    sol = solver.solve(formulation.computeProblemData(0.0, q, np.zeros(biped.nv)))
    assert sol.status == 0 and isinstance(sol.status, int) and sol.x.shape == (formulation.nVar,)
    assert sol.iterations >= 0 and len(getattr(sol, "lambda")) >= formulation.nEq and sol.activeSet.ndim == 1
    assert formulation.checkContact("rf", sol) and contact.n_motion == 6
    force = formulation.getContactForce("rf", sol)
    assert contact.getNormalForce(force) > 100
    assert contact.getForceGeneratorMatrix.shape == (6, 12)
    assert contact.computeForceRegularizationTask(0.0, q, np.zeros(biped.nv), data).rows == 6
    data = formulation.data()
    data.com[0][:] = 0.0  # a copy of the formulation's Data
    assert biped.com(formulation.data())[2] > 0.3


def test_update_rigid_contact_weights_sets_each_weight_where_tsid_does(biped: tsid.RobotWrapper) -> None:
    """updateRigidContactWeights(name, force_regularization_weight, motion_weight): TSID's order
    (InverseDynamicsFormulationAccForce::updateRigidContactWeights); each lands on its own cost."""
    model = biped.model()
    q = pin.neutral(model)
    q[2] = 0.9
    formulation = tsid.InverseDynamicsFormulationAccForce("f", biped, False)
    formulation.computeProblemData(0.0, q, np.zeros(biped.nv))
    points = np.matrix([[-0.05, -0.05, 0.1, 0.1], [-0.05, 0.05, -0.05, 0.05], [-0.07] * 4])
    contact = tsid.Contact6d("rf", biped, "RAnkleRoll", points, np.matrix([0, 0, 1.0]).T, 0.3, 5.0, 1000.0)
    contact.setReference(biped.framePosition(formulation.data(), model.getFrameId("RAnkleRoll")))
    formulation.addRigidContact(contact, 1e-5, 1.0, 1)  # the motion as a cost: its weight shows
    assert formulation.updateRigidContactWeights("rf", 2e-3, 7.0)
    costs = {c.name: w for w, c in formulation.computeProblemData(0.0, q, np.zeros(biped.nv)).problem()[1]}
    motion = next(name for name in costs if "force" not in name.lower())
    force = next(name for name in costs if "force" in name.lower())
    assert (costs[force], costs[motion]) == pytest.approx((2e-3, 7.0))
    formulation.updateRigidContactWeights("rf", 5e-4)  # the motion weight left as it was
    costs = {c.name: w for w, c in formulation.computeProblemData(0.0, q, np.zeros(biped.nv)).problem()[1]}
    assert (costs[force], costs[motion]) == pytest.approx((5e-4, 7.0))


def test_hand_built_problem_is_solved_with_its_constraints_as_they_are_at_solve_time() -> None:

    cost = tsid.ConstraintEquality("cost", np.eye(2), np.array([1.0, 2.0]))
    bound = tsid.ConstraintInequality("ineq", np.array([[1.0, 0.0]]), np.array([-1e10]), np.array([0.5]))
    hard, soft = tsid.ConstraintLevel(), tsid.ConstraintLevel()
    hard.append(1.0, bound)
    soft.append(1.0, cost)
    problem = tsid.HQPData()
    problem.append(hard)
    problem.append(soft)
    cost.setVector(np.array([0.0, 3.0]))  # after it was appended: TSID's levels share the constraint
    sol = tsid.SolverHQuadProg("qp").solve(problem)
    assert sol.status == 0 and np.allclose(sol.x, [0.0, 3.0], atol=1e-7)
    assert cost.isEquality and not cost.isBound and bound.lowerBound[0] == -1e10  # exact: as set


def test_constraint_setters_resize_as_tsids_and_check_what_they_are_given() -> None:
    """TSID's setters resize a constraint built from its name alone, in any order; tsid_py's
    checks still refuse NaN."""
    equality = tsid.ConstraintEquality("e")
    equality.setVector(np.array([1.0, 2.0]))
    equality.setMatrix(np.arange(6.0).reshape(2, 3))
    assert equality.matrix.tolist() == [[0, 1, 2], [3, 4, 5]] and equality.vector.tolist() == [1, 2]
    inequality = tsid.ConstraintInequality("i")
    inequality.setMatrix(np.ones((1, 3)))
    inequality.setLowerBound(np.array([-np.inf]))
    inequality.setUpperBound(np.array([0.5]))
    assert (inequality.rows, inequality.cols, inequality.upperBound.tolist()) == (1, 3, [0.5])
    with pytest.raises(tsid_py.errors.NonFiniteError, match="vector of constraint 'e' contains NaN"):
        equality.setVector(np.array([np.nan, 1.0]))


def test_every_translated_name_exists_on_the_tsid_py_object(arm: tsid.RobotWrapper) -> None:
    """Each entry of a compat class's name table names an attribute of its tsid_py object."""
    normal, frame = np.array([0.0, 0.0, 1.0]), "ee_fixed_joint"
    corners = np.array([[-1.0, -1, 1, 1], [-1, 1, -1, 1], [0, 0, 0, 0]]) * 0.05
    contact = tsid.Contact6d("c6", arm, frame, corners, normal, 0.3, 1.0, 100.0)
    objects = [
        arm,
        tsid.InverseDynamicsFormulationAccForce("f", arm, False),
        tsid.SolverHQuadProg("qp").solve(tsid.HQPData()),
        tsid.ConstraintEquality("e", 1, 1),
        tsid.ConstraintInequality("i", 1, 1),
        tsid.ConstraintBound("b", 1),
        tsid.TrajectoryEuclidianConstant("c", np.zeros(3)),
        tsid.TaskComEquality("com", arm),
        tsid.TaskJointPosture("posture", arm),
        tsid.TaskSE3Equality("se3", arm, frame),
        tsid.TaskTwoFramesEquality("two", arm, frame, "wrist_1_joint"),
        tsid.TaskAMEquality("am", arm),
        tsid.TaskCopEquality("cop", arm),
        tsid.TaskContactForceEquality("force", arm, 0.001, contact),
        tsid.TaskActuationBounds("tau", arm),
        tsid.TaskActuationEquality("tau-ref", arm),
        tsid.TaskJointBounds("bounds", arm, 0.001),
        tsid.TaskJointPosVelAccBounds("pva", arm, 0.001, False),
        contact,
        tsid.ContactPoint("cp", arm, frame, normal, 0.3, 1.0, 100.0),
        tsid.ContactTwoFramePositions("c2", arm, frame, "wrist_1_joint", -100.0, 100.0),
        tsid.Measured6dWrench("w", arm, frame),
    ]
    for obj in objects:
        inner = obj._inner
        for name, target in type(obj)._names.items():
            attribute = getattr(target, "attribute", None) or getattr(target, "method", None) or target
            assert hasattr(inner, attribute), f"{type(obj).__name__}.{name} -> {attribute}"


# ------------------------------------------------------------------ transitions, as TSID's
# TSID (inverse-dynamics-formulation-acc-force.cpp) ignores the transition durations of
# addMotionTask, addForceTask, addActuationTask and removeTask; removeRigidContact(name, d) ramps
# the contact's f_max from the time of the last computeProblemData.
ARM_Q = np.array([0.0, -1.0, 0.7, 0.0, 0.0, 0.0])


def _posture(T: object, robot: object, q: np.ndarray, offset: float) -> object:
    """A posture task toward the joints of q + offset [rad]."""
    posture = T.TaskJointPosture("posture", robot)
    posture.setKp(10 * np.ones(robot.na))
    posture.setKd(6 * np.ones(robot.na))
    reference = T.TrajectorySample(robot.na)
    reference.value(q[robot.nq - robot.na :] + offset)
    posture.setReference(reference)
    return posture


def _closed_loop(
    T: object, form: object, model: pin.Model, q: np.ndarray, dt: float, steps: int, before, after=None
) -> np.ndarray:
    """[dv; tau] at each step of a closed loop of ``form`` (TSID's module T) from q at rest, dt [s]:
    ``before(i)`` runs before step i's problem, ``after(sol)`` after its solution."""
    solver, v, out = T.SolverHQuadProgFast("qp"), np.zeros(model.nv), []
    for i in range(steps):
        before(i)
        problem = form.computeProblemData(i * dt, q, v)
        solver.resize(form.nVar, form.nEq, form.nIn)
        sol = solver.solve(problem)
        assert sol.status == 0
        dv, tau = form.getAccelerations(sol), form.getActuatorForces(sol)
        if after is not None:
            after(sol)
        out.append(np.concatenate([dv, tau]))
        v_next = v + dt * dv
        q, v = pin.integrate(model, q, 0.5 * dt * (v + v_next)), v_next
    return np.array(out)


def _arm(T: object) -> tuple[object, object, object]:
    """A UR5 (TSID's module T), its formulation, and a posture task toward ARM_Q + 0.3 rad, added
    with a transition duration (TSID ignores it)."""
    robot = T.RobotWrapper(str(upstream._erd() / "ur_description/urdf/ur5_robot.urdf"), [], False)
    form = T.InverseDynamicsFormulationAccForce("f", robot, False)
    posture = _posture(T, robot, ARM_Q, 0.3)  # kept alive: TSID's formulation holds a reference to it
    form.addMotionTask(posture, 1.0, 1, 0.5)
    return robot, form, posture


def _arm_with_transitions(T: object) -> np.ndarray:
    """The UR5 pulled by its posture task within acceleration and torque bounds, all added with
    transition durations, the acceleration bounds removed with one at step 5: [dv; tau] at each of
    10 steps of a 1 ms closed loop."""
    robot, form, _ = _arm(T)
    accelerations = T.TaskJointBounds("accelerations", robot, 1e-3)
    accelerations.setAccelerationBounds(-2.5 * np.ones(6), 2.5 * np.ones(6))
    torques = T.TaskActuationBounds("torques", robot)
    torques.setBounds(-40 * np.ones(6), 40 * np.ones(6))
    form.addMotionTask(accelerations, 1.0, 0, 0.5)
    form.addActuationTask(torques, 1.0, 0, 0.5)

    def remove_before_step_5(i: int) -> None:
        if i == 5:
            form.removeTask("accelerations", 0.5)

    return _closed_loop(T, form, robot.model(), ARM_Q, 1e-3, 10, remove_before_step_5)


def test_task_transition_durations_are_ignored_as_in_tsid(arm: tsid.RobotWrapper) -> None:
    """The task comes in with its full weight, at any level, and leaves at once."""
    steps = _arm_with_transitions(tsid)
    dv, tau = steps[:, :6], steps[:, 6:]
    assert np.abs(dv[:5]).max() == pytest.approx(2.5, abs=1e-6)  # the bounds bind from the start
    assert np.abs(dv[5:]).max() > 2.9  # and are gone at once
    assert np.abs(tau).max() < 40.0
    form = tsid.InverseDynamicsFormulationAccForce("f", arm, False)
    cop = tsid.TaskCopEquality("cop", arm)
    assert form.addForceTask(cop, 0.1, 1, 0.5)
    weights = {c.name: w for w, c in form.computeProblemData(0.0, ARM_Q, np.zeros(6)).problem()[1]}
    assert weights["cop"] == 0.1  # exact: as given
    with pytest.raises(tsid_py.errors.InvalidParameterError, match="transition_duration must be >= 0"):
        form.addMotionTask(_posture(tsid, arm, ARM_Q, 0.3), 1.0, 1, -0.1)  # TSID: a ValueError too


@pytest.mark.oracle
def test_task_transition_durations_give_tsids_answers() -> None:
    oracle = pytest.importorskip("tsid", reason="the C++ TSID oracle is not installed (make oracle)")
    ours, theirs = _arm_with_transitions(tsid), _arm_with_transitions(oracle)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9 * max(1.0, np.abs(theirs).max()))


def _arm_with_masked_torque_bounds(T: object) -> np.ndarray:
    """The UR5 pulled by its posture task, the torques of its first three joints bounded to 10 N m
    (the shoulder needs about 24): [dv; tau] at each of 10 steps of a 1 ms closed loop."""
    robot, form, _ = _arm(T)
    torques = T.TaskActuationBounds("torques", robot)
    torques.setMask(np.array([1, 1, 1, 0, 0, 0.0]))
    torques.setBounds(-10 * np.ones(3), 10 * np.ones(3))  # TSID: one per masked joint
    form.addActuationTask(torques, 1.0, 0, 0.0)
    return _closed_loop(T, form, robot.model(), ARM_Q, 1e-3, 10, lambda i: None)


def test_masked_torque_bounds_take_one_bound_per_masked_joint_as_in_tsid(arm: tsid.RobotWrapper) -> None:
    torques = tsid.TaskActuationBounds("torques", arm)
    torques.setMask(np.array([1, 1, 1, 0, 0, 0.0]))
    with pytest.raises(tsid_py.errors.DimensionError, match=r"masked joint\) must have size 3, got size 6"):
        torques.setBounds(-np.ones(6), np.ones(6))
    torques.setBounds(-np.arange(3.0), np.matrix([1.0, 2.0, 3.0]).T)
    assert torques.getLowerBounds.tolist() == [0.0, -1.0, -2.0] and torques.dim == 3  # exact: as set
    assert torques.getUpperBounds.tolist() == [1.0, 2.0, 3.0]  # exact: as set
    torques.setMask(np.array([0, 0, 1, 1, 0, 0.0]))
    assert torques.getUpperBounds.tolist() == [3.0, np.inf]  # exact: kept, and never set
    tau = _arm_with_masked_torque_bounds(tsid)[:, 6:]
    assert np.abs(tau[:, :3]).max() == pytest.approx(10.0, abs=1e-9)  # the shoulder's binds
    assert np.abs(tau[:, 3:]).max() > 0.01


@pytest.mark.oracle
def test_masked_torque_bounds_give_tsids_answers() -> None:
    oracle = pytest.importorskip("tsid", reason="the C++ TSID oracle is not installed (make oracle)")
    ours, theirs = _arm_with_masked_torque_bounds(tsid), _arm_with_masked_torque_bounds(oracle)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9 * max(1.0, np.abs(theirs).max()))


def _biped_unloading_a_foot(T: object) -> tuple[np.ndarray, np.ndarray]:
    """Talos (TSID's module T) on both feet shifting its CoM, its right foot removed over 20 ms
    after step 1: [dv; tau] at each of 16 steps of a 2 ms closed loop, and at each step the right
    foot's f_max, nVar and the right foot's normal force (0 once it has left)."""
    robots = upstream._erd()
    robot = T.RobotWrapper(
        str(robots / "talos_data/robots/talos_reduced.urdf"),
        [str(robots.parent.parent)],
        pin.JointModelFreeFlyer(),
        False,
    )
    model = robot.model()
    pin.loadReferenceConfigurations(model, str(robots / "talos_data/srdf/talos.srdf"), False)
    q, v = np.array(model.referenceConfigurations["half_sitting"]), np.zeros(robot.nv)
    form = T.InverseDynamicsFormulationAccForce("f", robot, False)
    form.computeProblemData(0.0, q, v)
    data = form.data()
    corners = np.array([[0.1, 0.1, -0.1, -0.1], [0.065, -0.065, 0.065, -0.065], [0.0] * 4])
    feet = {}
    for name, frame in (("rf", "leg_right_sole_fix_joint"), ("lf", "leg_left_sole_fix_joint")):
        foot = feet[name] = T.Contact6d(name, robot, frame, corners, np.array([0, 0, 1.0]), 0.3, 5.0, 1000.0)
        foot.setKp(10 * np.ones(6))
        foot.setKd(2 * np.sqrt(10) * np.ones(6))
        foot.setReference(robot.framePosition(data, model.getFrameId(frame)))
        form.addRigidContact(foot, 1e-5)
    com = T.TaskComEquality("com", robot)
    com.setKp(10 * np.ones(3))
    com.setKd(2 * np.sqrt(10) * np.ones(3))
    target = T.TrajectorySample(3)
    target.value(robot.com(data) + np.array([0.0, 0.03, 0.0]))
    com.setReference(target)
    form.addMotionTask(com, 1.0, 1, 0.0)
    posture = _posture(T, robot, q, 0.0)  # kept alive: TSID's formulation holds a reference to it
    form.addMotionTask(posture, 0.1, 1, 0.0)
    right = []

    def remove_before_step_2(i: int) -> None:
        if i == 2:
            form.removeRigidContact("rf", 0.02)

    def read_right_foot(sol: object) -> None:
        foot, here = feet["rf"], form.checkContact("rf", sol)
        normal = foot.getNormalForce(form.getContactForce("rf", sol)) if here else 0.0
        right.append((foot.getMaxNormalForce, form.nVar, normal))

    steps = _closed_loop(T, form, model, q, 2e-3, 16, remove_before_step_2, read_right_foot)
    return steps, np.array(right)


def test_a_ramped_contact_removal_lowers_f_max_from_the_last_problem_as_in_tsid() -> None:
    """Removed after step 1 (t = 2 ms) over 20 ms: step 2's problem already has f_max a tenth of
    the way from step 1's normal force to f_min + 1e-3 N, step 11's (t = 22 ms) is at its end, and
    the foot leaves at step 12. The contact keeps the lowered f_max, as TSID's."""
    _, right = _biped_unloading_a_foot(tsid)
    f_max, n_var, normal = right.T
    assert f_max[:2].tolist() == [1000.0, 1000.0]  # exact: as given
    assert f_max[2] == pytest.approx(normal[1] + 0.1 * (5.001 - normal[1]), rel=1e-12)
    np.testing.assert_allclose(np.diff(f_max[2:12]), (5.001 - normal[1]) / 10, rtol=1e-9)
    assert f_max[11:].tolist() == pytest.approx([5.001] * 5, abs=1e-12)
    assert n_var[11] == 62 and n_var[12:].tolist() == [50] * 4  # exact: counts
    assert normal[11] == pytest.approx(5.001, abs=1e-6)


def test_a_ramped_contact_removal_is_refused_where_it_cannot_ramp(arm: tsid.RobotWrapper) -> None:
    form = tsid.InverseDynamicsFormulationAccForce("f", arm, False)
    point = tsid.ContactPoint("point", arm, "ee_fixed_joint", np.array([0, 0, 1.0]), 0.3, 1.0, 100.0)
    rod = tsid.ContactTwoFramePositions("rod", arm, "ee_fixed_joint", "wrist_1_joint", -100.0, 100.0)
    form.addRigidContact(point, 1e-5)
    form.addRigidContact(rod, 1e-5)
    with pytest.raises(tsid_py.errors.InvalidParameterError, match="'rod' is bilateral"):
        form.removeRigidContact("rod", 0.1)
    assert form.removeRigidContact("point", 0.1)
    with pytest.raises(tsid_py.errors.InvalidParameterError, match="'point' is already being ramped out"):
        form.removeRigidContact("point", 0.1)
    assert form.removeRigidContact("point", 0.0) and form.nVar == 6 + 3  # at once, its ramp dropped
    form.computeProblemData(1.0, ARM_Q, np.zeros(6))
    assert point.getMaxNormalForce == 100.0  # exact: never ramped
    with pytest.raises(tsid_py.errors.UnknownNameError, match="point"):
        form.removeRigidContact("point", 0.1)


@pytest.mark.oracle
def test_a_ramped_contact_removal_gives_tsids_answers() -> None:
    oracle = pytest.importorskip("tsid", reason="the C++ TSID oracle is not installed (make oracle)")
    ours, ours_right = _biped_unloading_a_foot(tsid)
    theirs, theirs_right = _biped_unloading_a_foot(oracle)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9 * max(1.0, np.abs(theirs).max()))
    np.testing.assert_allclose(ours_right, theirs_right, rtol=1e-9)
