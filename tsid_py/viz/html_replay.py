"""A run as one self-contained HTML file: meshcat's viewer, the robot's meshes and the animation.

No server is involved: a :class:`RecordingWindow` stands in for meshcat's ZMQ connection and keeps
the scene tree the way ``meshcat-server`` does (last object, properties and transform per path,
plus the animation). :func:`write_html_replay` then writes meshcat's JavaScript viewer inline
followed by the recorded commands (base64 msgpack, replayed in order), so the file opens offline
in any browser and plays the motion with the markers (meshcat's "Animations" panel replays it).
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path

from tsid_py.contacts.contact_base import contacts_of
from tsid_py.errors import InvalidParameterError
from tsid_py.outputs import atomic_output
from tsid_py.viz.scene import SceneBuilder, run_terrain

REPLAY_FPS = 25.0  # animation keyframes per second of simulated time


class RecordingWindow:
    """A meshcat window that records commands into a scene tree instead of sending them."""

    def __init__(self) -> None:
        from meshcat.servers.tree import SceneTree

        self.tree = SceneTree()

    def send(self, command) -> None:
        import umsgpack
        from meshcat.servers.tree import SceneTree, find_node

        lowered = command.lower()
        kind = lowered["type"]
        path = [part for part in lowered["path"].split("/") if part]
        packed = umsgpack.packb(lowered)
        if kind == "delete":
            if path:
                find_node(self.tree, path[:-1]).pop(path[-1], None)
            else:
                self.tree = SceneTree()
            return
        node = find_node(self.tree, path)
        if kind == "set_object":
            node.object, node.properties = packed, []
        elif kind == "set_transform":
            node.transform = packed
        elif kind == "set_property":
            node.properties.append(packed)
        elif kind == "set_animation":
            node.animation = packed

    def commands(self) -> list[bytes]:
        """The scene as the ordered commands that rebuild it: objects, properties, transforms, animation."""
        from meshcat.servers.tree import walk

        out: list[bytes] = []
        for node in walk(self.tree):
            out.extend(blob for blob in (node.object, *node.properties, node.transform) if blob is not None)
        out.extend(node.animation for node in walk(self.tree) if node.animation is not None)
        return out

    def static_html(self, title: str) -> str:
        """One HTML page: meshcat's viewer script inline, then the recorded commands."""
        import meshcat

        script = (Path(meshcat.__file__).parent / "viewer" / "dist" / "main.min.js").read_text(
            encoding="utf-8"
        )
        commands = json.dumps([base64.b64encode(blob).decode("ascii") for blob in self.commands()])
        return _PAGE.format(
            title=html.escape(title), script=script.replace("</script", "<\\/script"), commands=commands
        )


_PAGE = """<!DOCTYPE html>
<html>
<head><meta charset="utf-8"><title>{title}</title>
<style>body {{ margin: 0; }} #meshcat-pane {{ width: 100vw; height: 100vh; overflow: hidden; }}</style>
</head>
<body>
<div id="meshcat-pane"></div>
<script>{script}</script>
<script>
var viewer = new MeshCat.Viewer(document.getElementById("meshcat-pane"));
for (const encoded of {commands}) {{
  const raw = atob(encoded);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  viewer.handle_command_bytearray(bytes);
}}
</script>
</body>
</html>
"""


def write_html_replay(result, path: str | Path, fps: float = REPLAY_FPS) -> Path:
    """Write the run of ``result`` (a RunResult whose ``controller`` is set) as one HTML file; a
    walk on terrain (``summary["terrain"]``) shows its blocks.

    Args:
        result: The run: its log gives q, the marker points and the contact forces of every step.
        path: Output file.
        fps: Keyframes per second of simulated time; the animation plays in real time.

    Returns:
        The path written.
    """
    import meshcat
    from meshcat.animation import Animation

    from tsid_py.viz.meshcat_markers import MeshcatScene, camera_target

    controller, log = result.controller, result.log
    if controller is None:
        raise InvalidParameterError(
            "the run result carries no controller: a replay needs its robot and contacts"
        )
    robot = controller.robot
    builder = SceneBuilder(robot, contacts_of(controller))
    dt = float(result.summary["dt_s"])
    stride = max(1, int(round(1.0 / (fps * dt))))
    if hasattr(log, "sampled"):  # a RunLog: the frames' steps only, read back if it streams to disk
        log, stride = log.sampled(stride), 1
    frames = builder.frames_from_log(log, stride=stride)
    window = RecordingWindow()
    visualizer = meshcat.Visualizer(window=window)
    scene = MeshcatScene(visualizer, robot, builder, sorted({name for f in frames for name in f.points}))
    terrain = run_terrain(result.summary)
    if terrain is not None:
        scene.draw_terrain(terrain)
    if frames:
        scene.draw(frames[0])
        scene.look_at(*camera_target(robot, frames[0]))
    animation = Animation(default_framerate=fps)
    for frame in frames:
        with animation.at_frame(visualizer, frame.t * fps) as keyframe:
            scene.draw(frame, keyframe)
    visualizer.set_animation(animation, play=True, repetitions=1)
    path = Path(path)
    title = f"tsid_py: {result.summary['scenario']} on {robot.name}"
    with atomic_output(path, "w") as handle:
        handle.write(window.static_html(title))
    return path
