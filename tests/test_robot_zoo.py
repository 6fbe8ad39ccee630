"""Every robot of example-robot-data through new-spec, check-spec and a scenario (the zoo, whose
table is in docs/guides/adding-a-robot.md), and the spec tools' guesses on small URDFs written to
catch them going wrong: a biped with toes, a bent knee, tilted soles, robots that cannot stand."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from toy_urdfs import ANKLE_TO_SOLE, write_biped

import tsid_py as tp
from tsid_py.errors import RobotSpecError
from tsid_py.new_spec import guess_spec
from tsid_py.robot_specs import SpecRobot, example_robot_data_dir, load_spec, max_normal_force
from tsid_py.sole_leveling import level_soles, sole_tilt
from tsid_py.spec_check import FRAME_TOLERANCE, check_robot

ROBOTS = example_robot_data_dir()
GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guides" / "adding-a-robot.md"


def _cli(*args: str) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "tsid_py.cli", *args], capture_output=True, text=True, timeout=600
    )
    return done.returncode, done.stdout, done.stderr


def _spec(tmp_path: Path, urdf: Path, posture: dict[str, float] | None = None, **keys: str) -> Path:
    """A spec for a URDF written beside it, from new-spec, with joints of its posture changed."""
    guess = guess_spec(urdf, None, urdf.stem, tmp_path)
    guess.initial_configuration.update(posture or {})
    text = guess.toml()
    for key, value in keys.items():
        text = re.sub(rf"^{key} = .*$", f"{key} = {value}", text, flags=re.M)
    path = tmp_path / f"{urdf.stem}.toml"
    path.write_text(text)
    return path


def _errors(spec: Path) -> list[str]:
    return [f.message for f in check_robot(SpecRobot(load_spec(spec))) if f.severity == "error"]


# ------------------------------------------------------------------ guesses on small URDFs
def test_the_feet_are_the_leaf_links_a_foot_with_toes_is_not_one(tmp_path):
    """With toes, the feet's links have children: the lowest leaves are the toes, two feet (taking
    the foot links too would make four, keyed as a quadruped's)."""
    plain = guess_spec(write_biped(tmp_path), None, "toy", tmp_path)
    assert plain.feet == {"right": "right_sole", "left": "left_sole"}
    assert plain.sole.lz == pytest.approx(0.0, abs=1e-9) and plain.sole.lxp == pytest.approx(0.1)
    toes = guess_spec(write_biped(tmp_path, toes=True), None, "toy", tmp_path)
    assert toes.feet == {"right": "right_toe", "left": "left_toe"}
    assert any("(left_toe_joint, right_toe_joint)" in note for note in toes.notes)


def test_a_bent_knee_lifts_its_foot_off_the_ground_and_check_spec_says_how_far(tmp_path):
    """One knee bent 0.3 rad (hip and ankle as they were): the shin and foot turn about the knee, so
    that sole's frame stands (0.4 + 0.065) (1 - cos 0.3) = 20.8 mm above the other's, beyond
    FRAME_TOLERANCE; the straight legs pass."""
    urdf = write_biped(tmp_path)
    assert _errors(_spec(tmp_path, urdf)) == []
    bent = _errors(_spec(tmp_path, urdf, {"right_knee": 0.3}))
    lifted = [e for e in bent if "above the ground" in e]
    assert len(lifted) == 1 and "right_sole" in lifted[0], bent
    height = float(re.search(r"is (\d+) mm above", lifted[0]).group(1)) / 1000
    assert height == pytest.approx((0.4 + ANKLE_TO_SOLE) * (1 - math.cos(0.3)), abs=1e-3)
    assert height > FRAME_TOLERANCE


def test_tilted_soles_are_refused_with_the_ankle_angles_that_level_them(tmp_path):
    """Both hips pitched 0.1 rad tilt both soles 0.1 rad (5.7 deg): check-spec refuses each with
    the ankle pitch that levels it, -0.1 (solved, to 1e-10), the roll 0; new-spec --flatten
    writes those angles and the spec passes."""
    urdf = write_biped(tmp_path)
    spec = _spec(tmp_path, urdf, {"right_hip_pitch": 0.1, "left_hip_pitch": 0.1})
    errors = [e for e in _errors(spec) if "tilted" in e]
    assert len(errors) == 2 and all("5.7 deg" in e for e in errors), errors
    assert "the ankle at right_ankle_pitch = -0.1000 rad levels it" in errors[0]  # the roll is right
    robot = SpecRobot(load_spec(spec))
    q = robot.default_configuration()
    feet = [robot.frame_id(frame) for frame in robot.spec.feet.values()]
    angles = level_soles(robot.model, q, feet)
    assert angles["left_ankle_pitch"] == pytest.approx(-0.1, abs=1e-10)
    for name, value in angles.items():
        q[robot.model.joints[robot.model.getJointId(name)].idx_q] = value
    data = robot.create_data()
    pin.framesForwardKinematics(robot.model, data, q)
    assert max(sole_tilt(robot.model, data, f) for f in feet) < 1e-9


