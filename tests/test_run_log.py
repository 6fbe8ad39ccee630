"""A run's log: planned and measured side by side in the plots, streamed to disk as the run goes.

The plots of a run on a plant with physics draw the reference, the controller's plan and the
plant's measurement on the same axes (CoM, feet) and the planned against the measured contact
forces; these tests read the figures' line data back and compare them with the log and with
what the controller's own model predicts. A log asked to stream keeps at most CHUNK_STEPS rows
in memory, gives back exactly what an in-memory log holds, and leaves no file behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import tsid_py as tp
from tsid_py import cli
from tsid_py.controllers import BipedController
from tsid_py.errors import InvalidParameterError, OutputError
from tsid_py.loop import ControlLoop, Push, RunLog
from tsid_py.loop import log as log_module
from tsid_py.scenarios import balance, step
from tsid_py.scenarios.runner import LoopSetup, RunResult
from tsid_py.viz import plots

DT = 0.002
TIMING = ("real_time_factor", "step_time_median_us", "step_time_p99_us")  # differ run to run


def _lines(ax) -> dict[str, object]:
    return {line.get_label(): line for line in ax.get_lines()}


def _com_of(robot: tp.RobotWrapper, configurations) -> np.ndarray:
    data = robot.model.createData()
    return np.array([pin.centerOfMass(robot.model, data, q).copy() for q in configurations])


@pytest.fixture(scope="module")
def pushed_on_pinocchio() -> RunResult:
    """Talos standing on Pinocchio's rigid-contact physics, pushed sideways: the plant does not
    do exactly what the controller planned."""
    return balance.run(duration=0.4, plant="pinocchio", push=Push((0.0, 150.0, 0.0), 0.1, 0.1))


@pytest.fixture(scope="module")
def on_integrator() -> RunResult:
    return balance.run(duration=0.2)


# ------------------------------------------------------------ planned vs measured in the plots
@pytest.mark.slow  # a closed-loop run (its module fixture)
def test_com_plot_draws_reference_planned_and_measured_from_the_log(pushed_on_pinocchio):
    result, log = pushed_on_pinocchio, pushed_on_pinocchio.log
    robot = result.controller.robot
    figure = plots.com_figure(result)
    t = np.array(log.t)
    measured, reference = np.array(log.com), np.array(log.com_ref)
    planned = _com_of(robot, log.q_plan)
    for k, ax in enumerate(figure.axes[:3]):
        lines = _lines(ax)
        np.testing.assert_array_equal(lines["CoM measured"].get_xdata(), t)  # exact: the logged data
        np.testing.assert_array_equal(lines["CoM measured"].get_ydata(), measured[:, k])  # exact: as logged
        np.testing.assert_array_equal(lines["reference"].get_ydata(), reference[:, k])  # exact: as logged
        np.testing.assert_allclose(
            lines["CoM planned (previous step)"].get_ydata(), planned[:, k], atol=1e-15
        )
        assert lines["CoM measured"].get_linestyle() != lines["CoM planned (previous step)"].get_linestyle()
    # planned = what the controller's previous step predicts: its dv integrated from its state
    for k in (0, 50, len(t) - 2):
        q_next, _ = tp.integrate(robot, log.q[k], log.v[k], log.dv[k], DT)
        np.testing.assert_array_equal(log.q_plan[k + 1], q_next)  # exact: tp.integrate, the same inputs
    np.testing.assert_array_equal(log.q_plan[0], log.q[0])  # exact: a copy, nothing was planned before
    # ... which the plant's physics does not realise exactly: micrometres per step, not rounding
    mismatch = np.linalg.norm(measured - planned, axis=1)
    assert 1e-7 < mismatch.max() < 1e-3, mismatch.max()
    distance_axes, twin = figure.axes[3], figure.axes[4]
    np.testing.assert_allclose(twin.get_lines()[0].get_ydata(), 1e6 * mismatch)
    tracking = distance_axes.get_lines()[0].get_ydata()
    np.testing.assert_allclose(tracking, 1e3 * np.linalg.norm(measured - reference, axis=1))
    assert tracking.max() > 1.0  # the push moved the CoM by millimetres off its reference
    assert "mm" in distance_axes.get_ylabel() and "um" in twin.get_ylabel()


@pytest.mark.slow
def test_on_the_integrator_plant_the_plan_is_what_happens(on_integrator):
    log = on_integrator.log
    series = plots.com_series(on_integrator)
    np.testing.assert_allclose(series["planned"], series["measured"], atol=1e-12)
    np.testing.assert_array_equal(np.array(log.q_plan), np.array(log.q))  # exact: the same integration
    assert not log.wrenches  # the integrator measures no contacts
    figure = plots.contact_forces_figure(on_integrator)
    assert len(figure.axes) == 2 and not any("measured" in label for label in _lines(figure.axes[0]))


@pytest.mark.slow  # a closed-loop run (its module fixture)
def test_contact_force_plot_draws_planned_and_measured_forces(pushed_on_pinocchio):
    result, log = pushed_on_pinocchio, pushed_on_pinocchio.log
    controller = result.controller
    robot = controller.robot
    t = np.array(log.t)
    feet = {c.name: c for c in controller.contacts.values()}  # a foot the push lifted left the problem
    frames = {name: c.frame_name for name, c in feet.items()}
    assert sorted(log.wrenches) == sorted(frames.values())
    figure = plots.contact_forces_figure(result)
    assert len(figure.axes) == 3 and "planned and measured" in figure.get_suptitle()
    normal_lines = _lines(figure.axes[0])
    data = robot.create_data()
    weight = robot.total_mass * 9.81
    for name, frame in frames.items():
        contact = feet[name]
        wrenches = np.array(log.wrenches[frame])
        measured = np.empty(len(t))
        for i, q in enumerate(log.q):  # the measured wrench along the contact's normal, at that q
            robot.forward_kinematics(data, q)
            measured[i] = wrenches[i, :3] @ (contact.force_rotation(data) @ contact.contact_normal)
        planned = np.array([contact.get_normal_force(f) for f in log.forces[name]])
        line_measured, line_planned = normal_lines[f"{name} measured"], normal_lines[f"{name} planned"]
        np.testing.assert_allclose(line_measured.get_ydata(), measured, atol=1e-9)
        np.testing.assert_allclose(line_measured.get_xdata(), t - DT)  # the previous period's outcome
        np.testing.assert_allclose(line_planned.get_ydata(), planned, rtol=1e-12)
        np.testing.assert_array_equal(line_planned.get_xdata(), t)  # exact: the logged times
        # the plant's physics is not the QP's: they differ by newtons, yet both carry the robot
        gap = np.abs(measured[1:] - planned[:-1])
        assert gap.max() > 1.0, gap.max()
        assert np.median(gap) < 0.05 * weight
        assert line_measured.get_color() == line_planned.get_color()
        assert line_measured.get_linestyle() != line_planned.get_linestyle()
    totals = sum(np.array(log.wrenches[frame])[1:, 2] for frame in frames.values())
    np.testing.assert_allclose(np.median(totals), weight, rtol=0.05)


@pytest.fixture(scope="module")
def stepping(tmp_path_factory) -> RunResult:
    """One step of Talos on the integrator, its log streamed (2650 steps: two chunks and a tail)."""
    return step.run(setup=LoopSetup(log_dir=tmp_path_factory.mktemp("stepping")))


@pytest.mark.slow  # a closed-loop run (its module fixture)
def test_foot_plot_draws_reference_planned_and_measured_heights(stepping):
    """The swing foot's measured, planned and reference heights, from the streamed log."""
    result, log, controller = stepping, stepping.log, stepping.controller
    series = plots.foot_height_series(result)
    right = controller.contacts["right"].name
    heights = series[right]
    assert set(heights) == {"measured", "planned", "reference"}
    feet, held = log.series("feet/right"), log.series("feet_ref/right")
    z0 = feet[0, 2]
    np.testing.assert_allclose(heights["measured"], feet[:, 2] - z0, atol=1e-12)
    np.testing.assert_allclose(heights["reference"], held[:, 2] - z0)
    assert heights["reference"].max() == pytest.approx(0.1, abs=1e-3)  # the swing's 10 cm
    assert np.abs(heights["measured"] - heights["reference"]).max() < 0.01
    figure = plots.foot_heights_figure(result)
    lines = _lines(figure.axes[0])
    assert {f"{right}", f"{right} planned", f"{right} reference"} <= set(lines)
    np.testing.assert_allclose(lines[f"{right} planned"].get_ydata(), heights["planned"])


