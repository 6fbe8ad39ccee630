"""Sweeps (tsid_py.sweep): points, the serial engine and its table, restarts, pictures, the CLI,
``analyze --batch``; and, where Ray is installed, the same table on 2 workers and a worker killed
mid-sweep."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from decimal import Decimal
from functools import partial
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import tsid_py as tsid
from tsid_py import cli
from tsid_py.errors import InvalidParameterError, RobotSpecError
from tsid_py.loop.plant import Push
from tsid_py.scenarios import com_sinusoid
from tsid_py.sweep import (
    JobRunner,
    ScenarioJob,
    grid_points,
    parse_param,
    plot_sweep,
    read_table,
    run_sweep,
    sample_points,
    scenario_kwargs,
    write_table,
)
from tsid_py.sweep.table import has_pyarrow

TABLES = [".csv", pytest.param(".parquet", marks=pytest.mark.skipif(not has_pyarrow(), reason="no pyarrow"))]


# ------------------------------------------------------------------ points
def test_a_grid_includes_stop_counted_in_decimal():
    assert parse_param("x=0.1:0.5:0.1").grid() == (0.1, 0.2, 0.3, 0.4, 0.5)  # exact: Decimal steps
    assert parse_param("push_fy=100:600:50").grid() == tuple(float(f) for f in range(100, 601, 50))
    assert parse_param("t=0.5:1.5:0.25").grid() == (0.5, 0.75, 1.0, 1.25, 1.5)  # exact: Decimal steps
    assert parse_param("x=0:1:0.3").grid() == (0.0, 0.3, 0.6, 0.9)  # exact: Decimal; STOP not reached
    assert parse_param("steps=2:6:2", whole=True).grid() == (2, 4, 6)
    assert parse_param("backend=quadprog,daqp").grid() == ("quadprog", "daqp")
    assert parse_param("duration=0.05").grid() == (0.05,)  # exact: parsed
    points = grid_points([parse_param("a=1:2:1"), parse_param("b=x,y")])
    assert points == [{"a": 1.0, "b": "x"}, {"a": 1.0, "b": "y"}, {"a": 2.0, "b": "x"}, {"a": 2.0, "b": "y"}]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x", "NAME=START:STOP:STEP"),
        ("x=", "NAME=START:STOP:STEP"),
        ("1x=1:2:1", "NAME=START:STOP:STEP"),
        ("x=2:1:0.5", "START 2 is above STOP 1"),
        ("x=0:1:0", "STEP must be > 0"),
        ("x=0:1:-1", "STEP must be > 0"),
        ("x=0:nan:1", "not finite"),
        ("x=0:a:1", "'a' is not a number"),
        ("x=0:1:2:3", "a range is START:STOP:STEP"),
        ("x=1,,2", "an empty value"),
        ("x=1,1", "listed twice"),
        ("x=inf", "not finite"),
    ],
)
def test_bad_params_are_named(text, message):
    with pytest.raises(InvalidParameterError, match=message):
        parse_param(text)


def test_whole_number_parameters_refuse_fractions():
    with pytest.raises(InvalidParameterError, match="whole numbers"):
        parse_param("steps=1:4:0.5", whole=True)
    with pytest.raises(InvalidParameterError, match="whole numbers"):
        parse_param("steps=2.5", whole=True)


def test_grids_need_a_step_and_not_too_many_points():
    with pytest.raises(InvalidParameterError, match="a grid needs NAME=START:STOP:STEP"):
        grid_points([parse_param("x=0:1")])
    with pytest.raises(InvalidParameterError, match="coarser"):
        grid_points([parse_param("x=0:1:1e-9")])
    with pytest.raises(InvalidParameterError, match="given twice"):
        grid_points([parse_param("x=0:1:1"), parse_param("x=3")])


def test_random_samples_are_seeded_uniform_and_prefix_stable():
    axes = [parse_param("a=0:10"), parse_param("b=-1:1:0.5"), parse_param("c=p,q"), parse_param("d=7")]
    points = sample_points(axes, 200, seed=3)
    assert points == sample_points(axes, 200, seed=3)
    assert points != sample_points(axes, 200, seed=4)
    assert sample_points(axes, 50, seed=3) == points[:50]
    a = np.array([p["a"] for p in points])
    assert a.min() >= 0 and a.max() < 10 and 3 < a.mean() < 7
    assert {p["c"] for p in points} == {"p", "q"} and {p["d"] for p in points} == {7.0}
    whole = sample_points([parse_param("n=1:3", whole=True)], 300, seed=0)
    assert {p["n"] for p in whole} == {1, 2, 3}
    # a fixed value draws no number: adding one leaves the other axes' samples as they were
    assert [p["a"] for p in sample_points(axes[:1], 20, 3)] == [
        p["a"] for p in sample_points(axes[:1] + axes[3:], 20, 3)
    ]
    with pytest.raises(InvalidParameterError, match="--samples"):
        sample_points(axes, 0, seed=3)
    with pytest.raises(InvalidParameterError, match="--seed"):
        sample_points(axes, 5, seed=-1)


def test_push_names_become_one_push():
    kwargs = scenario_kwargs({"push_fy": 300.0, "push_t": 0.75, "robot": "talos"})
    assert kwargs == {"robot": "talos", "push": Push((0.0, 300.0, 0.0), 0.75, 0.1)}
    polar = scenario_kwargs({"push_force": 200.0, "push_angle": 90.0, "push_duration": 0.2})["push"]
    assert polar.force[0] == pytest.approx(0.0, abs=1e-12) and polar.force[1] == pytest.approx(200.0)
    assert (polar.t, polar.duration) == (1.0, 0.2)  # exact: parsed
    assert scenario_kwargs({"push_fz": -50.0})["push"] == Push((0.0, 0.0, -50.0), 1.0, 0.1)
    with pytest.raises(InvalidParameterError, match="push_duration > 0"):
        scenario_kwargs({"push_fy": 1.0, "push_duration": 0.0})
    with pytest.raises(InvalidParameterError, match="not both"):
        grid_points([parse_param("push_fy=1,2"), parse_param("push_angle=0,90")])


# ------------------------------------------------------------------ the serial engine
def fake_run(x: float, y: str, calls: list | None = None) -> dict[str, object]:
    """A scenario of two parameters that raises at x = 2, y = b."""
    if calls is not None:
        calls.append((x, y))
    if x == 2.0 and y == "b":  # exact: a grid value, as given
        raise ValueError("no\nsolution here")
    return {"score": x * 10 + (y == "b"), "ok": x < 3, "label": f"{x}{y}", "vector": [1, 2], "steps": 3}


def fake_points(stop: int = 3) -> list[dict[str, object]]:
    return grid_points([parse_param(f"x=1:{stop}:1"), parse_param("y=a,b")])


@pytest.mark.slow
@pytest.mark.parametrize("suffix", TABLES)
def test_pandas_reads_the_table_as_the_sweep_wrote_it(tmp_path, suffix):
    """The docs' recipe: pandas (from the [cluster] extra) reads both table formats back."""
    pd = pytest.importorskip("pandas", reason="pandas comes with the [cluster] extra")
    out = tmp_path / f"table{suffix}"
    run_sweep(ScenarioJob(fake_run), fake_points(), out, workers=1)
    table = pd.read_parquet(out) if suffix == ".parquet" else pd.read_csv(out, keep_default_na=False)
    rows, _ = read_table(out)
    assert list(table.columns) == list(rows[0]) and len(table) == len(rows)
    assert list(table.x) == [row["x"] for row in rows] and list(table.error) == [row["error"] for row in rows]
    ran = table[table.error == ""]
    assert len(ran) == 5 and list(ran.point) == [0, 1, 2, 4, 5]


