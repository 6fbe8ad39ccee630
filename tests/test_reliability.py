"""Nothing crashes, nothing is silently wrong: the CLI and the API under bad input, faults and signals.

The CLI tests run the real ``tsid-py`` entry point in a subprocess and check the exit status
(2 bad input, 3 controller failed) and that stderr is one line without a traceback.
"""

import contextlib
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import tsid_py as tp
from tsid_py.constraints import ConstraintBound, ConstraintEquality
from tsid_py.loop import Controller
from tsid_py.robot_specs import specs_dir
from tsid_py.solvers.hqp_output import HqpOutput, QPStatus

TSID_PY = [sys.executable, "-m", "tsid_py.cli"]


def tsid_py(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*TSID_PY, *args], capture_output=True, text=True, cwd=cwd, timeout=timeout)


def one_line_error(done: subprocess.CompletedProcess, code: int, *words: str) -> str:
    """The run exited with ``code`` and said why in one line naming ``words``, without a traceback."""
    assert done.returncode == code, (done.returncode, done.stderr)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


# --------------------------------------------------------------- bad files
def _good_motion(path: Path) -> None:
    robot = tp.load_robot("talos")
    np.savez(path, q=np.tile(robot.default_configuration(), (5, 1)), dt=0.01)


@pytest.mark.slow
def test_analyze_refuses_empty_truncated_oversized_and_complex_files(tmp_path):
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    one_line_error(tsid_py("analyze", str(empty)), 2, "empty.npz", "not an NPZ archive")

    good = tmp_path / "good.npz"
    _good_motion(good)
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    one_line_error(tsid_py("analyze", str(truncated)), 2, "truncated.npz")

    # a header claiming 10^11 frames over the 5 frames the file holds: refused before allocating
    huge = tmp_path / "huge.npz"
    np.savez(huge, dt=0.01, q=np.zeros((5, 39)))
    _rewrite_shape(huge, "q", "(5, 39)", "(99999999999, 39)")
    line = one_line_error(tsid_py("analyze", str(huge)), 2, "huge.npz", "claims shape")
    assert "truncated or corrupt" in line

    complex_q = tmp_path / "complex.npz"
    np.savez(complex_q, q=np.zeros((5, 39), dtype=complex), dt=0.01)
    one_line_error(tsid_py("analyze", str(complex_q)), 2, "complex.npz", "not real numbers")


def _rewrite_shape(path: Path, name: str, old: str, new: str) -> None:
    """Rewrite the shape in one member's .npy header (padding kept: the header length is fixed)."""
    import zipfile

    with zipfile.ZipFile(path) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    raw = members[f"{name}.npy"]
    end = raw.index(b"\n")  # the header ends with spaces of padding, then a newline
    header = raw[:end].replace(old.encode(), new.encode())
    assert header.endswith(b" " * (len(new) - len(old) + 1))
    patched = header[:end] + b"\n"
    members[f"{name}.npy"] = patched + raw[end + 1 :]
    with zipfile.ZipFile(path, "w") as archive:
        for member, content in members.items():
            archive.writestr(member, content)


@pytest.mark.slow
def test_outputs_are_checked_before_the_run_and_never_overwritten_silently(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    start = time.perf_counter()
    one_line_error(tsid_py("balance", "--duration", "60", "--html", str(blocker / "run.html")), 2, "--html")
    one_line_error(
        tsid_py("balance", "--duration", "60", "--plot", str(blocker)), 2, "--plot", "not a directory"
    )
    assert time.perf_counter() - start < 30  # refused before 60 s of simulated walking-time work

    existing = tmp_path / "run.html"
    existing.write_text("keep me")
    one_line_error(tsid_py("balance", "--duration", "0.02", "--html", str(existing)), 2, "exists", "--force")
    assert existing.read_text() == "keep me"
    done = tsid_py("balance", "--duration", "0.02", "--html", str(existing), "--force", "--json")
    assert done.returncode == 0, done.stderr
    assert existing.read_text().startswith("<!DOCTYPE html>") or "<html" in existing.read_text()[:200]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "run.html"]  # no temporary left


