"""Live meshcat viewer: an observer of a closed-loop run that draws it while it runs.

The viewer starts a meshcat server on 127.0.0.1 (:mod:`tsid_py.viz.meshcat_server`) unless given
the ZMQ address of one, loads the robot's visual meshes through Pinocchio's
``MeshcatVisualizer``, and updates the robot and the markers (CoM and reference, foot targets,
contact force arrows, support polygon) at ``rate`` frames per second of simulated time.
"""

from __future__ import annotations

import contextlib
import io
import logging
import sys
from typing import Any

from tsid_py.contacts.contact_base import contacts_of
from tsid_py.errors import InvalidParameterError
from tsid_py.planning.terrain import Terrain
from tsid_py.validation import as_scalar
from tsid_py.viz.scene import POINT_SERIES, SceneBuilder, keep_pace

logger = logging.getLogger(__name__)


class LiveViewer:
    """Call it with (controller, log) after each control step; it draws every 1/rate s of simulated time.

    Args:
        rate: Frames per second of simulated time [Hz].
        zmq_url: ZMQ address of a running meshcat server (the ``tcp://...`` its ``meshcat-server``
            printed); None starts one on 127.0.0.1. A server given is asked for its page here:
            InvalidParameterError when it does not answer within a few seconds
            (:func:`~tsid_py.viz.meshcat_server.check_server`).
        wait_for_browser: Before the first frame, block until a browser has opened the page.
        realtime: Never draw ahead of the wall clock (a fast controller is slowed to real time).
        terrain: The blocks the robot walks on (:class:`~tsid_py.planning.terrain.Terrain`), drawn
            as boxes (None: the floor alone).
    """

    def __init__(
        self,
        rate: float = 25.0,
        zmq_url: str | None = None,
        wait_for_browser: bool = False,
        realtime: bool = True,
        terrain: Terrain | None = None,
    ) -> None:
        if terrain is not None and not isinstance(terrain, Terrain):
            raise InvalidParameterError(f"terrain must be a Terrain, got {type(terrain).__name__}")
        self.terrain = terrain
        self.period = 1.0 / as_scalar("viewer rate", rate, minimum=0.0, strict=True)
        if zmq_url is not None:
            from tsid_py.viz.meshcat_server import check_server  # not at import: it runs as a program

            check_server(zmq_url)
        self.zmq_url = zmq_url
        self.wait_for_browser = wait_for_browser
        self.realtime = realtime
        self._wall_start: float | None = None
        # set by connect(): a LocalServer, a meshcat.Visualizer, a MeshcatScene, a SceneBuilder
        self.server: Any = None
        self.visualizer: Any = None
        self.scene: Any = None
        self.builder: Any = None
        self.frames_sent = 0
        self._next_time = 0.0

    @property
    def web_url(self) -> str:
        """The page to open in a browser."""
        return self.visualizer.url()

    def connect(self, controller) -> None:
        """Start (or join) the server and load the robot and markers of ``controller``."""
        import meshcat

        from tsid_py.viz.meshcat_markers import MeshcatScene
        from tsid_py.viz.meshcat_server import start_local_server

        if self.zmq_url is None:
            self.server = start_local_server()
            self.zmq_url = self.server.zmq_url
        with contextlib.redirect_stdout(io.StringIO()):  # meshcat prints its URL: said once, below
            self.visualizer = meshcat.Visualizer(zmq_url=self.zmq_url)
        self.builder = SceneBuilder(controller.robot, contacts_of(controller))
        self.scene = MeshcatScene(self.visualizer, controller.robot, self.builder, list(POINT_SERIES))
        if self.terrain is not None and not self.terrain.flat:
            self.scene.draw_terrain(self.terrain)
        kept = (
            ""
            if self.server is None
            else " (this server stops with the run: to keep the scene, start `meshcat-server` and "
            "pass the zmq_url it prints as --viewer-url)"
        )
        print(f"meshcat viewer: open {self.web_url}{kept}", file=sys.stderr)

        if self.wait_for_browser:
            logger.warning("waiting for a browser to open the viewer page")
            self.visualizer.wait()

    def __call__(self, controller, log) -> None:
        if self.scene is None:
            self.connect(controller)
        t = log.t[-1]
        if t + 1e-12 < self._next_time:
            return
        if self.realtime:
            self._wall_start = keep_pace(self._wall_start, t)
        frame = self.builder.frame_at(log, len(log.t) - 1)
        if self.frames_sent == 0:
            from tsid_py.viz.meshcat_markers import camera_target

            self.scene.look_at(*camera_target(controller.robot, frame))
        self.scene.draw(frame)
        self.frames_sent += 1
        self._next_time = t + self.period

    def close(self) -> None:
        """Stop the server this viewer started (a joined server keeps running)."""
        if self.server is not None:
            self.server.stop()
            self.server = None