@pytest.mark.slow
def test_new_spec_flatten_levels_the_soles_of_a_tilting_posture(tmp_path):
    """The toy's SRDF-less posture with its hips pitched: --flatten solves the ankles and the
    spec it writes passes check-spec; the sole found is the foot's, whatever the tilt."""
    urdf = write_biped(tmp_path)
    srdf = tmp_path / "toy.srdf"
    srdf.write_text(
        '<robot name="toy_biped"><group_state name="standing" group="all">'
        '<joint name="right_hip_pitch" value="0.1"/><joint name="left_hip_pitch" value="0.1"/>'
        "</group_state></robot>"
    )
    out = tmp_path / "flat.toml"
    code, _, err = _cli("new-spec", str(urdf), "--srdf", str(srdf), "--flatten", "--out", str(out))
    assert code == 0, err
    assert "--flatten: the soles levelled by the ankles: right_ankle_pitch 0.0000 -> -0.1000" in err
    spec = load_spec(str(out))
    assert spec.reference_configuration == "standing"
    assert spec.initial_configuration["right_ankle_pitch"] == pytest.approx(-0.1, abs=1e-4)
    assert spec.sole.lxp == pytest.approx(0.1) and spec.sole.lz == pytest.approx(0.0, abs=1e-9)
    assert _errors(out) == []
    code, _, err = _cli("new-spec", str(urdf), "--srdf", str(srdf), "--out", str(tmp_path / "tilted.toml"))
    assert code == 0 and "tilted 5.7 deg (more than 3 deg: --flatten levels it" in err


def test_a_posture_no_ankle_can_level_is_said_so(tmp_path):
    """An ankle at its stop: levelling needs it past its limit, and the line says which."""
    urdf = write_biped(tmp_path)
    robot = SpecRobot(load_spec(_spec(tmp_path, urdf, {"right_hip_pitch": 1.0, "right_knee": 1.9})))
    with pytest.raises(RobotSpecError, match="needs joint right_ankle_pitch at -2.9000 rad, outside"):
        level_soles(robot.model, robot.default_configuration(), [robot.frame_id("right_sole")])


# ------------------------------------------------------------------ robots that cannot stand
@pytest.mark.slow
def test_a_biped_on_point_feet_and_a_robot_on_wheels_are_refused_with_their_reason(tmp_path):
    bolt = guess_spec(ROBOTS / "bolt_description/robots/bolt.urdf", None, "bolt", tmp_path)
    (tmp_path / "bolt.toml").write_text(bolt.toml())
    assert any(
        "two point feet (FR_FOOT, FL_FOOT) give no area to stand on" in e
        for e in _errors(tmp_path / "bolt.toml")
    )
    tiago = guess_spec(ROBOTS / "tiago_pro_description/robots/tiago_pro.urdf", None, "tiago_pro", tmp_path)
    (tmp_path / "tiago_pro.toml").write_text(tiago.toml())
    wheels = [e for e in _errors(tmp_path / "tiago_pro.toml") if "is on a wheel" in e]
    assert len(wheels) == 4 and "turns without limit" in wheels[0]


def test_an_arm_that_cannot_hold_its_posture_is_refused_naming_the_joint(tmp_path):
    """PR2's URDF gives its shoulder 30 N m, less than gravity needs in its SRDF posture (the real
    robot has a counterbalance spring): refused, the joint and both torques named."""
    pr2 = guess_spec(
        ROBOTS / "pr2_description/urdf/pr2.urdf", ROBOTS / "pr2_description/srdf/pr2.srdf", "pr2", tmp_path
    )
    assert not pr2.floating_base
    (tmp_path / "pr2.toml").write_text(pr2.toml())
    errors = _errors(tmp_path / "pr2.toml")
    assert errors == [
        "pr2: holding its posture, joint r_shoulder_lift_joint needs 52.1 N m, above its limit 30.0 N m"
    ]