@pytest.mark.slow
def test_robot_names_stay_in_robots_and_a_spec_with_a_missing_urdf_is_one_line(tmp_path):
    one_line_error(tsid_py("balance", "--robot", "../robots/talos"), 2, "unknown robot")
    spec = (specs_dir() / "talos.toml").read_text().replace("talos_reduced.urdf", "missing.urdf")
    (tmp_path / "broken.toml").write_text(spec)
    one_line_error(tsid_py("balance", "--robot", str(tmp_path / "broken.toml")), 2, "URDF file not found")


@pytest.mark.slow
def test_a_period_beyond_sense_is_refused(tmp_path):
    one_line_error(tsid_py("balance", "--dt", "1"), 2, "dt = 1 s is above")


@pytest.mark.slow
def test_a_failing_qp_exits_3_with_its_cause_and_counts_in_the_json(tmp_path):
    """Torque limits 1000x too small: level 0 is infeasible at the first step."""
    spec = (specs_dir() / "talos.toml").read_text().replace("[biped]\n", "[biped]\ntau_max_scaling = 0.001\n")
    assert "tau_max_scaling = 0.001" in spec
    (tmp_path / "weak.toml").write_text(spec)
    done = tsid_py("balance", "--robot", str(tmp_path / "weak.toml"), "--duration", "0.1", "--json")
    line = one_line_error(done, 3, "the controller failed", "status")
    assert "actuation" in line or "torque" in line  # the conflicting hard constraint is named
    summary = __import__("json").loads(done.stdout)
    assert summary["qp_failures"] > 0 and summary["qp_failure"]


@pytest.mark.slow
def test_a_viewer_url_where_no_server_answers_is_refused_in_seconds_not_waited_for(tmp_path):
    """meshcat's client waits forever for an absent server: the command asks first and gives up."""
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    html = tmp_path / "run.html"
    start = time.perf_counter()
    done = tsid_py(
        "balance",
        "--viewer",
        "meshcat",
        "--viewer-url",
        f"tcp://127.0.0.1:{port}",
        "--html",
        str(html),
        timeout=60,
    )
    one_line_error(done, 2, "no meshcat server answered", "start `meshcat-server`", "zmq_url")
    assert time.perf_counter() - start < 30 and not html.exists()


# ---------------------------------------------------------------- signals
def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads child processes from /proc (Linux)")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_killed_run_leaves_no_server_and_no_partial_output(tmp_path, signum):
    html = tmp_path / "run.html"
    process = subprocess.Popen(
        [*TSID_PY, "balance", "--viewer", "meshcat", "--duration", "600", "--html", str(html)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    servers: list[int] = []
    while time.monotonic() < deadline and not servers:
        servers = _children(process.pid)
        time.sleep(0.2)
    assert servers, "the meshcat server did not start"
    time.sleep(3.0)  # the run is under way
    process.send_signal(signum)
    code = process.wait(timeout=30)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(pid) for pid in servers):
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in servers), "the meshcat server outlived the command"
    assert list(tmp_path.iterdir()) == []  # no replay, complete or partial
    if signum == signal.SIGTERM:
        assert code == 128 + signal.SIGTERM
        assert process.stderr.read().strip().splitlines()[-1].endswith("stopped by SIGTERM")


# ------------------------------------------------------------------- API
def test_states_beyond_sense_are_refused(talos):
    q, v = talos.default_configuration(), talos.zero_velocity()
    form = tp.InverseDynamicsFormulation("tsid", talos)
    for bad_q, bad_v, words in [
        (np.r_[q[:3], 1.5 * q[3:7], q[7:]], v, "norm 1.5"),
        (np.r_[q[:3], np.zeros(4), q[7:]], v, "norm 0"),
        (np.r_[1e100, q[1:]], v, "q[0] = 1e+100"),
        (q, np.r_[v[:5], 1e100, v[6:]], "v[5] = 1e+100"),
    ]:
        with pytest.raises(tp.errors.InvalidParameterError, match="beyond physical sense|not 1") as error:
            form.compute_problem_data(0.0, bad_q, bad_v)
        assert words in str(error.value)
    form.compute_problem_data(0.0, q, v)  # a good state still works


