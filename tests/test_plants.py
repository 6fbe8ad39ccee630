"""The loop on other plants: contact feedback, bounded logs, a user's own plant, MuJoCo.

The MuJoCo tests need the ``[sim]`` extra (``pip install -e ".[sim]"``) and are skipped without it.
"""

import json
import math
import subprocess
import sys
import tempfile

import numpy as np
import pinocchio as pin
import pytest

import tsid_py as tp
from tsid_py.controllers.biped import BipedController
from tsid_py.loop import (
    Command,
    ContactMeasurement,
    Controller,
    ControlLoop,
    Plant,
    PlantState,
    Push,
    RunLog,
)
from tsid_py.loop.control_loop import check_pushes
from tsid_py.scenarios import balance, com_sinusoid, walk


# ------------------------------------------------------------ contact feedback
def _measured(controller, touching: dict[str, bool], t: float = 0.0) -> PlantState:
    q = controller.q0
    q[2] += 0.001  # the feet 1 mm higher than planned
    feet = controller.robot.spec.feet
    return PlantState(
        t,
        q,
        controller.robot.zero_velocity(),
        {feet[side]: ContactMeasurement(np.zeros(6), touching[side]) for side in feet},
    )


def test_standing_contacts_follow_the_measured_feet_and_a_lost_foot_is_released_then_put_back(talos):
    controller = BipedController(talos)
    both = {"right": True, "left": True}
    controller.observe(_measured(controller, both))
    placed = controller.contacts["right"].reference
    # held where measured, flat: the sole's lowest corner where it was measured, 1 mm up
    sole = talos.spec.sole.corners()
    planned = controller.foot_placement("right")
    lowest_measured = (planned.rotation[2] @ sole).min() + planned.translation[2] + 0.001
    np.testing.assert_allclose(placed.rotation[2], [0.0, 0.0, 1.0], atol=1e-12)
    assert placed.translation[2] - talos.spec.sole.lz == pytest.approx(lowest_measured, abs=1e-9)

    lifted = {"right": False, "left": True}
    controller.observe(_measured(controller, lifted, 0.04))
    assert controller.in_contact("right")  # landed 40 ms ago: it may bounce, it is held
    for t in (0.06, 0.062):
        controller.observe(_measured(controller, lifted, t))
    assert controller.in_contact("right")  # two steps are not enough (debounce)
    controller.observe(_measured(controller, lifted, 0.064))

    assert "right" in controller.released and "task-right-foot" in controller.formulation.tasks
    for _ in range(3):  # the left foot alone: the last contact is never released
        controller.observe(_measured(controller, {"right": False, "left": False}))
    assert controller.in_contact("left")

    out = controller.compute(0.1, controller.q0, talos.zero_velocity())  # the unloading ramp runs
    assert out.ok
    controller.compute(0.2, controller.q0, talos.zero_velocity())
    assert not controller.in_contact("right")
    for _ in range(3):
        controller.observe(_measured(controller, both))
    assert controller.in_contact("right") and not controller.released


def test_the_integrator_measures_no_contacts_so_no_feedback_changes_the_plan(talos):
    """The parity with the C++ TSID holds on the default plant: observe() sees no contacts."""
    controller = BipedController(talos)
    before = controller.contacts["right"].reference
    loop = ControlLoop(controller, 0.002)
    loop.run(50)
    assert controller.contacts["right"].reference.isApprox(before, 1e-15)


# ------------------------------------------------------------------- logs
@pytest.mark.slow
def test_a_bounded_log_keeps_the_last_steps_and_the_summary_of_all(talos):
    full = balance.run(duration=0.4)
    from tsid_py.scenarios.runner import LoopSetup, run_biped

    controller = BipedController(tp.load_robot("talos"))
    reference = tp.TrajectoryEuclidianConstant("com", controller.com_initial)
    bounded = run_biped(controller, 0.4, 0.002, reference.sample, "balance", setup=LoopSetup(log_window=20))
    assert len(bounded.log.q) == 20 and len(full.log.q) == 200
    np.testing.assert_array_equal(np.array(bounded.log.q), np.array(full.log.q)[-20:])  # exact: same run
    for key in ("com_error_max_m", "com_error_rms_m", "max_torque_ratio", "min_normal_force_n"):
        assert bounded.summary[key] == full.summary[key], key  # exact: the same run twice
    with pytest.raises(tp.errors.InvalidParameterError):
        RunLog(window=0)


