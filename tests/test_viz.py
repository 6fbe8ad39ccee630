"""Seeing a run: scene markers, plots, the live meshcat viewer and the HTML replay in a real browser."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from conftest import listening_addresses

from tsid_py import cli
from tsid_py.contacts.contact_base import contacts_of
from tsid_py.geometry import convex_hull_indices as convex_hull_2d
from tsid_py.scenarios import balance, quadruped
from tsid_py.scenarios.cli_support import report
from tsid_py.viz.scene import SceneBuilder

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def balance_run():
    return balance.run(duration=1.0)


@pytest.fixture(scope="module")
def solo_run():
    return quadruped.run(duration=0.4)


def test_convex_hull_of_a_square_with_inner_points():
    points = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5], [0.2, 0.7], [1, 0.5]], dtype=float)
    hull = convex_hull_2d(points)
    assert sorted(hull.tolist()) == [0, 1, 2, 3]
    corners = points[hull]
    signed_area = 0.5 * np.sum(
        corners[:, 0] * np.roll(corners[:, 1], -1) - np.roll(corners[:, 0], -1) * corners[:, 1]
    )
    assert signed_area == pytest.approx(1.0)  # counter-clockwise


@pytest.mark.slow
def test_scene_of_a_robot_at_rest(balance_run):
    """Standing still, the force arrows carry m g and the centre of pressure lies under the CoM."""
    controller = balance_run.controller
    builder = SceneBuilder(controller.robot, contacts_of(controller))
    frame = builder.frame_at(balance_run.log, 0)
    total = sum(force for _, force in frame.forces.values())
    robot, log = controller.robot, balance_run.log
    weight = robot.total_mass * 9.81
    # Newton on the whole robot: the contact forces are m (c'' - g), c'' from the solved dv.
    data = robot.create_data()
    pin.centerOfMass(robot.model, data, log.q[0], log.v[0], log.dv[0])
    expected = robot.total_mass * (data.acom[0] - robot.model.gravity.linear)
    assert np.allclose(total, expected, atol=1e-6 * weight)
    assert total[2] == pytest.approx(weight, rel=1e-4)
    vertical = sum(force[2] for _, force in frame.forces.values())
    cop = sum(origin[:2] * force[2] for origin, force in frame.forces.values()) / vertical
    assert np.linalg.norm(cop - frame.points["com"][:2]) < 1e-5
    # The support polygon is the rectangle around both soles: 4 vertices, feet 0.2 m long.
    polygon = frame.support_polygon
    assert len(polygon) == 4
    assert np.ptp(polygon[:, 0]) == pytest.approx(0.2, abs=1e-6)
    assert builder.arrow_scale * weight == pytest.approx(0.5)


@pytest.mark.slow
def test_plots_are_pngs_and_show_the_run_numbers(solo_run, tmp_path):
    from tsid_py.viz import plots

    paths = plots.write_plots(solo_run, tmp_path)
    assert {p.name for p in paths} == {
        f"quadruped_{name}.png" for name in ("com", "contact_forces", "torques", "top_view", "capture_point")
    }
    from PIL import Image

    for path in paths:
        assert path.read_bytes()[:8] == PNG_SIGNATURE
        with Image.open(path) as image:
            image.verify()
        with Image.open(path) as image:
            assert image.size[0] >= 600 and image.size[1] >= 400
    summary = json.loads(report(solo_run, as_json=True))
    figure = plots.contact_forces_figure(solo_run)
    normal_axes = figure.axes[0]
    plotted_min = min(np.nanmin(line.get_ydata()) for line in normal_axes.get_lines())
    assert plotted_min == pytest.approx(summary["min_normal_force_n"], rel=1e-12)
    assert "N" in normal_axes.get_ylabel() and "solo12" in figure.get_suptitle()
    com_axes = plots.com_figure(solo_run).axes
    com, reference = (np.column_stack([ax.get_lines()[k].get_ydata() for ax in com_axes[:3]]) for k in (0, 1))
    plotted_error = np.linalg.norm(com - reference, axis=1).max()
    assert plotted_error == pytest.approx(summary["com_error_max_m"], rel=1e-12)


@pytest.mark.slow
def test_top_view_shows_the_com_and_a_centre_of_pressure_inside_the_feet(solo_run):
    from tsid_py.viz import plots

    figure = plots.top_view_figure(solo_run)
    lines = {line.get_label(): line for line in figure.axes[0].get_lines()}
    com = np.array(solo_run.log.com)
    assert np.allclose(lines["CoM"].get_xdata(), com[:, 0]) and np.allclose(
        lines["CoM"].get_ydata(), com[:, 1]
    )
    cop = np.column_stack(
        [lines["CoP from contact forces"].get_xdata(), lines["CoP from contact forces"].get_ydata()]
    )
    feet = np.array([c.reference.translation[:2] for c in solo_run.controller.contacts.values()])
    assert np.all(cop.min(axis=0) > feet.min(axis=0)) and np.all(cop.max(axis=0) < feet.max(axis=0))
    assert figure.axes[0].get_xlabel() == "x [m]" and "solo12" in figure.axes[0].get_title()


def test_foot_heights_plotted_when_a_foot_rises(solo_run):
    """Bending one knee of a logged motion lifts that foot: the figure appears and shows the rise."""
    from tsid_py.scenarios.runner import RunResult
    from tsid_py.viz import plots

    assert plots.foot_heights_figure(solo_run) is None  # all feet stay on the ground
    robot = solo_run.controller.robot
    knee = robot.model.getJointId("FL_KFE")
    lifted = copy.deepcopy(solo_run.log)
    for i, q in enumerate(lifted.q):
        lifted.q[i] = q.copy()
        lifted.q[i][robot.model.joints[knee].idx_q] -= 0.5 * i / len(lifted.q)
    result = RunResult(solo_run.summary, lifted, solo_run.controller)
    heights = plots.foot_heights(result)
    assert heights["FL_FOOT"][-1] > 0.01 and abs(heights["HR_FOOT"][-1]) < 1e-3
    figure = plots.foot_heights_figure(result)
    plotted = {line.get_label(): line.get_ydata() for line in figure.axes[0].get_lines()}
    assert np.allclose(plotted["FL_FOOT"], heights["FL_FOOT"])
    assert figure.axes[0].get_ylabel() == "height above start [m]"


def test_plots_skip_what_a_log_lacks(solo_run, tmp_path):
    """A log without forces, CoM or torques (e.g. from another scenario) gives fewer figures, no error."""
    from tsid_py.loop import RunLog
    from tsid_py.scenarios.runner import RunResult
    from tsid_py.viz import plots

    log = RunLog(t=list(solo_run.log.t), q=list(solo_run.log.q))
    bare = RunResult(solo_run.summary, log, solo_run.controller)
    assert plots.write_plots(bare, tmp_path) == []


@pytest.mark.slow
def test_cli_writes_plots_and_replay_headless(tmp_path, capsys):
    html = tmp_path / "replay.html"
    assert (
        cli.main(["quadruped", "--duration", "0.1", "--json", "--plot", str(tmp_path), "--html", str(html)])
        == 0
    )
    assert json.loads(capsys.readouterr().out)["steps"] == 50
    assert (tmp_path / "quadruped_contact_forces.png").read_bytes()[:8] == PNG_SIGNATURE
    page = html.read_text()
    assert "<title>tsid_py: quadruped on solo12</title>" in page and "MeshCat.Viewer" in page
    assert "http://" not in page.split("<script>", 2)[-1]  # the recorded scene fetches nothing


@pytest.mark.slow
def test_headless_run_loads_no_graphics():
    code = (
        "import sys; from tsid_py import cli, viz; cli.main(['quadruped', '--duration', '0.02', '--json']);"
        "print(sorted(m for m in ('meshcat', 'matplotlib', 'zmq', 'tornado', 'rerun') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "[]"


@pytest.mark.slow
@pytest.mark.parametrize("demo", ["reach", "quadruped"])
def test_demo_scripts_run_as_programs(demo):
    done = subprocess.run(
        [sys.executable, f"demos/{demo}.py", "--duration", "0.02", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout)["steps"] == 10


async def _scene_messages(url: str, quiet: float = 1.0) -> list[dict]:
    """What a browser receives on connecting to the meshcat server: the scene, decoded."""
    import tornado.websocket
    import umsgpack

    connection = await tornado.websocket.websocket_connect(url)
    messages = []
    try:
        while True:
            message = await asyncio.wait_for(connection.read_message(), timeout=quiet)
            if message is None:
                break
            messages.append(umsgpack.unpackb(message))
    except TimeoutError:
        pass
    connection.close()
    return messages


def _free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.slow
def test_a_meshcat_server_address_is_asked_before_the_run_never_waited_for():
    """meshcat's own client waits forever for a server that is not there: the viewer asks first,
    with a timeout, and refuses a page's address (web_url) for the ZMQ one (zmq_url)."""
    import threading
    import time

    import zmq

    from tsid_py.errors import InvalidParameterError
    from tsid_py.viz.meshcat_server import check_server
    from tsid_py.viz.meshcat_viewer import LiveViewer

    nobody = f"tcp://127.0.0.1:{_free_port()}"
    start = time.perf_counter()
    with pytest.raises(InvalidParameterError, match=f"no meshcat server answered at {nobody} within 0.2 s"):
        check_server(nobody, timeout=0.2)
    assert time.perf_counter() - start < 2.0
    for page in ("http://127.0.0.1:7000/static/", "127.0.0.1:6000"):
        with pytest.raises(InvalidParameterError, match="not a ZMQ address.*zmq_url"):
            LiveViewer(zmq_url=page)
    with pytest.raises(InvalidParameterError, match="zmq_url"):
        check_server("tcp://127.0.0.1")  # no port

    server = zmq.Context.instance().socket(zmq.REP)  # answers as meshcat-server does
    port = server.bind_to_random_port("tcp://127.0.0.1")
    answer = threading.Thread(
        target=lambda: server.recv() == b"url" and server.send(b"http://127.0.0.1:7000/static/")
    )
    answer.start()
    try:
        assert check_server(f"tcp://127.0.0.1:{port}", timeout=5.0) == "http://127.0.0.1:7000/static/"
    finally:
        answer.join(5.0)
        server.close(linger=0)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads listening sockets from Linux /proc")