@pytest.mark.slow
def test_cli_plots_on_the_pinocchio_plant_read_the_streamed_log(tmp_path, monkeypatch, capsys):
    """``tsid-py balance --plant pinocchio --plot DIR``: the figures written hold the planned and
    measured series of the whole run, read back from the log streamed in chunks."""
    monkeypatch.setattr(log_module, "CHUNK_STEPS", 40)
    seen: dict[str, object] = {}
    write_plots = plots.write_plots

    def spy(result, directory, dpi=100):
        seen["streamed"], seen["in_memory"] = result.log.streamed, len(result.log.t)
        seen["arrays"] = result.log.arrays()
        seen["com"] = plots.com_figure(result)
        seen["forces"] = plots.contact_forces_figure(result)
        return write_plots(result, directory, dpi)

    monkeypatch.setattr(plots, "write_plots", spy)
    out = tmp_path / "plots"
    assert (
        cli.main(["balance", "--plant", "pinocchio", "--duration", "0.3", "--plot", str(out), "--json"]) == 0
    )
    summary = json.loads(capsys.readouterr().out)
    arrays = seen["arrays"]
    assert seen["streamed"] and seen["in_memory"] <= 40 and len(arrays["t"]) == summary["steps"] == 150
    assert sorted(p.name for p in out.iterdir()) == [
        f"balance_{name}.png" for name in ("capture_point", "com", "contact_forces", "top_view", "torques")
    ]
    com_axes = seen["com"].axes
    measured = _lines(com_axes[1])["CoM measured"].get_ydata()
    planned = _lines(com_axes[1])["CoM planned (previous step)"].get_ydata()
    np.testing.assert_array_equal(measured, arrays["com"][:, 1])  # exact: the logged data
    robot = tp.load_robot("talos")
    np.testing.assert_allclose(planned, _com_of(robot, arrays["q_plan"])[:, 1], atol=1e-15)
    assert np.abs(measured - planned).max() > 1e-9  # physics: not the plan to rounding
    force_lines = _lines(seen["forces"].axes[0])
    frame = "leg_right_sole_fix_joint"
    np.testing.assert_allclose(
        force_lines["contact_rfoot measured"].get_ydata(), arrays[f"wrenches/{frame}"][:, 2], atol=0.5
    )


