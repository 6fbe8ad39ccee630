"""The rerun viewer (the [rerun] extra): a pushed recovery saved as an .rrd and read back with
rerun's own reader, checked against the run's log; a file written whole or not at all; the
command line's options; the local server on 127.0.0.1 only."""

from __future__ import annotations

import sys
import urllib.request
from collections import defaultdict
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from conftest import listening_addresses

from tsid_py import cli
from tsid_py.contacts.contact_base import contacts_of
from tsid_py.loop.plant import Push
from tsid_py.planning.terrain import load_terrain
from tsid_py.scenarios import balance, quadruped
from tsid_py.viz.scene import SceneBuilder

rr = pytest.importorskip("rerun", reason="the [rerun] extra (rerun-sdk) is not installed")

from tsid_py.viz.rerun_viewer import RerunViewer, actuated_joint_names  # noqa: E402

PUSH = ["--plant", "mujoco", "--push", "450,0,0@1+0.1", "--recovery", "step"]
NS = 1e-9  # [s] rerun's timeline counts whole nanoseconds


class Recording:
    """An .rrd file read back with rerun's RrdReader: per entity, its static row and its temporal
    rows sorted by the simulated time (each row's ``t_ns``: its time in whole nanoseconds)."""

    def __init__(self, path: Path) -> None:
        from rerun.chunk import RrdReader

        self.static: dict[str, dict] = defaultdict(dict)
        rows: dict[str, list[dict]] = defaultdict(list)
        for chunk in RrdReader(path).stream():
            batch = chunk.to_record_batch()
            if chunk.is_static:
                for row in batch.to_pylist():
                    self.static[chunk.entity_path].update(row)
                continue
            times = batch.column("sim_time").cast("int64").to_pylist()
            for row, t_ns in zip(batch.to_pylist(), times, strict=True):
                rows[chunk.entity_path].append({**row, "t_ns": t_ns})
        self.rows = {entity: sorted(found, key=lambda row: row["t_ns"]) for entity, found in rows.items()}

    def times(self, entity: str) -> np.ndarray:
        """The rows' times [s]."""
        return np.array([row["t_ns"] for row in self.rows[entity]]) * NS

    def values(self, entity: str, component: str) -> list:
        return [row[component] for row in self.rows[entity]]

    def at(self, entity: str, t: float) -> dict:
        """The row logged at time t [s]."""
        (row,) = [row for row in self.rows[entity] if abs(row["t_ns"] * NS - t) < 2 * NS]
        return row


@pytest.fixture(scope="module")
def pushed(tmp_path_factory):
    """Talos pushed 450 N forward on MuJoCo, recovering with a step: the command's .rrd, and the
    same run through the Python API without a viewer (MuJoCo is deterministic: the same log)."""
    path = tmp_path_factory.mktemp("rerun") / "push.rrd"
    assert cli.main(["balance", *PUSH, "--json", "--rerun-save", str(path)]) == 0
    result = balance.run(plant="mujoco", push=Push.parse("450,0,0@1+0.1"), recovery="step")
    assert result.summary["verdict"] == "recovered"
    return Recording(path), result, path


@pytest.mark.slow
def test_a_pushed_recovery_saved_by_the_command_reads_back_as_the_run(pushed):
    recording, result, path = pushed
    log, robot = result.log, result.controller.robot
    steps = len(log.t)
    assert steps == result.summary["steps"] > 1000  # the run, extended until it recovered
    # every step's time series, on the simulated time: the log's own float64 numbers
    for entity in ("/series/com/measured", "/series/torques", "/series/tracking/com_error"):
        assert np.allclose(recording.times(entity), log.t, rtol=0.0, atol=2 * NS)
    com = np.array(recording.values("/series/com/measured", "Scalars:scalars"))
    assert com.shape == (steps, 3)
    assert np.abs(com - np.array(log.com)).max() <= 1e-9
    reference = np.array(recording.values("/series/com/reference", "Scalars:scalars"))
    assert np.abs(reference - np.array(log.com_ref)).max() <= 1e-9
    error = np.array(recording.values("/series/tracking/com_error", "Scalars:scalars"))[:, 0]
    assert np.abs(error - np.linalg.norm(np.array(log.com) - np.array(log.com_ref), axis=1)).max() <= 1e-9
    assert error.max() == pytest.approx(result.summary["com_error_max_m"], abs=1e-12)
    tau = np.array(recording.values("/series/torques", "Scalars:scalars"))
    assert np.abs(tau - np.array(log.tau)).max() <= 1e-9
    assert recording.static["/series/torques"]["SeriesLines:names"] == actuated_joint_names(robot)
    assert len(actuated_joint_names(robot)) == robot.na == 32
    contacts = contacts_of(result.controller)
    for name, forces in log.forces.items():
        normal = np.array(recording.values(f"/series/forces/{name}", "Scalars:scalars"))[:, 0]
        expected = [contacts[name].point_forces(f)[:, 2].sum() for f in forces]  # the soles' z
        assert np.abs(normal - expected).max() <= 1e-9
    margin = np.array(recording.values("/series/balance/capture_margin", "Scalars:scalars"))[:, 0]
    assert np.abs(margin - np.array(log.capture_margin)).max() <= 1e-9
    # the 3-D frames: 25 per simulated second at dt = 2 ms, every 20th step from the first
    frames = np.array(log.t[::20])
    assert len(frames) == (steps - 1) // 20 + 1
    for entity in (
        "/world/robot/base_link",
        "/world/robot/leg_left_6_link",
        "/world/points/com",
        "/world/forces",
    ):
        assert np.allclose(recording.times(entity), frames, rtol=0.0, atol=2 * NS), entity
    print(f"push.rrd: {path.stat().st_size / 1e6:.2f} MB, {len(frames)} frames, {steps} steps")


