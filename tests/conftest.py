"""Shared fixtures: robots from their specs (loaded once) and finite-difference helpers; the report
of the tests over the slow line (SLOW_SECONDS), which make test-fast leaves out."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# One OpenMP thread for the C++ TSID oracle (it links libgomp), read when it loads: spinning
# threads made the oracle tests five times slower on a busy 2-core machine.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402
import pytest  # noqa: E402

import tsid_py as tsid  # noqa: E402
from tsid_py.robot_specs import SpecRobot
from tsid_py.solvers import installed_backends

# The rule that keeps `make test-fast` fast: a test whose call takes over SLOW_SECONDS is marked
# slow. Each call's CPU time is measured (with the child processes it waited for; its fixtures
# left out: a module's fixture runs once for all the module's tests), and the run ends with the
# tests over REPORT_SECONDS marked neither slow nor oracle: a report, not a failure. The margin is
# for a busy machine, which inflates CPU time too: judge a test near the line on a quiet one. A
# call that imported a package other than tsid_py for the first time in the run (matplotlib,
# MuJoCo, pandas: whichever test comes first pays for them) is not reported. Mark also a test that
# waits (a timeout, worker processes): the CPU clock does not see it.
SLOW_SECONDS = 0.1
REPORT_SECONDS = 1.5 * SLOW_SECONDS
_over_the_line = pytest.StashKey[list[tuple[float, str]]]()


def _cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    modules, start = set(sys.modules), _cpu_seconds()
    yield
    spent = _cpu_seconds() - start
    first_imports = any(not m.startswith("tsid_py") for m in sys.modules.keys() - modules)
    fast = not any(item.get_closest_marker(name) for name in ("slow", "oracle"))  # what test-fast runs
    if spent > REPORT_SECONDS and fast and not first_imports:
        item.config.stash.setdefault(_over_the_line, []).append((spent, item.nodeid))


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    over = sorted(config.stash.get(_over_the_line, []), reverse=True)
    if over:
        terminalreporter.section(f"not marked slow, over {REPORT_SECONDS:.2f} s of CPU (tests/conftest.py)")
        for spent, nodeid in over:
            terminalreporter.line(f"{spent:.2f} s  {nodeid}")


@pytest.fixture(scope="session")
def talos() -> SpecRobot:
    return tsid.load_robot("talos")


@pytest.fixture(scope="session")
def romeo() -> SpecRobot:
    return tsid.load_robot("romeo")


@pytest.fixture(scope="session")
def ur5() -> SpecRobot:
    return tsid.load_robot("ur5")


@pytest.fixture(scope="session")
def solo12() -> SpecRobot:
    return tsid.load_robot("solo12")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


def random_state(robot: tsid.RobotWrapper, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A random configuration within +-1 of the default posture and a random velocity."""
    q = pin.integrate(robot.model, robot.default_configuration(), 0.3 * rng.standard_normal(robot.nv))
    return q, rng.standard_normal(robot.nv)


def arm_with_posture(ur5: tsid.RobotWrapper) -> tuple:
    """UR5 at its default posture with a posture task (kp 1, weight 1e-3) toward it; (form, q, v)."""
    q, v = ur5.default_configuration(), ur5.zero_velocity()
    form = tsid.InverseDynamicsFormulation("arm", ur5)
    posture = tsid.TaskJointPosture("posture", ur5)
    posture.kp = 1.0
    posture.set_reference(tsid.TrajectorySample(q))
    form.add_motion_task(posture, weight=1e-3)
    return form, q, v


def directional_derivative(
    f, robot: tsid.RobotWrapper, q: np.ndarray, direction: np.ndarray, eps: float = 1e-6
):
    """d/ds f(q (+) s direction) at s = 0, central differences on the manifold."""
    plus = f(pin.integrate(robot.model, q, eps * direction))
    minus = f(pin.integrate(robot.model, q, -eps * direction))
    return (plus - minus) / (2 * eps)


@pytest.fixture(params=installed_backends())
def solver(request) -> tsid.Solver:
    """One solver per installed QP backend (quadprog, daqp, ...)."""
    return tsid.make_solver(request.param)


def feet_to_wrench_contacts(controller, **options):
    """Replace the biped's Contact6d feet by ContactWrench feet of the same sole, gains, reference
    and force reference (same names)."""
    robot, form = controller.robot, controller.formulation
    for contact in controller.contacts.values():
        wrench = tsid.ContactWrench(
            contact.name,
            robot,
            contact.frame_name,
            robot.spec.sole.corners(),
            [0.0, 0.0, 1.0],
            contact.mu,
            contact.min_normal_force,
            contact.max_normal_force,
            **options,
        )
        wrench.kp = contact.kp
        wrench.set_reference(contact.reference)
        wrench.set_force_reference(contact.force_reference)
        form.remove_rigid_contact(contact.name)
        form.add_rigid_contact(wrench, force_reg_weight=controller.params.w_force_reg)
    return controller


def listening_addresses(port: int) -> set[str]:
    """Local addresses of the sockets listening on ``port`` (Linux /proc/net)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, port_hex = fields[1].split(":")
            if fields[3] == "0A" and int(port_hex, 16) == port:
                found.add(address)
    return found
