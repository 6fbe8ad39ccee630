"""A run as a ROS 2 bag (MCAP storage), and a recorded motion read back from one.

A ROS 2 bag is a folder: ``metadata.yaml`` and one ``.mcap`` file, which ``ros2 bag info`` and
``ros2 bag play`` read, and Foxglove opens. The ``[ros]`` extra (``rosbags``, pure Python) writes
and reads them with the standard message definitions; no ROS installation is needed.

Topics of a recorded run (:data:`TOPICS`), stamped with the simulated time. Frames follow REP 105
and REP 103: ``world`` is the fixed frame (x forward, z up), each link is a frame of the URDF's
name, SI units.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

from tsid_py.contacts.contact_base import ContactBase, contacts_of
from tsid_py.errors import InvalidParameterError, OutputError, UnsupportedProblemError
from tsid_py.robot_specs import SpecRobot, files_root, package_dirs
from tsid_py.robot_wrapper import RobotWrapper

INSTALL = "pip install 'tsid_py[ros]' (or pip install rosbags)"
WORLD = "world"  # REP 105's fixed frame
JOINT_STATES, JOINT_COMMANDS = "/joint_states", "/joint_commands"
TF, TF_STATIC, ROBOT_DESCRIPTION = "/tf", "/tf_static", "/robot_description"
MARKERS, SUMMARY = "/markers", "/summary"
TOPICS = {  # topic -> (type, what)
    JOINT_STATES: (
        "sensor_msgs/msg/JointState",
        "measured q, v of the actuated joints; effort: the torque sent",
    ),
    JOINT_COMMANDS: (
        "sensor_msgs/msg/JointState",
        "the plan for the next step: position (q_plan), effort (tau)",
    ),
    TF: ("tf2_msgs/msg/TFMessage", "each moving link in its parent link (the base in world)"),
    TF_STATIC: ("tf2_msgs/msg/TFMessage", "each link fixed to another (latched)"),
    ROBOT_DESCRIPTION: ("std_msgs/msg/String", "the URDF, meshes as file:// paths (latched)"),
    "/contacts/<frame>/wrench/planned": ("geometry_msgs/msg/WrenchStamped", "the QP's wrench, contact frame"),
    "/contacts/<frame>/wrench/measured": ("geometry_msgs/msg/WrenchStamped", "the plant's, contact frame"),
    MARKERS: ("visualization_msgs/msg/MarkerArray", "CoM, capture point (spheres), in world"),
    SUMMARY: ("std_msgs/msg/String", "the run's JSON summary, the verdict in it (latched, at the end)"),
}


def wrench_topic(frame: str, kind: str) -> str:
    """The topic of a contact frame's wrench, ``kind`` "planned" or "measured"."""
    return f"/contacts/{frame}/wrench/{kind}"


def _rosbags() -> Any:
    """The rosbags package's writer, reader and typestore, or one line naming the extra."""
    try:
        from rosbags.rosbag2 import Reader, StoragePlugin, Writer
        from rosbags.typesys import Stores, get_typestore
    except ImportError:
        raise UnsupportedProblemError(f"ROS 2 bags need rosbags: {INSTALL}") from None
    return Reader, Writer, StoragePlugin, get_typestore(Stores.ROS2_HUMBLE)


def _latched() -> list[Any]:
    """The QoS ros2 bag records a latched topic with: transient local, keep last 1."""
    from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime

    never = QosTime(0, 0)
    return [
        Qos(
            QosHistory.KEEP_LAST, 1, QosReliability.RELIABLE, QosDurability.TRANSIENT_LOCAL,
            never, never, QosLiveliness.AUTOMATIC, never, False,
        )
    ]  # fmt: skip


# ------------------------------------------------------------------------------- the tree
@dataclass(frozen=True)
class _Link:
    """A URDF link (a Pinocchio BODY frame), its parent link's frame (0: the world) and whether a
    joint that moves lies between them."""

    frame: int
    parent: int
    moves: bool