@pytest.mark.slow
def test_mujoco_plots_draw_its_measured_contact_forces():
    pytest.importorskip("mujoco")  # the [sim] extra
    result = balance.run(duration=0.1, plant="mujoco")
    log = result.log
    assert sorted(log.wrenches) == sorted(c.frame_name for c in result.controller.contacts.values())
    measured = plots.measured_contact_force_series(result)
    series = plots.com_series(result)
    assert set(measured) == {c.name for c in result.controller.contacts.values()}
    assert np.abs(series["measured"] - series["planned"]).max() > 1e-9
    total = sum(row["normal"][-1] for row in measured.values())
    assert total == pytest.approx(result.controller.robot.total_mass * 9.81, rel=0.1)


# ------------------------------------------------------------ streaming to disk
def _balance(setup: LoopSetup, duration: float = 0.3, observer=None) -> RunResult:
    from tsid_py.scenarios.runner import run_biped

    controller = BipedController(tp.load_robot("talos"))
    reference = tp.TrajectoryEuclidianConstant("com", controller.com_initial)
    return run_biped(controller, duration, DT, reference.sample, "balance", observer=observer, setup=setup)


@pytest.mark.slow
def test_a_streamed_log_keeps_few_rows_in_memory_and_gives_back_the_whole_run(tmp_path, monkeypatch):
    monkeypatch.setattr(log_module, "CHUNK_STEPS", 40)
    rows_in_memory, files_seen = [], set()

    def watch(controller, log):
        rows_in_memory.append(len(log.t))
        files_seen.update(os.listdir(tmp_path))

    full = _balance(LoopSetup(plant="pinocchio"))
    streamed = _balance(LoopSetup(plant="pinocchio", log_dir=tmp_path), observer=watch)
    log = streamed.log
    assert log.streamed and log.steps == full.log.steps == 150
    assert max(rows_in_memory) == 40 and len(log.t) == 150 - 3 * 40
    assert files_seen == set() and list(tmp_path.iterdir()) == []  # the file has no name
    expected, got = full.log.arrays(), log.arrays()
    assert sorted(expected) == sorted(got)
    for name in expected:
        np.testing.assert_array_equal(got[name], expected[name], err_msg=name)  # exact: the same run
    for stride in (1, 7, 40, 149, 1000):
        thinned, reference = log.sampled(stride), full.log.sampled(stride)
        assert type(thinned) is RunLog and not thinned.streamed
        assert thinned.t == reference.t and thinned.t[-1] == full.log.t[-1]
        np.testing.assert_array_equal(  # exact: the same run, thinned alike
            np.array(thinned.wrenches["leg_left_sole_fix_joint"]),
            np.array(reference.wrenches["leg_left_sole_fix_joint"]),
        )
    rfoot = expected["forces/contact_rfoot"]
    np.testing.assert_array_equal(log.series("forces/contact_rfoot"), rfoot)  # exact: the same run
    distances = full.log.distances("com", "com_ref")
    np.testing.assert_array_equal(log.distances("com", "com_ref"), distances)  # exact: the same run
    assert {k: v for k, v in streamed.summary.items() if k not in TIMING} == {
        k: v for k, v in full.summary.items() if k not in TIMING
    }
    log.close()
    with pytest.raises(OutputError, match="closed"):
        log.series("q")