@pytest.mark.slow
def test_a_robot_whose_mass_doubled_gets_caps_that_hold_it_or_a_named_limit(tmp_path):
    """Go2 with every link's mass and inertia times 2: its feet's caps double with it (2 m g) and
    check-spec passes (its joints at a third of their limits); times 8, its joints cannot hold it
    and check-spec names them."""
    text = (ROBOTS / "go2_description/urdf/go2.urdf").read_text()

    def scaled(factor: float) -> Path:
        def times(match: re.Match) -> str:
            return f'{match.group(1)}="{float(match.group(2)) * factor!r}"'

        heavier = re.sub(r'\b(value|ixx|iyy|izz|ixy|ixz|iyz)="([-0-9.eE+]+)"', times, text)
        path = tmp_path / f"go2_x{factor:g}.urdf"
        path.write_text(heavier)
        guess = guess_spec(
            path, ROBOTS / "go2_description/srdf/go2.srdf", path.stem, tmp_path, (ROBOTS.parent.parent,)
        )
        spec = tmp_path / f"{path.stem}.toml"
        spec.write_text(guess.toml())
        return spec

    double = SpecRobot(load_spec(scaled(2.0)))
    assert double.total_mass == pytest.approx(2 * tp.load_robot("go2").total_mass, rel=1e-9)
    notes = [f.message for f in check_robot(double) if f.severity != "warning"]
    cap = max_normal_force(double.total_mass)  # 2 m g, 631 N
    assert len(notes) == 1 and "stands still" in notes[0] and f"of {cap:.0f} N (f_max)" in notes[0], notes
    errors = _errors(scaled(8.0))
    assert errors and all(re.search(r"joint \w+ needs [0-9.]+ N m, above its limit", e) for e in errors), (
        errors
    )


@pytest.mark.slow
def test_robots_without_moving_joints_or_geometry_are_refused_by_new_spec(tmp_path):
    with pytest.raises(RobotSpecError, match="no joints that move"):
        guess_spec(ROBOTS / "iris_description/robots/iris_simple.urdf", None, "iris", tmp_path)
    with pytest.raises(RobotSpecError, match="no collision or visual geometry"):
        guess_spec(
            ROBOTS / "simple_humanoid_description/urdf/simple_humanoid_classical.urdf", None, "s", tmp_path
        )
    alexander = guess_spec(
        ROBOTS / "alexander_description/urdf/alexander_v1.lowerBodyOnly.urdf", None, "alexander", tmp_path
    )
    assert alexander.sole is not None and any("visual geometry stands in" in n for n in alexander.notes)


@pytest.mark.slow
def test_a_world_frame_as_a_foot_is_refused_in_one_line_naming_the_foots_own(tmp_path):
    """iCub fixes codyco_balancing_world to its left sole, where it stands as well as l_sole
    does: given as a foot, the controllers and check-spec refuse it (exit 2, one line) and name
    the frame the URDF gives that foot; "universe" is refused too."""
    urdf = ROBOTS / "icub_description/robots/icub_reduced.urdf"
    guess = guess_spec(urdf, ROBOTS / "icub_description/srdf/icub.srdf", "icub", tmp_path, flatten=True)
    assert guess.feet == {"right": "r_sole", "left": "l_sole"}
    for frame in ("codyco_balancing_world", "universe"):
        spec = tmp_path / f"icub_{frame}.toml"
        spec.write_text(guess.toml().replace('left = "l_sole"', f'left = "{frame}"'))
        code, _, err = _cli("balance", "--robot", str(spec), "--duration", "0.1")
        (error,) = [line for line in err.splitlines() if "error:" in line]  # warnings aside
        assert code == 2 and f"foot frame {frame} is a world frame" in error, err
    assert (
        "give the foot's own frame, e.g. l_sole" in _errors(tmp_path / "icub_codyco_balancing_world.toml")[0]
    )


# ------------------------------------------------------------------ what the zoo found and fixed
def test_joint_names_that_toml_needs_quoted_and_frames_named_twice(tmp_path):
    """Allegro's joints are named joint_0.0 ...: the spec quotes them and reads them back; SO-100
    names a link and a joint "gripper": the link's frame is meant."""
    hand = guess_spec(
        ROBOTS / "allegro_hand_description/urdf/allegro_left_hand.urdf", None, "allegro", tmp_path
    )
    (tmp_path / "allegro.toml").write_text(hand.toml())
    assert '"joint_0.0" = 0.0000' in hand.toml()
    assert "joint_0.0" in load_spec(tmp_path / "allegro.toml").initial_configuration
    so100 = tp.RobotWrapper.from_urdf(str(ROBOTS / "so_arm_description/urdf/so100.urdf"), floating_base=False)
    frame = so100.model.frames[so100.frame_id("gripper")]
    assert frame.type == pin.FrameType.BODY


