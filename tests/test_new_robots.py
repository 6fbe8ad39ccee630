"""Your own robot: new-spec guesses a spec from a URDF, check-spec and the controllers refuse specs
that do not stand as their URDF says, unknown keys are refused at every level, and the shipped G1,
Go2 and Panda specs (written with new-spec) run their scenarios."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import tsid_py as tp
from tsid_py.new_spec import guess_spec
from tsid_py.robot_specs import SoleGeometry, SpecRobot, example_robot_data_dir, load_spec, specs_dir
from tsid_py.spec_check import check_robot

ROBOTS = example_robot_data_dir()
FILES = {  # URDF, SRDF of example-robot-data
    "talos": ("talos_data/robots/talos_reduced.urdf", "talos_data/srdf/talos.srdf"),
    "romeo": ("romeo_description/urdf/romeo.urdf", "romeo_description/srdf/romeo.srdf"),
    "solo12": ("solo_description/robots/solo12.urdf", "solo_description/srdf/solo.srdf"),
    "g1": ("g1_description/urdf/g1_29dof_rev_1_0.urdf", None),
    "go2": ("go2_description/urdf/go2.urdf", "go2_description/srdf/go2.srdf"),
    "panda": ("panda_description/urdf/panda.urdf", "panda_description/srdf/panda.srdf"),
}


def _guess(name: str):
    urdf, srdf = FILES[name]
    return guess_spec(ROBOTS / urdf, ROBOTS / srdf if srdf else None, name)


def _cli(*args: str) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "tsid_py.cli", *args], capture_output=True, text=True, timeout=600
    )
    return done.returncode, done.stdout, done.stderr


# ------------------------------------------------------------------ new-spec
def test_new_spec_finds_talos_soles_within_a_centimetre_of_the_shipped_ones():
    guess = _guess("talos")
    assert guess.floating_base and guess.reference_configuration == "half_sitting"
    assert guess.feet == {"right": "right_sole_link", "left": "left_sole_link"}
    shipped = tp.load_robot("talos").spec.sole
    for side in ("lxp", "lxn", "lyp", "lyn", "lz"):
        assert abs(getattr(guess.sole, side) - getattr(shipped, side)) < 0.01, side


@pytest.mark.slow
def test_new_spec_finds_romeo_soles_and_the_shipped_one_is_tsids_shorter_heel():
    """Romeo's shipped sole is TSID's (romeo_conf.py): 2.3 cm shorter at the heel and 1.7 cm at the
    toe than the URDF's foot, which new-spec finds; its width and depth agree within 1 cm."""
    guess = _guess("romeo")
    assert guess.feet == {"right": "r_sole", "left": "l_sole"}
    shipped = tp.load_robot("romeo").spec.sole  # in the ankle frame, 7 cm above r_sole
    assert abs(guess.sole.lyp - shipped.lyp) < 0.01 and abs(guess.sole.lyn - shipped.lyn) < 0.01
    assert abs((guess.sole.lz + 0.07) - shipped.lz) < 0.01
    assert guess.sole.lxn - shipped.lxn == pytest.approx(0.023, abs=0.002)
    assert guess.sole.lxp - shipped.lxp == pytest.approx(0.017, abs=0.002)
    warnings = [f.message for f in check_robot(tp.load_robot("romeo")) if f.severity == "warning"]
    assert any("lxn = 0.05 m is 2 cm short" in w for w in warnings)


@pytest.mark.parametrize(
    ("name", "radius"), [pytest.param("solo12", 0.0161, marks=pytest.mark.slow), ("go2", 0.0227)]
)
def test_new_spec_finds_point_feet_and_their_radius(name, radius):
    guess = _guess(name)
    assert guess.floating_base and guess.sole is None
    assert guess.point_foot_radius == pytest.approx(radius, abs=2e-4)
    assert set(guess.feet) == {"front_left", "front_right", "hind_left", "hind_right"}
    shipped = tp.load_robot(name).spec
    assert shipped.point_foot_radius == pytest.approx(radius, abs=1e-3)


