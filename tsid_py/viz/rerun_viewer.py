"""Rerun viewer: an observer of a closed-loop run that logs it to rerun (https://rerun.io), live or
into an ``.rrd`` file (the ``[rerun]`` extra: ``pip install 'tsid_py[rerun]'``).

Everything is on rerun's timeline ``sim_time``, the simulated time [s]:

- 3-D, at ``rate`` frames per simulated second, world axes (z up) under ``/world``: the robot's
  visual meshes, logged once per geometry under ``/world/robot/<link>/<geometry>`` (the meshes
  Pinocchio loaded, STL or DAE alike, as ``Mesh3D``; boxes, cylinders, spheres, capsules as
  rerun's shapes), each link's ``Transform3D`` from Pinocchio's forward kinematics of the logged q;
  the marker points (``/world/points/<name>``: CoM, its reference, capture point, ...), one arrow
  per loaded contact (``/world/forces``: from its centre of pressure, 0.5 m for the robot's weight
  m g), the support polygon (``/world/support_polygon``), the foot targets and the terrain's blocks;
- time series at every control step (``Scalars``, float64: the log's own numbers) under
  ``/series``: the CoM and its reference [m], the tracking errors [m], the capture point and its
  margin [m], each contact's planned normal force [N], the joint torques [N m];
- events (``TextLog`` under ``/events``): the pushes, when balance was lost, the fall or the
  recovery, and the verdict at the end (:meth:`RerunViewer.finish`).

Live, the recording goes to a viewer: the native one spawned where there is a screen, else a
rerun server on 127.0.0.1 (a child process, gRPC and the web viewer; it stops with the run), or a
viewer or server given by its gRPC URL (``rerun+http://HOST:PORT/proxy``).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlparse

import numpy as np
import pinocchio as pin

from tsid_py.contacts.contact_base import contacts_of
from tsid_py.errors import InvalidParameterError, UnsupportedProblemError
from tsid_py.outputs import PendingOutput, check_output_file
from tsid_py.planning.terrain import Terrain
from tsid_py.validation import as_scalar
from tsid_py.viz.meshcat_markers import (
    ARROW_COLOR,
    FOOT_TARGET_STYLE,
    POINT_STYLES,
    POLYGON_COLOR,
    TERRAIN_COLOR,
    camera_target,
)
from tsid_py.viz.scene import SceneBuilder, SceneFrame, keep_pace

logger = logging.getLogger(__name__)

INSTALL = "pip install 'tsid_py[rerun]' (or pip install rerun-sdk)"
APPLICATION_ID = "tsid_py"
TIMELINE = "sim_time"  # rerun's timeline of the simulated time [s]
GRPC_PORT, WEB_PORT = 9876, 9090  # rerun's default ports (another free one when taken)
LOCALHOST = "127.0.0.1"
ANSWER_WITHIN = 3.0  # [s] a viewer given by its URL must accept a connection within this
SERVER_START = 20.0  # [s] the local server must listen within this
LIVE = ("auto", "spawn", "serve")
SAVE_BATCH = 25  # 3-D frames buffered before they are sent, when not live
URL_SCHEMES = ("rerun", "rerun+http", "rerun+https")
ARROW_RADIUS, POLYGON_RADIUS = 0.008, 0.004  # [m]
_PR_SET_PDEATHSIG = 1  # prctl option: the signal a process gets when its parent dies


def rerun_module() -> Any:
    """The ``rerun`` package, or one line naming the extra that installs it."""
    try:
        import rerun
    except ImportError:
        raise UnsupportedProblemError(f"the rerun viewer needs the rerun SDK: {INSTALL}") from None
    return rerun


def _rgba(color: int, opacity: float = 1.0) -> list[int]:
    """0xRRGGBB and an opacity in [0, 1] as rerun's RGBA bytes."""
    return [(color >> 16) & 255, (color >> 8) & 255, color & 255, int(round(255 * opacity))]