def _max_rss_kb(duration: float) -> int:
    code = (
        "import resource, sys; from tsid_py import cli; "
        f"cli.main(['balance', '--duration', '{duration}', '--json']); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return int(done.stderr.strip().splitlines()[-1])


@pytest.mark.slow
def test_memory_stays_flat_with_the_length_of_a_cli_run():
    """A CLI run without outputs keeps a bounded log: 10x longer costs less than 10 MB more."""
    short, long = _max_rss_kb(3.0), _max_rss_kb(30.0)
    assert long - short < 10_000, (short, long)


# ------------------------------------------------------------ a user's plant
class ArmPlant(Plant):
    """A user's own simulator of a fixed-base arm: forward dynamics (ABA) and semi-implicit Euler,
    wrapped in the four methods of a plant (the pattern of the loop docs)."""

    def __init__(self, model: pin.Model, substeps: int = 4):
        self.model, self.data, self.substeps = model, model.createData(), substeps

    def reset(self, q, v, t=0.0):
        self.q, self.v, self.t, self.tau = q.copy(), v.copy(), t, np.zeros(self.model.nv)

    def apply(self, command: Command):
        self.tau = command.tau.copy()

    def advance(self, dt):
        h = dt / self.substeps
        for _ in range(self.substeps):
            self.v += h * pin.aba(self.model, self.data, self.q, self.v, self.tau)
            self.q = pin.integrate(self.model, self.q, h * self.v)
        self.t += dt

    def state(self):
        return PlantState(self.t, self.q.copy(), self.v.copy())


@pytest.mark.slow
def test_a_user_written_plant_closes_the_loop(ur5):
    form = tp.InverseDynamicsFormulation("arm", ur5)
    posture = tp.TaskJointPosture("posture", ur5)
    posture.kp = 50.0
    target = ur5.neutral_configuration() + 0.3
    posture.set_reference(tp.TrajectorySample(target))
    form.add_motion_task(posture, 1.0, 1)
    controller = Controller(ur5, form, tp.SolverHQuadProg("qp"))  # starts at the neutral posture
    plant = ArmPlant(ur5.model)
    outcome = ControlLoop(controller, 0.002, plant=plant).run(1000)
    assert outcome.qp_failures == 0
    assert np.abs(plant.q - target).max() < 1e-3  # the real dynamics (ABA) followed the controller
    assert outcome.summary()["dynamics_residual_max"] < 1e-8


# ------------------------------------------------------------------- MuJoCo
def _mujoco():
    return pytest.importorskip("mujoco", reason="the [sim] extra (mujoco) is not installed")


@pytest.mark.slow
@pytest.mark.parametrize("name", tp.available_robots())
def test_the_mujoco_model_is_pinocchios(name):
    """Every shipped robot (Panda's finger slides along 0 -1 0: any joint axis converts)."""
    mujoco = _mujoco()
    from tsid_py.loop.mujoco_plant import MujocoPlant

    robot = tp.load_robot(name)
    plant = MujocoPlant(robot)
    rng = np.random.default_rng(7)
    q = pin.integrate(robot.model, robot.default_configuration(), 0.3 * rng.standard_normal(robot.nv))
    v = rng.standard_normal(robot.nv)
    plant.reset(q, v)
    q_back, v_back = plant.get_state()
    np.testing.assert_allclose(q_back, q, atol=1e-15)
    np.testing.assert_allclose(v_back, v, atol=1e-14)
    data = robot.create_data()
    robot.compute_all_terms(data, q, v)
    assert plant.model.body_mass.sum() == pytest.approx(robot.total_mass, rel=1e-6)
    np.testing.assert_allclose(plant.data.subtree_com[0], robot.com(data), rtol=1e-6, atol=1e-9)
    M = np.zeros((plant.model.nv, plant.model.nv))
    mujoco.mj_fullM(plant.model, plant.data, M)
    # MuJoCo's free joint moves with the world-axes linear velocity: v_pin = T v_mujoco
    T = np.zeros((robot.nv, plant.model.nv))
    if not robot.is_fixed_base:
        T[:3, :3] = pin.Quaternion(q[6], *q[3:6]).toRotationMatrix().T
        T[3:6, 3:6] = np.eye(3)
    T[robot.nv - robot.na + np.arange(robot.na), plant._vadr] = 1.0
    M_pin = robot.mass(data)
    assert np.abs(T.T @ M_pin @ T - M).max() <= 1e-6 * np.abs(M).max()


def _cli(*args: str) -> tuple[int, dict, str]:
    """Exit code, JSON summary (empty when none was printed) and stderr of a ``tsid-py`` run, in a
    directory of its own (MuJoCo writes MUJOCO_LOG.TXT where it warns)."""
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run(
            [sys.executable, "-m", "tsid_py.cli", *args, "--json"],
            capture_output=True,
            text=True,
            timeout=900,
            cwd=folder,
        )
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else {}, done.stderr


@pytest.mark.slow
def test_mujoco_balance_holds_the_com_within_a_millimetre_in_both_modes():
    _mujoco()
    torque = balance.run(duration=10.0, plant="mujoco")
    s = torque.summary
    assert s["plant"] == "mujoco" and s["verdict"] == "recovered" and s["qp_failures"] == 0
    assert s["com_drift_max_m"] < 1e-3 and s["foot_drift_max_m"] < 1e-3 and s["max_torque_ratio"] <= 1.0
    position = balance.run(duration=2.0, plant="mujoco", mode="position").summary
    assert position["verdict"] == "recovered" and position["com_drift_max_m"] < 1e-3


@pytest.mark.slow
def test_mujoco_tracks_the_com_sinusoid_as_the_integrator_does():
    _mujoco()
    ideal = com_sinusoid.run(duration=4.0).summary["com_error_max_m"]
    simulated = com_sinusoid.run(duration=4.0, setup=_setup("mujoco")).summary
    assert simulated["lost_balance_at_s"] is None and simulated["fell_at_s"] is None
    assert abs(simulated["com_error_max_m"] - ideal) <= 0.1 * ideal


def _setup(plant: str, mode: str = "torque"):
    from tsid_py.scenarios.runner import LoopSetup

    return LoopSetup(plant, mode)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["torque", "position"])