@pytest.mark.slow
def test_new_spec_on_an_arm_and_on_a_robot_without_srdf():
    panda = _guess("panda")
    assert not panda.floating_base and panda.end_effector == "panda_hand_tcp" and not panda.feet
    g1 = _guess("g1")
    assert g1.feet == {"right": "right_ankle_roll_link", "left": "left_ankle_roll_link"}
    assert g1.reference_configuration is None and len(g1.initial_configuration) == 29
    assert g1.initial_configuration["left_knee_joint"] == 0.0  # exact: the neutral value, as written
    assert any("no SRDF state" in note for note in g1.notes)


@pytest.mark.slow
def test_new_spec_writes_a_spec_that_check_spec_accepts_and_that_stands(tmp_path):
    out = tmp_path / "my_g1.toml"
    code, _, err = _cli("new-spec", str(ROBOTS / FILES["g1"][0]), "--name", "my_g1", "--out", str(out))
    assert code == 0 and "guessed: floating base" in err and out.is_file()
    code, report, _ = _cli("check-spec", str(out))
    assert code == 0 and "error" not in report
    code, summary, _ = _cli("balance", "--robot", str(out), "--duration", "1", "--json")
    summary = json.loads(summary)
    assert code == 0 and summary["verdict"] == "recovered" and summary["com_error_max_m"] < 1e-4
    code, _, err = _cli("new-spec", str(ROBOTS / FILES["g1"][0]), "--out", str(out))
    assert code == 2 and "exists" in err and err.count("\n") == 1
    code, _, err = _cli("new-spec", str(tmp_path / "missing.urdf"))
    assert code == 2 and "file not found" in err


# ------------------------------------------------------------------ specs refused
def _bad_spec(tmp_path: Path, robot: str, edit) -> Path:
    text = (specs_dir() / f"{robot}.toml").read_text()
    path = tmp_path / f"bad_{robot}.toml"
    path.write_text(edit(text))
    return path


@pytest.mark.slow
def test_a_calf_named_as_a_foot_is_refused_at_start_up(tmp_path):
    spec = _bad_spec(
        tmp_path,
        "go2",
        lambda text: re.sub(r'"(\w\w)_foot"', r'"\1_calf"', text).replace("point_foot_radius = 0.0227", ""),
    )
    code, _, err = _cli("quadruped", "--robot", str(spec), "--duration", "0.1")
    assert code == 2 and err.count("\n") == 1
    found = re.search(r"collision geometry \w+ is (\d+) mm below the ground", err)
    assert found and int(found.group(1)) > 150, err  # the calf frames stand 19 cm above the feet


@pytest.mark.slow
def test_a_posture_outside_the_joint_limits_is_named_with_a_hint_when_it_looks_like_degrees(tmp_path):
    """A knee at 30 (degrees meant: the G1's knee bends within [-0.09, 2.88] rad) and one at 400:
    each an error naming the joint, its value and its limits; the first with the hint (30 deg =
    0.5236 rad is within them), the second without (400 deg = 6.98 rad is outside them too)."""
    spec = _bad_spec(
        tmp_path,
        "g1",
        lambda text: text.replace("left_knee_joint = 0.0000", "left_knee_joint = 30").replace(
            "right_knee_joint = 0.0000", "right_knee_joint = 400"
        ),
    )
    code, report, err = _cli("check-spec", str(spec))
    lines = [line for line in report.splitlines() if "the posture puts joint" in line]
    assert code == 2 and len(lines) == 2, report
    left, right = sorted(lines)
    assert (
        "left_knee_joint at 30, outside its limits [" in left and "as degrees it would be 0.5236 rad" in left
    )
    assert "right_knee_joint at 400" in right and "degrees" not in right


@pytest.mark.slow
def test_soles_tilted_by_the_starting_posture_are_refused_at_start_up(tmp_path):
    tilt = 0.2007  # [rad] 11.5 deg of ankle pitch
    spec = _bad_spec(
        tmp_path,
        "g1",
        lambda text: text.replace(
            "left_ankle_pitch_joint = 0.0000", f"left_ankle_pitch_joint = {tilt}"
        ).replace("right_ankle_pitch_joint = 0.0000", f"right_ankle_pitch_joint = {tilt}"),
    )
    code, _, err = _cli("balance", "--robot", str(spec), "--duration", "0.1")
    assert code == 2 and err.count("\n") == 1 and "is tilted 11.5 deg from the ground" in err, err
    code, report, _ = _cli("check-spec", str(spec))
    assert code == 2 and report.count("error:") >= 2  # both soles