@dataclass
class _Series:
    """One time series entity: where, its lines' names, the log's series it reads (the step's
    entries kept as they are) and how its rows become numbers (n, len(names)) when sent."""

    path: str
    names: list[str]
    sources: tuple[Callable[[Any], Any], ...]  # log -> one of its per-step series
    convert: Callable[[list[Any]], np.ndarray]  # the steps' entries (None: missing) -> values
    rows: list[Any] = field(default_factory=list)

    def read(self, log) -> None:
        """Keep the last step's entries of the sources (the loop records new arrays every step)."""
        steps = len(log.t)
        series = [source(log) for source in self.sources]
        self.rows.append(tuple(s[-1] for s in series) if all(len(s) == steps for s in series) else None)


def _vectors(size: int) -> Callable[[list[Any]], np.ndarray]:
    """Rows of one vector each (its first ``size`` entries) as numbers; NaN where missing."""

    def convert(rows: list[Any]) -> np.ndarray:
        out = np.full((len(rows), size), np.nan)
        for i, row in enumerate(rows):
            if row is not None:
                out[i] = np.asarray(row[0], dtype=float).ravel()[:size]
        return out

    return convert


def _distances(rows: list[Any]) -> np.ndarray:
    """|a - b| of rows (a, b) [m]; NaN where missing."""
    out = np.full((len(rows), 1), np.nan)
    for i, row in enumerate(rows):
        if row is not None:
            out[i, 0] = np.linalg.norm(np.asarray(row[0], dtype=float) - np.asarray(row[1], dtype=float))
    return out


def _normal_forces(contact) -> Callable[[list[Any]], np.ndarray]:
    """A contact's planned force variables as its normal force [N], summed over its points (0 out
    of the problem at a step)."""
    normal = np.asarray(contact.contact_normal, dtype=float)

    def convert(rows: list[Any]) -> np.ndarray:
        out = np.full((len(rows), 1), np.nan)
        for i, row in enumerate(rows):
            if row is not None:
                f = row[0]
                loaded = f is not None and np.size(f) == contact.n_force
                out[i, 0] = float(contact.point_forces(f).sum(axis=0) @ normal) if loaded else 0.0
        return out

    return convert