def test_live_viewer_on_localhost_receives_the_robot():
    from urllib.parse import urlparse

    from tsid_py.viz.meshcat_viewer import LiveViewer

    viewer = LiveViewer(rate=50.0, realtime=False)
    try:
        result = quadruped.run(duration=0.1, observer=viewer)
        assert result.summary["qp_failures"] == 0
        assert viewer.frames_sent == 5  # t = 0, 0.02, ..., 0.08 s at 50 frames per simulated second
        web = urlparse(viewer.web_url)
        zmq_port = int(viewer.zmq_url.rsplit(":", 1)[1])
        assert web.hostname == "127.0.0.1"
        for port in (web.port, zmq_port):
            assert listening_addresses(port) == {"0100007F"}  # 127.0.0.1 only, no IPv6, no 0.0.0.0
        messages = asyncio.run(_scene_messages(f"ws://127.0.0.1:{web.port}/"))
    finally:
        viewer.close()
    objects = {m["path"] for m in messages if m["type"] == "set_object"}
    transforms = {m["path"] for m in messages if m["type"] == "set_transform"}
    visual_model = result.controller.robot.load_visual_model()
    meshes = {f"/meshcat/pinocchio/visuals/{g.name}" for g in visual_model.geometryObjects}
    assert len(meshes) == 17 and meshes <= objects and meshes <= transforms
    arrows = {f"/meshcat/markers/forces/{name}/shaft" for name in result.log.forces}
    assert arrows <= objects and "/meshcat/markers/points/com" in objects
    # The last frame sent places the base where the run's q had it at t = 0.08 s.
    base = next(
        m["matrix"]
        for m in messages
        if m["type"] == "set_transform" and m["path"] == "/meshcat/pinocchio/visuals/base_link_0"
    )
    assert np.allclose(np.reshape(base, (4, 4), order="F")[:3, 3], result.log.q[40][:3], atol=1e-6)


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ERROR_HOOK = (
    "<script>"
    'addEventListener("error", e => { document.title = "JS ERROR: " + e.message; });'
    'addEventListener("unhandledrejection", e => { document.title = "JS ERROR: " + e.reason; });'
    "</script>"
)
WINDOW = (800, 600)