@pytest.mark.parametrize("suffix", TABLES)
def test_serial_sweep_table_records_errors_and_goes_on(tmp_path, suffix):

    out = tmp_path / f"table{suffix}"
    report = run_sweep(ScenarioJob(fake_run), fake_points(), out, workers=1)
    assert (report.points, report.ran, report.errors, report.skipped, report.backend) == (
        6,
        6,
        1,
        0,
        "serial",
    )
    rows, recorded = read_table(out)
    assert recorded == (["x", "y"] if suffix == ".parquet" else None)
    assert list(rows[0]) == ["point", "x", "y", "score", "ok", "label", "steps", "error", "seconds"]
    assert [row["point"] for row in rows] == list(range(6))
    assert [(row["x"], row["y"]) for row in rows] == [
        (1.0, "a"),
        (1.0, "b"),
        (2.0, "a"),
        (2.0, "b"),
        (3.0, "a"),
        (3.0, "b"),
    ]
    failed = rows[3]
    assert failed["error"] == "ValueError: no solution here"
    assert failed["score"] is None and failed["ok"] is None and failed["label"] is None
    good = [row for row in rows if row["point"] != 3]
    assert all(row["error"] == "" and row["seconds"] >= 0.0 for row in good)
    assert [row["score"] for row in good] == [10.0, 11.0, 20.0, 30.0, 31.0]  # exact: small integers
    assert [row["ok"] for row in good] == [True, True, True, False, False]
    assert [row["label"] for row in good] == ["1.0a", "1.0b", "2.0a", "3.0a", "3.0b"]
    assert isinstance(rows[0]["steps"], int) and isinstance(rows[0]["score"], float)


@pytest.mark.parametrize("suffix", TABLES)
def test_a_restarted_sweep_skips_the_points_in_its_table(tmp_path, suffix):
    out, calls = tmp_path / f"table{suffix}", []
    job = ScenarioJob(partial(fake_run, calls=calls))
    run_sweep(job, fake_points(2), out, workers=1)
    assert len(calls) == 4
    first = read_table(out)[0]
    calls.clear()
    report = run_sweep(job, fake_points(3), out, workers=1)  # the grid extended by x = 3
    assert calls == [(3.0, "a"), (3.0, "b")] and (report.skipped, report.ran) == (4, 2)
    rows = read_table(out)[0]
    assert len(rows) == 6 and [row["point"] for row in rows] == list(range(6))
    keep = [name for name in first[0] if name != "seconds"]
    assert [[row[k] for k in keep] for row in rows[:4]] == [[row[k] for k in keep] for row in first]
    calls.clear()
    again = run_sweep(job, fake_points(3), out, workers=1)
    assert calls == [] and (again.ran, again.raised, again.backend) == (0, 0, "none")  # nothing ran
    assert again.errors == 1  # the table's row of (2, b) still holds its error
    report = run_sweep(job, fake_points(3), out, workers=1, retry_errors=True)
    assert (
        calls == [(2.0, "b")] and report.ran == 1 and read_table(out)[0][3]["error"].startswith("ValueError")
    )


def test_a_table_of_another_sweep_is_refused_unless_forced(tmp_path):
    out = tmp_path / "table.csv"
    run_sweep(ScenarioJob(fake_run), fake_points(2), out, workers=1)
    before = out.read_bytes()
    other = grid_points([parse_param("x=5:6:1"), parse_param("y=a")])
    with pytest.raises(
        InvalidParameterError, match=r"holds another sweep: its run at x=1.0, y='a' is no point"
    ):
        run_sweep(ScenarioJob(fake_run), other, out, workers=1)
    with pytest.raises(InvalidParameterError, match="holds another sweep: it has no column 'calls'"):
        run_sweep(ScenarioJob(fake_run), [{"x": 1.0, "y": "a", "calls": "none"}], out, workers=1)
    assert out.read_bytes() == before
    report = run_sweep(ScenarioJob(fake_run), other, out, workers=1, force=True)
    assert report.ran == 2 and [row["x"] for row in read_table(out)[0]] == [5.0, 6.0]  # exact: as given
    (tmp_path / "junk.csv").write_text("")
    with pytest.raises(InvalidParameterError, match="empty"):
        run_sweep(ScenarioJob(fake_run), other, tmp_path / "junk.csv", workers=1)
    with pytest.raises(InvalidParameterError, match=r"must end with \.parquet or \.csv"):
        run_sweep(ScenarioJob(fake_run), other, tmp_path / "table.txt", workers=1)


def two_gains(kp: float = 10.0, kd: float = 1.0) -> dict[str, object]:
    return {"cost": kp + 100.0 * kd}


