"""Every installed backend gives quadprog's solution on the demos' problems, step after step."""

import numpy as np
import pytest

import tsid_py as tsid
from tsid_py.controllers.biped import BipedController
from tsid_py.trajectories import TrajectoryEuclidianSinusoid

OTHER_BACKENDS = [name for name in tsid.installed_backends() if name != "quadprog"]
DT = 0.002


def closed_loop(talos, amplitude, levels, steps):
    """Yield (hqp, formulation) along a Talos CoM sway (balance when amplitude is 0)."""
    controller = BipedController(talos)
    form = controller.formulation
    if levels == 3:
        form.remove_task("task-posture")
        form.add_motion_task(controller.posture_task, weight=1.0, priority=2)
    sway = TrajectoryEuclidianSinusoid("com", controller.com_initial, [0.0, amplitude, 0.0], [0.0, 0.5, 0.0])
    q, v = controller.q0.copy(), talos.zero_velocity()
    for i in range(steps):
        controller.set_com_reference(sway.sample(i * DT))
        hqp = form.compute_problem_data(i * DT, q, v)
        dv = yield hqp
        q, v = tsid.integrate(talos, q, v, dv, DT)


@pytest.mark.parametrize("backend", OTHER_BACKENDS)
@pytest.mark.parametrize(
    ("amplitude", "levels"),
    [(0.0, 2), (0.05, 2), (0.05, 3)],
    ids=["balance", "com-sinusoid", "com-sinusoid-three-levels"],
)
def test_backend_matches_quadprog_on_the_talos_demos(talos, backend, amplitude, levels):
    """Same x at every step; three levels: posture at level 2, a cascade of two QPs."""
    reference, other = tsid.SolverHQuadProg(), tsid.make_solver(backend)
    loop = closed_loop(talos, amplitude, levels, 150)
    hqp, worst = next(loop), 0.0
    while True:
        expected, got = reference.solve(hqp), other.solve(hqp)
        assert expected.ok and got.ok
        worst = max(worst, np.abs(got.x - expected.x).max() / max(1.0, np.abs(expected.x).max()))
        try:
            hqp = loop.send(expected.x[: talos.nv])
        except StopIteration:
            break
    assert worst < 1e-7
