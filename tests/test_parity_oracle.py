"""Same problem, same answer as the C++ TSID (the oracle, installed by `make oracle`).

Each scenario of tests/oracle_problems.py is built in both libraries; a closed loop runs both
side by side (each integrating its own state) and compares dv, tau and the contact forces at
every step, and q at the end. Runs only where the oracle is importable (`make oracle`;
`.ci/run` installs it).
"""

import numpy as np
import pinocchio as pin
import pytest
from oracle_problems import PROBLEMS, build_oracle, build_tsid_py, initial_state, integrate

from tsid_py import load_robot

tsid = pytest.importorskip("tsid", reason="the C++ TSID oracle is not installed (make oracle)")
pytestmark = pytest.mark.oracle

SIZES = {
    "talos-balance": (62, 18, 66),
    "talos-com-sinusoid": (62, 18, 66),
    "talos-walking": (62, 18, 66),  # at the start: both feet down
    "romeo-balance": (85, 18, 34),
    "ur5-reaching": (6, 0, 6),
    "solo12-com-sinusoid": (30, 6, 32),
    "solo12-balance": (30, 6, 32),
    "romeo-com-sinusoid": (85, 18, 34),
    "romeo-walking": (85, 18, 34),  # at the start: both feet down
}


def relative(a, b):
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_matches_tsid_every_step(name):
    problem = PROBLEMS[name]
    q0, v0 = initial_state(problem)
    ours, oracle = build_tsid_py(problem, q0), build_oracle(problem, q0, tsid)
    assert ours.sizes == oracle.sizes == SIZES[name]
    q, v, qo, vo = q0.copy(), v0.copy(), q0.copy(), v0.copy()
    worst = {"dv": 0.0, "tau": 0.0, "forces": 0.0}
    tau_max = (
        problem.tau_max_scaling * load_robot(problem.robot).effort_limit()
        if problem.tau_max_scaling
        else None
    )
    steps_at_torque_bound = 0
    for i in range(int(round(problem.duration / problem.dt))):
        t = i * problem.dt
        step, ostep = ours.step(t, q, v), oracle.step(t, qo, vo)
        assert step.ok and ostep.ok, f"step {i}: tsid_py ok={step.ok}, TSID ok={ostep.ok}"
        for key in worst:
            worst[key] = max(worst[key], relative(getattr(step, key), getattr(ostep, key)))
        if tau_max is not None:
            assert np.all(np.abs(step.tau) <= tau_max * (1 + 1e-9))
            steps_at_torque_bound += bool(np.any(np.abs(step.tau) >= tau_max * (1 - 1e-9)))
        q, v = integrate(ours.model, q, v, step.dv, problem.dt)
        qo, vo = integrate(oracle.model, qo, vo, ostep.dv, problem.dt)
    assert max(worst.values()) < 1e-6, worst
    assert np.linalg.norm(pin.difference(ours.model, qo, q)) < 1e-6
    if name == "ur5-reaching":  # the fast reach saturates torques: the active sets must agree too
        assert steps_at_torque_bound > 0
