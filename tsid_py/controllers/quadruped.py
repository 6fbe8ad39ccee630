"""QuadrupedController: a quadruped standing on four point feet with a CoM task.

The set-up of TSID's quadruped demo (demo/demo_quadruped.py): one ContactPoint per foot, forces in
world axes, contacts hard; a CoM task (weight 1) and a posture task (weight 1e-3) at level 1; force
regularization 1e-5; friction mu and normal-force bounds f_min, f_max per foot. We add torque
bounds at level 0, as the biped controller does. It exposes the interface of
:class:`~tsid_py.controllers.biped.BipedController` (``contacts``, ``foot_placement``,
``set_com_reference``, ``compute``, ``tau_max``), so the closed-loop runner drives it unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from tsid_py.contacts.contact_point import ContactPoint
from tsid_py.errors import RobotSpecError
from tsid_py.formulation import InverseDynamicsFormulation
from tsid_py.loop.controller import Controller
from tsid_py.robot_specs import Robot
from tsid_py.solvers.quadprog_solver import SolverHQuadProg
from tsid_py.solvers.solver_base import Solver
from tsid_py.tasks.task_actuation_bounds import TaskActuationBounds
from tsid_py.tasks.task_com_equality import TaskComEquality
from tsid_py.tasks.task_joint_posture import TaskJointPosture
from tsid_py.trajectories import TrajectorySample


@dataclass(frozen=True)
class QuadrupedParams:
    """Gains [1/s^2], weights, friction, force limits [N] and torque limit [N m] of the quadruped."""

    mu: float = 0.3
    f_min: float = 1.0
    f_max: float = 100.0
    kp_contact: float = 10.0
    kp_com: float = 10.0
    kp_posture: float = 10.0
    w_com: float = 1.0
    w_posture: float = 1e-3
    w_force_reg: float = 1e-5
    tau_max: float | None = None  # one torque limit for every joint; None: the URDF effort limits

    @classmethod
    def for_robot(cls, robot: Robot) -> QuadrupedParams:
        """Defaults overridden by the spec's ``[quadruped]`` table."""
        return robot.controller_params(cls(), "quadruped")


class QuadrupedController(Controller):
    """Balance controller of a floating-base robot on point feet (every frame of the spec's ``[feet]``).

    Args:
        robot: A floating-base robot whose spec lists point feet.
        params: Gains and weights; ``QuadrupedParams.for_robot(robot)`` when omitted.
        solver: QP backend (quadprog by default).
    """

    def __init__(
        self, robot: Robot, params: QuadrupedParams | None = None, solver: Solver | None = None
    ) -> None:
        if robot.is_fixed_base or len(robot.spec.feet) < 3:
            raise RobotSpecError(f"{robot.name} is not a quadruped spec: it needs a floating base and [feet]")
        super().__init__(
            robot, InverseDynamicsFormulation("quadruped", robot), solver or SolverHQuadProg("qp")
        )
        self.params = params = params or QuadrupedParams.for_robot(robot)
        form = self.formulation
        self._q0 = robot.default_configuration()
        robot.compute_all_terms(self.data, self._q0, robot.zero_velocity())
        self._q0[2] -= min(
            robot.frame_placement(self.data, f).translation[2] for f in robot.spec.feet.values()
        )
        robot.compute_all_terms(self.data, self._q0, robot.zero_velocity())

        self.contacts: dict[str, ContactPoint] = {}
        for key, frame in robot.spec.feet.items():
            contact = ContactPoint(
                frame, robot, frame, [0.0, 0.0, 1.0], params.mu, params.f_min, params.f_max
            )
            contact.kp = params.kp_contact
            contact.use_local_frame(False)
            contact.set_reference(robot.frame_placement(self.data, frame))
            form.add_rigid_contact(contact, force_reg_weight=params.w_force_reg)
            self.contacts[key] = contact

        self.com_task = TaskComEquality("task-com", robot)
        self.com_task.kp = params.kp_com
        form.add_motion_task(self.com_task, weight=params.w_com, priority=1)

        self.posture_task = TaskJointPosture("task-posture", robot)
        self.posture_task.kp = params.kp_posture
        self.posture_task.set_reference(TrajectorySample(self._q0[7:], tangent_size=robot.na))
        form.add_motion_task(self.posture_task, weight=params.w_posture, priority=1)

        self._tau_max = robot.effort_limit() if params.tau_max is None else np.full(robot.na, params.tau_max)
        self.actuation_task = TaskActuationBounds("task-actuation-bounds", robot)
        self.actuation_task.set_bounds(-self._tau_max, self._tau_max)
        form.add_actuation_task(self.actuation_task, weight=1.0, priority=0)

        self._com_initial = robot.com(self.data)
        self.com_task.set_reference(TrajectorySample(self._com_initial))

    @property
    def com_initial(self) -> np.ndarray:
        """The CoM at q0 [m] (a copy)."""
        return self._com_initial.copy()

    def set_com_reference(self, sample: TrajectorySample) -> None:
        """CoM reference (pos [m], vel [m/s], acc [m/s^2]) in the world frame."""
        self.com_task.set_reference(sample)

    def foot_placement(self, key: str) -> pin.SE3:
        """Current placement of the foot frame named ``key`` in the spec's ``[feet]``."""
        return self.robot.frame_placement(self.data, self.robot.spec.feet[key])