@pytest.mark.slow
def test_the_robot_moves_in_the_rrd_as_the_logged_q_places_it(pushed):
    """Each link's placement at a frame is Pinocchio's forward kinematics of the log's q; every
    visual geometry is logged once, under its link, in its link's frame."""
    recording, result, _ = pushed
    log, robot = result.log, result.controller.robot
    visual_model = robot.load_visual_model()
    model, data = robot.model, robot.model.createData()
    paths = set(recording.static) | set(recording.rows)
    shapes = 0
    for geometry in visual_model.geometryObjects:
        link = model.frames[geometry.parentFrame].name
        path = f"/world/robot/{link}/{geometry.name}"
        assert path in recording.static, path
        assert f"/world/robot/{link}" in recording.rows
        shapes += 1
        # the static placement in the link: the link's frame and the geometry's, both from Pinocchio
        placement = model.frames[geometry.parentFrame].placement.actInv(geometry.placement)
        row = recording.static[path]
        assert np.allclose(row["Transform3D:translation"], placement.translation, atol=1e-6)
    assert shapes == len(visual_model.geometryObjects) == 52
    assert {"/world/points/com", "/world/points/capture_point", "/world/support_polygon"} <= paths
    # a mirrored mesh, as Pinocchio loaded it (scaled by (1, -1, 1)): the same vertices, turned back
    left = recording.static["/world/robot/leg_left_1_link/leg_left_1_link_0"]
    right = recording.static["/world/robot/leg_right_1_link/leg_right_1_link_0"]
    assert len(left["Mesh3D:vertex_positions"]) == visual_model.geometryObjects[1].geometry.num_vertices
    assert np.allclose(
        np.array(right["Mesh3D:vertex_positions"]), np.array(left["Mesh3D:vertex_positions"]) * (1, -1, 1)
    )
    assert right["Mesh3D:triangle_indices"][0] == left["Mesh3D:triangle_indices"][0][::-1]
    for step in (0, 560, 1260):  # standing, in the swing after the push, at rest again
        t = log.t[step]
        pin.forwardKinematics(model, data, log.q[step])
        for link in ("base_link", "leg_left_6_link", "arm_right_7_link"):
            expected = pin.updateFramePlacement(model, data, model.getFrameId(link))
            row = recording.at(f"/world/robot/{link}", t)
            assert np.allclose(row["Transform3D:translation"], expected.translation, atol=1e-6)
            quaternion = pin.Quaternion(np.ravel(row["Transform3D:quaternion"]).astype(float))
            assert quaternion.angularDistance(pin.Quaternion(expected.rotation)) < 1e-6
    com = recording.at("/world/points/com", log.t[560])["Points3D:positions"]
    assert np.allclose(com, [log.com[560]], atol=1e-6)


