"""Every installed backend gives quadprog's solution on the demos' problems, step after step."""

import dataclasses

import numpy as np
import pytest

import tsid_py as tsid
from tsid_py.controllers.biped import BipedController
from tsid_py.scenarios import balance, com_sinusoid, step, stepping, walk
from tsid_py.solvers import installed_backends
from tsid_py.trajectories import TrajectoryEuclidianSinusoid

OTHER_BACKENDS = [name for name in installed_backends() if name != "quadprog"]
DT = 0.002


class ComparingSolver(tsid.Solver):
    """Solves with quadprog (whose solution drives the robot) and with ``backend`` on the same problem,
    keeping the largest difference |x_backend - x_quadprog| / max(1, |x_quadprog|)."""

    def __init__(self, backend: str) -> None:
        super().__init__("comparing")
        self.reference, self.other = tsid.SolverHQuadProg(), tsid.make_solver(backend)
        self.worst, self.solves = 0.0, 0

    def solve(self, hqp):
        expected, got = self.reference.solve(hqp), self.other.solve(hqp)
        assert expected.ok and got.ok, (expected.message, got.message)
        scale = max(1.0, np.abs(expected.x).max())
        self.worst = max(self.worst, np.abs(got.x - expected.x).max() / scale)
        self.solves += 1
        return expected


@pytest.mark.slow
@pytest.mark.parametrize("backend", OTHER_BACKENDS)
@pytest.mark.parametrize(
    ("scenario", "builder", "arguments", "steps"),
    [
        (balance, balance, {"duration": 0.3}, 150),
        (com_sinusoid.SCENARIO, None, {"duration": 0.6}, 300),
        (step, stepping, {}, 2650),
        pytest.param(walk, stepping, {"steps": 2}, None, marks=pytest.mark.slow),
    ],
    ids=["balance", "com-sinusoid", "step", "walk"],
)
def test_backend_matches_quadprog_on_every_demo(monkeypatch, backend, scenario, builder, arguments, steps):
    """The demo itself runs (its controller built with the comparing solver) and still succeeds;
    ``builder`` is the module that builds the scenario's controller (None: a sway scenario's)."""
    comparing = ComparingSolver(backend)

    def controller_with_comparing_solver(
        robot, params=None, solver=None, **options
    ):  # solver: the scenario's
        return BipedController(robot, params, solver=comparing, **options)

    if builder is None:  # a sway scenario: its controller class is a field of its simulate
        sway = dataclasses.replace(scenario.simulate, controller=controller_with_comparing_solver)
        scenario = dataclasses.replace(scenario, simulate=sway)
    else:
        monkeypatch.setattr(builder, "BipedController", controller_with_comparing_solver)
    summary = scenario.run(**arguments).summary
    assert summary["qp_failures"] == 0
    assert comparing.solves == (steps or summary["steps"]) and comparing.solves > 100
    assert comparing.worst < 1e-7


def sway_with_posture_at_level_2(talos, steps):
    """Yield the HQPs of a Talos CoM sway with the posture at level 2 (a cascade of two QPs)."""
    controller = BipedController(talos)
    form = controller.formulation
    form.remove_task("task-posture")
    form.add_motion_task(controller.posture_task, weight=1.0, priority=2)
    sway = TrajectoryEuclidianSinusoid("com", controller.com_initial, [0.0, 0.05, 0.0], [0.0, 0.5, 0.0])
    q, v = controller.q0.copy(), talos.zero_velocity()
    for i in range(steps):
        controller.set_com_reference(sway.sample(i * DT))
        hqp = form.compute_problem_data(i * DT, q, v)
        dv = yield hqp
        q, v = tsid.integrate(talos, q, v, dv, DT)


@pytest.mark.parametrize("backend", OTHER_BACKENDS)
@pytest.mark.slow
def test_backend_matches_quadprog_on_a_three_level_cascade(talos, backend):
    comparing = ComparingSolver(backend)
    loop = sway_with_posture_at_level_2(talos, 150)
    hqp = next(loop)
    while True:
        x = comparing.solve(hqp).x
        try:
            hqp = loop.send(x[: talos.nv])
        except StopIteration:
            break
    assert comparing.solves == 150 and comparing.worst < 1e-7
