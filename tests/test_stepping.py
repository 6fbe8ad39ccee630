"""Taking a step and walking, in closed loop, with the numbers the issue asks for."""

import json

import numpy as np
import pytest

from tsid_py import cli
from tsid_py.scenarios import SCENARIOS, step, walk
from tsid_py.scenarios.stepping import SteppingLog, stepping_params

G = 9.81


def assert_physics(summary):
    """No QP failure, every footstep landed, the robot at rest at the end with its balance never
    lost (as the plant measured it), and the solutions physical."""
    assert summary["qp_failures"] == 0 and summary["footsteps_landed"] == summary["footsteps"]
    assert summary["verdict"] == "recovered" and summary["lost_balance_at_s"] is None
    assert summary["dynamics_residual_max"] < 1e-8
    assert summary["max_pyramid_violation_n"] < 1e-6
    assert summary["max_normal_bound_violation_n"] < 1e-6
    assert summary["max_torque_ratio"] <= 1.0 + 1e-6


@pytest.mark.slow
def test_talos_takes_a_step(talos):
    result = step.run("talos")
    summary, log = result.summary, result.log
    assert isinstance(log, SteppingLog)
    assert_physics(summary)
    assert summary["steps"] == round(summary["duration_s"] / 0.002)
    assert summary["max_force_jump_over_weight"] < 0.05
    assert summary["swing_height_max_m"] > 0.099
    assert summary["touchdown_error_right_m"] < 1e-3
    assert summary["foot_drift_max_m"] < 1e-3  # feet in contact stay where they were put
    assert summary["com_margin_min_m"] > 0.0 and summary["zmp_margin_min_m"] > 0.0

    arrays = log.arrays()
    t, in_contact = arrays["t"], arrays["in_contact/right"]
    right_normal = arrays["forces/contact_rfoot"].reshape(len(t), 4, 3)[:, :, 2].sum(axis=1)
    lift = np.flatnonzero(~in_contact)[0]
    assert t[lift] == pytest.approx(step.SHIFT + 0.1 + step.UNLOAD + 0.002)
    f_min = stepping_params(talos).f_min
    before_lift = right_normal[:lift]  # the CoM shift unloads the foot, the ramp takes it to f_min
    assert before_lift[0] > 0.4 * talos.total_mass * G and before_lift[-1] == pytest.approx(f_min, abs=0.01)
    assert np.max(np.abs(np.diff(before_lift))) < 0.05 * talos.total_mass * G
    assert np.all(np.diff(right_normal[(t >= step.SHIFT + 0.1) & (t < t[lift])]) <= 1e-6)  # down the ramp
    touchdown = np.flatnonzero(~in_contact)[-1] + 1
    assert np.all(in_contact[touchdown:]) and np.all(arrays["in_contact/left"])
    np.testing.assert_allclose(arrays["feet/right"][-1], arrays["feet/right"][0], atol=1e-3)


@pytest.mark.slow
def test_the_step_and_walk_scenarios_are_registered_and_walk_two_steps(capsys):
    assert SCENARIOS["step"] is step and SCENARIOS["walk"] is walk
    assert cli.main(["walk", "--steps", "2", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert_physics(summary)
    assert summary["footsteps"] == 2 and summary["zmp_margin_min_m"] > 0.0
    assert summary["touchdown_error_max_m"] < 2e-3


@pytest.mark.slow
@pytest.mark.parametrize(("robot", "step_length"), [("talos", 0.2), ("romeo", 0.1)])
def test_walks_eight_steps(robot, step_length):
    result = walk.run(robot, steps=8, step_length=step_length)
    summary, arrays = result.summary, result.log.arrays()
    assert_physics(summary)
    assert summary["footsteps"] == 8
    assert summary["touchdown_error_left_m"] < 2e-3 and summary["touchdown_error_right_m"] < 2e-3
    assert summary["zmp_margin_min_m"] > 0.0 and summary["com_margin_min_m"] > 0.0
    assert summary["max_force_jump_over_weight"] < 0.05
    footsteps = arrays["footsteps"]
    np.testing.assert_allclose(np.diff(footsteps[:-1, 0]), step_length, atol=1e-12)
    for side in ("right", "left"):  # each foot ends on its last planned footprint
        last = [p for s, p in result.log.footsteps if s == side][-1]
        assert np.linalg.norm(arrays[f"feet/{side}"][-1] - last) < 2e-3
    assert arrays["com"][-1, 0] - arrays["com"][0, 0] > 7 * step_length - 0.03