@pytest.mark.slow
def test_the_force_arrows_are_the_logs_forces(pushed):
    """An arrow per loaded contact, from its centre of pressure, 0.5 m for the robot's weight: the
    force of the log's planned variables, in world axes from the log's q (float32 in the file)."""
    recording, result, _ = pushed
    log, controller = result.log, result.controller
    robot, contacts = controller.robot, contacts_of(controller)
    scale = SceneBuilder(robot, contacts).arrow_scale
    assert scale == pytest.approx(0.5 / (robot.total_mass * 9.81))
    data = robot.create_data()
    counts = {}
    for i in (200, 600, 1260):  # standing; the left foot in the air (t = 1.2 s); at rest again
        row = recording.at("/world/forces", log.t[i])
        robot.forward_kinematics(data, log.q[i])
        expected = {}
        for name, values in log.forces.items():
            forces = contacts[name].world_forces(data, values[i])  # (points, 3) world axes [N]
            if forces[:, 2].sum() >= 1e-3:
                points = contacts[name].world_points(data).T
                expected[name] = ((forces[:, 2] @ points) / forces[:, 2].sum(), forces.sum(axis=0))
        assert row["Arrows3D:labels"] == sorted(expected)
        counts[i] = len(expected)
        for k, name in enumerate(row["Arrows3D:labels"]):
            origin, force = expected[name]
            assert np.allclose(np.array(row["Arrows3D:vectors"][k]) / scale, force, rtol=1e-6, atol=1e-3)
            assert np.allclose(row["Arrows3D:origins"][k], origin, atol=1e-6)
    assert counts[200] == 2 and counts[600] == 1  # the swing foot carries nothing
    double = recording.at("/world/forces", log.t[200])
    total = np.sum(double["Arrows3D:vectors"], axis=0) / scale
    assert total[2] == pytest.approx(robot.total_mass * 9.81, rel=0.02)  # standing: m g


@pytest.mark.slow
def test_the_verdict_and_its_moments_are_events(pushed):
    recording, result, _ = pushed
    summary = result.summary
    events = {row["TextLog:text"][0]: row["t_ns"] * NS for row in recording.rows["/events"]}
    assert events["recovered"] == pytest.approx(summary["recovered_at_s"], abs=2 * NS)
    assert events["lost balance"] == pytest.approx(summary["lost_balance_at_s"], abs=2 * NS)
    assert events["push (450, 0, 0) N for 0.1 s"] == pytest.approx(1.0, abs=2 * NS)
    verdict = f"verdict: recovered ({summary['verdict_reason']})"
    assert events[verdict] == pytest.approx(result.log.t[-1], abs=2 * NS)


@pytest.mark.slow
def test_an_rrd_is_written_whole_at_finish_or_not_at_all(tmp_path):
    path = tmp_path / "run.rrd"
    viewer = RerunViewer(rate=50.0, live=None, save=path)
    try:
        result = quadruped.run(duration=0.06, observer=viewer)
        assert viewer.frames_sent == 3 and not path.exists()  # t = 0, 0.02, 0.04 s
    finally:
        viewer.close()  # not finished: the run did not end
    assert list(tmp_path.iterdir()) == []
    stairs = load_terrain("stairs")
    viewer = RerunViewer(rate=50.0, live=None, save=path, terrain=stairs)
    try:
        result = quadruped.run(duration=0.06, observer=viewer)
        assert viewer.finish(result.summary) == path
    finally:
        viewer.close()
    recording = Recording(path)
    assert np.allclose(recording.times("/series/com/measured"), result.log.t, atol=2 * NS)
    assert len(recording.rows["/world/robot/base_link"]) == 3
    assert [p.name for p in tmp_path.iterdir()] == ["run.rrd"]
    boxes = recording.static["/world/terrain"]  # where the MuJoCo plant has the blocks
    assert np.allclose(boxes["Boxes3D:centers"], [b.center for b in stairs.blocks], atol=1e-6)
    assert np.allclose(boxes["Boxes3D:half_sizes"], [np.array(b.size) / 2 for b in stairs.blocks], atol=1e-6)


@pytest.mark.slow
def test_runs_of_one_scenario_follow_one_another_on_the_timeline(tmp_path):
    """A scenario of several runs (the course's sweeps) calls the viewer from t = 0 again: the next
    run goes on one step after the last one, an event marks it."""
    viewer = RerunViewer(rate=50.0, live=None, save=tmp_path / "two.rrd")
    try:
        first = quadruped.run(duration=0.04, observer=viewer)
        second = quadruped.run(duration=0.04, observer=viewer)
        path = viewer.finish(second.summary)
    finally:
        viewer.close()
    recording = Recording(path)
    times = recording.times("/series/com/measured")
    assert np.allclose(times, np.arange(40) * 0.002, atol=2 * NS)  # 20 steps of each, back to back
    com = np.array(recording.values("/series/com/measured", "Scalars:scalars"))
    assert np.abs(com - np.vstack([first.log.com, second.log.com])).max() <= 1e-9
    assert np.allclose(recording.times("/world/forces"), [0.0, 0.02, 0.04, 0.06], atol=2 * NS)
    events = {row["TextLog:text"][0]: row["t_ns"] * NS for row in recording.rows["/events"]}
    assert events["run 2 starts (at its t = 0 s)"] == pytest.approx(0.04, abs=2 * NS)


