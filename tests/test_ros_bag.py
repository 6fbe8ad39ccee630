"""Runs as ROS 2 bags (tsid_py.ros_bag): written with the standard messages, read back, analysed.

The shipped example (demos/data/talos_pushed_balance: Talos on MuJoCo, pushed 80 N sideways at
0.1 s for 0.1 s, recorded at 250 Hz) gives back the torques that produced it from its motion and
its feet's measured wrenches.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pinocchio as pin
import pytest

import tsid_py as tsid
from tsid_py.analysis import joint_torques_from_wrenches, multi_contact_inverse_dynamics_over_time
from tsid_py.loop import Push
from tsid_py.ros_bag import (
    JOINT_STATES,
    ROBOT_DESCRIPTION,
    SUMMARY,
    TF,
    TF_STATIC,
    WORLD,
    joint_names,
    read_bag_motion,
    write_run_bag,
)
from tsid_py.scenarios import balance
from tsid_py.scenarios.runner import LoopSetup

rosbags = pytest.importorskip("rosbags", reason="ROS 2 bags need the [ros] extra (rosbags)")
from rosbags.rosbag2 import Reader  # noqa: E402
from rosbags.typesys import Stores, get_typestore  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "demos" / "data" / "talos_pushed_balance"
STORE = get_typestore(Stores.ROS2_HUMBLE)
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pushed(tmp_path_factory):
    """A pushed balance on MuJoCo (0.3 s), its bag at every control step."""
    setup = LoopSetup("mujoco", pushes=(Push.parse("0,80,0@0.1+0.1"),), extend=False)
    result = balance.run("talos", 0.3, setup=setup)
    path = write_run_bag(result, tmp_path_factory.mktemp("bags") / "pushed")
    return result, path


def messages(path: Path) -> list[tuple[str, int, object]]:
    with Reader(path) as reader:
        return [(c.topic, t, STORE.deserialize_cdr(raw, c.msgtype)) for c, t, raw in reader.messages()]


def test_every_message_deserializes_with_the_standard_definitions_and_counts_the_logged_steps(pushed):
    result, path = pushed
    read = messages(path)
    counts = Counter(topic for topic, _, _ in read)
    steps = len(result.log.t)
    feet = ["leg_left_sole_fix_joint", "leg_right_sole_fix_joint"]
    expected = {JOINT_STATES: steps, "/joint_commands": steps, TF: steps, "/markers": steps}
    expected |= {f"/contacts/{f}/wrench/{kind}": steps for f in feet for kind in ("planned", "measured")}
    expected |= {TF_STATIC: 1, ROBOT_DESCRIPTION: 1, SUMMARY: 1}
    assert dict(counts) == expected
    summary = json.loads(next(m for topic, _, m in read if topic == SUMMARY).data)
    assert summary["verdict"] == result.summary["verdict"] and summary["steps"] == steps
    with Reader(path) as reader:  # what ros2 bag info reads: the metadata, its latched topics
        qos = {c.topic: c.ext.offered_qos_profiles for c in reader.connections}
    assert qos[ROBOT_DESCRIPTION][0].durability.name == "TRANSIENT_LOCAL"


def test_joint_states_are_the_logged_state_and_tf_chains_give_pinocchios_placements(pushed):
    result, path = pushed
    robot = result.controller.robot
    read = messages(path)
    states = [m for topic, _, m in read if topic == JOINT_STATES]
    assert list(states[0].name) == joint_names(robot)
    for k in (0, len(states) // 2, len(states) - 1):
        np.testing.assert_array_equal(states[k].position, result.log.q[k][7:])  # exact: copied
        np.testing.assert_array_equal(states[k].effort, result.log.tau[k])  # exact: copied
    static = {
        t.child_frame_id: t for m in (m for topic, _, m in read if topic == TF_STATIC) for t in m.transforms
    }
    k = len(states) // 2
    moving = {t.child_frame_id: t for t in [m for topic, _, m in read if topic == TF][k].transforms}
    tree = static | moving

    def placement(frame: str) -> pin.SE3:
        transform = tree[frame]
        r, p = transform.transform.rotation, transform.transform.translation
        local = pin.SE3(pin.Quaternion(r.w, r.x, r.y, r.z).toRotationMatrix(), np.array([p.x, p.y, p.z]))
        parent = transform.header.frame_id
        return local if parent == WORLD else placement(parent) * local

    data = robot.create_data()
    pin.framesForwardKinematics(robot.model, data, result.log.q[k])
    for foot in robot.spec.feet.values():
        body = robot.model.frames[robot.model.frames[robot.frame_id(foot)].parentFrame].name
        link = body if body in tree else foot
        expected = data.oMf[robot.model.getFrameId(link)]
        assert (placement(link).inverse() * expected).isIdentity(1e-9), link


def test_the_urdf_in_the_bag_draws_from_meshes_that_exist(pushed):
    _, path = pushed
    text = next(m for topic, _, m in messages(path) if topic == ROBOT_DESCRIPTION).data
    meshes = re.findall(r'<mesh\s+filename="([^"]+)"', text)
    assert meshes and not [m for m in meshes if m.startswith("package://")]
    missing = [m for m in meshes if not Path(urlparse(m).path).is_file()]
    assert missing == []


def test_the_shipped_bag_gives_back_the_torques_that_produced_it():
    """Its feet's measured wrenches and its motion give the torques sent to 1 N m RMS (0.34
    measured; finite differences at 4 ms of MuJoCo's soft contacts); from the motion alone, the
    total contact force to 1 % of m g (the split between two feet down is not in the motion)."""
    robot = tsid.load_robot("talos")
    motion = read_bag_motion(EXAMPLE, robot)
    feet = list(robot.spec.feet.values())
    assert motion.q.shape == (100, robot.nq) and motion.dt == pytest.approx(0.004)
    measured = np.stack([motion.wrenches[f] for f in feet], axis=1)
    torques = joint_torques_from_wrenches(robot, motion.q, feet, measured, motion.dt)
    inner = slice(2, -2)
    rms = np.sqrt(np.mean((torques - motion.effort)[inner] ** 2))
    assert rms < 1.0, rms
    assert np.abs(motion.effort).max() > 50.0  # the legs work: the check is not of zeros
    analysis = multi_contact_inverse_dynamics_over_time(robot, motion.q, feet, motion.dt)
    total = analysis.contact_wrenches[:, :, 2].sum(axis=1) - measured[:, :, 2].sum(axis=1)
    assert np.abs(total[inner]).max() < 0.01 * robot.total_mass * 9.81


def test_analyze_reads_a_bag_and_compares_with_its_measured_wrenches():
    done = subprocess.run(
        [sys.executable, "-m", "tsid_py.cli", "analyze", str(EXAMPLE), "--robot", "talos", "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    info = json.loads(done.stdout.splitlines()[-1])
    assert info["frames"] == 100 and info["ft_vs_sent_torque_rms_nm"] < 1.0
    assert info["root_residual_max"] < 1e-9


def test_a_bag_without_what_is_asked_is_one_line_naming_what_it_has(tmp_path):
    robot = tsid.load_robot("talos")
    with pytest.raises(
        tsid.errors.InvalidParameterError, match=r"no messages on /joints .*its topics: .*/joint_states"
    ):
        read_bag_motion(EXAMPLE, robot, joint_states="/joints")
    with pytest.raises(tsid.errors.InvalidParameterError, match="name no joint .LHipYaw. of romeo"):
        read_bag_motion(EXAMPLE, tsid.load_robot("romeo"))
    with pytest.raises(tsid.errors.InvalidParameterError, match="not a ROS 2 bag"):
        read_bag_motion(tmp_path, robot)
    done = subprocess.run(
        [sys.executable, "-m", "tsid_py.cli", "analyze", str(EXAMPLE), "--wrench-topic", "x=/nothing"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "no topic /nothing" in done.stderr


def test_record_refuses_an_existing_folder_without_force(tmp_path):
    (tmp_path / "bag").mkdir()
    command = [
        sys.executable,
        "-m",
        "tsid_py.cli",
        "balance",
        "--duration",
        "0.02",
        "--record",
        str(tmp_path / "bag"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and "exists" in done.stderr
    done = subprocess.run(
        [*command, "--force", "--json"], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert (tmp_path / "bag" / "metadata.yaml").is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["bag"]  # nothing left beside it


def test_another_mcap_reader_finds_every_channel_sound(pushed):
    """rerun's MCAP importer (Rust, another implementation than rosbags') checks each channel."""
    pytest.importorskip("rerun", reason="the independent MCAP check uses rerun's CLI (the [rerun] extra)")
    _, path = pushed
    done = subprocess.run(
        [sys.executable, "-m", "rerun", "mcap", "check", str(path / f"{path.name}.mcap")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    rows = [
        line.split() for line in done.stdout.splitlines() if line.split()[:1] in (["ok"], ["error"], ["warn"])
    ]
    assert len(rows) == 11 and all(row[0] == "ok" for row in rows), done.stdout  # the 11 topics


def test_ones_own_loop_writes_its_bag_and_reads_it_back(tmp_path):
    """A ControlLoop's outcome (no scenario around it) records through write_bag; read back, its
    motion is the loop's q."""
    from tsid_py.controllers import BipedController
    from tsid_py.loop import ControlLoop
    from tsid_py.loop.mujoco_plant import MujocoPlant
    from tsid_py.ros_bag import write_bag

    pytest.importorskip("mujoco", reason="the [sim] extra (mujoco) is not installed")
    robot = tsid.load_robot("talos")
    biped = BipedController(robot)
    outcome = ControlLoop(biped, 0.002, MujocoPlant(robot)).run(60)
    path = write_bag(tmp_path / "own", outcome.log, biped, outcome.summary())
    motion = read_bag_motion(path, robot)
    np.testing.assert_allclose(motion.q, np.array(outcome.log.q), atol=1e-9)  # tf's float round trip
    assert Counter(topic for topic, _, _ in messages(path))[SUMMARY] == 1