class RerunViewer:
    """Call it with (controller, log) after each control step (the runner's observer, like
    :class:`~tsid_py.viz.meshcat_viewer.LiveViewer`); then :meth:`finish` (the verdict, the
    ``.rrd`` written) and :meth:`close`.

    Args:
        rate: 3-D frames per second of simulated time [Hz] (the time series get every step).
        live: Where to show it while it runs: "auto" (the native viewer where there is a screen,
            else "serve"), "spawn" (rerun's native viewer, ``rr.spawn``), "serve" (a rerun server
            on 127.0.0.1 with the web viewer, stopped with the run), a running viewer's or
            server's gRPC URL (``rerun+http://HOST:PORT/proxy``; refused when nothing accepts a
            connection there within 3 s), or None (not live: ``save`` only).
        save: Write the recording into this ``.rrd`` file (None: none); it appears at
            :meth:`finish`, whole (a run that fails before leaves no file).
        terrain: The blocks the robot walks on, drawn as boxes (None: the floor alone).
        realtime: Never log ahead of the wall clock (a live view at the motion's pace).
    """

    def __init__(
        self,
        rate: float = 25.0,
        live: str | None = "auto",
        save: str | Path | None = None,
        terrain: Terrain | None = None,
        realtime: bool = False,
    ) -> None:
        if terrain is not None and not isinstance(terrain, Terrain):
            raise InvalidParameterError(f"terrain must be a Terrain, got {type(terrain).__name__}")
        self.period = 1.0 / as_scalar("viewer rate", rate, minimum=0.0, strict=True)
        if live is None and save is None:
            raise InvalidParameterError("a rerun viewer shows the run live, saves it (save=FILE.rrd) or both")
        self.rr = rerun_module()
        if live is not None and live not in LIVE:
            check_url(live)
        self.live = live
        self.save = None if save is None else check_output_file(save, True, "save")
        self.terrain, self.realtime = terrain, realtime
        self.recording: Any = None  # a rerun RecordingStream, made at the first step
        self.builder: SceneBuilder | None = None
        self.server: subprocess.Popen | None = None
        self.web_url: str | None = None  # the page of the web viewer (live="serve")
        self.grpc_url: str | None = None  # where the recording streams live
        self.frames_sent = 0
        self.finished = False
        self._pending: PendingOutput | None = None
        self._series: list[_Series] = []
        self._times: list[float] = []
        self._links: list[tuple[int, str]] = []  # (frame id, entity path) of each link with visuals
        self._data: Any = None  # Pinocchio's Data for the links' placements
        self._pose_times: list[float] = []  # [s] the frames not sent yet
        self._poses: list[np.ndarray] = []  # each (links, 7): translation, quaternion (x, y, z, w)
        self._next_time = 0.0  # [s] of the run's own time: the next 3-D frame
        self._wall_start: float | None = None
        self._last_time = 0.0  # [s] on the timeline: the last step's
        self._controller: Any = None  # the run's controller (another one: the next run)
        self._local = -np.inf  # [s] the run's own time of its last step
        self._step = 0.0  # [s] the last run's control period
        self._offset = 0.0  # [s] timeline - the run's own time (0 in the first run)
        self.runs = 0  # the runs seen (a scenario of the course may run several)

    @property
    def wait_before_close(self) -> bool:
        """Whether the view goes when :meth:`close` returns (a server this viewer started)."""
        return self.server is not None

    # ------------------------------------------------------------------ set-up
    def connect(self, controller, log) -> None:
        """Open the recording (its sinks: the live viewer, the file), log what does not move (the
        meshes, the terrain, the series' names) and choose the series of ``log``."""
        rr = self.rr
        self.builder = SceneBuilder(controller.robot, contacts_of(controller))
        self._series = self._choose_series(controller, log)
        sinks = []
        if self.live is not None:
            self.grpc_url = self._start_live()
            sinks.append(rr.GrpcSink(self.grpc_url))
        if self.save is not None:
            self._pending = PendingOutput(self.save)
            sinks.append(rr.FileSink(self._pending.target))
        self.recording = rec = rr.RecordingStream(APPLICATION_ID)
        self.runs = 1
        first = self.builder.frame_at(log, len(log.t) - 1)
        rec.set_sinks(*sinks, default_blueprint=self._blueprint(*camera_target(controller.robot, first)))
        rec.send_recording_name(f"{controller.robot.name}")
        rec.log("world", rr.ViewCoordinates.RIGHT_HAND_Z_UP, static=True)
        self._log_robot(controller.robot)
        if self.terrain is not None and not self.terrain.flat:
            self._log_terrain(self.terrain)
        for series in self._series:
            rec.log(series.path, rr.SeriesLines(names=series.names), static=True)

    def _start_live(self) -> str:
        """Where the live recording goes: a gRPC URL (a viewer spawned, a server started, or given)."""
        rr, live = self.rr, self.live
        if live == "auto":
            live = "spawn" if has_screen() and viewer_executable() is not None else "serve"
        if live == "spawn":
            rr.spawn(port=GRPC_PORT, connect=False)
            url = f"rerun+http://{LOCALHOST}:{GRPC_PORT}/proxy"
            print(f"rerun viewer: streaming to the native viewer ({url})", file=sys.stderr)
            return url
        if live == "serve":
            self.server, url, self.web_url = start_local_server()
            print(
                f"rerun viewer: open {self.web_url} (the web viewer), or run `rerun {url}`; from "
                f"another machine, forward both ports first (ssh -L {_port(self.web_url)}:{LOCALHOST}:"
                f"{_port(self.web_url)} -L {_port(url)}:{LOCALHOST}:{_port(url)} HOST). This server "
                "stops with the run: to keep the recording, --rerun-save FILE.rrd",
                file=sys.stderr,
            )
            return url
        assert live is not None
        return live

    def _choose_series(self, controller, log) -> list[_Series]:
        """The time series ``log`` carries from its first step: positions, errors, forces, torques."""
        steps = len(log.t)

        def series_of(name: str):
            return lambda log: getattr(log, name)

        def has(name: str) -> bool:
            values = getattr(log, name, None)
            return values is not None and len(values) == steps

        out, xyz = [], ["x", "y", "z"]
        for measured, reference in (("com", "com_ref"), ("ee", "ee_ref")):
            for name, role in ((measured, "measured"), (reference, "reference")):
                if has(name):
                    out.append(_Series(f"series/{measured}/{role}", xyz, (series_of(name),), _vectors(3)))
            if has(measured) and has(reference):
                error = [f"|{measured} - {reference}|"]
                sources = (series_of(measured), series_of(reference))
                out.append(_Series(f"series/tracking/{measured}_error", error, sources, _distances))
        if has("capture_point"):
            out.append(
                _Series("series/balance/capture_point", xyz[:2], (series_of("capture_point"),), _vectors(2))
            )
        if has("capture_margin"):
            out.append(
                _Series(
                    "series/balance/capture_margin", ["margin"], (series_of("capture_margin"),), _vectors(1)
                )
            )
        contacts = self.builder.contacts if self.builder is not None else {}
        for name, values in log.forces.items():
            contact = contacts.get(name)
            if contact is not None and len(values) == steps:
                source = (lambda log, name=name: log.forces[name],)
                out.append(_Series(f"series/forces/{name}", [f"{name} f_n"], source, _normal_forces(contact)))
        robot = controller.robot
        out.append(
            _Series("series/torques", actuated_joint_names(robot), (series_of("tau"),), _vectors(robot.na))
        )
        return out

    def _blueprint(self, target: np.ndarray, distance: float) -> Any:
        """The default layout: the 3-D view beside the time series and the events; the camera on
        ``target`` [m] from ``distance`` [m] (in front, to the side, above), as meshcat's."""
        import rerun.blueprint as rrb

        present = {s.path.split("/")[1] for s in self._series}
        titles = [
            ("tracking", "tracking errors [m]"),
            ("com", "CoM [m]"),
            ("ee", "end effector [m]"),
            ("balance", "capture point, margin [m]"),
            ("forces", "planned normal forces [N]"),
            ("torques", "torques [N m]"),
        ]
        plots = [
            rrb.TimeSeriesView(origin=f"/series/{key}", name=title) for key, title in titles if key in present
        ]
        return rrb.Blueprint(
            rrb.Horizontal(
                rrb.Spatial3DView(
                    origin="/world",
                    name="robot",
                    eye_controls=rrb.EyeControls3D(
                        position=target + distance * np.array([0.75, 0.35, 0.55]),
                        look_target=target,
                        eye_up=[0.0, 0.0, 1.0],
                    ),
                ),
                rrb.Vertical(*plots, rrb.TextLogView(origin="/events", name="events")),
                column_shares=[3, 2],
            ),
            collapse_panels=True,
        )

    def _log_robot(self, robot) -> None:
        """The visual geometries, each once under its link (the link's frame moves, not the mesh)."""
        rr, rec = self.rr, self.recording
        load = getattr(robot, "load_visual_model", None)  # a spec robot loads its meshes on demand
        visual_model = load() if load is not None else getattr(robot, "visual_model", None)
        if visual_model is None:
            logger.warning("%s has no visual model: the rerun view draws no robot", robot.name)
            return
        links: dict[int, str] = {}
        model, skipped = robot.model, []
        for geometry in visual_model.geometryObjects:
            frame_id = geometry.parentFrame
            frame = model.frames[frame_id] if frame_id < model.nframes else None
            if frame is None or frame.parentJoint != geometry.parentJoint:  # the joint's frame, then
                frame_id = model.getFrameId(model.names[geometry.parentJoint])
                frame = model.frames[frame_id]
            placement = frame.placement.actInv(geometry.placement)  # the geometry in its link's frame
            archetype = _shape(rr, geometry)
            if archetype is None:
                skipped.append(geometry.name)
                continue
            link = links.setdefault(frame_id, f"world/robot/{rr.escape_entity_path_part(frame.name)}")
            path = f"{link}/{rr.escape_entity_path_part(geometry.name)}"
            rotation = pin.Quaternion(placement.rotation).coeffs()  # (x, y, z, w)
            rec.log(path, rr.Transform3D(translation=placement.translation, quaternion=rotation), static=True)
            rec.log(path, archetype, static=True)
        if skipped:
            logger.warning("rerun viewer: no shape for the geometries %s", ", ".join(skipped))
        self._links = list(links.items())
        self._data = model.createData()

    def _log_terrain(self, terrain: Terrain) -> None:
        rr = self.rr
        blocks = terrain.blocks
        self.recording.log(
            "world/terrain",
            rr.Boxes3D(
                centers=[b.center for b in blocks],
                half_sizes=[0.5 * np.asarray(b.size) for b in blocks],
                quaternions=[pin.Quaternion(b.rotation).coeffs() for b in blocks],
                colors=[_rgba(TERRAIN_COLOR)] * len(blocks),
                fill_mode="solid",
            ),
            static=True,
        )

    # ------------------------------------------------------------------ every step
    def __call__(self, controller, log) -> None:
        local = float(log.t[-1])  # [s] the run's own time
        if self.recording is None:
            self.connect(controller, log)
            self._controller = controller
        elif controller is not self._controller or local < self._local - 1e-12:
            self._next_run(controller, local)
        elif local > self._local:
            self._step = local - self._local
        self._local = local
        t = self._last_time = local + self._offset
        self._times.append(t)
        for series in self._series:
            series.read(log)
        if local + 1e-12 < self._next_time:
            return
        if self.realtime:
            self._wall_start = keep_pace(self._wall_start, t)
        assert self.builder is not None
        self.draw(self.builder.frame_at(log, len(log.t) - 1))
        if len(self._pose_times) >= (1 if self.live is not None else SAVE_BATCH):
            self._flush()
        self._next_time = local + self.period

    def _next_run(self, controller, local: float) -> None:
        """A scenario of several runs (a sweep of the course) started the next one: its timeline
        goes on one step after the last run's, and an event says where it starts."""
        self._flush()
        self.runs += 1
        self._offset = self._last_time + self._step - local
        self._controller = controller
        self.builder = SceneBuilder(controller.robot, contacts_of(controller))
        self._next_time = -np.inf
        self.recording.set_time(TIMELINE, duration=local + self._offset)
        self.recording.log("events", self.rr.TextLog(f"run {self.runs} starts (at its t = {local:g} s)"))

    def draw(self, frame: SceneFrame) -> None:
        """Log one 3-D frame at its time: the links' placements, the points, arrows and polygon."""
        rr, rec, builder = self.rr, self.recording, self.builder
        assert builder is not None
        t = frame.t + self._offset  # [s] on the timeline (runs after the first one follow it)
        rec.set_time(TIMELINE, duration=t)
        if self._links:  # sent by _flush, one column per link
            model, data = builder.robot.model, self._data
            pin.forwardKinematics(model, data, frame.q)
            poses = np.empty((len(self._links), 7))  # translation [m], quaternion (x, y, z, w)
            for k, (frame_id, _) in enumerate(self._links):
                placement = pin.updateFramePlacement(model, data, frame_id)
                poses[k, :3] = placement.translation
                poses[k, 3:] = pin.Quaternion(placement.rotation).coeffs()
            self._pose_times.append(t)
            self._poses.append(poses)
        for name, point in frame.points.items():
            radius, color, opacity = POINT_STYLES.get(name, (0.02, 0x808080, 1.0))
            rec.log(
                f"world/points/{name}", rr.Points3D([point], radii=radius, colors=[_rgba(color, opacity)])
            )
        names = sorted(frame.forces)
        origins = np.array([frame.forces[n][0] for n in names]).reshape(-1, 3)
        vectors = builder.arrow_scale * np.array([frame.forces[n][1] for n in names]).reshape(-1, 3)
        rec.log(
            "world/forces",
            rr.Arrows3D(
                origins=origins,
                vectors=vectors,
                labels=names,
                show_labels=False,  # (on hover)
                radii=ARROW_RADIUS,
                colors=_rgba(ARROW_COLOR),
            ),
        )
        polygon = frame.support_polygon
        strips = [np.vstack([polygon, polygon[:1]])] if len(polygon) >= 2 else []
        rec.log(
            "world/support_polygon",
            rr.LineStrips3D(strips, radii=POLYGON_RADIUS, colors=_rgba(POLYGON_COLOR)),
        )
        if self.frames_sent == 0:
            targets = builder.foot_targets()
            if targets:
                radius, color, opacity = FOOT_TARGET_STYLE
                points = rr.Points3D(
                    list(targets.values()),
                    radii=radius,
                    colors=_rgba(color, opacity),
                    labels=list(targets),
                    show_labels=False,
                )
                rec.log("world/foot_targets", points)
        self.frames_sent += 1

    def _flush(self) -> None:
        """Send the links' placements and the time series' rows since the last flush, one column
        per entity (live: at every frame; into a file: every ``SAVE_BATCH`` frames)."""
        rr = self.rr
        if self._pose_times:
            times = rr.TimeColumn(TIMELINE, duration=np.array(self._pose_times))
            poses = np.array(self._poses)  # (frames, links, 7)
            for k, (_, path) in enumerate(self._links):
                columns = rr.Transform3D.columns(translation=poses[:, k, :3], quaternion=poses[:, k, 3:])
                self.recording.send_columns(path, indexes=[times], columns=columns)
            self._pose_times.clear()
            self._poses.clear()
        if not self._times:
            return
        times = rr.TimeColumn(TIMELINE, duration=np.array(self._times))
        for series in self._series:
            values = series.convert(series.rows)
            self.recording.send_columns(
                series.path, indexes=[times], columns=rr.Scalars.columns(scalars=values)
            )
            series.rows.clear()
        self._times.clear()

    # ------------------------------------------------------------------ the end
    def finish(self, summary: dict[str, Any] | None = None) -> Path | None:
        """Log the rest of the series and, from a run's ``summary``, the pushes, the verdict and
        its times as events; end the recording and write the ``.rrd`` file (its path, or None).
        What was sent live stays in the viewer."""
        if self.recording is None or self.finished:
            return None
        self._flush()
        if summary:
            self._log_events(summary)
        self.recording.flush()
        self.recording.disconnect()  # the file's footer written, the file closed
        self.finished = True
        if self._pending is None:
            return None
        path, self._pending = self._pending.commit(), None
        logger.info("wrote %s", path)
        return path

    def _log_events(self, summary: dict[str, Any]) -> None:
        from tsid_py.loop.plant import Push

        rr, rec = self.rr, self.recording
        if self.runs > 1:  # the times of a summary of several runs: the run's own; the verdict only
            summary = {
                key: summary.get(key) for key in ("verdict", "verdict_reason", "qp_failure", "plant_failure")
            }
        for text in summary.get("pushes") or ():
            push = Push.parse(text)
            rec.set_time(TIMELINE, duration=push.t)
            rec.log(
                "events",
                rr.TextLog(
                    f"push ({', '.join(f'{f:g}' for f in push.force)}) N for {push.duration:g} s",
                    level="INFO",
                ),
            )
        moments = (("lost_balance_at_s", "lost balance", "WARN"), ("fell_at_s", "fell", "ERROR"),
                   ("recovered_at_s", "recovered", "INFO"))  # fmt: skip
        for key, what, level in moments:
            at = summary.get(key)
            if isinstance(at, float) and np.isfinite(at):
                rec.set_time(TIMELINE, duration=at)
                rec.log("events", rr.TextLog(what, level=level))
        verdict = summary.get("verdict")
        text = f"verdict: {verdict}" if verdict is not None else "the run ended"
        if summary.get("verdict_reason"):
            text += f" ({summary['verdict_reason']})"
        failure = summary.get("qp_failure") or summary.get("plant_failure")
        if failure:
            text += f"; failed: {failure}"
        level = "INFO" if verdict in (None, "recovered") and not failure else "WARN"
        rec.set_time(TIMELINE, duration=self._last_time)
        rec.log("events", rr.TextLog(text, level=level))

    def close(self) -> None:
        """End the recording (a ``.rrd`` not finished is discarded: the run did not end) and stop
        the server this viewer started (a viewer joined or spawned keeps running)."""
        if self.recording is not None and not self.finished:
            with contextlib.suppress(Exception):
                self.recording.disconnect()
            self.finished = True
        if self._pending is not None:
            self._pending.discard()
            self._pending = None
        if self.server is not None:
            stop(self.server)
            self.server = None


