"""Walking anywhere: the terrain's ground, footholds on its surfaces, swings that clear its edges,
a CoM that follows it, and Talos and G1 across stairs, a slope and stepping stones in MuJoCo."""

from __future__ import annotations

import math
import re

import numpy as np
import pinocchio as pin
import pytest

import tsid_py as tp
from tsid_py.controllers.biped import BipedController
from tsid_py.errors import InvalidParameterError, MissingFileError
from tsid_py.planning.lipm import plan_com_from_zmp
from tsid_py.planning.support import sole_center, sole_corners
from tsid_py.planning.swing_foot import TrajectorySE3SwingFoot
from tsid_py.planning.terrain import Block, Terrain, load_terrain, slope, stairs, stones
from tsid_py.planning.terrain_walk import CLEARANCE, EDGE_MARGIN, TerrainComPlan, plan_walk_on


def test_the_ground_of_stairs_a_slope_and_stones():
    steps = stairs()  # 4 x 10 cm, 35 cm treads from x = 0.5, a 0.6 m landing
    assert steps.height(0.4, 0.0) == 0.0  # exact: the floor
    assert steps.height(0.6, 0.0) == pytest.approx(0.1)
    assert steps.height(2.0, 0.0) == pytest.approx(0.4) and steps.height(3.3, 0.0) == pytest.approx(0.1)
    ramp = slope(angle=10.0, length=1.0, start=0.5)
    assert ramp.height(1.0, 0.0) == pytest.approx(0.5 * math.tan(math.radians(10.0)), abs=1e-12)
    np.testing.assert_allclose(
        ramp.normal(1.0, 0.0), [-math.sin(math.radians(10)), 0, math.cos(math.radians(10))]
    )
    np.testing.assert_allclose(
        ramp.normal(2.6, 0.0), [math.sin(math.radians(10)), 0, math.cos(math.radians(10))]
    )
    gaps = stones(gap=0.1, length=0.3, start=0.5)
    assert gaps.height(0.75, 0.0) == pytest.approx(0.1) and gaps.height(0.95, 0.0) == pytest.approx(0.1)
    assert gaps.height(0.85, 0.0) == 0.0  # exact: a gap between two stones shows the floor
    points = np.array([[x, 0.0] for x in np.linspace(0.0, 3.5, 71)])
    one_by_one = [ramp.height(x, y) for x, y in points]
    np.testing.assert_array_equal(ramp.heights(points), one_by_one)  # exact: the same computation


