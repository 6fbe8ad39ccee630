"""The TSID course's questions as scenarios (tsid_py/scenarios/course, docs/course.md): each runs from
the CLI with --json and --plot, and its outcome is asserted. Durations are short and grids coarse;
DAQP solves the runs where many bounds are active (it gives the same solutions as quadprog, faster)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from tsid_py import cli
from tsid_py.scenarios import SCENARIOS
from tsid_py.scenarios.course import COURSE, com_outside, self_collision
from tsid_py.scenarios.course.common import distance_outside, float_list, smooth_sway
from tsid_py.solvers import installed_backends

FAST = "daqp" if "daqp" in installed_backends() else "quadprog"
RESIDUAL = 1e-8  # the equation of motion, relative, on every solution


def run_cli(capsys, argv: list[str], plot: Path | None = None, code: int = 0) -> tuple[dict, str]:
    """Run ``tsid-py ARGV --json [--plot DIR]``; the exit code must be ``code``; (summary, stderr)."""
    argv = [*argv, "--json"] + (["--plot", str(plot)] if plot is not None else [])
    assert cli.main(argv) == code
    out = capsys.readouterr()
    return json.loads(out.out), out.err


def assert_plots(directory: Path, scenario: str) -> None:
    names = {p.name for p in directory.iterdir()}
    assert f"{scenario}_outcome.png" in names
    assert all(p.stat().st_size > 1000 for p in directory.iterdir())


def test_the_course_is_registered_as_scenarios():
    assert set(COURSE) == {
        "com-outside",
        "sinusoid-sweep",
        "contact-gains",
        "gains-weights",
        "hand-contact",
        "self-collision",
    }
    for name, module in COURSE.items():
        assert SCENARIOS[name] is module
        assert module.__doc__.splitlines()[0] and callable(module.run) and callable(module.main)


# ---------------------------------------------------------------------------------- com-outside
@pytest.mark.slow
def test_com_outside_level_0_stops_with_the_target_distance_outside_the_polygon(capsys, tmp_path):
    summary, err = run_cli(capsys, ["com-outside", "--level", "0", "--dt", "0.004"], tmp_path, code=3)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    # Talos's soles reach 0.1498 m to the side; the target is c_0 + 0.2 m: 0.0514 m outside.
    assert "the CoM target is 0.051 m outside the support polygon" in lines[0]
    assert "the QP failed at t = " in lines[0]
    assert summary["target_outside_m"] == pytest.approx(0.0514, abs=5e-4)
    assert summary["target_margin_m"] == pytest.approx(-summary["target_outside_m"], abs=1e-9)
    assert summary["qp_failures"] == 1 and summary["qp_failure"].startswith("the CoM target is 0.051 m")
    assert 0.5 < summary["steps"] * summary["dt_s"] < 2.0  # the QP fails once the CoM nears the edge
    assert summary["dynamics_residual_max"] < RESIDUAL
    assert_plots(tmp_path, "com-outside")


@pytest.mark.slow
def test_com_outside_level_1_crosses_the_edge_and_falls():
    """TSID's weights: the CoM task (a cost) pulls on, the angular momentum (weight 1e-3) gives way,
    the CoM leaves the polygon at 2.7 s and the robot falls over its left foot."""
    summary = com_outside.run(duration=5.0, dt=0.004, backend=FAST).summary
    assert summary["level"] == 1 and summary["qp_failures"] == 0
    assert 2.0 < summary["com_left_support_s"] < 3.2
    assert summary["verdict"] == "fell" and summary["fell_at_s"] < 5.0
    assert summary["com_left_support_s"] < summary["lost_balance_at_s"] < summary["fell_at_s"]
    assert summary["com_margin_final_m"] < -0.1
    assert summary["dynamics_residual_max"] < RESIDUAL


@pytest.mark.slow
def test_com_outside_with_the_capture_point_stops_at_the_edge(capsys, tmp_path):
    argv = ["com-outside", "--capture-point", "--duration", "3.5", "--dt", "0.004", "--backend", FAST]
    summary, _ = run_cli(capsys, argv, tmp_path)
    assert summary["com_left_support_s"] is None and summary["verdict"] == "recovered"
    # stopped 1 cm (--margin) inside the edge, at rest: the target stays 0.051 + 0.01 m away
    assert summary["com_margin_final_m"] == pytest.approx(0.01, abs=5e-4)
    assert summary["com_margin_min_m"] >= 0.01 - 5e-4
    assert summary["com_target_distance_m"] == pytest.approx(summary["target_outside_m"] + 0.01, abs=1e-3)
    assert abs(summary["com_height_change_m"]) < 0.02
    assert summary["dynamics_residual_max"] < RESIDUAL
    assert_plots(tmp_path, "com-outside")


def test_distance_outside_a_polygon():
    square = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    assert distance_outside([0.5, 0.5], square) == 0.0  # exact: inside, 0 is returned
    assert distance_outside([0.5, 1.2], square) == pytest.approx(0.2)
    assert distance_outside([1.3, 1.4], square) == pytest.approx(0.5)  # past a corner: Euclidean


# ------------------------------------------------------------------------------- sinusoid-sweep
@pytest.mark.slow
def test_sinusoid_sweep_finds_the_first_frequency_at_which_a_limit_binds(capsys, tmp_path):
    argv = ["sinusoid-sweep", "--frequencies", "0.5,1.5", "--cycles", "1", "--backend", FAST]
    summary, _ = run_cli(capsys, argv, tmp_path)
    slow, fast = summary["frequencies"]
    assert slow["frequency_hz"] == 0.5  # exact: the frequency asked for
    assert slow["limit"] is None and slow["limits_bound"] == {}
    assert slow["min_corner_force_n"] > 1.0 and slow["max_foot_friction_ratio"] < 0.9
    # at 1.5 Hz the centre of pressure reaches the soles' edges: corners unload, a foot's friction
    # binds, the CoM task gives way
    assert fast["limit"] in ("friction", "normal force") and "normal force" in fast["limits_bound"]
    assert fast["min_corner_force_n"] < 1e-3 and fast["max_torque_ratio"] < 1.0
    assert fast["com_error_max_m"] > 1.5 * slow["com_error_max_m"]
    assert summary["first_limit_frequency_hz"] == 1.5  # exact: one of the frequencies asked for
    assert summary["first_limit"] == fast["limit"]
    assert summary["qp_failures"] == 0 and summary["runs_qp_failed"] == 0
    assert summary["dynamics_residual_max"] < RESIDUAL
    assert_plots(tmp_path, "sinusoid-sweep")


def test_frequencies_parse_as_a_list_or_a_range():
    assert float_list("0.1,0.5") == [0.1, 0.5]  # exact: parsed, not computed
    assert float_list("1:3:3") == pytest.approx([1.0, 2.0, 3.0], abs=1e-15)  # np.linspace
    with pytest.raises(Exception, match="START:STOP:COUNT"):
        float_list("1:3")


def test_smooth_sway_derivatives_are_exact():
    sample = smooth_sway(SimpleNamespace(com_initial=np.zeros(3)), 0.05, 1.3, 0.7)
    h = 1e-6
    for t in (0.0, 0.3, 0.69, 1.5):
        ahead, now, behind = sample(t + h), sample(t), sample(max(t - h, 0.0))
        step = t + h - max(t - h, 0.0)
        assert (ahead.pos - behind.pos)[1] / step == pytest.approx(now.vel[1], abs=1e-7)
        assert (ahead.vel - behind.vel)[1] / step == pytest.approx(now.acc[1], abs=1e-6)
    np.testing.assert_allclose(sample(0.0).vel, 0.0, atol=1e-15)  # starts at rest: the formulas at t = 0
    np.testing.assert_allclose(sample(0.0).acc, 0.0, atol=1e-15)


# -------------------------------------------------------------------------------- contact-gains
@pytest.mark.slow
def test_contact_gains_zero_lets_the_feet_drift(capsys, tmp_path):
    summary, _ = run_cli(capsys, ["contact-gains", "--duration", "2", "--backend", FAST], tmp_path)
    # with Kp = Kd = 0 nothing pulls a foot back: the integration errors accumulate
    assert summary["foot_drift_kp0_m"] > 5 * summary["foot_drift_kp_m"]
    assert summary["foot_drift_kp_m"] < 1e-6 < summary["foot_drift_kp0_m"]
    assert summary["foot_rotation_kp0_rad"] > 5 * summary["foot_rotation_kp_rad"]
    assert [run["kp_contact"] for run in summary["runs"]] == [0.0, 10.0]  # exact: the gains as set
    assert summary["qp_failures"] == 0 and summary["steps"] == 2000
    assert summary["dynamics_residual_max"] < RESIDUAL
    assert_plots(tmp_path, "contact-gains")


# -------------------------------------------------------------------------------- gains-weights
@pytest.mark.slow
def test_gains_and_weights_trade_com_tracking_against_posture(capsys, tmp_path):
    argv = [
        "gains-weights",
        "--duration",
        "1",
        "--dt",
        "0.004",
        "--kp-com",
        "1,100",
        "--kp-posture",
        "0.1,10",
    ]
    argv += ["--w-com", "0.1,10", "--w-posture", "0.01,1", "--backend", FAST]
    summary, _ = run_cli(capsys, argv, tmp_path)
    points = summary["points"]
    assert len(points) == 8 and all(p["qp_failure"] is None for p in points)

    def at(grid, **values):
        (point,) = [p for p in points if p["grid"] == grid and all(p[k] == v for k, v in values.items())]
        return point

    for scale in (0.1, 10.0):  # a stiffer CoM task tracks better
        assert (
            at("gains", kp_com=100.0, kp_posture_scale=scale)["com_error_rms_m"]
            < 0.5 * (at("gains", kp_com=1.0, kp_posture_scale=scale)["com_error_rms_m"])
        )
    for kp in (1.0, 100.0):  # a stiffer posture task holds the posture closer
        assert (
            at("gains", kp_com=kp, kp_posture_scale=10.0)["posture_error_rms_rad"]
            < (at("gains", kp_com=kp, kp_posture_scale=0.1)["posture_error_rms_rad"])
        )
    for w in (0.01, 1.0):  # a heavier CoM task: better tracking, further from the posture
        heavy, light = at("weights", w_com=10.0, w_posture=w), at("weights", w_com=0.1, w_posture=w)
        assert heavy["com_error_rms_m"] < light["com_error_rms_m"]
        assert heavy["posture_error_rms_rad"] > light["posture_error_rms_rad"]
    for w in (0.1, 10.0):  # a heavier posture task: the other way round
        heavy, light = at("weights", w_com=w, w_posture=1.0), at("weights", w_com=w, w_posture=0.01)
        assert heavy["posture_error_rms_rad"] < light["posture_error_rms_rad"]
        assert heavy["com_error_rms_m"] > light["com_error_rms_m"]
    assert summary["dynamics_residual_max"] < RESIDUAL
    assert_plots(tmp_path, "gains-weights")


# --------------------------------------------------------------------------------- hand-contact
@pytest.mark.slow
def test_hand_contact_holds_30_newtons_on_the_wall_while_the_com_sways(capsys, tmp_path):
    summary, _ = run_cli(capsys, ["hand-contact", "--duration", "1", "--backend", FAST], tmp_path)
    assert summary["hand_force_n"] == 30.0  # exact: the force asked for
    assert summary["hand_frame"] == "gripper_right_base_link"
    assert summary["hand_normal_force_max_n"] == pytest.approx(30.0, abs=0.01)
    assert summary["hand_force_error_max_n"] < 0.01 and summary["hand_force_vector_error_max_n"] < 0.01
    assert summary["hand_drift_max_m"] < 1e-5 and summary["foot_drift_max_m"] < 1e-5
    assert summary["qp_failures"] == 0 and summary["steps"] == 500
    assert summary["dynamics_residual_max"] < RESIDUAL
    assert_plots(tmp_path, "hand-contact")


# ------------------------------------------------------------------------------- self-collision
@pytest.mark.slow
def test_self_collision_keeps_the_arm_off_the_body(capsys, tmp_path):
    argv = ["self-collision", "--duration", "1.2", "--backend", FAST]
    summary, _ = run_cli(capsys, argv, tmp_path)
    d_min = summary["d_min_m"]
    assert summary["avoidance"] and summary["pairs"] == 17
    # the forearm reaches the limit against the pelvis and stays there (to a few micrometres: the
    # damper is linearised over one step, on convex hulls)
    assert d_min - 1e-5 <= summary["min_distance_m"] < d_min + 1e-3
    assert summary["min_distance_pair"] == ["arm_right_5_link_0", "base_link_0"]
    assert summary["hand_torso_final_m"] < summary["hand_torso_start_m"] - 0.1  # the hand did move in
    assert summary["qp_failures"] == 0 and summary["dynamics_residual_max"] < RESIDUAL
    assert_plots(tmp_path, "self-collision")


@pytest.mark.slow
def test_without_the_self_collision_task_the_arm_goes_into_the_body():
    summary = self_collision.run(duration=0.6, avoidance=False, backend=FAST).summary
    assert summary["min_distance_m"] < -0.02  # the geometries overlap
    assert summary["qp_failures"] == 0


# ------------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["com-outside", "--level", "0", "--capture-point"], "capture_point needs level 1"),
        (["sinusoid-sweep", "--frequencies", "0,1"], "frequencies"),
        (["sinusoid-sweep", "--frequencies", "a,b"], "START:STOP:COUNT"),
        (["contact-gains", "--kp-contact", "0"], "kp_contact"),
        (["contact-gains", "--duration", "0.001"], "a run needs duration >= dt"),
        (["hand-contact", "--robot", "romeo"], "arm_right_1_joint"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(capsys, argv, message):
    try:
        code = cli.main([*argv, "--json"])
    except SystemExit as stop:  # an option argparse refuses
        code = stop.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