def test_a_solution_with_non_finite_entries_is_never_optimal(ur5):
    """A backend that claims OPTIMAL with a NaN in x: the solver reports an error, and the
    formulation's getters refuse the solution."""

    class Careless(tp.Solver):
        def solve_qp(self, qp):
            return HqpOutput(QPStatus.OPTIMAL, x=np.full(qp.n, np.nan))

    form, q, v = _arm(ur5)
    out = Careless("careless").solve(form.compute_problem_data(0.0, q, v))
    assert out.status == QPStatus.ERROR and "non-finite" in out.message
    with pytest.raises(tp.errors.SolverFailedError):
        form.get_accelerations(out)


def _arm(ur5):
    form = tp.InverseDynamicsFormulation("tsid", ur5)
    posture = tp.TaskJointPosture("posture", ur5)
    posture.kp = 10.0
    posture.set_reference(tp.TrajectorySample(ur5.default_configuration() + 0.2))
    form.add_motion_task(posture, 1.0, 1)
    return form, ur5.default_configuration(), ur5.zero_velocity()


def test_weights_out_of_range_are_named(talos):
    form = tp.InverseDynamicsFormulation("tsid", talos)
    posture = tp.TaskJointPosture("posture", talos)
    with pytest.raises(tp.errors.InvalidParameterError, match="weight 1e\\+12 is above 1e\\+08"):
        form.add_motion_task(posture, 1e12, 1)
    form.add_motion_task(posture, 1e8, 1)


@pytest.mark.parametrize(
    ("points", "words"),
    [
        ([[0.1, 0.1, -0.1, -0.1], [0.05, 0.05, 0.05, -0.05], [0.0] * 4], "corners 0 and 1 coincide"),
        ([[0.1, 0.05, -0.05, -0.1], [0.0] * 4, [0.0] * 4], "one line"),
    ],
)
def test_degenerate_contact_corners_are_refused(talos, points, words):
    with pytest.raises(tp.errors.InvalidParameterError, match=words):
        tp.Contact6d("foot", talos, "leg_left_6_joint", points, [0, 0, 1], 0.3, 1.0, 1e3)
    with pytest.raises(tp.errors.InvalidParameterError, match="non-zero"):
        tp.Contact6d("foot", talos, "leg_left_6_joint", np.eye(3, 4) + 0.1, [0, 0, 0], 0.3, 1.0, 1e3)


def test_a_failed_solve_raises_or_holds_as_the_policy_says_never_zero_torques(ur5):
    def controller():
        form = _arm(ur5)[0]
        return Controller(ur5, form, tp.SolverHQuadProg("qp")), form

    q, v = ur5.default_configuration(), ur5.zero_velocity()
    strict, form = controller()
    strict.compute(0.0, q, v)
    _conflict(form, ur5)
    with pytest.raises(tp.errors.SolverFailedError, match="the QP failed at t = 0.001 s: status INFEASIBLE"):
        strict.compute(0.001, q, v)

    holding, form = controller()
    holding.hold_steps = 2
    good = holding.compute(0.0, q, v)
    good.tau[:] = 0.0  # the caller's: the held copy is the controller's own
    _conflict(form, ur5)
    for step in (1, 2):
        held = holding.compute(0.001 * step, q, v)
        assert held.held and not held.ok and np.abs(held.tau).max() > 10.0
    with pytest.raises(tp.errors.SolverFailedError):
        holding.compute(0.003, q, v)


def _conflict(form, ur5):
    """Two hard posture tasks toward different postures: level 0 becomes infeasible."""
    for name, offset in (("here", 0.0), ("there", 0.5)):
        task = tp.TaskJointPosture(name, ur5)
        task.kp = 10.0
        task.set_reference(tp.TrajectorySample(ur5.default_configuration() + offset))
        form.add_motion_task(task, 1.0, 0)