def test_the_command_refuses_what_it_cannot_show_before_the_run(tmp_path, capsys, monkeypatch):
    existing = tmp_path / "x.rrd"
    existing.write_bytes(b"")
    cases = [
        (["--rerun-save", str(existing)], "the file exists (--force overwrites it)"),
        (["--viewer", "rerun", "--viewer-url", "tcp://127.0.0.1:6000"], "not a rerun gRPC URL"),
        (["--viewer", "meshcat", "--rerun-save", str(tmp_path / "y.rrd")], "one viewer at a time"),
        (["--viewer-url", "rerun+http://127.0.0.1:9876/proxy"], "needs --viewer meshcat or --viewer rerun"),
    ]
    for options, message in cases:
        assert cli.main(["quadruped", "--duration", "0.02", *options]) == 2, options
        assert message in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "rerun", None)  # the extra not installed
    assert cli.main(["quadruped", "--duration", "0.02", "--viewer", "rerun"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "tsid-py quadruped: error: the rerun viewer needs the rerun SDK: "
        "pip install 'tsid_py[rerun]' (or pip install rerun-sdk)\n"
    )
    assert not (tmp_path / "y.rrd").exists()


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads listening sockets from Linux /proc")
def test_served_live_on_localhost_only_and_stopped_with_the_run():
    from urllib.parse import urlparse

    viewer = RerunViewer(rate=50.0, live="serve")
    try:
        quadruped.run(duration=0.04, observer=viewer)
        assert viewer.wait_before_close and viewer.server is not None
        grpc, web = urlparse(viewer.grpc_url).port, urlparse(viewer.web_url).port
        for port in (grpc, web):
            assert listening_addresses(port) == {"0100007F"}  # 127.0.0.1 only, no 0.0.0.0
        page = urllib.request.urlopen(viewer.web_url, timeout=5).read()
        assert b"Rerun" in page
        server = viewer.server
        viewer.finish()
    finally:
        viewer.close()
    assert server.poll() is not None and viewer.server is None


@pytest.mark.slow
def test_your_own_loop_logs_through_a_one_step_log(tmp_path):
    """The embedding guide's own loop: a RunLog keeping the last step only, the viewer called
    after each step; the file has every step's CoM and a frame every 1/rate s."""
    import tsid_py as tsid
    from tsid_py.controllers import BipedController
    from tsid_py.loop import Command, IntegratorPlant, RunLog

    biped = BipedController(tsid.load_robot("talos"))
    plant = IntegratorPlant(biped.robot)
    plant.reset(biped.q0, biped.robot.zero_velocity())
    contacts = biped.formulation.contacts
    log = RunLog(window=1, forces={name: [] for name in contacts})  # what the viewer reads: the last step
    sizes = {name: contact.n_force for name, contact in contacts.items()}
    viewer = RerunViewer(rate=50.0, live=None, save=tmp_path / "own.rrd")
    coms = []
    try:
        for _ in range(30):  # 0.06 s at 2 ms
            state = plant.state()
            measured = biped.measurer.measure(state)
            biped.observe(measured)
            out = biped.compute(state.t, state.q, state.v)
            log.record_step(state.t, state.q, state.v, out)
            log.com.append(measured.com)
            log.record_forces(out.forces, sizes)
            viewer(biped, log)
            coms.append(measured.com)
            plant.apply(Command(out.tau, out.dv))
            plant.advance(0.002)
        path = viewer.finish()
    finally:
        viewer.close()
    recording = Recording(path)
    assert np.abs(np.array(recording.values("/series/com/measured", "Scalars:scalars")) - coms).max() <= 1e-9
    assert np.allclose(recording.times("/world/forces"), [0.0, 0.02, 0.04], atol=2 * NS)
    assert len(recording.values("/world/forces", "Arrows3D:vectors")[0]) == 2  # both feet hold the robot
    assert "/series/com/reference" not in recording.rows  # not logged: not drawn