def test_a_terrain_file_round_trips_and_bad_ones_are_refused(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(slope().toml())
    mine = load_terrain(path)
    assert len(mine.blocks) == 3 and mine.name == "mine"
    points = np.array([[x, 0.1] for x in np.linspace(0.0, 3.0, 31)])
    np.testing.assert_allclose(mine.heights(points), slope().heights(points), atol=1e-4)
    with pytest.raises(MissingFileError, match="neither a built-in one"):
        load_terrain(tmp_path / "nowhere.toml")
    path.write_text("[[block]]\ncenter = [0, 0, 0]\n")
    with pytest.raises(InvalidParameterError, match="block 1 needs center and size"):
        load_terrain(path)
    with pytest.raises(InvalidParameterError, match="size must be positive"):
        Block((0, 0, 0), (1, 1, 0))
    assert Terrain("flat").flat and load_terrain("flat").flat


def _talos_plan(terrain: Terrain):
    controller = BipedController(tp.load_robot("talos"))
    sole = controller.robot.spec.sole
    right, left = controller.foot_placement("right"), controller.foot_placement("left")
    plan, knots = plan_walk_on(terrain, sole, right, left, controller.com_initial[:2], terrain.end + 0.4, 0.2)
    return controller, sole, plan, knots


@pytest.mark.slow
@pytest.mark.parametrize("terrain", [stairs(), slope(), stones()], ids=["stairs", "slope", "stones"])
def test_every_foothold_is_on_one_surface_and_every_swing_clears_the_terrain(terrain):
    """Each target's sole lies on the plane of the ground under it (its corners, grown by the edge
    margin, at the terrain's height there); it rises at most 12 cm; the walk ends past the
    terrain; every sole corner of every swing stays above the terrain (checked at 101 instants,
    not the planner's 33; the standing soles start 0.1 mm into the floor); steps that change
    height rise, move and land."""
    _, sole, plan, _ = _talos_plan(terrain)
    landings = [step.target for step in plan.steps]
    for step in plan.steps:
        centre = sole_center(sole, step.target)
        normal = terrain.normal(centre[0], centre[1])
        np.testing.assert_allclose(step.target.rotation[:, 2], normal, atol=1e-12)
        assert centre[2] == pytest.approx(terrain.height(centre[0], centre[1]), abs=1e-9)
        for corner in sole_corners(sole, step.target):
            assert terrain.height(corner[0], corner[1]) == pytest.approx(corner[2], abs=1e-3)
        ahead = centre + EDGE_MARGIN * step.target.rotation[:, 0]
        assert terrain.height(ahead[0] + 0.1, ahead[1]) == pytest.approx(
            centre[2] + (ahead[0] + 0.1 - centre[0]) * -normal[0] / normal[2], abs=1e-3
        )
        rise = centre[2] - sole_center(sole, step.start)[2]
        assert abs(rise) <= 0.12 + 1e-9
        assert step.swing_trajectory(0.05).step_over == (abs(rise) > 1e-3)
        swing = step.swing_trajectory(0.05)
        for s in np.linspace(0.0, 1.0, 101):
            pose = swing.sample(step.t_lift + s * (step.t_land - step.t_lift)).pos
            for corner in sole_corners(sole, pin.SE3(pose[3:].reshape(3, 3, order="F"), pose[:3])):
                assert corner[2] >= terrain.height(corner[0], corner[1]) - 2e-4, (
                    step,
                    s,
                )  # soles start 0.1 mm in
    assert min(sole_center(sole, p)[0] for p in landings[-2:]) > terrain.end
    if terrain.name.startswith("stairs"):
        assert max(sole_center(sole, p)[2] for p in landings) == pytest.approx(0.4)


@pytest.mark.slow
def test_a_block_higher_than_a_step_is_refused_before_the_walk():
    controller = BipedController(tp.load_robot("talos"))
    with pytest.raises(InvalidParameterError, match="rising at most 0.12 m"):
        plan_walk_on(
            stones(height=0.3),
            controller.robot.spec.sole,
            controller.foot_placement("right"),
            controller.foot_placement("left"),
            controller.com_initial[:2],
            3.0,
            0.2,
        )


def test_the_step_over_swing_rises_moves_and_lands_with_consistent_derivatives():
    """Its velocity and acceleration are the derivatives of its position (central differences);
    it starts and ends at rest where the footstep says; x does not move in the first and last
    quarter; z peaks at the higher end plus the height, at mid-swing."""
    start = pin.SE3(np.eye(3), np.array([0.3, 0.1, 0.0]))
    end = pin.SE3(pin.exp3(np.array([0.0, -0.1, 0.0])), np.array([0.6, 0.1, 0.1]))
    swing = TrajectorySE3SwingFoot("s", start, end, 1.0, 0.8, 0.05, step_over=True)
    eps = 1e-6
    for t in np.linspace(1.01, 1.79, 27):
        before, now, after = (swing.sample(t + d) for d in (-eps, 0.0, eps))
        np.testing.assert_allclose((after.pos[:3] - before.pos[:3]) / (2 * eps), now.vel[:3], atol=1e-6)
        np.testing.assert_allclose((after.vel - before.vel) / (2 * eps), now.acc, atol=3e-4)  # jerk jumps
    np.testing.assert_allclose(swing.sample(1.0).pos[:3], start.translation, atol=1e-15)
    np.testing.assert_allclose(swing.sample(1.8).pos[:3], end.translation, atol=1e-15)
    assert swing.sample(1.2).pos[0] == pytest.approx(0.3) and swing.sample(1.6).pos[0] == pytest.approx(0.6)
    assert swing.sample(1.4).pos[2] == pytest.approx(0.15)
    assert np.all(np.abs(swing.sample(1.8).vel) < 1e-12)
    for t in np.linspace(1.01, 1.79, 27):  # the angular velocity: R_dot R^T
        before, now, after = (swing.sample(t + d).pos[3:].reshape(3, 3, order="F") for d in (-eps, 0.0, eps))
        spin = (after - before) / (2 * eps) @ now.T
        np.testing.assert_allclose([spin[2, 1], spin[0, 2], spin[1, 0]], swing.sample(t).vel[3:], atol=1e-6)


@pytest.mark.slow
def test_the_com_follows_the_stance_surfaces_smoothly():
    """z = z0 + h(t), h from knot to knot with a minimum-jerk blend: at the knots exactly, its
    velocity and acceleration the derivatives of its position; x-y the LIPM's."""
    controller, _, plan, knots = _talos_plan(stairs())
    lipm = plan_com_from_zmp(plan.zmp_reference, plan.t_end, controller.com_initial)
    com = TerrainComPlan(lipm, knots)
    z0 = controller.com_initial[2]
    for t, h in knots:
        assert com.sample(t).pos[2] == pytest.approx(z0 + h, abs=1e-12)
    eps = 1e-6
    for t in np.linspace(0.1, plan.t_end - 0.1, 41):
        before, now, after = (com.sample(t + d) for d in (-eps, 0.0, eps))
        assert (after.pos[2] - before.pos[2]) / (2 * eps) == pytest.approx(now.vel[2], abs=1e-6)
        assert (after.vel[2] - before.vel[2]) / (2 * eps) == pytest.approx(now.acc[2], abs=1e-4)
        np.testing.assert_allclose(now.pos[:2], lipm.sample(t).pos[:2], atol=1e-15)
    assert max(h for _, h in knots) == pytest.approx(0.4)
    for t, h in knots[1:-1]:  # each knot: the stance foot's surface when the ZMP arrives on it
        stance = next(step for step in plan.steps if step.t_lift == pytest.approx(t))
        planted = plan.placements(t)["left" if stance.side == "right" else "right"]
        centre = sole_center(controller.robot.spec.sole, planted)
        assert h == pytest.approx(stairs().height(centre[0], centre[1]), abs=1e-9)


def test_a_terrain_needs_the_mujoco_plant():
    from tsid_py.loop.plants import make_plant

    with pytest.raises(InvalidParameterError, match="terrain stairs .* needs --plant mujoco"):
        make_plant("pinocchio", tp.load_robot("talos"), stairs())


@pytest.mark.slow
@pytest.mark.parametrize(
    ("robot", "terrain"), [("talos", "stairs"), ("talos", "slope"), ("talos", "stones"), ("g1", "slope")]
)
def test_walking_across_terrain_in_mujoco(robot, terrain):
    """In MuJoCo, torque mode, on the blocks' own geometry: every footstep lands where planned (on
    its surface, within 2 cm), no QP fails, no body but a foot touches the ground or a block, the
    torques stay within their limits and the verdict, from the plant's measured state, is
    recovered. The stairs climb 40 cm: the base ends and passes that high."""
    pytest.importorskip("mujoco", reason="the [sim] extra (mujoco) is not installed")
    from tsid_py.scenarios import walk

    result = walk.run(robot, terrain=terrain, plant="mujoco")
    summary = result.summary
    assert summary["verdict"] == "recovered", summary["verdict_reason"]
    assert summary["footsteps_landed"] == summary["footsteps"] and summary["qp_failures"] == 0
    assert summary["touchdown_error_max_m"] < 0.02 and summary["max_torque_ratio"] <= 1.0 + 1e-9
    if terrain == "stairs":
        base = np.array(result.log.arrays()["q"])[:, 2]
        assert base.max() - base[0] > 0.35


@pytest.mark.slow
def test_robot_sensing_walks_the_stairs_on_the_terrains_surface(tmp_path):
    """With the robot's sensors (encoders, IMU, the feet's force/torque sensors) and the estimator
    instead of the simulator's state: the estimator anchors a foot touching down on the terrain's
    surface (with the floor it started on for ground, the shipped stairs failed at 6.2 s, a QP
    infeasible, and these fail too), and two stairs up and down are walked as with the truth."""
    pytest.importorskip("mujoco", reason="the [sim] extra (mujoco) is not installed")
    from tsid_py.scenarios import walk

    two = tmp_path / "two_stairs.toml"  # two steps up and two down: half the shipped stairs' time
    two.write_text(stairs(steps=2).toml())
    summary = walk.run("talos", terrain=str(two), plant="mujoco", sensing="robot", check_every=10).summary
    assert summary["verdict"] == "recovered", summary["verdict_reason"]
    assert summary["footsteps_landed"] == summary["footsteps"] and summary["qp_failures"] == 0
    assert summary["touchdown_error_max_m"] < 0.02 and summary["estimate_position_error_max_m"] < 0.05


def _biped_feet():
    controller = BipedController(tp.load_robot("talos"))
    sole = controller.robot.spec.sole
    return controller, sole, controller.foot_placement("right"), controller.foot_placement("left")


def test_a_foothold_keeps_its_margin_from_every_edge_and_off_a_gap_across():
    """A sole 2 cm from an edge, ahead or behind, is refused, 3 cm away accepted; a gap 6.5 cm
    wide across the walk, under the middle of a sole, is seen (points SEARCH_STEP apart across)."""
    from tsid_py.planning.terrain_walk import foothold

    _, sole, right, _ = _biped_feet()
    block = Terrain("step", (Block((1.0, 0.0, 0.05), (0.4, 1.2, 0.1)),))  # its top from x = 0.8 to 1.2
    heel = 0.8 + sole.lxn  # a sole centre whose heel is on the edge
    assert foothold(block, sole, right, heel + EDGE_MARGIN + 0.01) is not None
    assert foothold(block, sole, right, heel + EDGE_MARGIN - 0.01) is None
    toe = 1.2 - sole.lxp
    assert foothold(block, sole, right, toe - EDGE_MARGIN - 0.01) is not None
    assert foothold(block, sole, right, toe - EDGE_MARGIN + 0.01) is None
    y = sole_center(sole, right)[1]
    split = Terrain(
        "split",
        (Block((1.0, y + 0.5325, 0.05), (1.0, 1.0, 0.1)), Block((1.0, y - 0.5325, 0.05), (1.0, 1.0, 0.1))),
    )
    assert split.height(1.0, y) == 0.0  # exact: the gap shows the floor
    assert foothold(split, sole, right, 1.0) is None


def test_a_swing_rises_over_what_stands_between_its_footholds():
    """A post 12 cm high, 5 x 5 cm, under the middle of a swing's straight line: the swing is
    raised until its whole sole passes above it (the corners alone would pass either side)."""
    from tsid_py.planning.terrain_walk import swing_height

    _, sole, right, _ = _biped_feet()
    y = sole_center(sole, right)[1]
    post = Terrain("post", (Block((0.3, y, 0.06), (0.05, 0.05, 0.12)),))
    target = pin.SE3(right.rotation, right.translation + np.array((0.6, 0.0, 0.0)))
    bump = swing_height(post, sole, right, target, 0.05)
    assert bump > 0.12
    swing = TrajectorySE3SwingFoot("s", right, target, 0.0, 1.0, bump)
    middle = swing.sample(0.5).pos
    assert middle[2] > 0.12  # over the post at mid-swing
    # on the floor, the least that keeps CLEARANCE at mid-swing
    assert swing_height(Terrain("flat"), sole, right, target, 0.05) == pytest.approx(CLEARANCE)


def test_a_terrain_under_the_starting_feet_or_behind_them_is_refused(tmp_path):
    controller, sole, right, left = _biped_feet()
    under = Terrain("under", (Block((0.0, 0.0, 0.01), (0.6, 1.2, 0.02)),))
    with pytest.raises(InvalidParameterError, match="a terrain must leave the robot's starting feet"):
        plan_walk_on(under, sole, right, left, controller.com_initial[:2], 1.0, 0.2)
    from tsid_py.scenarios import walk

    behind = tmp_path / "behind.toml"
    behind.write_text(Terrain("behind", (Block((-3.0, 0.0, 0.05), (0.4, 1.2, 0.1)),)).toml())
    with pytest.raises(InvalidParameterError, match="behind the robot's feet"):
        walk.run("talos", terrain=str(behind))


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        ("[[block]]\ncenter = 5\nsize = [1, 1, 1]\n", "center and size are lists of 3 numbers"),
        ("block = 5\n", "block must be [[block]] tables"),
        ("[block]\ncenter = [0, 0, 0]\nsize = [1, 1, 1]\n", "block must be [[block]] tables"),
        ('[[block]]\ncenter = [0, 0, 0]\nsize = [1, 1, 1]\npitch = "steep"\n', "pitch a number"),
        ("[[block]]\ncenter = [0, 0, 0]\nsize = [1, 1, 1]\npitch = true\n", "pitch a number"),
        (
            "[[block]]\ncenter = [0, 0, 0]\nsize = [1, 1, 1]\npitch = 90\n",
            "block 1: a block's pitch must be within",
        ),
        ("[[block]]\ncenter = [0, 0, 0]\nsize = [1, -1, 1]\n", "block 1: a block's size must be positive"),
    ],
)
def test_a_bad_terrain_file_is_one_line_naming_the_block(tmp_path, text, fault):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(InvalidParameterError, match=re.escape(fault)):
        load_terrain(path)
    path.write_bytes(b"\xff\xfe[[block]]")
    with pytest.raises(InvalidParameterError, match="not TOML"):
        load_terrain(path)


def test_a_pitched_block_is_ground_over_its_raised_end_too():
    """A block pitched 20 deg up with its high end in the air: over that end the ground is the end
    face (leaning out, its normal up and forward), as MuJoCo's box is, not the floor."""
    block = Block((1.0, 0.0, 0.0), (1.0, 1.0, 0.4), math.radians(-20.0))
    terrain = Terrain("ramp", (block,))
    a = math.radians(20.0)
    top_end = 1.0 + 0.5 * math.cos(a) - 0.2 * math.sin(a)  # where the top face ends, x
    assert terrain.height(1.0, 0.0) == pytest.approx(0.2 / math.cos(a))
    assert terrain.height(top_end + 0.05, 0.0) > 0.15  # over the end face
    np.testing.assert_allclose(terrain.normal(top_end + 0.05, 0.0), [math.cos(a), 0.0, math.sin(a)])
    rotation = block.rotation
    rotation[:] = 0.0  # a copy: the block's own is untouched
    assert terrain.height(1.0, 0.0) == pytest.approx(0.2 / math.cos(a))
