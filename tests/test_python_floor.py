"""The flat and tuned steps of benchmarks/python_floor.py compute tsid_py's step, or refuse it.

The benchmark times them against tsid_py and TSID only at the states none refuses; these tests
check, with no timing, that what it times is the same work: at states pushed off the recorded
closed loop (a seeded random velocity, so friction cones and torque bounds become active) every
step refuses exactly where tsid_py's solution holds an inequality active, and gives tsid_py's tau
to 1e-9 everywhere else.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import python_floor  # noqa: E402
from oracle_problems import PROBLEMS, build_tsid_py, initial_state  # noqa: E402

SCENARIOS = sorted(python_floor.FLAT)
STATES = 60  # of the recorded closed loop, each pushed


def _pushed_states(name: str, scale: float) -> list[tuple[float, np.ndarray, np.ndarray]]:
    problem = PROBLEMS[name]
    q0, _ = initial_state(problem)
    recorded = python_floor.step_time.recorded_states(problem, build_tsid_py(problem, q0))[:STATES]
    rng = np.random.default_rng(7)
    pushes = scale * rng.standard_normal((len(recorded), recorded[0][2].size))
    pushes[::2] = 0.0  # every other state as recorded
    return [(t, q, v + push) for (t, q, v), push in zip(recorded, pushes, strict=True)]


@pytest.mark.parametrize("name", SCENARIOS)
@pytest.mark.slow
def test_steps_refuse_exactly_where_an_inequality_is_active(name: str) -> None:
    problem = PROBLEMS[name]
    q0, _ = initial_state(problem)
    states = _pushed_states(name, 1.0 if problem.robot == "ur5" else 2.0)
    ours = build_tsid_py(problem, q0)
    makers = {"flat": python_floor.FLAT[name], "tuned": python_floor.TUNED.get(name)}
    steps = {who: make(build_tsid_py(problem, q0), states[0]) for who, make in makers.items() if make}
    refused_count, worst = 0, 0.0
    for t, q, v in states:
        for update in ours.references:
            update(t)
        sol = ours.solver.solve(ours.formulation.compute_problem_data(t, q, v))
        assert sol.ok
        active = sol.active_set.size > 0
        tau = ours.formulation.get_actuator_forces(sol)
        for who, step in steps.items():
            try:
                step_tau = step(t, q, v)
            except python_floor.ActiveInequalityError:
                assert active, f"{who} refused t = {t} where tsid_py holds no inequality"
                continue
            assert not active, f"{who} solved t = {t} where tsid_py holds rows {sol.active_set}"
            worst = max(worst, float(np.abs(step_tau - tau).max()))
        refused_count += active
    assert worst < 1e-9
    assert 0 < refused_count < len(states), "the pushes must leave both kinds of state"


def test_check_steps_refuses_steps_that_disagree() -> None:
    name = "ur5-reaching"
    problem = PROBLEMS[name]
    q0, _ = initial_state(problem)
    states = _pushed_states(name, 0.0)
    flat = python_floor.FLAT[name](build_tsid_py(problem, q0), states[0])

    def off(t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        return flat(t, q, v) + 1e-6

    with pytest.raises(SystemExit, match="differs from tsid_py"):
        python_floor.check_steps(name, {"off": off}, build_tsid_py(problem, q0), states)

    def never_refuses(t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        try:
            return flat(t, q, v)
        except python_floor.ActiveInequalityError:
            return build_tsid_py(problem, q0).control(t, q, v)

    with pytest.raises(SystemExit, match="only the flat step refused"):
        python_floor.check_steps(
            name, {"flat": flat, "never": never_refuses}, build_tsid_py(problem, q0), states
        )