def test_mujoco_walks_eight_steps(mode):
    _mujoco()
    s = walk.run(plant="mujoco", mode=mode).summary
    assert s["verdict"] == "recovered" and s["lost_balance_at_s"] is None
    assert s["qp_failures"] == 0 and s["steps"] == 5300
    # slip of a foot from where it became a contact, measured: 2.1 mm in torque mode; the soft
    # joint servos of position mode let the feet settle further (7.6 mm)
    assert 0 < s["foot_drift_max_m"] < (5e-3 if mode == "torque" else 1.5e-2)


@pytest.mark.slow
def test_a_pushed_run_waits_for_its_verdict_and_exits_4_when_the_robot_falls():
    """300 N for 0.1 s at 1 s knocks Talos over, but not before 2 s: the run goes on past its
    requested duration until the fall, and the command exits 4; 150 N is recovered, and the
    time of the recovery is after the push."""
    _mujoco()
    code, fell, err = _cli("balance", "--plant", "mujoco", "--duration", "2", "--push", "0,300,0@1+0.1")
    assert code == 4 and "fell" in err and fell["pushes"] == ["0,300,0@1+0.1"]
    assert fell["verdict"] == "fell" and fell["extended_to_s"] == fell["simulated_time_s"] > 2.0
    assert 1.1 < fell["lost_balance_at_s"] < fell["fell_at_s"] < fell["extended_to_s"] + 1e-9
    assert fell["push_verdicts"] == ["fell"] and fell["fell"] is True
    code, recovered, _ = _cli("balance", "--plant", "mujoco", "--duration", "2.5", "--push", "0,150,0@1+0.1")
    assert code == 0 and recovered["verdict"] == "recovered" and recovered["extended_to_s"] is None
    assert 1.1 <= recovered["recovered_at_s"] < 2.0 and recovered["lost_balance_at_s"] is None
    code, knocked, _ = _cli(
        "balance", "--plant", "mujoco", "--duration", "3", "--push", "0,800,0@0.5+0.1", "--allow-fall"
    )
    assert code == 0 and knocked["verdict"] == "fell" and 0.6 < knocked["fell_at_s"] < 2.0
    assert knocked["simulated_time_s"] == pytest.approx(knocked["fell_at_s"], abs=0.003)  # it stops there