def link_tree(model: pin.Model) -> list[_Link]:
    """The robot's links in frame order, each with the nearest link above it in Pinocchio's frame
    tree (following ``parentFrame`` through joint and fixed-joint frames)."""
    links = []
    for index, frame in enumerate(model.frames):
        if index == 0 or frame.type != pin.FrameType.BODY:  # frame 0: the universe, the world itself
            continue
        parent, moves = frame.parentFrame, False
        while parent != 0 and model.frames[parent].type != pin.FrameType.BODY:
            moves = moves or model.frames[parent].type == pin.FrameType.JOINT
            parent = model.frames[parent].parentFrame
        links.append(_Link(index, parent, moves or parent == 0))
    return links


def robot_description(robot: SpecRobot) -> str:
    """The URDF with its ``package://`` meshes as ``file://`` paths of this machine (where
    Pinocchio found them): a viewer on this machine draws the robot from the bag alone."""
    spec = robot.spec
    text = (files_root(spec) / spec.urdf).read_text()
    start = 0
    while (start := text.find("package://", start)) >= 0:
        end = text.find('"', start)
        relative = text[start + len("package://") : end]
        found = next((Path(d) / relative for d in package_dirs(spec) if (Path(d) / relative).is_file()), None)
        replacement = f"file://{found.resolve()}" if found is not None else text[start:end]
        text = text[:start] + replacement + text[end:]
        start += len(replacement)
    return text


# ----------------------------------------------------------------------------- writing
def write_run_bag(result: Any, path: str | Path, rate: float | None = None) -> Path:
    """Write a scenario's run (its ``RunResult``: log, controller and summary) as a ROS 2 bag
    (:func:`write_bag`)."""
    return write_bag(path, result.log, result.controller, result.summary, rate)