def _render(page: Path, screenshot: Path, profile: Path) -> str:
    """Open ``page`` in headless Chromium; save a screenshot, return the page title after the scripts ran."""
    instrumented = page.with_name(page.stem + "-checked.html")
    instrumented.write_text(
        page.read_text().replace('<meta charset="utf-8">', '<meta charset="utf-8">' + ERROR_HOOK, 1)
    )
    # Two runs, without --virtual-time-budget: with it Chromium 156 hung on a 12 MB replay in half
    # of the runs (and always given both --screenshot and --dump-dom); without it each run takes
    # 2 s and draws the same picture. The timeout is a safety net, not a measure: a loaded 2-core
    # machine once took Chromium past 120 s to start; its whole process group is then killed
    # (Chromium's helpers outlive the browser process) and the run fails with what it printed.
    stdout = ""
    for index, action in enumerate([f"--screenshot={screenshot}", "--dump-dom"]):
        command = [
            CHROMIUM,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}-{index}",
            f"--window-size={WINDOW[0]},{WINDOW[1]}",
            action,
            instrumented.as_uri(),
        ]
        with subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
        ) as browser:
            try:
                stdout, stderr = browser.communicate(timeout=300)
            except subprocess.TimeoutExpired:
                os.killpg(browser.pid, signal.SIGKILL)
                stdout, stderr = browser.communicate()
                pytest.fail(f"Chromium ({action}) did not finish in 300 s: {stderr[-1000:]}")
        assert index > 0 or screenshot.is_file(), stderr[-2000:]
    start, end = stdout.find("<title>"), stdout.find("</title>")
    return stdout[start + len("<title>") : end]


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
def test_html_replay_draws_the_robot_in_chromium(balance_run, tmp_path):
    """A 1 s balance replay opened offline: the robot is drawn and the page raised no JavaScript error.

    The robot's pixels are those that differ from a page with the same camera and an empty scene.
    """
    import meshcat
    from PIL import Image

    from tsid_py.viz.html_replay import RecordingWindow, write_html_replay
    from tsid_py.viz.meshcat_markers import camera_target, look_at

    replay = write_html_replay(balance_run, tmp_path / "balance.html")
    builder = SceneBuilder(balance_run.controller.robot, contacts_of(balance_run.controller))
    window = RecordingWindow()
    look_at(
        meshcat.Visualizer(window=window),
        *camera_target(balance_run.controller.robot, builder.frame_at(balance_run.log, 0)),
    )
    empty = tmp_path / "empty.html"
    empty.write_text(window.static_html("empty scene"))

    title = _render(replay, tmp_path / "balance.png", tmp_path / "profile-replay")
    assert title == "tsid_py: balance on talos"
    assert _render(empty, tmp_path / "empty.png", tmp_path / "profile-empty") == "empty scene"

    with Image.open(tmp_path / "balance.png") as shot, Image.open(tmp_path / "empty.png") as background:
        assert shot.size == WINDOW
        difference = np.abs(
            np.asarray(shot.convert("RGB"), float) - np.asarray(background.convert("RGB"), float)
        )
    drawn = difference.max(axis=2) > 40
    height, width = drawn.shape
    region = drawn[:, int(0.3 * width) : int(0.7 * width)]  # the robot stands in the middle of the view
    assert region.mean() > 0.08
    assert region.sum() > 0.9 * drawn.sum()