def actuated_joint_names(robot) -> list[str]:
    """The name of each actuated degree of freedom, in tau's order (a joint's name, with ``:k`` for
    its k-th degree of freedom when it has several)."""
    model, names = robot.model, []
    for j in range(1, model.njoints):
        nv = model.joints[j].nv
        names.extend([model.names[j]] if nv == 1 else [f"{model.names[j]}:{k}" for k in range(nv)])
    return names[len(names) - robot.na :]


def _shape(rr, geometry) -> Any:
    """The rerun archetype of a visual geometry in its own frame, in its colour (None: no shape for it)."""
    shape = geometry.geometry
    color = [int(round(255 * c)) for c in np.clip(geometry.meshColor, 0.0, 1.0)]
    kind = type(shape).__name__
    if hasattr(shape, "num_tris") and hasattr(shape, "vertices"):  # a mesh, as Pinocchio loaded it
        vertices = np.asarray(shape.vertices(), dtype=float)  # scaled by meshScale already
        triangles = np.array(
            [[tri[0], tri[1], tri[2]] for tri in (shape.tri_indices(i) for i in range(shape.num_tris))],
            dtype=np.uint32,
        ).reshape(-1, 3)
        if np.prod(np.sign(geometry.meshScale)) < 0:  # mirrored: the triangles turn the other way
            triangles = triangles[:, ::-1].copy()
        return rr.Mesh3D(
            vertex_positions=vertices,
            triangle_indices=triangles,
            vertex_normals=vertex_normals(vertices, triangles),
            albedo_factor=color,
        )
    if kind == "Box":
        return rr.Boxes3D(half_sizes=[shape.halfSide], colors=[color], fill_mode="solid")
    if kind == "Cylinder":  # along z, centred
        return rr.Cylinders3D(
            lengths=[2 * shape.halfLength], radii=[shape.radius], colors=[color], fill_mode="solid"
        )
    if kind == "Sphere":
        return rr.Ellipsoids3D(half_sizes=[[shape.radius] * 3], colors=[color], fill_mode="solid")
    if kind == "Capsule":  # rerun's starts at the origin along +z, coal's is centred
        return rr.Capsules3D(
            lengths=[2 * shape.halfLength],
            radii=[shape.radius],
            translations=[[0.0, 0.0, -shape.halfLength]],
            colors=[color],
        )
    return None