@pytest.mark.slow
def test_pushes_are_parsed_and_checked_before_the_run():
    """A negative force is a push's value, not an option; a push that starts after the run, or whose
    times look like milliseconds, is refused in one line; the integrator cannot be pushed."""
    code, _, err = _cli("balance", "--duration", "2", "--push", "-300,0,0@5+0.1")
    assert (
        code == 2
        and "-300,0,0@5+0.1 starts at 5 s, when the 2 s run has ended" in err
        and err.count("\n") == 1
    )
    code, _, err = _cli("balance", "--duration", "2", "--push", "0,300,0@1000+100")
    assert code == 2 and "milliseconds" in err
    with pytest.raises(tp.errors.UnsupportedProblemError, match="no physics to push"):
        balance.run(duration=0.1, push=Push((0.0, 100.0, 0.0), 0.02, 0.01))
    with pytest.raises(tp.errors.InvalidParameterError, match="when the 0.1 s run has ended"):
        balance.run(duration=0.1, plant="pinocchio", push=Push((0.0, 100.0, 0.0), 0.5, 0.01))


@pytest.mark.parametrize(
    "force, t, duration",
    [
        ((0.0, 100.0, 0.0), math.nan, 0.1),
        ((0.0, 100.0, 0.0), -0.1, 0.1),
        ((0.0, 100.0, 0.0), 0.5, 0.0),
        ((math.nan, 0.0, 0.0), 0.5, 0.1),
        ((100.0, 0.0), 0.5, 0.1),
        (("a", 0.0, 0.0), 0.5, 0.1),
    ],
)
def test_a_push_is_checked_when_it_is_made_not_at_its_time(force, t, duration):
    """A NaN start would never come (and would block every later push): refused when made, as
    Push.parse refuses it."""
    with pytest.raises(tp.errors.InvalidParameterError, match="a push needs three finite forces"):
        Push(force, t, duration)


def test_overlapping_pushes_are_refused_before_the_run():
    """A plant holds one push at a time: the second would silently end the first."""
    pushes = (Push((100.0, 0.0, 0.0), 0.1, 0.4), Push((0.0, 100.0, 0.0), 0.2, 0.1))
    loop = ControlLoop(BipedController(tp.load_robot("talos")), 0.002, pushes=pushes)
    with pytest.raises(tp.errors.InvalidParameterError, match="0,100,0@0.2.0.1 starts before push 100"):
        loop.run(500)
    with pytest.raises(tp.errors.InvalidParameterError, match="starts before push 100"):
        check_pushes(pushes[::-1], 1.0)  # in any order
    check_pushes((pushes[0], Push((0.0, 100.0, 0.0), 0.5, 0.1)), 1.0)  # one after the other: fine


@pytest.mark.slow
def test_mujoco_plant_refuses_bad_periods_and_commands():
    _mujoco()
    from tsid_py.loop.mujoco_plant import MujocoPlant

    robot = tp.load_robot("talos")
    plant = MujocoPlant(robot)
    plant.reset(robot.default_configuration(), robot.zero_velocity())
    with pytest.raises(tp.errors.InvalidParameterError, match="not a multiple"):
        plant.advance(0.0015)
    with pytest.raises(tp.errors.DimensionError):
        plant.apply(Command(np.zeros(3)))