def test_a_csv_table_of_another_parameter_value_is_refused(tmp_path):
    """A CSV records no inputs: a column after them that names a parameter this sweep holds at its
    default must hold that default (or nothing), else its rows ran at another value."""
    out, job = tmp_path / "table.csv", ScenarioJob(two_gains)
    run_sweep(job, grid_points([parse_param("kp=1,2"), parse_param("kd=3")]), out, workers=1)
    with pytest.raises(
        InvalidParameterError, match="its column kd holds 3.0, and this sweep runs kd at its default 1.0"
    ):
        run_sweep(job, grid_points([parse_param("kp=1,2")]), out, workers=1)
    with pytest.raises(InvalidParameterError, match="its first columns are kp, kd, not kd, kp"):
        run_sweep(job, grid_points([parse_param("kd=3"), parse_param("kp=1,2")]), out, workers=1)
    held = tmp_path / "held.csv"  # kd given at its default: the same runs as without it
    run_sweep(job, grid_points([parse_param("kp=1,2"), parse_param("kd=1")]), held, workers=1)
    report = run_sweep(job, grid_points([parse_param("kp=1:3:1")]), held, workers=1)
    assert (report.skipped, report.ran) == (2, 1)
    rows = read_table(held)[0]
    assert [(row["kd"], row["cost"]) for row in rows] == [
        (1.0, 101.0),
        (1.0, 102.0),
        (None, 103.0),
    ]  # exact: sums of small integers
    assert run_sweep(job, grid_points([parse_param("kp=1:3:1")]), held, workers=1).skipped == 3


def stop_at_third(x: float, y: str) -> dict[str, object]:
    if x == 2.0 and y == "b":  # exact: a grid value, as given
        raise KeyboardInterrupt
    return {"score": x}


def test_a_stopped_sweep_keeps_what_it_ran(tmp_path):
    out = tmp_path / "table.csv"
    with pytest.raises(KeyboardInterrupt):
        run_sweep(ScenarioJob(stop_at_third), fake_points(), out, workers=1)
    assert [row["point"] for row in read_table(out)[0]] == [0, 1, 2]
    report = run_sweep(ScenarioJob(fake_run), fake_points(), out, workers=1)
    assert (report.skipped, report.ran) == (3, 3) and len(read_table(out)[0]) == 6


def test_keep_selects_fields_and_names_unknown_ones(tmp_path):
    out = tmp_path / "table.csv"
    run_sweep(ScenarioJob(fake_run), fake_points(1), out, workers=1, keep=["label", "vector"])
    rows = read_table(out)[0]
    assert list(rows[0]) == ["point", "x", "y", "label", "vector", "error", "seconds"]
    assert rows[0]["vector"] == "[1, 2]"
    with pytest.raises(
        InvalidParameterError, match=r"--keep scroe: not a field of the summary \(it has score,"
    ):
        run_sweep(ScenarioJob(fake_run), fake_points(1), tmp_path / "other.csv", workers=1, keep=["scroe"])
    assert not (tmp_path / "other.csv").exists()  # no row of a run that lacks a kept field


@pytest.mark.parametrize("suffix", TABLES)
def test_a_table_of_another_keep_runs_again_the_points_whose_rows_lack_a_kept_field(tmp_path, suffix):
    out, calls = tmp_path / f"table{suffix}", []
    job = ScenarioJob(partial(fake_run, calls=calls))
    run_sweep(job, fake_points(2), out, workers=1, keep=["score"])  # (2, b) raises
    before = out.read_bytes()
    calls.clear()
    with pytest.raises(InvalidParameterError, match="--keep scroe"):  # a typo stores no row ...
        run_sweep(job, fake_points(2), out, workers=1, keep=["score", "scroe"])
    assert len(calls) == 1 and out.read_bytes() == before  # ... and leaves the table as it was
    calls.clear()
    report = run_sweep(job, fake_points(2), out, workers=1, keep=["score", "label"])
    assert calls == [(1.0, "a"), (1.0, "b"), (2.0, "a")]  # the error's row is done
    assert (report.skipped, report.ran) == (1, 3)
    rows = read_table(out)[0]
    assert [row["label"] for row in rows] == ["1.0a", "1.0b", "2.0a", None]
    assert rows[3]["error"].startswith("ValueError")
    calls.clear()
    assert run_sweep(job, fake_points(2), out, workers=1, keep=["score", "label"]).ran == 0 and calls == []
    stopped = ScenarioJob(partial(fake_run_stopped_at, calls=calls, stop=2))
    with pytest.raises(KeyboardInterrupt):  # a wider --keep, stopped after one run: no row lost
        run_sweep(stopped, fake_points(2), out, workers=1, keep=["score", "label", "ok"])
    rows = read_table(out)[0]
    assert [row.get("ok") for row in rows] == [True, None, None, None] and len(calls) == 2
    assert [row["label"] for row in rows] == ["1.0a", "1.0b", "2.0a", None]


def fake_run_stopped_at(x: float, y: str, calls: list, stop: int) -> dict[str, object]:
    """:func:`fake_run`, with Ctrl-C at its ``stop``-th call."""
    if len(calls) + 1 == stop:
        calls.append((x, y))
        raise KeyboardInterrupt
    return fake_run(x, y, calls)


@pytest.mark.parametrize("suffix", TABLES)
def test_tables_write_floats_exactly(tmp_path, suffix):
    values = [0.1, 1 / 3, 2.0**-1074, 1e308, -0.0, float("inf"), 123456789.123456789, float("nan")]
    rows = [{"point": i, "x": v, "error": "", "seconds": 0.0} for i, v in enumerate(values)]
    write_table(tmp_path / f"t{suffix}", rows, ["x"])
    back = np.array([row["x"] for row in read_table(tmp_path / f"t{suffix}")[0]])
    assert np.array_equal(back[:-1].view(np.int64), np.array(values[:-1]).view(np.int64))  # exact: bits
    assert np.isnan(back[-1])


@pytest.mark.slow
def test_a_local_sweep_needs_no_ray_and_a_cluster_does(monkeypatch, tmp_path, caplog):
    """Without Ray: a local sweep runs on worker processes (serially with one worker, or a job that
    cannot be pickled, which is said); a cluster address is refused."""
    from tsid_py.sweep.engine import choose_backend

    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    runner = JobRunner(ScenarioJob(fake_run))
    assert choose_backend(2, None, runner) == "processes" and not caplog.records
    assert choose_backend(1, None, runner) == "serial"
    assert choose_backend(2, None, JobRunner(ScenarioJob(lambda values: {}))) == "serial"
    assert "cannot be pickled" in caplog.text
    with pytest.raises(InvalidParameterError, match="--address auto: running on a Ray cluster needs Ray"):
        choose_backend(2, "auto", runner)
    report = run_sweep(ScenarioJob(fake_run), fake_points(), tmp_path / "t.csv", workers=2)
    serial = run_sweep(ScenarioJob(fake_run), fake_points(), tmp_path / "s.csv", workers=1)
    assert (report.backend, report.ran, report.errors) == ("processes", 6, serial.errors)
    assert [{k: v for k, v in row.items() if k != "seconds"} for row in report.rows] == [
        {k: v for k, v in row.items() if k != "seconds"} for row in serial.rows
    ]