# --------------------------------------------------- property-based inputs
hypothesis = pytest.importorskip("hypothesis")
st = pytest.importorskip("hypothesis.strategies")

SETTERS = {"kp", "kd", "mask", "reference", "weight", "points", "bounds", "sample", "normal", "mu", "f_max"}
SETTERS |= {"constraint", "sinusoid", "state", "time"}
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3),
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), max_size=8),
    st.builds(
        lambda shape, fill: np.full(shape, fill),
        st.tuples(st.integers(0, 4), st.integers(0, 40)),
        st.sampled_from([0.0, 1.0, -1e300, np.nan, np.inf]),
    ),
)


@pytest.mark.slow
@hypothesis.settings(max_examples=150, deadline=None, derandomize=True)
@hypothesis.given(
    setter=st.sampled_from(["kp", "kd", "mask", "reference", "weight", "points", "bounds", "sample"]),
    value=VALUES,
)
def test_public_setters_give_only_tsid_errors_and_the_next_step_solves(setter, value):
    robot = _property_robot()
    form, posture, contact, q, v = _property_problem(robot)
    actions = {
        "kp": lambda: setattr(posture, "kp", value),
        "kd": lambda: setattr(contact, "kd", value),
        "mask": lambda: setattr(posture, "mask", value),
        "reference": lambda: posture.set_reference(value),
        "weight": lambda: form.update_task_weight("posture", value),
        "points": lambda: contact.set_contact_points(value),
        "bounds": lambda: ConstraintBound("b", value, value),
        "sample": lambda: tp.TrajectorySample(value),
        "normal": lambda: contact.set_contact_normal(value),
        "mu": lambda: contact.set_friction_coefficient(value),
        "f_max": lambda: contact.set_max_normal_force(value),
        "constraint": lambda: ConstraintEquality("e", value, value),
        "sinusoid": lambda: tp.TrajectoryEuclidianSinusoid("s", value, value, value),
        "state": lambda: form.compute_problem_data(0.0, value, v),
        "time": lambda: form.compute_problem_data(value, q, v),
    }
    assert set(actions) == SETTERS
    with contextlib.suppress(tp.TsidError):
        actions[setter]()
    _restore(robot, form, posture, contact)
    sol = tp.SolverHQuadProg("qp").solve(form.compute_problem_data(0.0, q, v))
    assert sol.ok and np.all(np.isfinite(form.get_actuator_forces(sol)))


_CACHE: dict[str, object] = {}


def _property_robot():
    if "robot" not in _CACHE:
        _CACHE["robot"] = tp.load_robot("talos")
    return _CACHE["robot"]


def _property_problem(robot):
    q, v = robot.default_configuration(), robot.zero_velocity()
    data = robot.create_data()
    robot.compute_all_terms(data, q, v)
    form = tp.InverseDynamicsFormulation("tsid", robot)
    sole = np.array([[0.1, 0.1, -0.1, -0.1], [0.065, -0.065, 0.065, -0.065], [0.0] * 4])
    contact = None
    for frame in ("leg_left_sole_fix_joint", "leg_right_sole_fix_joint"):
        c = tp.Contact6d(frame, robot, frame, sole, [0, 0, 1], 0.3, 1.0, 1e3)
        c.kp = 10.0
        c.set_reference(robot.frame_placement(data, frame))
        form.add_rigid_contact(c, 1e-5)
        contact = contact or c
    posture = tp.TaskJointPosture("posture", robot)
    form.add_motion_task(posture, 1e-3, 1)
    _restore(robot, form, posture, contact)
    return form, posture, contact, q, v


def _restore(robot, form, posture, contact):
    """Whatever a failed setter did not change, a good setter after it still works."""
    posture.kp, posture.mask = 10.0, np.ones(robot.na)
    posture.set_reference(tp.TrajectorySample(robot.default_configuration()[7:]))
    contact.kd = 2.0 * np.sqrt(10.0)
    contact.set_contact_normal([0.0, 0.0, 1.0])
    contact.set_friction_coefficient(0.3)
    contact.set_max_normal_force(1e3)
    form.update_task_weight("posture", 1e-3)