def test_the_actuated_joints_names_follow_their_velocities():
    """Pinocchio's joint 0 (the universe) reports one velocity: names taken from every joint of one
    velocity were one place off (Talos's check-spec note named arm_left_3 for arm_left_4)."""
    talos = tp.load_robot("talos")
    names = talos.actuated_joint_names()
    assert len(names) == talos.na and names[0] == "leg_left_1_joint"
    k = names.index("arm_left_4_joint")
    assert talos.model.joints[talos.model.getJointId("arm_left_4_joint")].idx_v == talos.nv - talos.na + k


@pytest.mark.slow
def test_an_srdf_angle_a_whole_turn_away_from_the_limits_is_brought_within(tmp_path):
    """Kinova's SRDF puts joint 3 at -pi/2, its URDF limits it to [0.33, 5.95]: new-spec writes
    3 pi/2 (the same angle), check-spec passes it; the SRDF's own value is refused with the hint."""
    urdf, srdf = (
        ROBOTS / "kinova_description/robots/kinova.urdf",
        ROBOTS / "kinova_description/srdf/kinova.srdf",
    )
    guess = guess_spec(urdf, srdf, "kinova", tmp_path)
    assert guess.initial_configuration == {"j2s6s200_joint_3": pytest.approx(1.5 * math.pi, abs=1e-3)}
    (tmp_path / "kinova.toml").write_text(guess.toml())
    assert _errors(tmp_path / "kinova.toml") == []
    (tmp_path / "raw.toml").write_text(guess.toml().split("[initial_configuration]")[0])
    (error,) = _errors(tmp_path / "raw.toml")
    assert "whole turns away, 4.7125 rad is the same angle within them" in error


def test_new_spec_puts_a_neutral_posture_within_the_joint_limits(tmp_path):
    """Laikago has no SRDF and its calves' neutral 0 is past their stop: they go 10 % of their
    range inside, and the spec passes check-spec."""
    guess = guess_spec(ROBOTS / "laikago_description/urdf/laikago.urdf", None, "laikago", tmp_path)
    calves = {k: v for k, v in guess.initial_configuration.items() if "calf" in k}
    low, high = -2.775073510670984, -0.6108652381980153
    assert calves and all(v == pytest.approx(high - 0.1 * (high - low), abs=1e-4) for v in calves.values())
    (tmp_path / "laikago.toml").write_text(guess.toml())
    assert _errors(tmp_path / "laikago.toml") == []


def test_a_missing_urdf_limit_is_no_limit():
    """A URDF joint without effort or velocity limits reads as 0 in Pinocchio: none, inf, for the
    controllers' bounds and the plants' motors alike (the double pendulum did not move)."""
    robot = tp.RobotWrapper.from_urdf(
        str(ROBOTS / "double_pendulum_description/urdf/double_pendulum_simple.urdf"), floating_base=False
    )
    assert np.all(robot.model.effortLimit == 0.0)  # exact: the value Pinocchio reads for no limit
    assert np.all(np.isinf(robot.effort_limit())) and np.all(np.isinf(robot.velocity_limit()))


@pytest.mark.slow
def test_every_command_takes_log_level(tmp_path):
    code, _, err = _cli("new-spec", str(tmp_path / "missing.urdf"), "--log-level", "debug")
    assert code == 2 and "file not found" in err


# ------------------------------------------------------------------ the zoo
def _guide_rows() -> dict[str, tuple[str, str]]:
    """The zoo's table in the guide: robot -> (kind, outcome)."""
    rows = {}
    for line in GUIDE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = (cells[1], cells[4])
    return rows


def test_the_zoo_lists_every_urdf_of_example_robot_data():
    from tsid_py.zoo import ZOO

    shipped = sorted(str(p.relative_to(ROBOTS)) for p in ROBOTS.glob("*/*/*.urdf"))
    assert sorted(entry.urdf for entry in ZOO) == shipped
    assert all((ROBOTS / entry.srdf).is_file() for entry in ZOO if entry.srdf)
    assert set(_guide_rows()) == {entry.name for entry in ZOO}