# ------------------------------------------------------------------ a real scenario, serially
@pytest.mark.slow
def test_com_sinusoid_sweep_matches_direct_runs(tmp_path):
    out = tmp_path / "sway.csv"
    points = grid_points(
        [parse_param("amplitude=0.01,0.04"), parse_param("frequency=0.5,2"), parse_param("duration=0.02")]
    )
    report = run_sweep(ScenarioJob("com-sinusoid"), points, out, workers=1)
    assert report.errors == 0
    for row, point in zip(read_table(out)[0], points, strict=True):
        summary = com_sinusoid.run(**point).summary
        assert row["com_error_max_m"] == summary["com_error_max_m"]  # exact: the same run, as written
        assert row["steps"] == 10 and row["qp_failures"] == 0
        assert "step_time_median_us" not in row and "real_time_factor" not in row  # machine timings


# ------------------------------------------------------------------ pictures
def synthetic_push_table(polar: bool = False) -> tuple[list[dict[str, object]], list[str]]:
    rows = []
    names = ["push_force", "push_angle"] if polar else ["push_fy", "push_t"]
    forces = np.arange(100.0, 650.0, 50.0)
    others = np.arange(0.0, 360.0, 30.0) if polar else np.arange(0.5, 1.75, 0.25)
    for force in forces:
        for other in others:
            point = len(rows)
            limit = 300 + 150 * abs(np.sin(np.radians(other))) if polar else 400 - 100 * other
            verdict = "recovered" if force < limit - 50 else "undecided" if force < limit else "lost"
            rows.append(
                {
                    "point": point,
                    names[0]: force,
                    names[1]: other,
                    "verdict": "fell" if force > limit + 50 else verdict,
                    "com_drift_max_m": force / 1e4,
                    "error": "SolverFailedError: boom" if point == 7 else "",
                    "seconds": 0.1,
                }
            )
    return rows, names


def assert_png_has_content(path: Path) -> None:
    import matplotlib.image

    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] >= 300 and image.shape[1] >= 400
    assert np.std(image[..., :3]) > 0.05


@pytest.mark.parametrize("polar", [False, True])
@pytest.mark.slow
def test_push_recovery_map_from_a_synthetic_table(tmp_path, polar):
    rows, names = synthetic_push_table(polar)
    path = plot_sweep(rows, names, tmp_path / "pushes.png", title="synthetic")
    assert_png_has_content(path)
    colors = read_png_colors(path)
    assert all(colors[c] > 0 for c in ("red", "green", "orange", "grey"))  # each verdict has its colour


def read_png_colors(path: Path) -> dict[str, int]:
    """Pixels of matplotlib's tab:red, tab:green, tab:orange and the 0.6 grey of the push map."""
    import matplotlib.image

    rgb = (matplotlib.image.imread(path)[..., :3] * 255).astype(int)
    targets = {
        "red": (214, 39, 40),
        "green": (44, 160, 44),
        "orange": (255, 127, 14),
        "grey": (153, 153, 153),
    }
    return {name: int((np.abs(rgb - color).max(axis=-1) < 12).sum()) for name, color in targets.items()}


@pytest.mark.slow
def test_metric_maps_from_synthetic_tables(tmp_path):
    grid = [
        {"point": i, "kp": kp, "kd": kd, "com_error_max_m": 1 / (kp + kd), "error": "", "seconds": 0.0}
        for i, (kp, kd) in enumerate((kp, kd) for kp in (10.0, 20.0, 40.0) for kd in (1.0, 2.0))
    ]
    assert_png_has_content(plot_sweep(grid, ["kp", "kd"], tmp_path / "surface.png"))
    rng = np.random.default_rng(0)
    samples = [
        {"point": i, "a": a, "b": b, "m": a * b, "error": "", "seconds": 0.0}
        for i, (a, b) in enumerate(rng.random((30, 2)))
    ]
    assert_png_has_content(plot_sweep(samples, ["a", "b"], tmp_path / "samples.png", metric="m"))
    line = [
        {"point": i, "backend": name, "m": float(i), "error": "", "seconds": 0.0}
        for i, name in enumerate(("quadprog", "daqp"))
    ]
    assert_png_has_content(plot_sweep(line, ["backend"], tmp_path / "line.png"))
    with pytest.raises(InvalidParameterError, match="--plot-metric nope"):
        plot_sweep(grid, ["kp", "kd"], tmp_path / "x.png", metric="nope")
    three = [{**row, "z": float(row["point"])} for row in grid]
    with pytest.raises(InvalidParameterError, match="one or two varied parameters"):
        plot_sweep(three, ["kp", "kd", "z"], tmp_path / "x.png")
    rows, names = synthetic_push_table()
    with pytest.raises(InvalidParameterError, match="'verdict'"):
        plot_sweep(
            [{k: v for k, v in row.items() if k != "verdict"} for row in rows], names, tmp_path / "x.png"
        )