@pytest.mark.slow
def test_a_typo_in_a_top_level_key_is_refused_with_a_suggestion(tmp_path):
    spec = _bad_spec(
        tmp_path, "ur5", lambda text: text.replace("initial_configuration", "initial_configuraton")
    )
    code, _, err = _cli("reach", "--robot", str(spec), "--duration", "0.1")
    assert code == 2 and err.count("\n") == 1
    assert "unknown top-level key 'initial_configuraton'; did you mean 'initial_configuration'" in err


@pytest.mark.parametrize(
    ("table", "key", "right"),
    [
        ("sole", "lx", "'lxp'"),
        ("gains", "postures", "'posture'"),
        ("servo", "kpp", "'kp'"),
        ("walk", "step", "'step_length'"),
    ],
)
def test_unknown_keys_are_refused_at_every_level(tmp_path, table, key, right):
    text = (specs_dir() / "talos.toml").read_text() + f"\n[{table}]\n{key} = 1.0\n"
    if f"[{table}]" in (specs_dir() / "talos.toml").read_text():  # the table exists: add the key to it
        text = (specs_dir() / "talos.toml").read_text().replace(f"[{table}]", f"[{table}]\n{key} = 1.0", 1)
    path = tmp_path / "typo.toml"
    path.write_text(text)
    with pytest.raises(
        tp.errors.RobotSpecError, match=rf"unknown key of \[{table}\] '{key}'; did you mean {right}"
    ):
        load_spec(str(path))


# ------------------------------------------------------------------ configurations by joint name
def test_a_configuration_table_by_joint_name(tmp_path, ur5):
    text = (
        (specs_dir() / "ur5.toml")
        .read_text()
        .replace(
            "initial_configuration = [0.0, -1.0, 0.7, 0.0, 0.0, 0.0]",
            "[initial_configuration]\nshoulder_lift_joint = -1.0\nelbow_joint = 0.7",
        )
    )
    text = text.replace("[gains]", "[gains]", 1)
    path = tmp_path / "ur5_table.toml"
    path.write_text(text)
    robot = SpecRobot(load_spec(str(path)))
    np.testing.assert_array_equal(
        robot.default_configuration(), ur5.default_configuration()
    )  # exact: as written
    with pytest.raises(tp.errors.RobotSpecError, match="unknown joint 'elbow'; did you mean 'elbow_joint'"):
        robot.configuration({"elbow": 0.3})
    with pytest.raises(tp.errors.RobotSpecError, match="takes 1 finite number"):
        robot.configuration({"elbow_joint": [0.3, 0.1]})
    with pytest.raises(tp.errors.RobotSpecError, match="has 4 numbers, nq = 6"):
        bad = tmp_path / "ur5_short.toml"
        bad.write_text(
            (specs_dir() / "ur5.toml").read_text().replace("[0.0, -1.0, 0.7, 0.0, 0.0, 0.0]", "[0, 0, 0, 0]")
        )
        SpecRobot(load_spec(str(bad)))


@pytest.mark.slow
def test_every_shipped_spec_stands_as_its_urdf_says():
    for name in tp.available_robots():
        errors = [f.message for f in check_robot(tp.load_robot(name)) if f.severity == "error"]
        assert errors == [], name


def test_visual_meshes_beside_the_spec_are_found():
    robot = tp.load_robot("planar_chain")  # its URDF is in robots/, beside its spec
    assert robot.load_visual_model().ngeoms >= 0


# ------------------------------------------------------------------ the new robots' scenarios
@pytest.mark.slow
def test_g1_balances_and_walks_on_the_integrator():
    from tsid_py.scenarios import balance, walk

    standing = balance.run(robot="g1", duration=1.0).summary
    assert standing["verdict"] == "recovered" and standing["com_error_max_m"] < 1e-4
    walking = walk.run(robot="g1", steps=4).summary
    assert walking["verdict"] == "recovered" and walking["lost_balance_at_s"] is None
    assert walking["footsteps_landed"] == 4 and walking["qp_failures"] == 0
    assert walking["touchdown_error_max_m"] < 2e-3


