"""Push recovery while walking (tsid_py.controllers.strategies.walk_recovery): the landing's move
against the pendulum integrated, the DCM feedback on the plan, a walk with no push that keeps its
plan, and in MuJoCo a push the plain walk falls from, recovered by moved landings."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from tsid_py.controllers.strategies.push_recovery import RecoveryParams
from tsid_py.controllers.strategies.walk_recovery import WalkRecovery, _Swing
from tsid_py.errors import InvalidParameterError
from tsid_py.planning.footsteps import plan_straight_walk
from tsid_py.planning.lipm import plan_com_from_zmp
from tsid_py.planning.support import sole_center
from tsid_py.scenarios.stepping import stepping_controller


@pytest.fixture(scope="module")
def walk_plan():
    """Talos's default walk (the walk scenario's): its plan, CoM plan, recovery and robot."""
    controller = stepping_controller("talos", None, "quadprog")
    robot = controller.robot
    right, left = controller.foot_placement("right"), controller.foot_placement("left")
    plan = plan_straight_walk(robot.spec.sole, right, left, controller.com_initial[:2], 8, 0.2)
    com = plan_com_from_zmp(plan.zmp_reference, plan.t_end, controller.com_initial).sample
    return plan, com, robot


def _swing_of(recovery: WalkRecovery, plan, index: int) -> _Swing:
    """The swing of footstep ``index`` as planned, the other foot standing where the plan has it."""
    step = plan.steps[index]
    feet = plan.placements(step.t_lift)
    stance = feet["left" if step.side == "right" else "right"]
    sole = recovery.sole
    return _Swing(
        step, 0.0, sole_center(sole, step.target)[:2], feet[step.side], stance, sole_center(sole, stance)[:2]
    )


@pytest.mark.slow
def test_a_landing_moved_so_catches_the_capture_point_that_the_pendulum_carries_there(walk_plan):
    """The third swing (right foot, left standing), 0.5 s before its touch-down, with the capture
    point 8 cm off the plan's toward the right: the pendulum integrated with its centre of pressure
    held where the recovery counts on it (the stance sole's centre, moved the ankle's share toward
    the error) lands the capture point exactly the move away from where the plan's would land; a
    small error the ankle takes moves nothing; one toward the standing foot cannot cross it."""
    plan, com, robot = walk_plan
    recovery = WalkRecovery(plan, 0.05, 0.2, 0.2, com, robot)
    swing = _swing_of(recovery, plan, 2)
    t, remaining = swing.t_land - 0.5, 0.5
    plan_now = com(t)
    omega = math.sqrt(9.81 / plan_now.pos[2])
    xi_plan = plan_now.pos[:2] + plan_now.vel[:2] / omega
    error = np.array([0.0, -0.08])
    state = SimpleNamespace(omega=omega, capture_point=xi_plan + error)
    move, cut, _ = recovery._move(swing, state, xi_plan, remaining)
    assert cut < 1e-12 and move[1] < -0.05 and abs(move[0]) < 1e-12  # out to the right, no cut

    zmp = swing.stance_centre  # the plan's ZMP on the stance sole in single support
    ankle = RecoveryParams().ankle_share * min(robot.spec.sole.lyp, robot.spec.sole.lyn)
    cop = zmp + np.array([0.0, -ankle])  # the ankle's share, toward the error

    def carried(xi0: np.ndarray, cop: np.ndarray) -> np.ndarray:  # the pendulum, fine steps
        xi, dt = xi0.copy(), 1e-5  # xi_dot = omega (xi - r), integrated
        for _ in range(int(round(remaining / dt))):
            xi = xi + dt * omega * (xi - cop)
        return xi

    measured = carried(state.capture_point, cop)
    planned = carried(xi_plan, zmp)
    np.testing.assert_allclose(measured - planned, move, atol=2e-4)  # the plan moved by the move

    small = SimpleNamespace(omega=omega, capture_point=xi_plan + [0.0, -0.002])
    np.testing.assert_allclose(recovery._move(swing, small, xi_plan, remaining)[0], 0.0, atol=1e-12)
    inward = SimpleNamespace(omega=omega, capture_point=xi_plan + [0.0, 0.08])  # toward the left foot
    move, cut, crossing = recovery._move(swing, inward, xi_plan, remaining)
    assert abs(move[1]) < 1e-12 and cut > 0.05  # no crossing: the step limits cut it all
    far = SimpleNamespace(omega=omega, capture_point=xi_plan + [0.0, -0.2])
    move, cut, crossing = recovery._move(swing, far, xi_plan, remaining)
    landing = swing.nominal + move
    assert np.linalg.norm(landing - swing.stance_centre) <= math.hypot(0.2, recovery.limits.max_width) + 1e-9
    assert cut > 0.1  # beyond the leg's reach: cut, said


def test_on_the_plan_the_dcm_feedback_asks_for_the_plans_acceleration(walk_plan):
    """A CoM exactly on its plan gets the plan's acceleration (c_ddot = omega^2 (c - r) with r the
    plan's ZMP); off it by e, the capture point's error decays at the gain."""
    plan, com, robot = walk_plan
    recovery = WalkRecovery(plan, 0.05, 0.2, 0.2, com, robot)
    sample = com(3.3)
    omega = math.sqrt(9.81 / sample.pos[2])
    xi_plan = sample.pos[:2] + sample.vel[:2] / omega
    state = SimpleNamespace(omega=omega, com=sample.pos, com_velocity=sample.vel, capture_point=xi_plan)
    reference = recovery._com_reference(state, sample, xi_plan)
    np.testing.assert_allclose(reference.acc, sample.acc, atol=1e-10)
    np.testing.assert_allclose(reference.pos, sample.pos, atol=1e-15)

    off = np.array([0.01, -0.02])  # the capture point off by this, the CoM on the plan
    state = SimpleNamespace(omega=omega, com=sample.pos, com_velocity=sample.vel, capture_point=xi_plan + off)
    acc = recovery._com_reference(state, sample, xi_plan).acc[:2]
    cmp = sample.pos[:2] - acc / omega**2
    xi_rate = omega * (state.capture_point - cmp)  # of the measured capture point
    plan_rate = sample.vel[:2] + sample.acc[:2] / omega
    np.testing.assert_allclose(xi_rate - plan_rate, -RecoveryParams().gain * off, atol=1e-10)


@pytest.mark.slow
def test_a_walk_with_no_push_keeps_its_plan():
    """On the integrator (the controller's own dynamics), the recovery moves no landing, waits for
    nothing, and every footstep lands where the plan put it."""
    from tsid_py.scenarios import walk

    s = walk.run("talos", recovery="step").summary
    assert s["verdict"] == "recovered" and s["qp_failures"] == 0
    assert s["recovery_moves"] == 0 and s["recovery_waited_s"] == 0.0  # exact: it never waited
    assert s["footsteps_landed"] == s["footsteps"] == 8
    assert s["touchdown_error_max_m"] < 2e-3


def test_nonsense_is_refused(walk_plan):
    plan, com, robot = walk_plan
    with pytest.raises(InvalidParameterError, match="the plan's CoM as a function of time"):
        WalkRecovery(plan, 0.05, 0.2, 0.2, None, robot)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="params must be a RecoveryParams"):
        WalkRecovery(plan, 0.05, 0.2, 0.2, com, robot, {"gain": 3.0})  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match=r"ankle_share must be in \[0, 1\]"):
        RecoveryParams(ankle_share=1.5)
    from tsid_py.scenarios import walk

    with pytest.raises(InvalidParameterError, match="--recovery step walks on flat ground"):
        walk.run("talos", recovery="step", terrain="stairs")
    with pytest.raises(InvalidParameterError, match="recovery"):
        walk.run("talos", recovery="ankle")


def _mujoco():
    return pytest.importorskip("mujoco", reason="the [sim] extra (mujoco) is not installed")


@pytest.mark.slow
def test_a_push_the_plain_walk_falls_from_is_recovered_by_moved_landings():
    """300 N for 0.1 s toward the swinging foot's side at mid swing, in MuJoCo, torque mode: the
    plain walk loses its balance; with the recovery the landing moves out that way (sooner), the
    plan walks on moved, every footstep lands, no QP fails, torques within limits, recovered."""
    _mujoco()
    from tsid_py.loop.plant import Push
    from tsid_py.scenarios import walk

    push = Push((0.0, -300.0, 0.0), 3.35, 0.1)  # the right foot swings from 3.0 s to 3.8 s
    plain = walk.run("talos", plant="mujoco", push=push, check_every=10).summary
    assert plain["verdict"] in ("fell", "lost")
    s = walk.run("talos", plant="mujoco", push=push, check_every=10, recovery="step").summary
    assert s["verdict"] == "recovered" and s["qp_failures"] == 0
    assert s["max_torque_ratio"] <= 1.0 + 1e-9 and s["dynamics_residual_max"] < 1e-8
    assert s["footsteps_landed"] == s["footsteps"] == 8
    first = s["recovery_moved_landings"][0]
    assert first["foot"] == "right" and first["move_m"][1] < -0.05 and 3.4 < first["t_land_s"] <= 3.8 + 1e-9