@pytest.mark.slow
def test_a_replay_of_a_walk_on_terrain_draws_its_blocks_where_the_plant_has_them(balance_run, tmp_path):
    """The replay of a run whose summary names a terrain carries one box per block, of the block's
    size, at its centre and turned by its pitch (the slope's ramp); a run on the floor has none."""
    import base64
    import json
    import re
    from dataclasses import replace

    import umsgpack

    from tsid_py.planning.terrain import load_terrain
    from tsid_py.viz.html_replay import write_html_replay

    def boxes(path: Path) -> dict[str, tuple[dict, list]]:
        text = path.read_text()
        encoded = json.loads(re.search(r"for \(const encoded of (\[.*?\])\)", text, re.S).group(1))
        found: dict[str, list] = {}
        for blob in encoded:
            command = umsgpack.unpackb(base64.b64decode(blob))
            if command["path"].startswith("/meshcat/terrain/"):
                found.setdefault(command["path"], []).append(command)
        return found

    assert boxes(write_html_replay(balance_run, tmp_path / "floor.html")) == {}
    slope = load_terrain("slope")
    on_slope = replace(balance_run, summary={**balance_run.summary, "terrain": "slope"})
    drawn = boxes(write_html_replay(on_slope, tmp_path / "slope.html"))
    assert len(drawn) == len(slope.blocks) > 0
    for k, block in enumerate(slope.blocks):
        commands = {c["type"]: c for c in drawn[f"/meshcat/terrain/block{k}"]}
        geometry = commands["set_object"]["object"]["geometries"][0]
        np.testing.assert_allclose([geometry["width"], geometry["height"], geometry["depth"]], block.size)
        matrix = np.array(commands["set_transform"]["matrix"]).reshape(4, 4).T  # column-major
        np.testing.assert_allclose(matrix[:3, 3], block.center, atol=1e-12)
        np.testing.assert_allclose(matrix[:3, :3], block.rotation, atol=1e-12)