@pytest.mark.slow
def test_mujoco_measures_the_centre_of_pressure_the_controller_planned():
    """The moment of a measured foot wrench (world axes, about the foot frame's origin) puts each
    foot's centre of pressure, -m_y / f_z and m_x / f_z, where the QP's contact forces put it, and
    the measured normal force is the planned one: sign, origin and axes of the moment all enter."""
    _mujoco()
    run = balance.run(duration=0.4, plant="mujoco")
    log, controller = run.log, run.controller
    for contact in controller.contacts.values():
        measured = np.array(log.wrenches[contact.frame_name])[-50:].mean(axis=0)
        planned = np.mean([contact.wrench(f) for f in list(log.forces[contact.name])[-50:]], axis=0)
        # the feet stand flat and facing x: the contact frame's axes are the world's, to 1e-3
        cop_measured = np.array([-measured[4], measured[3]]) / measured[2]
        cop_planned = np.array([-planned[4], planned[3]]) / planned[2]
        assert abs(measured[2] - planned[2]) < 0.02 * planned[2]
        assert np.abs(cop_measured - cop_planned).max() < 1e-3  # [m]; the CoP is ~5 mm from the origin
        assert np.abs(cop_planned).max() > 2e-3  # so the moment matters


def _wrenches_contact_by_contact(plant) -> dict[str, np.ndarray]:
    """Each foot's ground wrench summed over its contacts one by one (``mj_contactForce``; the
    force on geom2 from geom1, f_world = frame^T f_local) about the foot frame's origin, world axes."""
    import mujoco

    model, data = plant.model, plant.data
    wrenches = {}
    for name in plant.robot.spec.feet.values():
        site = model.site(name)
        body, origin = site.bodyid[0], data.site_xpos[site.id]
        wrench, local = np.zeros(6), np.zeros(6)
        for i in range(data.ncon):
            contact = data.contact[i]
            sign = 1.0 if model.geom_bodyid[contact.geom[1]] == body else -1.0
            if model.geom_bodyid[contact.geom[int(sign > 0)]] != body:
                continue
            mujoco.mj_contactForce(model, data, i, local)
            force = sign * contact.frame.reshape(3, 3).T @ local[:3]
            wrench += np.concatenate([force, np.cross(contact.pos - origin, force)])
        wrenches[name] = wrench
    return wrenches


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["standing", "one foot"])
def test_mujoco_foot_wrenches_are_the_sums_of_their_contacts_forces(mode):
    """The feet's wrenches MuJoCo sums on their bodies, moved to the foot frames, are those of
    their contacts summed one by one (to rounding), while standing and on one foot rolled on an
    edge; the bodies touching the ground are the feet's."""
    _mujoco()
    from tsid_py.loop.mujoco_plant import MujocoPlant

    robot = tp.load_robot("talos")
    plant = MujocoPlant(robot)
    q = robot.reference_configuration("half_sitting")
    if mode == "one foot":  # the base rolled and sunk: the left sole on its edge, the right one up
        q = pin.integrate(robot.model, q, np.r_[0.0, 0.0, -0.01, 0.15, 0.0, 0.0, np.zeros(robot.na)])
    plant.reset(q, robot.zero_velocity())
    for _ in range(5):
        plant.apply(Command(np.zeros(robot.na)))
        plant.advance(0.002)
        state = plant.state()
        expected = _wrenches_contact_by_contact(plant)
        assert plant.data.ncon > 0
        for name, measured in state.contacts.items():
            np.testing.assert_allclose(measured.wrench, expected[name], rtol=0, atol=1e-12)
            assert measured.touching == (expected[name][2] > 1.0)
        touching = {name for name, measured in state.contacts.items() if measured.touching}
        feet = {robot.model.names[robot.model.frames[robot.frame_id(name)].parentJoint] for name in touching}
        assert state.ground_bodies == feet and len(touching) == (2 if mode == "standing" else 1)


