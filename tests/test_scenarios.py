"""The demos' scenarios in closed loop, through the same entry points as the CLI."""

import json
import subprocess
import sys

import pytest

from tsid_py import cli
from tsid_py.scenarios import com_sinusoid

SUMMARY_KEYS = {
    "steps",
    "qp_failures",
    "com_error_max_m",
    "com_error_rms_m",
    "min_normal_force_n",
    "max_friction_ratio",
    "max_torque_ratio",
    "dynamics_residual_max",
    "step_time_median_us",
}


@pytest.mark.slow
@pytest.mark.parametrize(("robot", "max_error_m"), [("talos", 0.035), ("romeo", 0.02)])
def test_com_sinusoid_ten_seconds(robot, max_error_m):
    summary = com_sinusoid.run(robot, duration=10.0).summary
    assert summary["qp_failures"] == 0 and summary["steps"] == 5000
    assert summary["com_error_max_m"] < max_error_m
    assert summary["dynamics_residual_max"] < 1e-8
    assert summary["max_pyramid_violation_n"] < 1e-6
    assert summary["max_normal_bound_violation_n"] < 1e-6
    assert summary["max_torque_ratio"] <= 1.0 + 1e-6
    assert summary["min_normal_force_n"] >= 5.0 - 1e-6


def test_cli_prints_one_json_object(capsys):
    assert cli.main(["balance", "--duration", "0.1", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert set(summary) >= SUMMARY_KEYS
    assert summary["steps"] == 50 and summary["qp_failures"] == 0


def test_cli_readable_summary_and_unknown_scenario(capsys):
    assert cli.main(["com-sinusoid", "--duration", "0.05"]) == 0
    assert "CoM error, max" in capsys.readouterr().out
    assert cli.main(["dance"]) == 2
    assert "unknown scenario 'dance'" in capsys.readouterr().err


@pytest.mark.slow
def test_demo_script_runs_as_a_program():
    done = subprocess.run(
        [sys.executable, "demos/balance.py", "--duration", "0.05", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout)["steps"] == 25


@pytest.mark.slow
def test_scenarios_run_on_every_backend_with_the_same_result(capsys):
    from tsid_py.scenarios import balance
    from tsid_py.solvers import installed_backends

    errors = {
        b: balance.run(duration=0.2, backend=b).summary["com_error_max_m"] for b in installed_backends()
    }
    assert errors["quadprog"] > 0
    assert all(abs(e - errors["quadprog"]) < 1e-9 for e in errors.values())


@pytest.mark.slow
def test_bench_command_times_every_backend(capsys):
    from tsid_py.solvers import installed_backends

    assert cli.main(["bench", "--scenario", "balance", "reach", "--duration", "0.1", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)["step_time"]
    assert set(results) == {"balance", "reach"}
    for per_backend in results.values():
        assert set(per_backend) == set(installed_backends())
        for r in per_backend.values():
            assert r["steps"] == 50 and r["qp_failures"] == 0
            assert 0 < r["median_us"] <= r["p99_us"]


@pytest.mark.parametrize(
    ("duration", "message"),
    [
        ("0", "duration must be > 0.0, got 0.0"),
        ("nan", "duration must be finite"),
        ("-1", "duration must be > 0.0, got -1.0"),
        ("0.001", "a run needs duration >= dt"),
    ],
)
def test_bench_bad_duration_is_one_line_and_exit_code_2_before_any_run(capsys, duration, message):
    # step's plan sets its length: it would run first if the duration were checked only by balance
    assert cli.main(["bench", "--scenario", "step", "balance", "--duration", duration, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and message in captured.err and len(captured.err.strip().splitlines()) == 1


def test_bench_json_writes_a_step_time_not_measured_as_null(capsys, monkeypatch):
    from types import SimpleNamespace

    from tsid_py import bench
    from tsid_py.scenarios import balance

    def run(**keywords):  # a run whose one step failed: no step time
        nan = float("nan")
        summary = {"step_time_median_us": nan, "step_time_p99_us": nan, "steps": 1, "qp_failures": 1}
        return SimpleNamespace(summary=summary)

    fake = SimpleNamespace(parameters=balance.SCENARIO.parameters, run=run)
    monkeypatch.setattr(bench, "SCENARIOS", {"balance": SimpleNamespace(SCENARIO=fake)})
    assert cli.main(["bench", "--scenario", "balance", "--backend", "quadprog", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)["step_time"]["balance"]["quadprog"]
    assert result == {"median_us": None, "p99_us": None, "steps": 1, "qp_failures": 1}
    assert cli.main(["bench", "--scenario", "balance", "--backend", "quadprog"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split() == ["balance", "quadprog", "-", "-", "1"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["walk", "--steps", "1", "--json"], "steps"),
        (["walk", "--step-length", "nan", "--json"], "step_length"),
        (["balance", "--duration", "-1", "--json"], "duration"),
        (["balance", "--duration", "0.001", "--json"], "shorter than one control period (dt = 0.002 s)"),
        (["balance", "--duration", "1e308", "--json"], "the most a run may take"),
        (["reach", "--duration", "0.001", "--json"], "a run needs duration >= dt"),
        (["balance", "--robot", "nao", "--json"], "nao"),
        (["balance", "--check-every", "-1", "--json"], "--check-every"),
        (["com-sinusoid", "--amplitude", "5", "--json"], "reaches 0.149 m to each side of it"),
        (["com-sinusoid", "--amplitude", "-0.2", "--json"], "amplitude = -0.2 m"),
        (["quadruped", "--amplitude", "0.3", "--json"], "reaches 0.169 m"),
        # the viewer's options: its server's ZMQ address, not its page; none of them without a viewer
        (
            ["balance", "--viewer", "meshcat", "--viewer-url", "http://127.0.0.1:7000/static/", "--json"],
            "not a ZMQ address; start `meshcat-server` and pass the zmq_url (tcp://...) it prints",
        ),
        (
            ["balance", "--viewer-url", "tcp://127.0.0.1:6000", "--json"],
            "--viewer-url needs --viewer meshcat",
        ),
        (["reach", "--viewer-rate", "10", "--json"], "--viewer-rate needs --viewer meshcat"),
        (["balance", "--viewer", "meshcat", "--viewer-rate", "-5", "--json"], "viewer rate must be > 0"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_code_2(capsys, argv, message):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["balance", "--duration", "2s"], "argument --duration: expected a number of seconds, got '2s'"),
        (
            ["walk", "--step-length", "10cm"],
            "argument --step-length: expected a length in metres, got '10cm'",
        ),
        (["com-sinusoid", "--frequency", "1/2"], "--frequency: expected a frequency in Hz, got '1/2'"),
        (["balance", "--durration", "2"], "unrecognized arguments: --durration 2 (did you mean --duration?)"),
        (["reach", "--motoin=sinusoid"], "(did you mean --motion?)"),
        (["walk", "--duration", "3"], "walk's plan sets its length: choose --steps, --single-support and"),
        (["step", "--duration", "3"], "step's plan sets its length"),
    ],
)
def test_cli_parse_errors_say_the_unit_and_what_to_give_instead(capsys, argv, message):
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_cli_outputs_are_refused_where_a_typo_would_put_them(tmp_path, capsys):
    """--plot is a directory (a name like plot.png is refused, not made a directory); an output's
    directory is made in one that exists, never as a chain of missing directories."""
    missing = tmp_path / "missing"
    for argv, message in [
        (["--plot", str(tmp_path / "plot.png")], "--plot is a directory for the figures, not a .png file"),
        (
            ["--html", str(missing / "dir" / "x.html")],
            f"cannot make its directory {missing}/dir: {missing} does",
        ),
        (
            ["--plot", str(missing / "figures")],
            f"cannot make its directory {missing}/figures: {missing} does",
        ),
    ]:
        assert cli.main(["balance", "--duration", "60", "--json", *argv]) == 2  # refused before the run
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize("demo", ["balance", "com_sinusoid", "step", "walk", "reach", "quadruped"])
def test_every_demo_script_answers_help(demo):
    """`python demos/NAME.py --help` works for every demo (the scripts are thin wrappers)."""
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "demos" / f"{demo}.py"
    done = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "--json" in done.stdout and "--plot" in done.stdout


def test_walk_refuses_a_plant_and_a_setup_together():
    from tsid_py.errors import InvalidParameterError
    from tsid_py.scenarios import walk
    from tsid_py.scenarios.runner import LoopSetup

    with pytest.raises(InvalidParameterError, match="not both"):
        walk.run(plant="pinocchio", setup=LoopSetup())


@pytest.mark.slow
def test_every_scenario_refuses_a_run_of_no_control_step():
    from tsid_py.errors import InvalidParameterError
    from tsid_py.scenarios import SCENARIOS

    for module in SCENARIOS.values():
        scenario = module.SCENARIO
        if any(p.name == "duration" for p in scenario.parameters()):
            with pytest.raises(InvalidParameterError, match="a run needs duration >= dt"):
                scenario.run(duration=0.001)
        else:  # step and walk: their plan sets the length, a period longer than the plan has no step
            with pytest.raises(InvalidParameterError, match="a run needs duration >= dt"):
                scenario.run(dt=1e9)


def test_a_summary_echoes_its_duration_as_a_plain_float():
    """A NumPy float given as the duration is read as a number: the summary stays JSON."""
    import numpy as np

    from tsid_py.scenarios import reach

    summary = reach.run(duration=np.float32(0.02)).summary
    assert type(summary["duration_s"]) is float and type(summary["dt_s"]) is float
    json.dumps(summary)