@pytest.mark.slow
def test_go2_and_panda_run_their_scenarios_on_the_integrator():
    from tsid_py.scenarios import quadruped, reach

    go2 = quadruped.run(robot="go2", duration=2.0).summary
    assert go2["qp_failures"] == 0 and go2["lost_balance_at_s"] is None and go2["com_error_max_m"] < 0.02
    panda = reach.run(robot="panda", duration=2.0).summary
    assert panda["qp_failures"] == 0 and panda["ee_error_final_m"] < 1e-3


def _mujoco():
    return pytest.importorskip("mujoco", reason="the [sim] extra (mujoco) is not installed")


@pytest.mark.slow
def test_the_new_robots_on_mujoco():
    """G1 stands 5 s and walks eight steps, Go2 stands on its own feet, Panda reaches, all on the
    URDF's own collision geometry."""
    _mujoco()
    from tsid_py.scenarios import balance, quadruped, reach, walk
    from tsid_py.scenarios.runner import LoopSetup

    g1 = balance.run(robot="g1", duration=5.0, plant="mujoco").summary
    assert g1["verdict"] == "recovered" and g1["com_drift_max_m"] < 2e-3 and g1["foot_drift_max_m"] < 2e-3
    steps = walk.run(robot="g1", steps=8, plant="mujoco").summary  # its step length from its sole
    assert (
        steps["verdict"] == "recovered"
        and steps["footsteps_landed"] == 8
        and steps["qp_failures"] == 0
        and steps["foot_drift_max_m"] < 5e-3
    )
    go2 = quadruped.run(robot="go2", amplitude=0.0, duration=5.0, setup=LoopSetup("mujoco")).summary
    # its feet are no spheres about their frames: standing on them moves the CoM 1.5 cm
    assert go2["verdict"] == "recovered" and go2["com_drift_max_m"] < 0.02 and go2["foot_drift_max_m"] < 5e-3
    panda = reach.run(robot="panda", duration=2.0, plant="mujoco").summary
    assert panda["qp_failures"] == 0 and panda["ee_error_final_m"] < 2e-3


def test_a_sole_as_the_spec_says_it():
    """The SoleGeometry of a spec: corners in the foot frame at its depth."""
    corners = SoleGeometry(0.1, 0.05, 0.06, 0.04, 0.02).corners()
    np.testing.assert_array_equal(corners[:, 0], [-0.05, -0.04, -0.02])  # exact: as given


@pytest.mark.slow
def test_a_50_kg_quadruped_from_its_urdf_stands_its_force_caps_its_own(tmp_path):
    """ANYmal C (52 kg) through new-spec, check-spec and the quadruped scenario in MuJoCo: its feet's
    cap is 2 m g (1023 N) from its own weight, not Solo's 100 N, and it stands, each foot carrying
    about a quarter of its weight (the 100 N cap let it fall in 0.5 s, the lightest foot at the cap)."""
    pytest.importorskip("mujoco", reason="the [sim] extra (mujoco) is not installed")
    from tsid_py.controllers import QuadrupedController

    spec = tmp_path / "anymal.toml"
    urdf = ROBOTS / "anymal_c_simple_description/urdf/anymal.urdf"
    assert _cli("new-spec", str(urdf), "--out", str(spec))[0] == 0
    assert _cli("check-spec", str(spec))[0] == 0
    robot = SpecRobot(load_spec(str(spec)))
    weight = robot.total_mass * 9.81
    assert QuadrupedController(robot).params.f_max == pytest.approx(2 * weight, rel=1e-12)
    code, out, err = _cli("quadruped", "--robot", str(spec), "--plant", "mujoco", "--duration", "2", "--json")
    summary = json.loads(out)
    assert code == 0 and not summary["fell"] and summary["qp_failures"] == 0, err
    assert 0.15 * weight < summary["min_normal_force_n"] < 0.35 * weight
    assert summary["com_error_max_m"] < 0.03