# ------------------------------------------------------------ bodies a simulator moves; divergence
def test_a_body_without_mass_or_with_an_unphysical_inertia_gets_the_least_physical_one():
    from tsid_py.loop.inertia import MIN_INERTIA, MIN_MASS, simulable

    finger = simulable(pin.Inertia(0.0, np.array([0.1, 0.0, 0.0]), np.zeros((3, 3))))  # Romeo's
    assert finger.mass == MIN_MASS  # exact: the floor itself
    np.testing.assert_allclose(finger.lever, [0.1, 0.0, 0.0])
    assert np.linalg.eigvalsh(finger.inertia).min() >= 0.99 * MIN_INERTIA

    rod = simulable(pin.Inertia(1.0, np.zeros(3), np.diag([1e-3, 1e-3, 5e-3])))  # 5e-3 > 1e-3 + 1e-3
    small, middle, large = np.linalg.eigvalsh(rod.inertia)
    assert large <= small + middle and large == pytest.approx(5e-3)  # raised as little as it takes

    box = pin.Inertia.FromBox(2.0, 0.1, 0.2, 0.3)  # physical: unchanged
    assert simulable(box).isApprox(box, 1e-12)


@pytest.mark.slow
def test_romeo_stands_on_the_pinocchio_plant_although_its_fingers_have_no_mass():
    """The URDF's massless fingers make Romeo's mass matrix singular (``aba`` gives NaN); the
    plant moves them with the least physical inertia, the controller keeps the URDF's."""
    summary = balance.run(robot="romeo", duration=1.0, plant="pinocchio").summary
    assert summary["plant_failure"] is None and summary["qp_failures"] == 0
    assert summary["verdict"] == "recovered" and summary["com_drift_max_m"] < 1e-4


@pytest.mark.slow
def test_a_simulation_that_diverges_ends_the_run_with_its_cause_and_exit_3():
    """An absurd push: the Pinocchio plant's velocities leave any robot's range, MuJoCo resets its
    data; each run ends there with ``plant_failure``, not with a bad-input error or a time of 0."""
    push = Push((1e9, 0.0, 0.0), 0.5, 0.1)
    summary = balance.run(duration=1.0, plant="pinocchio", push=push).summary
    assert "pinocchio plant's simulation diverged at t = 0.5" in summary["plant_failure"]
    assert summary["simulated_time_s"] == pytest.approx(0.502, abs=1e-9)
    _mujoco()
    code, summary, stderr = _cli(
        "balance", "--plant", "mujoco", "--push", "1e9,0,0@0.5+0.1", "--duration", "1"
    )
    assert code == 3, stderr
    assert "mujoco plant's simulation diverged at t = 0.5" in stderr and "MuJoCo reset it" in stderr
    assert summary["plant_failure"] and summary["simulated_time_s"] == pytest.approx(0.502, abs=1e-9)


@pytest.mark.slow
def test_mujoco_refuses_a_foot_on_the_floating_base_body():
    """A foot frame on the base's body: its wrench would hold the pushes, which act there."""
    _mujoco()
    import dataclasses

    from tsid_py.loop.mujoco_plant import MujocoPlant
    from tsid_py.robot_specs import SpecRobot, load_spec

    spec = load_spec("solo12")
    robot = SpecRobot(dataclasses.replace(spec, feet={**spec.feet, "front_left": "base_link"}))
    with pytest.raises(tp.errors.RobotSpecError, match="foot frame is on the floating base's body"):
        MujocoPlant(robot)


def test_a_spec_that_gives_two_feet_one_frame_is_refused():
    import dataclasses

    from tsid_py.robot_specs import load_spec

    spec = load_spec("talos")
    frame = spec.feet["left"]
    with pytest.raises(tp.errors.RobotSpecError, match=f"gives the frame '{frame}' to right and left"):
        dataclasses.replace(spec, feet={"right": frame, "left": frame})