@pytest.mark.slow
def test_plots_of_a_long_run_read_back_a_bounded_number_of_steps(tmp_path, monkeypatch):
    monkeypatch.setattr(log_module, "CHUNK_STEPS", 40)
    monkeypatch.setattr(plots, "PLOT_STEPS", 25)
    result = _balance(LoopSetup(log_dir=tmp_path), duration=0.2)  # 100 steps
    thinned = plots.plotted(result)
    assert len(thinned.log.t) == 26 and thinned.log.t[::25] == [result.log.sampled().t[0], result.log.t[-1]]
    assert plots.plotted(thinned) is thinned  # read once
    lines = _lines(plots.com_figure(result).axes[2])
    sampled = np.array(result.log.sampled(4).t)
    np.testing.assert_array_equal(lines["CoM measured"].get_xdata(), sampled)  # exact: the logged times
    written = plots.write_plots(result, tmp_path / "plots")
    assert len(written) == 5 and [p.name for p in tmp_path.iterdir()] == ["plots"]  # with the capture point


@pytest.mark.slow  # a closed-loop run (its module fixture)
def test_a_stepping_run_streams_its_log_too(stepping):
    result, log = stepping, stepping.log
    assert log.streamed and len(log.t) == 650 and log.steps == result.summary["steps"] == 2650
    arrays = log.arrays()
    assert arrays["feet/right"].shape == (log.steps, 3) and arrays["in_contact/left"].dtype == bool
    assert arrays["footsteps"].shape == (1, 3)
    assert result.summary["com_error_max_m"] == pytest.approx(
        log.distances("com", "com_ref").max(), rel=1e-12
    )


def test_bad_log_settings_and_series_are_refused(tmp_path, monkeypatch):
    with pytest.raises(InvalidParameterError, match="not both"):
        RunLog(window=10, stream_dir=tmp_path)
    with pytest.raises(OutputError, match="cannot stream"):
        RunLog(stream_dir=tmp_path / "missing")
    with pytest.raises(InvalidParameterError, match="stride"):
        RunLog().sampled(0)
    with pytest.raises(InvalidParameterError, match="no series 'zmp'"):
        RunLog().series("zmp")
    monkeypatch.setattr(log_module, "CHUNK_STEPS", 5)

    class Skipping(tp.loop.StepHooks):  # records the CoM at every other step only
        def __init__(self, log):
            self.log, self.steps = log, 0

        def after_step(self, state, out):
            self.steps += 1
            if self.steps % 2:
                self.log.com.append(np.zeros(3))

    controller = BipedController(tp.load_robot("talos"))
    log = RunLog(stream_dir=tmp_path)
    with pytest.raises(InvalidParameterError, match="'com' has 3 entries for 5 steps"):
        ControlLoop(controller, DT, log=log).run(20, Skipping(log))


def test_a_window_keeps_the_measured_wrenches_bounded():
    result = _balance(LoopSetup(plant="pinocchio", log_window=20), duration=0.1)
    log = result.log
    assert log.steps == 20 and all(len(series) == 20 for series in log.wrenches.values())
    assert len(log.q_plan) == 20


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads open files from /proc (Linux)")
def test_a_killed_run_leaves_no_log_file(tmp_path):
    """SIGKILL while the log streams into the plot directory: nothing is left there."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tsid_py.cli",
            "balance",
            "--duration",
            "600",
            "--plot",
            str(tmp_path),
            "--json",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline, open_log = time.monotonic() + 60, None
        while time.monotonic() < deadline and open_log is None:
            time.sleep(0.2)
            for fd in Path(f"/proc/{process.pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    if target.startswith(str(tmp_path)):
                        open_log = target
        assert open_log is not None and open_log.endswith("(deleted)"), open_log  # unnamed
        time.sleep(1.0)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    assert list(tmp_path.iterdir()) == []


def test_the_cli_help_says_where_the_log_goes(capsys):
    with pytest.raises(SystemExit):
        cli.main(["balance", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "streams to an unnamed file beside the outputs" in text and "memory stays flat" in text