@pytest.mark.slow
def test_a_urdf_copied_out_of_its_package_finds_its_meshes_with_package_dir(tmp_path):
    """Go2's URDF alone in a folder: its package:// meshes are not found (one line naming the mesh
    and --package-dir, exit 2); with --package-dir, new-spec writes the folder into the spec
    (package_dirs, relative to the spec), and the spec loads its collision geometry from there."""
    import shutil

    urdf = tmp_path / "go2.urdf"
    shutil.copy(ROBOTS / FILES["go2"][0], urdf)
    code, _, err = _cli("new-spec", str(urdf), "--out", str(tmp_path / "go2.toml"))
    assert code == 2 and err.count("\n") == 1 and "not found" in err and "--package-dir" in err, err
    assert not (tmp_path / "go2.toml").exists()  # nothing half-written
    share = ROBOTS.parent.parent  # holds package example-robot-data
    code, _, err = _cli(
        "new-spec", str(urdf), "--out", str(tmp_path / "go2.toml"), "--package-dir", str(share)
    )
    assert code == 0, err
    spec = load_spec(str(tmp_path / "go2.toml"))
    assert len(spec.package_dirs) == 1 and not Path(spec.package_dirs[0]).is_absolute()
    assert SpecRobot(spec).load_collision_model().ngeoms > 0
    with pytest.raises(tp.errors.RobotSpecError, match="not a folder"):
        from tsid_py.new_spec import guess_spec

        guess_spec(urdf, package_dirs=(tmp_path / "nowhere",))


@pytest.mark.parametrize("name", ["talos", "solo12"])
def test_the_static_standing_forces_and_torques_hold_the_robot_still(name):
    """g(q) = S^T tau + J^T f at rest to 1e-8 (RNEA against the feet's wrenches through their
    Jacobians), the feet carrying the whole weight."""
    from tsid_py.spec_check import static_standing

    robot = tp.load_robot(name)
    q = robot.standing_configuration()
    forces, tau = static_standing(robot, q)
    model, data = robot.model, robot.create_data()
    zero = robot.zero_velocity()
    pin.computeJointJacobians(model, data, q)
    rows = forces.shape[1]
    applied = sum(
        pin.getFrameJacobian(model, data, robot.frame_id(f), pin.LOCAL_WORLD_ALIGNED)[:rows].T @ w
        for f, w in zip(robot.spec.feet.values(), forces, strict=True)
    )
    generalized = np.concatenate([np.zeros(6), tau]) + applied
    np.testing.assert_allclose(generalized, pin.rnea(model, data, q, zero, zero), atol=1e-8)
    assert forces[:, 2].sum() == pytest.approx(robot.total_mass * 9.81, rel=1e-9)


@pytest.mark.slow
def test_check_spec_says_when_the_robot_cannot_stand_still(tmp_path):
    """ANYmal C's feet capped at Solo's 100 N (each carries about 128 N standing), and Solo12's
    joints limited to 0.1 N m: errors naming the foot or joint, with the numbers; the shipped
    Talos gets a note with its margins."""
    urdf = ROBOTS / "anymal_c_simple_description/urdf/anymal.urdf"
    spec = tmp_path / "anymal.toml"
    assert _cli("new-spec", str(urdf), "--out", str(spec))[0] == 0
    spec.write_text(spec.read_text() + "\n[quadruped]\nf_max = 100.0\n")
    code, report, _ = _cli("check-spec", str(spec))
    assert code == 2 and report.count("outside [5.1, 100] N (f_min, f_max)") == 4, report  # f_min: 0.01 m g
    weak = _bad_spec(tmp_path, "solo12", lambda text: text.replace("tau_max = 2.7", "tau_max = 0.1"))
    code, report, _ = _cli("check-spec", str(weak))
    assert code == 2 and "above its limit 0.1 N m" in report, report
    code, report, _ = _cli("check-spec", "talos")
    assert code == 0 and "note: talos: stands still with its feet carrying 443 to 443 N of 1000 N" in report


def test_new_spec_takes_the_frames_the_urdf_names_soles_never_a_world_frame():
    """iCub fixes ``codyco_balancing_world`` to its left foot, nearer its lowest point than
    ``l_sole``: the feet are the soles the URDF names."""
    icub = ROBOTS / "icub_description"
    guess = guess_spec(icub / "robots/icub_reduced.urdf", icub / "srdf/icub.srdf", "icub")
    assert guess.feet == {"right": "r_sole", "left": "l_sole"}