@pytest.mark.slow
def test_mujoco_refuses_a_foot_without_collision_geometry():
    """The URDF's geometry is the witness of where a foot stands: a foot with none would fall
    through the ground, so the plant refuses it and names the way out."""
    _mujoco()
    from tsid_py.loop.mujoco_plant import MujocoPlant
    from tsid_py.robot_specs import SpecRobot, load_spec

    class NoRightFoot(SpecRobot):
        def load_collision_model(self):
            full, kept = super().load_collision_model(), pin.GeometryModel()
            foot = self.model.frames[self.frame_id(self.spec.feet["right"])].parentJoint
            for item in full.geometryObjects:
                if item.parentJoint != foot:
                    kept.addGeometryObject(item)
            return kept

    robot = NoRightFoot(load_spec("talos"))
    with pytest.raises(tp.errors.RobotSpecError, match="foot 'leg_right_sole_fix_joint' has no collision"):
        MujocoPlant(robot)
    MujocoPlant(robot, collision="spec")  # the feet from the spec: it stands


@pytest.mark.slow
def test_a_mujoco_model_built_another_way_runs_in_the_plant_and_a_misnamed_one_is_refused():
    """MuJoCo's own URDF importer reads the URDF's dynamics: its mass is the Pinocchio model's, and
    the plant stands the robot on box feet 1 cm under the soles (its sole frames 1 cm up)."""
    mujoco = _mujoco()
    from tsid_py.loop.mujoco_model import build_mujoco_model_from_urdf
    from tsid_py.loop.mujoco_plant import MujocoPlant

    robot = tp.load_robot("talos")
    model = build_mujoco_model_from_urdf(robot, timestep=2e-3)
    assert model.body_mass.sum() == pytest.approx(pin.computeTotalMass(robot.model), rel=1e-9)
    assert np.all(model.dof_damping == 0.0) and model.opt.timestep == 2e-3  # exact: set so
    plant = MujocoPlant(robot, model=model)
    assert plant.timestep == 2e-3  # exact: the model's own
    plant.reset(robot.default_configuration(), robot.zero_velocity())
    for _ in range(100):
        plant.advance(2e-3)  # unactuated: it settles on its feet for 0.2 s before folding
    state = plant.state()
    sole = plant.data.site_xpos[model.site(robot.spec.feet["right"]).id]
    assert 0.005 < sole[2] < 0.015 and state.contacts[robot.spec.feet["right"]].touching
    dropped = robot.default_configuration()
    dropped[2] += 0.5  # its IMU in free fall (0.1 s of the 0.5 m drop): no specific force, no turn
    plant.reset(dropped, robot.zero_velocity())
    plant.advance(0.1)
    np.testing.assert_allclose(plant.state().imu.accelerometer, 0.0, atol=1e-6)
    np.testing.assert_allclose(plant.state().imu.gyro, 0.0, atol=1e-6)
    with pytest.raises(tp.errors.InvalidParameterError, match="timestep: set by the model"):
        MujocoPlant(robot, model=model, timestep=1e-3)
    spec = mujoco.MjSpec.from_string(
        '<mujoco><worldbody><geom name="floor" type="plane" size="1 1 .1"/></worldbody></mujoco>'
    )
    with pytest.raises(tp.errors.RobotSpecError, match="no joint named 'leg_left_1_joint'"):
        MujocoPlant(robot, model=spec.compile())
    geared = build_mujoco_model_from_urdf(robot)
    geared.actuator_gear[3, 0] = 50.0  # one motor through a gear: ctrl would not be its torque
    with pytest.raises(tp.errors.RobotSpecError, match="not one torque motor"):
        MujocoPlant(robot, model=geared)
    no_accelerometer = build_mujoco_model_from_urdf(robot, compiled=False)
    no_accelerometer.delete(no_accelerometer.sensor("imu_accelerometer"))
    with pytest.raises(tp.errors.RobotSpecError, match="imu_gyro but not its pair"):
        MujocoPlant(robot, model=no_accelerometer.compile())
    no_imu = build_mujoco_model_from_urdf(robot, compiled=False)
    for name in ("imu_gyro", "imu_accelerometer"):
        no_imu.delete(no_imu.sensor(name))
    assert MujocoPlant(robot, model=no_imu.compile()).state().imu is None  # a model without one