def write_bag(
    path: str | Path,
    log: Any,
    controller: Any,
    summary: Mapping[str, object] | None = None,
    rate: float | None = None,
) -> Path:
    """Write a run as a ROS 2 bag: the log of a ``ControlLoop`` (``outcome.log``) or a scenario's.

    Args:
        path: The bag's folder, new (a file or folder there is an error; the CLI's ``--force``
            removes it first). Written beside it, then renamed: never half there.
        log: The run's :class:`~tsid_py.loop.log.RunLog` (what it recorded is what the bag holds:
            a scenario's log adds the CoM and the contact forces).
        controller: The controller that ran (its robot and contacts).
        summary: The run's summary (``outcome.summary()``), on ``/summary``; None: none.
        rate: Messages per simulated second [Hz] (None: every control step).

    Returns:
        The folder written.
    """
    Reader, Writer, StoragePlugin, store = _rosbags()
    path = Path(path)
    if path.exists():
        raise OutputError(f"{path} exists: a bag is written into a new folder (--force replaces it)")
    if not path.parent.is_dir():
        raise OutputError(f"{path}: the folder {path.parent} does not exist")
    summary = dict(summary or {})
    dt = float(summary.get("dt_s") or (log.t[1] - log.t[0] if len(log.t) > 1 else 0.0))  # type: ignore[arg-type]
    stride = 1 if rate is None or dt <= 0.0 else max(1, round(1.0 / (rate * dt)))
    total = log.steps
    log = log.sampled(stride)  # in memory, every stride-th step and the last
    robot: SpecRobot = controller.robot
    contacts = contacts_of(controller)
    frames = {name: contact.frame_name for name, contact in contacts.items()}
    steps = len(log.t) - (stride > 1 and (total - 1) % stride != 0)  # uniform: not the last
    if steps <= 0:
        raise InvalidParameterError("the run logged no step: there is nothing to record")
    staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        from rosbags.rosbag2 import CompressionFormat, CompressionMode  # (installed: _rosbags() said)

        writer = Writer(staging / path.name, version=9, storage_plugin=StoragePlugin.MCAP)
        writer.set_compression(CompressionMode.STORAGE, CompressionFormat.ZSTD)  # MCAP's zstd chunks
        with writer:
            _Recording(writer, store, robot, frames, contacts).write(log, summary, range(steps))
        (staging / path.name).rename(path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return path


class _Recording:
    """Writes the messages of a run into an open bag writer."""

    def __init__(
        self,
        writer: Any,
        store: Any,
        robot: SpecRobot,
        frames: Mapping[str, str],
        contacts: Mapping[str, ContactBase],
    ) -> None:
        self.writer, self.store, self.robot = writer, store, robot
        self.frames, self.contacts = frames, contacts
        self.types = store.types
        self.data = robot.create_data()
        model = robot.model
        self.links = link_tree(model)
        self.names = [model.frames[k].name for k in range(model.nframes)]
        self.joints = joint_names(robot)
        self.connections: dict[str, Any] = {}

    def connection(self, topic: str, latched: bool = False) -> Any:
        if topic not in self.connections:
            msgtype = next(t for key, (t, _) in TOPICS.items() if _matches(key, topic))
            qos = _latched() if latched else ()
            self.connections[topic] = self.writer.add_connection(
                topic, msgtype, typestore=self.store, offered_qos_profiles=qos
            )
        return self.connections[topic]

    def put(self, topic: str, stamp_ns: int, message: Any, latched: bool = False) -> None:
        connection = self.connection(topic, latched)
        self.writer.write(connection, stamp_ns, self.store.serialize_cdr(message, connection.msgtype))

    # ------------------------------------------------------------------ messages
    def header(self, stamp_ns: int, frame: str) -> Any:
        types = self.types
        stamp = types["builtin_interfaces/msg/Time"](sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9)
        return types["std_msgs/msg/Header"](stamp=stamp, frame_id=frame)

    def transform(self, stamp_ns: int, parent: str, child: str, placement: pin.SE3) -> Any:
        types = self.types
        x, y, z, w = pin.Quaternion(placement.rotation).coeffs()
        translation = types["geometry_msgs/msg/Vector3"](*(float(c) for c in placement.translation))
        rotation = types["geometry_msgs/msg/Quaternion"](x=float(x), y=float(y), z=float(z), w=float(w))
        return types["geometry_msgs/msg/TransformStamped"](
            header=self.header(stamp_ns, parent),
            child_frame_id=child,
            transform=types["geometry_msgs/msg/Transform"](translation=translation, rotation=rotation),
        )

    def joint_state(
        self, stamp_ns: int, position: np.ndarray, velocity: np.ndarray, effort: np.ndarray
    ) -> Any:
        return self.types["sensor_msgs/msg/JointState"](
            header=self.header(stamp_ns, ""),
            name=list(self.joints),
            position=np.asarray(position, dtype=float),
            velocity=np.asarray(velocity, dtype=float),
            effort=np.asarray(effort, dtype=float),
        )

    def wrench(self, stamp_ns: int, frame: str, value: np.ndarray) -> Any:
        types = self.types
        vector = types["geometry_msgs/msg/Vector3"]
        return types["geometry_msgs/msg/WrenchStamped"](
            header=self.header(stamp_ns, frame),
            wrench=types["geometry_msgs/msg/Wrench"](
                force=vector(*map(float, value[:3])), torque=vector(*map(float, value[3:6]))
            ),
        )

    def sphere(
        self, stamp_ns: int, ident: int, name: str, point: np.ndarray, rgb: tuple[float, float, float]
    ) -> Any:
        types = self.types
        marker = types["visualization_msgs/msg/Marker"]
        pose = types["geometry_msgs/msg/Pose"](
            position=types["geometry_msgs/msg/Point"](*map(float, point)),
            orientation=types["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0),
        )
        return marker(
            header=self.header(stamp_ns, WORLD), ns=name, id=ident, type=marker.SPHERE, action=marker.ADD,
            pose=pose, scale=types["geometry_msgs/msg/Vector3"](0.05, 0.05, 0.05),
            color=types["std_msgs/msg/ColorRGBA"](r=rgb[0], g=rgb[1], b=rgb[2], a=1.0),
            lifetime=types["builtin_interfaces/msg/Duration"](sec=0, nanosec=0), frame_locked=False,
            points=[], colors=[], texture_resource="", texture=types["sensor_msgs/msg/CompressedImage"](
                header=self.header(0, ""), format="", data=np.zeros(0, dtype=np.uint8)
            ), uv_coordinates=[], text="", mesh_resource="",
            mesh_file=types["visualization_msgs/msg/MeshFile"](filename="", data=np.zeros(0, dtype=np.uint8)),
            mesh_use_embedded_materials=False,
        )  # fmt: skip

    # ------------------------------------------------------------------ the run
    def write(self, log: Any, summary: Mapping[str, object], indices: Sequence[int]) -> None:
        robot, model, data = self.robot, self.robot.model, self.data
        first_q, first_v = robot.nq - robot.nq_actuated, robot.nv - robot.na
        start_ns = _ns(log.t[indices[0]])
        if getattr(robot, "spec", None) is not None:  # a robot of a spec: its URDF
            description = self.types["std_msgs/msg/String"](data=robot_description(robot))
            self.put(ROBOT_DESCRIPTION, start_ns, description, True)
        pin.framesForwardKinematics(model, data, np.asarray(log.q[indices[0]]))
        static = [self._link(start_ns, link) for link in self.links if not link.moves]
        self.put(TF_STATIC, start_ns, self.types["tf2_msgs/msg/TFMessage"](transforms=static), True)
        planned = getattr(log, "forces", {}) or {}
        measured = getattr(log, "wrenches", {}) or {}
        com, capture = getattr(log, "com", ()), getattr(log, "capture_point", ())
        for i in indices:
            stamp, q = _ns(log.t[i]), np.asarray(log.q[i])
            pin.framesForwardKinematics(model, data, q)
            moving = [self._link(stamp, link) for link in self.links if link.moves]
            self.put(TF, stamp, self.types["tf2_msgs/msg/TFMessage"](transforms=moving))
            tau = np.asarray(log.tau[i])
            self.put(
                JOINT_STATES, stamp, self.joint_state(stamp, q[first_q:], np.asarray(log.v[i])[first_v:], tau)
            )
            if len(getattr(log, "q_plan", ())) == len(log.t):
                plan = np.asarray(log.q_plan[i])[first_q:]
                self.put(JOINT_COMMANDS, stamp, self.joint_state(stamp, plan, np.zeros(0), tau))
            for name, series in planned.items():
                contact = self.contacts.get(name)
                if contact is not None and len(series) == len(log.t):
                    value = _full_wrench(contact, np.asarray(series[i]))
                    self.put(
                        wrench_topic(self.frames[name], "planned"),
                        stamp,
                        self.wrench(stamp, self.frames[name], value),
                    )
            for frame, series in measured.items():
                if len(series) == len(log.t):  # world axes at the frame's origin -> the frame's axes
                    rotation = data.oMf[model.getFrameId(frame)].rotation
                    w = np.asarray(series[i])
                    value = np.concatenate([rotation.T @ w[:3], rotation.T @ w[3:]])
                    self.put(wrench_topic(frame, "measured"), stamp, self.wrench(stamp, frame, value))
            markers = []
            if len(com) == len(log.t):
                markers.append(self.sphere(stamp, 0, "com", np.asarray(com[i]), (1.0, 0.5, 0.0)))
            if len(capture) == len(log.t):
                point = np.r_[np.asarray(capture[i])[:2], 0.0]
                markers.append(self.sphere(stamp, 1, "capture_point", point, (0.9, 0.1, 0.1)))
            if markers:
                self.put(MARKERS, stamp, self.types["visualization_msgs/msg/MarkerArray"](markers=markers))
        if not summary:
            return
        end = _ns(log.t[indices[-1]])
        text = json.dumps({k: None if isinstance(v, float) and v != v else v for k, v in summary.items()})
        self.put(SUMMARY, end, self.types["std_msgs/msg/String"](data=text), True)

    def _link(self, stamp: int, link: _Link) -> Any:
        data = self.data
        parent = pin.SE3.Identity() if link.parent == 0 else data.oMf[link.parent]
        parent_name = WORLD if link.parent == 0 else self.names[link.parent]
        return self.transform(stamp, parent_name, self.names[link.frame], parent.actInv(data.oMf[link.frame]))


def _full_wrench(contact: ContactBase, forces: np.ndarray) -> np.ndarray:
    """A contact's force variables as its 6-D wrench in its frame [N, N m] (a 3-D point force:
    no moment; a line contact's 5 components at its midpoint, as ``contact.wrench`` gives)."""
    wrench = np.asarray(contact.wrench(forces))
    return wrench if wrench.size == 6 else np.r_[wrench[:3], np.zeros(3)]


def _matches(pattern: str, topic: str) -> bool:
    if "<frame>" not in pattern:
        return pattern == topic
    head, tail = pattern.split("<frame>")
    return topic.startswith(head) and topic.endswith(tail)


def _ns(t: float) -> int:
    return int(round(t * 1e9))


def joint_names(robot: RobotWrapper) -> list[str]:
    """The actuated joints' names, one per actuated coordinate (revolute and prismatic joints)."""
    model = robot.model
    first = robot.nv - robot.na
    return [
        model.names[j]
        for j in range(1, model.njoints)
        if model.joints[j].idx_v >= first
        for _ in range(model.joints[j].nq)
    ]


# ----------------------------------------------------------------------------- reading
@dataclass(frozen=True)
class BagMotion:
    """A motion read from a bag, as ``tsid-py analyze`` takes it.

    Attributes:
        t: The times [s], uniform (T,).
        q: The configurations (T, nq): the base from ``/tf`` (world to the base link), the joints
            from the joint states.
        wrenches: Each contact frame's measured wrench, in its frame [N, N m] (T, 6), where the
            bag has them.
        effort: The joint states' efforts (T, na) [N m] (the torques sent), or None.
        topics: Every topic of the bag, with its message count.
    """

    t: np.ndarray
    q: np.ndarray
    wrenches: dict[str, np.ndarray]
    effort: np.ndarray | None
    topics: dict[str, int]

    @property
    def dt(self) -> float:
        """The sampling period [s]."""
        return float(self.t[1] - self.t[0])


def read_bag_motion(
    path: str | Path,
    robot: RobotWrapper,
    joint_states: str = JOINT_STATES,
    tf: str = TF,
    wrench_topics: Mapping[str, str] | None = None,
) -> BagMotion:
    """The motion of ``robot`` in the bag at ``path``.

    Args:
        path: The bag's folder (or its ``.mcap`` file's folder).
        robot: The robot: its actuated joints are found in the joint states by name.
        joint_states: The ``sensor_msgs/msg/JointState`` topic.
        tf: The ``tf2_msgs/msg/TFMessage`` topic with world -> the base link (a floating base).
        wrench_topics: Contact frame -> its ``geometry_msgs/msg/WrenchStamped`` topic (default:
            the measured wrenches ``--record`` writes, where the bag has them).

    Raises:
        InvalidParameterError: A topic or a joint missing, no message, times not uniform: one line
            naming it and the bag's topics.
    """
    Reader, _, _, store = _rosbags()
    path = Path(path)
    if path.suffix == ".mcap" and path.is_file():
        path = path.parent
    if not (path / "metadata.yaml").is_file():
        raise InvalidParameterError(f"{path} is not a ROS 2 bag folder (no metadata.yaml)")
    with Reader(path) as reader:
        topics = {name: info.msgcount for name, info in reader.topics.items()}
        have = ", ".join(sorted(topics)) or "none"
        if joint_states not in topics or not topics[joint_states]:
            raise InvalidParameterError(f"{path.name}: no messages on {joint_states} (its topics: {have})")
        floating = robot.nq != robot.nq_actuated
        if floating and tf not in topics:
            raise InvalidParameterError(f"{path.name}: no {tf} for the base's pose (its topics: {have})")
        if wrench_topics is None:
            wrench_topics = {
                t.split("/")[2]: t for t in topics if t.startswith("/contacts/") and t.endswith("/measured")
            }
        missing = [t for t in wrench_topics.values() if t not in topics]
        if missing:
            raise InvalidParameterError(f"{path.name}: no topic {missing[0]} (its topics: {have})")
        wanted = [c for c in reader.connections if c.topic in {joint_states, tf, *wrench_topics.values()}]
        states: list[tuple[int, Any]] = []
        bases: dict[int, pin.SE3] = {}
        wrenches: dict[str, dict[int, np.ndarray]] = {frame: {} for frame in wrench_topics}
        by_topic = {topic: frame for frame, topic in wrench_topics.items()}
        base = robot.model.frames[_base_link(robot)].name if floating else None
        for connection, _, raw in reader.messages(connections=wanted):
            message = store.deserialize_cdr(raw, connection.msgtype)
            if connection.topic == joint_states:
                states.append((_stamp(message.header), message))
            elif connection.topic == tf:
                for transform in message.transforms:
                    if transform.child_frame_id == base and transform.header.frame_id == WORLD:
                        bases[_stamp(transform.header)] = _se3(transform.transform)
            else:
                w = message.wrench
                value = [w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z]
                wrenches[by_topic[connection.topic]][_stamp(message.header)] = np.array(value)
    return _motion(path, robot, states, bases, wrenches, topics)


def _motion(
    path: Path,
    robot: RobotWrapper,
    states: list[tuple[int, Any]],
    bases: dict[int, pin.SE3],
    wrenches: dict[str, dict[int, np.ndarray]],
    topics: dict[str, int],
) -> BagMotion:
    names = joint_names(robot)
    first = states[0][1]
    index = {name: k for k, name in enumerate(first.name)}
    absent = [name for name in names if name not in index]
    if absent:
        raise InvalidParameterError(
            f"{path.name}: the joint states name no joint {absent[0]!r} of {robot.name} "
            f"(they name {', '.join(first.name[:5])}{', ...' if len(first.name) > 5 else ''})"
        )
    columns = [index[name] for name in names]
    stamps = np.array([stamp for stamp, _ in states])
    t = stamps * 1e-9
    steps = np.diff(t)
    if t.size < 2 or not np.allclose(steps, steps[0], rtol=1e-6, atol=1e-9):
        raise InvalidParameterError(f"{path.name}: the joint states must be at least two, uniformly spaced")
    q = np.zeros((t.size, robot.nq))
    base_size = robot.nq - robot.nq_actuated
    efforts = all(len(message.effort) == len(message.name) for _, message in states)
    effort = np.array([np.asarray(message.effort)[columns] for _, message in states]) if efforts else None
    for k, (stamp, message) in enumerate(states):
        q[k, base_size:] = np.asarray(message.position)[columns]
        if base_size:
            placement = bases.get(stamp)
            if placement is None:
                raise InvalidParameterError(f"{path.name}: no base pose in /tf at t = {stamp * 1e-9:.4f} s")
            q[k, :base_size] = pin.SE3ToXYZQUAT(placement)
    kept = {
        frame: np.array([series[s] for s in stamps])
        for frame, series in wrenches.items()
        if series.keys() >= set(stamps)
    }
    return BagMotion(t - t[0], q, kept, effort, topics)


def _base_link(robot: RobotWrapper) -> int:
    """The BODY frame the free flyer moves (the URDF's root link)."""
    return next(link.frame for link in link_tree(robot.model) if link.parent == 0)


def _stamp(header: Any) -> int:
    return int(header.stamp.sec) * 10**9 + int(header.stamp.nanosec)


def _se3(transform: Any) -> pin.SE3:
    r, p = transform.rotation, transform.translation
    return pin.SE3(pin.Quaternion(r.w, r.x, r.y, r.z).toRotationMatrix(), np.array([p.x, p.y, p.z]))