@pytest.mark.slow
def test_the_zoo_stands_and_reaches_as_the_guide_says():
    """Every URDF through new-spec --flatten, check-spec and its scenario in MuJoCo (two processes):
    each outcome as the guide's table says; a robot that stands held its CoM within 2 cm, one that
    reaches ended within 1 mm; every refusal gives its reason in one line."""
    pytest.importorskip("mujoco", reason="the [sim] extra (mujoco) is not installed")
    from tsid_py.zoo import COM_TOLERANCE, EE_TOLERANCE, run_zoo, share

    outcomes = run_zoo(jobs=2)
    assert {o.name: (o.kind, o.outcome) for o in outcomes} == _guide_rows()
    for o in outcomes:
        if o.outcome == "stands":
            assert float(re.search(r"within ([0-9.]+) mm", o.detail).group(1)) / 1000 < COM_TOLERANCE
        elif o.outcome == "reaches":
            assert float(re.search(r"effector ([0-9.]+) mm", o.detail).group(1)) / 1000 <= EE_TOLERANCE
        else:
            assert o.reason and "\n" not in o.reason and "internal error" not in o.reason, o
    good, counted = share(outcomes)
    assert counted == 49 and good >= 43


# ------------------------------------------------------------------ the review's
def test_continuous_joints_between_pinocchio_and_mujoco(tmp_path):
    """A continuous joint is (cos, sin) in Pinocchio and an angle in MuJoCo: there and back at
    2.5 and -3 rad, and a servo's error the short way round (3 rad wanted at -3: 2 pi - 6)."""
    from tsid_py.loop.mujoco_model import actuated_joints
    from tsid_py.loop.mujoco_plant import JointAngles

    urdf = ROBOTS / "double_pendulum_description/urdf/double_pendulum_continuous.urdf"
    (tmp_path / "p.toml").write_text(guess_spec(urdf, None, "p", tmp_path).toml())
    robot = SpecRobot(load_spec(tmp_path / "p.toml"))
    assert robot.nq_actuated == 4 and robot.na == 2
    joints = JointAngles(robot, actuated_joints(robot))
    q = np.array([math.cos(2.5), math.sin(2.5), math.cos(-3.0), math.sin(-3.0)])
    np.testing.assert_allclose(joints.angles(q), [2.5, -3.0], atol=1e-12)
    np.testing.assert_allclose(joints.configuration(np.array([2.5, -3.0])), q, atol=1e-12)
    np.testing.assert_allclose(
        joints.difference(np.array([0.0, 3.0]), np.array([0.0, -3.0])), [0, 6 - 2 * math.pi]
    )


def test_an_arm_hanging_below_its_base_gets_its_floor_under_it(tmp_path):
    """Talos's left arm alone hangs from its shoulder at the origin: the MuJoCo plant's floor goes
    FLOOR_CLEARANCE under its lowest point, not through it; a standing robot's stays at z = 0."""
    from tsid_py.collision_points import CollisionPoints
    from tsid_py.loop.mujoco_model import FLOOR_CLEARANCE, floor_height

    urdf = ROBOTS / "talos_data/robots/talos_left_arm.urdf"
    (tmp_path / "arm.toml").write_text(guess_spec(urdf, None, "arm", tmp_path).toml())
    arm = SpecRobot(load_spec(tmp_path / "arm.toml"))
    shapes = CollisionPoints(arm)
    shapes.place(arm.default_configuration())
    lowest, _ = shapes.lowest(set(range(1, arm.model.njoints)))
    assert lowest < -0.5 and floor_height(arm) == pytest.approx(lowest - FLOOR_CLEARANCE, abs=1e-12)
    assert floor_height(tp.load_robot("talos")) == 0.0  # exact: a floating base stands on z = 0


@pytest.mark.slow
def test_bad_srdf_and_scaling_are_one_line_errors(tmp_path):
    """An SRDF Pinocchio cannot read, and an effort_scaling of 0 (0 x a missing limit, inf, is NaN):
    each refused in one line naming the file or the key."""
    urdf = write_biped(tmp_path)
    bad = tmp_path / "bad.srdf"
    bad.write_text("<robot name='toy'><group_state")
    code, _, err = _cli("new-spec", str(urdf), "--srdf", str(bad))
    assert code == 2 and err.count("\n") == 1 and "bad.srdf: not an SRDF Pinocchio reads" in err, err
    spec = _spec(tmp_path, urdf)
    spec.write_text(
        spec.read_text().replace("floating_base = true", "floating_base = true\neffort_scaling = 0")
    )
    with pytest.raises(RobotSpecError, match="effort_scaling must be a number above 0, got 0"):
        load_spec(spec)


def test_a_bug_on_one_robot_does_not_stop_the_zoo(monkeypatch):
    from tsid_py import zoo

    def broken(entry, folder):
        raise RuntimeError("a bug")

    monkeypatch.setattr(zoo, "_run_robot", broken)
    (outcome,) = zoo.run_zoo(zoo.ZOO[:1])
    assert outcome.outcome == "failed" and outcome.reason == "internal error: RuntimeError: a bug"