# ------------------------------------------------------------------ the command
@pytest.mark.slow
def test_cli_sweep_writes_the_table_and_the_picture(tmp_path, capsys):
    out, png = tmp_path / "sway.csv", tmp_path / "sway.png"
    args = ["sweep", "com-sinusoid", "--param", "amplitude=0.01:0.03:0.01", "--param", "frequency=0.5,1"]
    args += ["--duration", "0.02", "--workers", "1", "--out", str(out), "--plot", str(png), "--json"]
    assert cli.main(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == {**report, "points": 6, "ran": 6, "skipped": 0, "errors": 0, "backend": "serial"}
    rows = read_table(out)[0]
    assert [(r["amplitude"], r["frequency"], r["duration"]) for r in rows][:2] == [
        (0.01, 0.5, 0.02),
        (0.01, 1.0, 0.02),
    ]
    assert all(r["error"] == "" and r["steps"] == 10 for r in rows)
    assert_png_has_content(png)
    # run again: nothing to do, but the picture is not overwritten without --force
    assert cli.main(args) == 2
    assert "--plot" in capsys.readouterr().err and len(read_table(out)[0]) == 6
    assert cli.main([*args, "--force"]) == 0
    assert json.loads(capsys.readouterr().out)["ran"] == 0  # the same sweep is resumed, not run again
    assert cli.main(["--help"]) == 0 and "sweep" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["dance", "--param", "x=1"], "unknown scenario 'dance'"),
        (["no_such_module:run", "--param", "x=1"], "cannot import it"),
        (
            ["com-sinusoid", "--param", "gain=1:2:1"],
            "--param gain: com-sinusoid has no such parameter (it has robot,",
        ),
        (["com-sinusoid", "--param", "push_fy=1:2:1"], "com-sinusoid takes no push"),
        (["com-sinusoid", "--param", "amplitude=0:1:0"], "STEP must be > 0"),
        (["com-sinusoid"], "at least one --param"),
        (
            ["step", "--param", "height=0.1", "--duration", "1"],
            "--param duration: step has no such parameter",
        ),
        (["walk", "--param", "steps=2.5"], "--param steps takes whole numbers"),
        (["com-sinusoid", "--param", "amplitude=0.1", "--robot", "nao"], "nao"),
        (["com-sinusoid", "--param", "amplitude=0.1", "--backend", "osqp"], "not an installed QP backend"),
        (["com-sinusoid", "--param", "amplitude=0.1", "--param", "amplitude=0.2"], "given twice"),
        (["com-sinusoid", "--param", "robot=talos", "--robot", "talos"], "give it once"),
        (["com-sinusoid", "--param", "amplitude=0.1", "--out-of-place"], "unrecognized arguments"),
        (["com-sinusoid", "--param", "amplitude=0:1", "--samples", "0"], "--samples"),
        (["com-sinusoid", "--param", "amplitude=0.1", "--workers", "0"], "--workers"),
        (
            ["com-sinusoid", "--param", "amplitude=0.1", "--out", "{tmp}/t.txt"],
            "must end with .parquet or .csv",
        ),
        (["com-sinusoid", "--param", "amplitude=0.1", "--out", "{tmp}/folder.csv"], "is a directory"),
        (["com-sinusoid", "--param", "amplitude=0.1", "--out", "{tmp}/no/dir/t.csv"], "no does not exist"),
        (
            ["com-sinusoid", "--param", "amplitude=0.1,0.2", "--plot", "{tmp}/p.jpg"],
            "--plot must end with .png",
        ),
        (
            [
                "com-sinusoid",
                "--param",
                "amplitude=0.1,0.2",
                "--param",
                "frequency=1,2",
                "--param",
                "dt=0.001,0.002",
                "--plot",
                "{tmp}/p.png",
            ],
            "one or two varied parameters",
        ),
        (
            ["com-sinusoid", "--param", "amplitude=0.01", "--duration", "0.01", "--keep", "cm_error"],
            "--keep cm_error",
        ),
    ],
)
def test_cli_sweep_bad_input_is_one_line_and_exit_2(args, message, tmp_path, capsys):
    args = [arg.replace("{tmp}", str(tmp_path)) for arg in args]
    if "--out" not in args:
        args += ["--out", str(tmp_path / "t.csv")]
    if "--workers" not in args:
        args += ["--workers", "1"]
    (tmp_path / "folder.csv").mkdir()
    assert exit_code(["sweep", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert err.startswith("tsid-py sweep: error: ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["balance", "--param", "plant=mujoco,gazebo"], "unknown plant 'gazebo': choose from integrator,"),
        (["balance", "--param", "mode=torque,pos"], "mode must be one of ('torque', 'position'), got 'pos'"),
        (["com-sinusoid", "--param", "amplitude=0.01", "--robot", "ur5"], "ur5 is not a biped spec"),
        (["reach", "--param", "robot=ur5,talos"], "talos is not an arm spec"),
        (["quadruped", "--param", "robot=solo12,talos"], "talos is not a quadruped spec"),
        (["balance", "--plant", "mujoco"], "(a sweep sets balance's plant with --param plant=mujoco)"),
        (["walk", "--step-length=0.1"], "(a sweep sets walk's step_length with --param step_length=0.1)"),
        (["balance", "--param", "dt=0.002", "--durration", "1"], "(did you mean --duration?)"),
    ],
)
def test_cli_sweep_refuses_a_point_its_scenario_would_refuse_before_any_run(args, message, tmp_path, capsys):
    """The checks of the scenario's own command (plant and mode names, a robot that suits it), at
    every point, before the first run: one line, exit 2, no table."""
    out = tmp_path / "t.csv"
    assert exit_code(["sweep", *args, "--param", "duration=0.02", "--workers", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not out.exists()


def test_every_scenario_names_the_controller_that_checks_its_robots():
    from tsid_py.command import Parser
    from tsid_py.robot_specs import load_spec
    from tsid_py.scenarios import SCENARIOS

    for name, module in SCENARIOS.items():
        parser = Parser(prog=f"tsid-py {name}")
        module.SCENARIO.add_arguments(parser)
        robot = parser.parse_args([]).robot  # its default robot suits it
        module.SCENARIO.controller.check_spec(load_spec(robot))
    with pytest.raises(RobotSpecError, match="ur5 is not a biped spec"):
        SCENARIOS["balance"].SCENARIO.controller.check_spec(load_spec("ur5"))


def exit_code(args: list[str]) -> int:
    """The exit code of ``tsid-py ARGS`` (the parser's errors exit through SystemExit)."""
    try:
        return cli.main(args)
    except SystemExit as stop:
        return stop.code


@pytest.mark.slow
def test_a_run_whose_qp_failed_is_an_error_of_the_sweep_not_a_verdict(tmp_path, capsys):
    """The loop ends a run whose QP fails without raising; its command exits 3. A sweep records it
    as an error (its verdict kept beside it), exits 3, and its push map draws a failure, not an
    'undecided' robot."""
    out, picture = tmp_path / "t.csv", tmp_path / "map.png"
    args = ["sweep", "balance", "--param", "plant=pinocchio", "--param", "push_fy=50,1e7"]
    args += ["--param", "push_t=0.1", "--duration", "0.15", "--workers", "1", "--out", str(out)]
    args += ["--keep", "verdict,qp_failures", "--plot", str(picture)]
    assert exit_code(args) == 3
    assert "1 runs failed" in capsys.readouterr().err
    rows = read_table(out)[0]
    assert [row["qp_failures"] for row in rows] == [0, 1]
    assert rows[0]["error"] == ""
    assert rows[1]["error"].startswith("SolverFailedError: the QP failed at t = 0.1")
    assert rows[1]["verdict"] == "undecided"  # kept, and no outcome: the error says why
    assert picture.stat().st_size > 0
    assert legend_of_push_map(rows) == ["recovered (1)", "run failed (1)"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            [
                "com-sinusoid",
                "--param",
                "amplitude=0.01,0.02",
                "--keep",
                "com_error_max_m",
                "--plot-metric",
                "cm",
            ],
            "--plot-metric cm: not a column of the table",
        ),
        (
            ["balance", "--param", "plant=pinocchio", "--param", "push_fy=50,100", "--keep", "qp_failures"],
            "--plot: a push map needs the summary field 'verdict' (add it to --keep)",
        ),
    ],
)
def test_cli_sweep_plot_needs_are_checked_from_keep_before_any_run(args, message, tmp_path, capsys):
    out = tmp_path / "t.csv"
    args = ["sweep", *args, "--duration", "0.02", "--workers", "1", "--out", str(out)]
    assert exit_code([*args, "--plot", str(tmp_path / "p.png")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not out.exists()


def test_cli_sweep_plot_metric_without_keep_is_checked_after_the_first_run(tmp_path, capsys):
    out = tmp_path / "t.csv"
    args = ["sweep", "com-sinusoid", "--param", "amplitude=0.01,0.02,0.03", "--duration", "0.02"]
    args += ["--workers", "1", "--out", str(out), "--plot", str(tmp_path / "p.png"), "--plot-metric", "cm"]
    assert exit_code(args) == 2
    err = capsys.readouterr().err
    assert "--plot-metric cm: not a column of the table" in err and err.count("\n") == 1, err
    assert [row["amplitude"] for row in read_table(out)[0]] == [0.01]  # exact: as given; the run kept


def legend_of_push_map(rows: list[dict[str, object]]) -> list[str]:
    """The push map's legend: a label (with its count) per style drawn."""
    from tsid_py.sweep.plots import push_map

    return [marks.get_label() for marks in push_map(rows, ["push_fy"]).axes[0].collections]


def test_a_sweep_whose_runs_raise_exits_3_and_a_push_without_physics_is_refused(tmp_path, capsys):
    out = tmp_path / "t.csv"
    args = [
        "sweep",
        "balance",
        "--param",
        "dt=0.002,0.2",
        "--duration",
        "0.1",
        "--workers",
        "1",
        "--out",
        str(out),
    ]
    assert exit_code(args) == 3  # dt = 0.2 s raised: recorded in the table, said, and not exit 0
    assert "1 runs failed" in capsys.readouterr().err
    assert [row["error"] != "" for row in read_table(out)[0]] == [False, True]
    assert exit_code(args) == 3  # run again: nothing runs, and the table still holds the error
    said = capsys.readouterr()
    assert "0 run (0 failed)" in said.out and "(none); 1 of the runs already in the table failed" in said.out
    assert "1 runs failed: their error is in the table (--retry-errors runs them again)" in said.err
    assert exit_code([*args, "--json", "--allow-errors"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert (again["ran"], again["raised"], again["errors"], again["backend"]) == (0, 0, 1, "none")
    assert exit_code([*args, "--allow-errors", "--retry-errors"]) == 0
    capsys.readouterr()
    refused = tmp_path / "pushes.csv"
    for plants in ([], ["--param", "plant=integrator,mujoco"]):
        assert (
            exit_code(["sweep", "balance", "--param", "push_fy=100,200", *plants, "--out", str(refused)]) == 2
        )
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "a push needs a plant with physics" in err
    assert not refused.exists()  # refused before any run


# ------------------------------------------------------------------ analyze --batch


def smooth_motion(robot: tsid.RobotWrapper, frames: int, dt: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = dt * np.arange(frames)[:, None]
    amplitude, frequency = rng.uniform(0.02, 0.1, robot.nv), rng.uniform(0.3, 1.5, robot.nv)
    offsets = amplitude * np.sin(2 * np.pi * frequency * t + rng.uniform(0, 6, robot.nv))
    return np.array([pin.integrate(robot.model, robot.default_configuration(), s) for s in offsets])


def test_analyze_batch_one_row_per_recording(tmp_path, capsys, talos):
    recordings = tmp_path / "recordings"
    recordings.mkdir()
    for seed in range(3):
        np.savez(recordings / f"walk{seed}.npz", q=smooth_motion(talos, 12, 0.01, seed), dt=0.01)
    (recordings / "broken.npz").write_bytes(b"not a zip")
    out = tmp_path / "results"
    args = ["analyze", "--batch", str(recordings / "*.npz"), "--out", str(out), "--robot", "talos"]
    assert cli.main([*args, "--workers", "1", "--json"]) == 3  # a file raised
    report = json.loads(capsys.readouterr().out)
    assert (report["points"], report["ran"], report["errors"]) == (4, 4, 1)
    assert cli.main([*args, "--workers", "1", "--json", "--allow-errors"]) == 0  # the table is done
    capsys.readouterr()
    table = out / ("summary.parquet" if has_pyarrow() else "summary.csv")
    rows = {Path(row["file"]).name: row for row in read_table(table)[0]}
    assert list(rows) == ["broken.npz", "walk0.npz", "walk1.npz", "walk2.npz"]
    assert (
        rows["broken.npz"]["error"].startswith("InvalidParameterError:")
        and "not an NPZ archive" in rows["broken.npz"]["error"]
    )
    single = out / "single.npz"
    assert (
        cli.main(
            ["analyze", str(recordings / "walk1.npz"), "--robot", "talos", "--json", "--out", str(single)]
        )
        == 0
    )
    expected = json.loads(capsys.readouterr().out)
    for name in (
        "frames",
        "root_residual_max",
        "joint_torque_max_nm",
        "normal_force_min_n",
        "normal_force_max_n",
    ):
        assert rows["walk1.npz"][name] == expected[name], name  # exact: the same analysis
    assert "analysis_time_s" not in rows["walk1.npz"] and rows["walk1.npz"]["error"] == ""
    with np.load(out / "walk1.npz") as batch, np.load(single) as one:
        assert np.array_equal(batch["joint_torques"], one["joint_torques"])  # exact: the same analysis
    assert not (out / "broken.npz").exists()
    np.savez(recordings / "walk3.npz", q=smooth_motion(talos, 12, 0.01, 3), dt=0.01)
    assert cli.main([*args, "--workers", "1", "--json"]) == 3  # restarted: only the new file runs
    second = json.loads(capsys.readouterr().out)  # and broken.npz's error is still in the table
    assert (second["points"], second["skipped"], second["ran"], second["raised"], second["errors"]) == (
        5,
        4,
        1,
        0,
        1,
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--batch", "{tmp}/none/*.npz", "--out", "{tmp}/r"], "matches no file"),
        (["--batch", "{tmp}/*.npz"], "--batch needs --out DIR"),
        (["--batch", "{tmp}/*.npz", "--out", "{tmp}/r", "--plot", "{tmp}/p"], "--plot draws one motion"),
        (["{tmp}/a.npz", "--batch", "{tmp}/*.npz", "--out", "{tmp}/r"], "not both"),
        (["--batch", "{tmp}/**/*.npz", "--out", "{tmp}/r"], "would both write a.npz"),
        ([], "give a MOTION file"),
    ],
)
def test_analyze_batch_bad_input(extra, message, tmp_path, capsys):
    (tmp_path / "a.npz").write_bytes(b"x")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.npz").write_bytes(b"x")
    assert (
        exit_code(["analyze", *[arg.replace("{tmp}", str(tmp_path)) for arg in extra], "--workers", "1"]) == 2
    )
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


# ------------------------------------------------------------------ a real push sweep
@pytest.mark.slow
def test_push_sweep_on_mujoco(tmp_path):
    """A small push map of balance on MuJoCo (the integrator plant cannot be pushed): 0.4 s runs,
    each extended until its verdict is decided."""
    pytest.importorskip("mujoco", reason="the MuJoCo plant needs the [sim] extra")
    out, png = tmp_path / "pushes.csv", tmp_path / "pushes.png"
    args = [
        "sweep",
        "balance",
        "--param",
        "push_fy=50,1500",
        "--param",
        "push_t=0.1",
        "--param",
        "plant=mujoco",
    ]
    assert (
        cli.main([*args, "--duration", "0.4", "--workers", "1", "--out", str(out), "--plot", str(png)]) == 0
    )
    rows = read_table(out)[0]
    assert [row["push_fy"] for row in rows] == [50.0, 1500.0]  # exact: as given
    assert all(row["error"] == "" for row in rows)
    assert rows[0]["verdict"] == "recovered" and rows[0]["plant"] == "mujoco"
    assert rows[1]["verdict"] == "fell" and 0.1 < rows[1]["fell_at_s"] < 2.0
    assert rows[0]["recovered_at_s"] > 0.2  # after the push ended
    assert rows[1]["com_drift_max_m"] > rows[0]["com_drift_max_m"]
    assert_png_has_content(png)


# ------------------------------------------------------------------ on Ray
@pytest.fixture(scope="module")
def local_ray():
    """One local Ray (2 CPUs) for the tests of this module that need it."""
    ray = pytest.importorskip("ray", reason="the Ray tests need the [cluster] extra")
    # the workers import this module's jobs (dying_sway) by name, as they would a user's module
    path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parent), path]))
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    finally:
        if path is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = path
    yield ray
    ray.shutdown()


def sway_points(count: int, seed: int) -> list[dict[str, object]]:
    axes = [parse_param("amplitude=0.005:0.05"), parse_param("frequency=0.1:2"), parse_param("duration=0.05")]
    return sample_points(axes, count, seed)


def columns_but_seconds(path: Path):
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    return table.drop_columns(["seconds"])


def test_a_small_sweep_without_workers_stays_serial(monkeypatch, tmp_path):
    """--workers not given: the first run's time says whether worker processes pay (SERIAL_BELOW
    seconds of work); given, it is obeyed."""
    import tsid_py.sweep.engine as engine

    calls = []
    monkeypatch.setattr(
        "tsid_py.sweep.local_runner.run_on_processes", lambda *args: calls.append(args) or iter(())
    )
    monkeypatch.setattr("tsid_py.sweep.local_runner.usable_cores", lambda: 2)

    small = run_sweep(ScenarioJob(fake_run), fake_points(), tmp_path / "small.csv")
    assert (small.backend, small.ran, calls) == ("serial", 6, [])  # microseconds of work
    monkeypatch.setattr(engine, "SERIAL_BELOW", 0.0)  # as if each run took long
    large = run_sweep(ScenarioJob(fake_run), fake_points(), tmp_path / "large.csv")
    assert large.backend == "processes" and len(calls) == 1 and len(calls[0][1]) == 5  # the first ran here


@pytest.mark.slow
def test_ray_gives_the_serial_table_bitwise(local_ray, tmp_path):
    """200 seeded random points on 2 Ray workers: the serial run's table, bit for bit (but the
    wall times). The speed-up is measured by benchmarks/sweep_speed.py."""
    points = sway_points(200, seed=21)
    serial = run_sweep(ScenarioJob("com-sinusoid"), points, tmp_path / "serial.parquet", workers=1)
    on_ray = run_sweep(ScenarioJob("com-sinusoid"), points, tmp_path / "ray.parquet", workers=2)
    assert (serial.backend, on_ray.backend, on_ray.ran, on_ray.errors) == ("serial", "ray", 200, 0)
    a, b = columns_but_seconds(tmp_path / "serial.parquet"), columns_but_seconds(tmp_path / "ray.parquet")
    assert a.num_rows == 200 and a.schema == b.schema
    for name in a.column_names:
        left, right = a.column(name).to_pylist(), b.column(name).to_pylist()
        if a.schema.field(name).type == "double":
            left, right = (
                np.array(left, dtype=float).view(np.int64),
                np.array(right, dtype=float).view(np.int64),
            )
            assert np.array_equal(left, right), name  # exact: bit for bit is the property
        else:
            assert left == right, name


def dying_sway(marker: str, die_at: float, always: bool = False, **kwargs) -> object:
    """com-sinusoid, but the worker process dies at amplitude ``die_at`` (once: the marker file
    says it has; ``always``: every time)."""
    if kwargs["amplitude"] == die_at and (always or not os.path.exists(marker)):
        Path(marker).touch()
        os._exit(1)
    return com_sinusoid.run(**kwargs)


@pytest.mark.slow
def test_a_killed_worker_is_retried_and_the_table_is_complete(local_ray, tmp_path):
    points = grid_points([parse_param("amplitude=0.01:0.08:0.01"), parse_param("duration=0.02")])
    marker = tmp_path / "died"
    job = ScenarioJob(partial(dying_sway, str(marker), 0.03))
    report = run_sweep(job, points, tmp_path / "table.parquet", workers=2)
    assert marker.exists(), "the worker did not die"
    assert (report.ran, report.errors) == (8, 0)
    rows = read_table(tmp_path / "table.parquet")[0]
    assert [row["amplitude"] for row in rows] == [p["amplitude"] for p in points]
    serial = run_sweep(ScenarioJob("com-sinusoid"), points, tmp_path / "serial.parquet", workers=1)
    for row, expected in zip(rows, serial.rows, strict=True):
        assert {k: v for k, v in row.items() if k != "seconds"} == {
            k: v for k, v in expected.items() if k != "seconds"
        }


@pytest.mark.slow
def test_a_point_that_always_kills_its_worker_is_recorded(local_ray, tmp_path):
    points = grid_points([parse_param("amplitude=0.01,0.02,0.03"), parse_param("duration=0.02")])
    job = ScenarioJob(partial(dying_sway, str(tmp_path / "died"), 0.02, always=True))
    report = run_sweep(job, points, tmp_path / "table.csv", workers=2, max_retries=1)
    rows = read_table(tmp_path / "table.csv")[0]
    assert (report.ran, report.errors) == (3, 1) and [row["error"] == "" for row in rows] == [
        True,
        False,
        True,
    ]
    assert "Worker" in rows[1]["error"] or "worker" in rows[1]["error"]


@pytest.mark.slow
def test_cli_sweep_on_ray(local_ray, tmp_path, capsys):
    out = tmp_path / "sway.parquet"
    args = ["sweep", "com-sinusoid", "--param", "amplitude=0.01:0.02:0.01", "--samples", "6", "--seed", "5"]
    assert (
        cli.main(
            [
                *args,
                "--param",
                "frequency=0.5:1",
                "--duration",
                "0.02",
                "--workers",
                "2",
                "--out",
                str(out),
                "--json",
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert (report["backend"], report["ran"], report["errors"]) == ("ray", 6, 0)
    assert len(read_table(out)[0]) == 6 and Decimal("0.01") <= Decimal(
        str(read_table(out)[0][0]["amplitude"])
    ) <= Decimal("0.02")


# ------------------------------------------------------------------ on worker processes
def sleepy(seconds: float, **kwargs) -> dict[str, object]:
    """A run that takes ``seconds``."""
    time.sleep(seconds)
    return {"slept": seconds}


@pytest.mark.slow
def test_worker_processes_give_the_serial_table_and_survive_killed_workers(monkeypatch, tmp_path):
    """The local pool: a worker killed once has its point run again and the table is the serial
    one (but the wall times); a point that kills its worker every time is recorded with the error
    after its retries, and the other points run."""
    monkeypatch.setitem(sys.modules, "ray", None)  # the local pool, whatever Ray this process runs
    points = grid_points([parse_param("amplitude=0.01:0.08:0.01"), parse_param("duration=0.02")])
    marker = tmp_path / "died"
    job = ScenarioJob(partial(dying_sway, str(marker), 0.03))
    report = run_sweep(job, points, tmp_path / "table.csv", workers=2)
    assert marker.exists(), "the worker did not die"
    assert (report.backend, report.ran, report.errors) == ("processes", 8, 0)
    serial = run_sweep(ScenarioJob("com-sinusoid"), points, tmp_path / "serial.csv", workers=1)
    for row, expected in zip(report.rows, serial.rows, strict=True):
        assert {k: v for k, v in row.items() if k != "seconds"} == {
            k: v for k, v in expected.items() if k != "seconds"
        }

    job = ScenarioJob(partial(dying_sway, str(tmp_path / "always"), 0.02, always=True))
    report = run_sweep(job, points[:3], tmp_path / "killer.csv", workers=2, max_retries=1)
    errors = [row["error"] for row in report.rows]
    assert errors[0] == errors[2] == "" and errors[1].startswith("WorkerDied"), errors


@pytest.mark.slow
def test_a_stopped_local_sweep_does_not_wait_for_its_runs():
    """Closing the runner (SIGINT, an error) terminates the workers still running."""
    import multiprocessing

    from tsid_py.sweep.local_runner import run_on_processes

    before = set(multiprocessing.active_children())
    items = [(k, {"seconds": s}) for k, s in enumerate([0.01, 30.0, 30.0])]
    runs = run_on_processes(JobRunner(ScenarioJob(sleepy)), items, 2, max_retries=0)
    start = time.monotonic()
    first = next(runs)
    runs.close()
    assert first.fields == {"slept": 0.01} and time.monotonic() - start < 20.0
    assert set(multiprocessing.active_children()) <= before


def test_a_job_of_a_main_without_a_file_does_not_go_to_worker_processes(monkeypatch):
    """A function defined in a notebook pickles by reference to a ``__main__`` the workers cannot
    import: it is not sent to them."""
    import types

    from tsid_py.sweep.local_runner import picklable

    def notebook_job(**values):
        return {}

    notebook = types.ModuleType("__main__")  # a notebook's: no __file__
    notebook_job.__module__, notebook_job.__qualname__ = "__main__", "notebook_job"
    notebook.notebook_job = notebook_job
    monkeypatch.setitem(sys.modules, "__main__", notebook)
    assert not picklable(JobRunner(ScenarioJob(notebook_job)))
    notebook.__file__ = "/somewhere/script.py"  # a script's: the workers import it
    assert picklable(JobRunner(ScenarioJob(notebook_job)))


@pytest.mark.slow
def test_a_script_that_sweeps_without_a_main_guard_is_refused_in_one_line(tmp_path):
    """Its workers import it, and would sweep again: refused before any run, no table of errors."""
    script = tmp_path / "sweep_script.py"
    script.write_text(
        "from tsid_py.sweep import ScenarioJob, grid_points, parse_param, run_sweep\n"
        "points = grid_points([parse_param('amplitude=0.01,0.02'), parse_param('duration=0.02')])\n"
        "run_sweep(ScenarioJob('com-sinusoid'), points, 'table.csv', workers=2)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode != 0
    assert 'needs its top level under `if __name__ == "__main__":`' in done.stderr.splitlines()[-1]
    assert not (tmp_path / "table.csv").exists() or "WorkerDied" not in (tmp_path / "table.csv").read_text()