def vertex_normals(vertices: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Unit normal of each vertex: the area-weighted sum of its triangles' normals (n, 3)."""
    corners = vertices[triangles]
    faces = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    normals = np.zeros_like(vertices)
    for k in range(3):
        np.add.at(normals, triangles[:, k], faces)
    length = np.linalg.norm(normals, axis=1, keepdims=True)
    return np.divide(normals, length, out=np.zeros_like(normals), where=length > 0)


# ---------------------------------------------------------------------- viewers and servers
def has_screen() -> bool:
    """Whether a native window can open here (a display on Linux; macOS and Windows have one)."""
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def viewer_executable() -> str | None:
    """The rerun viewer's program that came with the SDK (``RERUN_CLI_PATH`` first), or on PATH."""
    override = os.environ.get("RERUN_CLI_PATH")
    if override:
        return override
    with contextlib.suppress(ImportError):
        import rerun_cli

        bundled = Path(rerun_cli.__file__).parent / (
            "rerun.exe" if sys.platform.startswith("win") else "rerun"
        )
        if bundled.is_file():
            return str(bundled)
    return shutil.which("rerun")


def check_url(url: str, timeout: float = ANSWER_WITHIN) -> str:
    """``url``, a rerun viewer's or server's gRPC URL (``rerun+http://HOST:PORT/proxy``), once
    something accepted a connection there within ``timeout`` s (InvalidParameterError otherwise)."""
    advice = (
        "give the gRPC URL a rerun viewer or server prints (rerun+http://127.0.0.1:9876/proxy: start "
        "`rerun` where there is a screen, or `rerun --serve-web`)"
    )
    parsed = urlparse(url)
    if parsed.scheme not in URL_SCHEMES or not parsed.hostname:
        raise InvalidParameterError(f"rerun viewer address {url}: not a rerun gRPC URL; {advice}")
    try:
        port = parsed.port or (443 if parsed.scheme == "rerun+https" else GRPC_PORT)
    except ValueError as error:
        raise InvalidParameterError(f"rerun viewer address {url}: {error}; {advice}") from None
    try:
        with socket.create_connection((parsed.hostname, port), timeout=timeout):
            return url
    except OSError:
        raise InvalidParameterError(f"nothing answered at {url} within {timeout:g} s: {advice}") from None


def _port(url: str) -> int:
    return urlparse(url).port or 0


def free_port(preferred: int) -> int:
    """``preferred`` when it is free on 127.0.0.1, else a free port the system picks."""
    for port in (preferred, 0):
        with socket.socket() as probe:
            if os.name != "nt":  # as a server binds: a port in TIME_WAIT is free (on Windows, taken)
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((LOCALHOST, port))
            except OSError:
                continue
            return probe.getsockname()[1]
    raise OSError("no free port on 127.0.0.1")


def start_local_server(timeout: float = SERVER_START) -> tuple[subprocess.Popen, str, str]:
    """A rerun server on 127.0.0.1 only (gRPC and the web viewer), a child process that ends with
    this one: (the process, its gRPC URL, the web viewer's page). rerun's own ``serve_grpc``
    listens on every interface; this one on the loopback alone."""
    program = viewer_executable()
    if program is None:
        raise UnsupportedProblemError(f"the rerun viewer program is missing: {INSTALL}")
    grpc, web = free_port(GRPC_PORT), free_port(WEB_PORT)
    if web == grpc:
        web = free_port(0)
    command = [
        program,
        "--serve-web",
        "--bind",
        LOCALHOST,
        "--port",
        str(grpc),
        "--web-viewer-port",
        str(web),
    ]
    process = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=_die_with_parent(),
    )
    atexit.register(stop, process)
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError), socket.create_connection((LOCALHOST, grpc), timeout=0.2):
            break
        if process.poll() is not None:
            raise RuntimeError(f"the rerun server exited with code {process.returncode}")
        if time.monotonic() > deadline:
            stop(process)
            raise RuntimeError(f"the rerun server did not listen on {LOCALHOST}:{grpc} within {timeout:g} s")
        time.sleep(0.05)
    url = f"rerun+http://{LOCALHOST}:{grpc}/proxy"
    return process, url, f"http://{LOCALHOST}:{web}/?url={quote(url, safe='')}"


def _die_with_parent() -> Any:
    """What the child runs before the server (Linux): ask for SIGTERM when this process dies. The
    function is looked up here, so that the child, forked from a process with threads, only calls it."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def stop(process: subprocess.Popen) -> None:
    """Terminate a server process (killed after 5 s)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
