"""ArmController: TSID's manipulator controller for a fixed-base arm (end effector + posture).

The set-up of TSID's ``TsidManipulator`` (exercizes/tsid_manipulator.py, ur5_reaching_conf.py): an
end-effector TaskSE3Equality in world axes with a position-only mask (weight 1), a posture task
(weight 1e-3), and at level 0 torque bounds (0.4 x URDF effort) and joint velocity bounds
(0.4 x URDF velocity limit, enforced over one control period).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from tsid_py.errors import InvalidParameterError, RobotSpecError
from tsid_py.formulation import InverseDynamicsFormulation
from tsid_py.loop.controller import Controller
from tsid_py.robot_specs import RobotSpec, SpecRobot
from tsid_py.solvers.quadprog_solver import SolverHQuadProg
from tsid_py.solvers.solver_base import Solver
from tsid_py.tasks.task_actuation_bounds import TaskActuationBounds
from tsid_py.tasks.task_joint_bounds import TaskJointBounds
from tsid_py.tasks.task_joint_posture import TaskJointPosture
from tsid_py.tasks.task_se3_equality import TaskSE3Equality
from tsid_py.trajectories import TrajectorySample


@dataclass(frozen=True)
class ArmParams:
    """Gains [1/s^2], weights and bound scalings of the arm controller (TSID's UR5 reaching values)."""

    kp_ee: float = 100.0
    kp_posture: float = 1.0
    w_ee: float = 1.0
    w_posture: float = 1e-3
    ee_mask: tuple[float, ...] = (1.0, 1.0, 1.0, 0.0, 0.0, 0.0)
    tau_max_scaling: float = 0.4  # torque bounds = scaling x URDF effort limits
    v_max_scaling: float = 0.4  # velocity bounds = scaling x URDF velocity limits


class ArmController(Controller):
    """End-effector position control of a fixed-base arm.

    Args:
        robot: A fixed-base robot whose spec names an ``end_effector`` frame.
        dt: Control period [s] (the joint velocity bounds act over one period).
        params: Gains and weights.
        solver: QP backend (quadprog by default).
    """

    @staticmethod
    def check_spec(spec: RobotSpec) -> None:
        """RobotSpecError unless ``spec`` is an arm's: a fixed base and an ``end_effector``."""
        if spec.floating_base or spec.end_effector is None:
            raise RobotSpecError(f"{spec.name} is not an arm spec: it needs a fixed base and an end_effector")

    def __init__(
        self, robot: SpecRobot, dt: float, params: ArmParams | None = None, solver: Solver | None = None
    ) -> None:
        self.check_spec(robot.spec)
        super().__init__(robot, InverseDynamicsFormulation("arm", robot), solver or SolverHQuadProg("qp"))
        self.params = params = params or ArmParams()
        form = self.formulation
        self._q0 = robot.default_configuration()
        robot.compute_all_terms(self.data, self._q0, robot.zero_velocity())

        self.ee_task = TaskSE3Equality("task-ee", robot, robot.spec.end_effector)
        self.ee_task.kp = params.kp_ee
        self.ee_task.mask = params.ee_mask
        self.ee_task.use_local_frame(False)
        self.ee_task.set_reference(self.ee_placement())
        form.add_motion_task(self.ee_task, weight=params.w_ee, priority=1)

        self.posture_task = TaskJointPosture("task-posture", robot)
        self.posture_task.kp = params.kp_posture
        self.posture_task.set_reference(TrajectorySample(self._q0, tangent_size=robot.na))
        form.add_motion_task(self.posture_task, weight=params.w_posture, priority=1)

        self._tau_max = params.tau_max_scaling * robot.effort_limit()
        self.actuation_task = TaskActuationBounds("task-actuation-bounds", robot)
        self.actuation_task.set_bounds(-self._tau_max, self._tau_max)
        form.add_actuation_task(self.actuation_task, weight=1.0, priority=0)

        self._v_max = params.v_max_scaling * robot.velocity_limit()
        self.joint_bounds_task = TaskJointBounds("task-joint-bounds", robot, dt)
        self.joint_bounds_task.set_velocity_bounds(-self._v_max, self._v_max)
        form.add_motion_task(self.joint_bounds_task, weight=1.0, priority=0)

        initial = self.ee_placement()
        self._ee_initial, self._ee_rotation = initial.translation, initial.rotation
        self._reach_centre, self._reach = arm_reach(robot, robot.spec.end_effector)

    @property
    def reach(self) -> tuple[np.ndarray, float]:
        """The sphere the end effector cannot leave: its centre (the first joint's origin, world)
        [m] and radius (the length of the chain from it to the end effector) [m]
        (:func:`arm_reach`)."""
        return self._reach_centre.copy(), self._reach

    def check_reachable(self, position: np.ndarray) -> None:
        """InvalidParameterError, in one line with the arm's reach, for a position [m] (world)
        farther from the first joint than the chain is long."""
        distance = float(np.linalg.norm(np.asarray(position, dtype=float) - self._reach_centre))
        if distance > self._reach:
            raise InvalidParameterError(
                f"the end-effector target {np.round(position, 3).tolist()} m is out of reach: it is "
                f"{distance:.3f} m from the {self.robot.name}'s first joint, and the arm reaches "
                f"{self._reach:.3f} m from it at most"
            )

    @property
    def ee_initial(self) -> np.ndarray:
        """The end-effector position at q0 [m] (a copy)."""
        return self._ee_initial.copy()

    @property
    def v_max(self) -> np.ndarray:
        """The joint velocity bounds [rad/s] (a copy)."""
        return self._v_max.copy()

    def ee_placement(self) -> pin.SE3:
        """Current placement of the end-effector frame (world)."""
        return self.robot.frame_placement(self.data, self.robot.spec.end_effector)

    def set_ee_reference(self, position: TrajectorySample) -> None:
        """End-effector position reference: pos [m], vel [m/s], acc [m/s^2] in world axes.

        The orientation part of the SE3 reference is the initial one (it is masked out anyway).

        Raises:
            InvalidParameterError: A position out of the arm's reach (:meth:`check_reachable`).
        """
        self.check_reachable(position.pos)
        placement = pin.SE3(self._ee_rotation, position.pos)
        self.ee_task.set_reference(
            TrajectorySample.from_se3(
                placement,
                np.concatenate([position.vel, np.zeros(3)]),
                np.concatenate([position.acc, np.zeros(3)]),
            )
        )


def arm_reach(robot: SpecRobot, frame: str) -> tuple[np.ndarray, float]:
    """The sphere a fixed-base arm's ``frame`` cannot leave, in any configuration: centred on the
    first joint of its chain (fixed in the world: the base is), of radius the chain's length, the
    sum of the distances between consecutive joint origins and from the last to the frame (links
    are rigid: each a constant of the model, ``jointPlacements``). An upper bound: a target beyond
    it is out of reach whatever the joint limits."""
    model = robot.model
    placement = model.frames[robot.frame_id(frame)]
    chain, joint = [], placement.parentJoint
    while joint > 0:
        chain.append(joint)
        joint = model.parents[joint]
    first = chain[-1]
    radius = float(np.linalg.norm(placement.placement.translation))
    radius += sum(float(np.linalg.norm(model.jointPlacements[j].translation)) for j in chain[:-1])
    return np.array(model.jointPlacements[first].translation, dtype=float), radius
