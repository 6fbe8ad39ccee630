"""The UR5 reaching and Solo12 quadruped scenarios in closed loop, with the physics checks of every step."""

import json

import numpy as np
import pinocchio as pin
import pytest

from tsid_py import cli
from tsid_py.controllers import ArmController, BipedParams, QuadrupedController, QuadrupedParams
from tsid_py.errors import RobotSpecError
from tsid_py.robot_specs import load_robot
from tsid_py.scenarios import quadruped, reach


@pytest.mark.slow
def test_reach_target_is_reached_within_bounds():
    result = reach.run(duration=2.0)
    summary = result.summary
    assert summary["qp_failures"] == 0 and summary["steps"] == 1000
    assert summary["ee_error_max_m"] == pytest.approx(0.1, abs=1e-9)  # the target starts 0.1 m away
    assert summary["ee_error_final_m"] < 1e-4
    assert summary["max_torque_ratio"] <= 1.0 + 1e-9
    assert summary["max_velocity_ratio"] <= 1.0 + 1e-9
    assert summary["dynamics_residual_max"] < 1e-10
    controller = result.controller
    tau = np.array(result.log.tau)
    assert np.all(np.abs(tau) <= controller.tau_max + 1e-9)
    # At rest at the end: the torques hold the arm against gravity (Pinocchio's own g(q)).
    q_final = result.log.q[-1]
    gravity = pin.computeGeneralizedGravity(controller.robot.model, controller.robot.create_data(), q_final)
    assert np.allclose(tau[-1], gravity, atol=0.05 * np.max(np.abs(gravity)))


@pytest.mark.slow
def test_reach_sinusoid_converges_onto_the_circle():
    result = reach.run(motion="sinusoid", duration=4.0)
    assert result.summary["qp_failures"] == 0
    t = np.array(result.log.t)
    error = np.linalg.norm(np.array(result.log.ee) - np.array(result.log.ee_ref), axis=1)
    assert error[0] < 1e-12  # the circle starts at the initial end-effector position
    assert error[t > 3.0].max() < 3e-3
    assert error[t > 3.0].max() < 0.1 * error.max()
    assert result.summary["max_torque_ratio"] <= 1.0 + 1e-9


@pytest.mark.slow
def test_quadruped_sway_satisfies_physics():
    result = quadruped.run(duration=1.0)
    summary = result.summary
    assert summary["qp_failures"] == 0 and summary["steps"] == 500
    assert summary["dynamics_residual_max"] < 1e-10
    assert summary["max_pyramid_violation_n"] < 1e-9
    assert summary["max_normal_bound_violation_n"] < 1e-9
    assert summary["min_normal_force_n"] >= 1.0 - 1e-9
    assert summary["max_torque_ratio"] <= 1.0 + 1e-9
    assert summary["foot_drift_max_m"] < 1e-4
    assert summary["com_error_max_m"] < 0.02  # below the 0.02 m sway amplitude
    # Four point feet, forces in world axes: their vertical sum is m (g + c_z'') with c_z'' ~ 0.
    robot = result.controller.robot
    vertical = sum(np.asarray(f[0])[2] for f in result.log.forces.values())
    assert vertical == pytest.approx(robot.total_mass * 9.81, rel=1e-2)
    assert set(result.log.forces) == {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"}


def test_controllers_reject_the_wrong_robot(ur5, talos):
    with pytest.raises(RobotSpecError, match="not a quadruped"):
        QuadrupedController(ur5)
    with pytest.raises(RobotSpecError, match="not an arm"):
        ArmController(talos, 0.002)


def test_spec_tables_override_controller_defaults_and_name_unknown_keys():
    robot = load_robot("talos")
    robot.spec.biped.update(w_com=2.5, am_mask=[1, 0, 1])  # as read from TOML
    params = BipedParams.for_robot(robot)
    assert params.w_com == 2.5  # exact: a parameter as set
    assert params.am_mask == (1, 0, 1) and params.mu == BipedParams().mu
    robot.spec.biped["w_comm"] = 1.0
    with pytest.raises(RobotSpecError, match=r"unknown \[biped\] keys \['w_comm'\]"):
        BipedParams.for_robot(robot)
    solo = load_robot("solo12")
    assert QuadrupedParams.for_robot(solo).tau_max == 2.7  # exact: read from robots/solo12.toml
    solo.spec.quadruped["kp"] = 1.0
    with pytest.raises(RobotSpecError, match=r"unknown \[quadruped\] keys \['kp'\]"):
        QuadrupedParams.for_robot(solo)


def test_reach_cli_json_and_unknown_mode(capsys):
    assert cli.main(["reach", "--duration", "0.05", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["scenario"] == "reach-target" and summary["steps"] == 25
    with pytest.raises(SystemExit):
        cli.main(["reach", "--motion", "dance"])


@pytest.mark.parametrize("name", ["ur5", "panda"])
def test_the_arms_reach_bounds_every_configuration_and_a_target_beyond_it_is_refused(name, rng, capsys):
    """The end effector stays within the chain's length of the first joint in 200 random
    configurations, and comes within a quarter of it somewhere; a target beyond it is
    refused in one line (the API, and the CLI with exit 2), one within it is taken."""
    from tsid_py.controllers.arm import arm_reach
    from tsid_py.errors import InvalidParameterError
    from tsid_py.trajectories import TrajectorySample

    robot = load_robot(name)
    centre, radius = arm_reach(robot, robot.spec.end_effector)
    model, data = robot.model, robot.model.createData()
    frame = robot.frame_id(robot.spec.end_effector)
    farthest = 0.0
    for _ in range(200):
        q = pin.randomConfiguration(model)
        pin.framesForwardKinematics(model, data, q)
        farthest = max(farthest, float(np.linalg.norm(data.oMf[frame].translation - centre)))
    assert radius * 0.75 < farthest <= radius
    arm = ArmController(robot, 0.002)
    arm.set_ee_reference(TrajectorySample(arm.ee_initial + [0.05, 0.0, 0.0]))  # within: taken
    with pytest.raises(InvalidParameterError, match=f"out of reach.*reaches {radius:.3f} m"):
        arm.set_ee_reference(TrajectorySample(centre + [radius + 0.01, 0.0, 0.0]))
    assert cli.main(["reach", "--robot", name, "--offset", "10", "0", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "out of reach" in err[0]
