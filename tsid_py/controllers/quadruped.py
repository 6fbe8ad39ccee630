"""QuadrupedController: a quadruped standing on four point feet with a CoM task.

The set-up of TSID's quadruped demo (demo/demo_quadruped.py): one ContactPoint per foot, forces in
world axes, contacts hard; a CoM task (weight 1) and a posture task (weight 1e-3) at level 1; force
regularization 1e-5; friction mu and normal-force bounds f_min, f_max per foot (f_max from the
robot's weight unless its spec gives one: :func:`~tsid_py.robot_specs.max_normal_force`;
TSID's demo, for Solo, 100 N, which solo12.toml keeps). We add torque
bounds at level 0, as the biped controller does. Both are :class:`LeggedController` s, so the
closed-loop runner drives either.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tsid_py.contacts.contact_point import ContactPoint
from tsid_py.controllers.legged import LeggedController
from tsid_py.errors import RobotSpecError
from tsid_py.robot_specs import RobotSpec, SpecRobot, max_normal_force, min_normal_force
from tsid_py.solvers.solver_base import Solver


@dataclass(frozen=True)
class QuadrupedParams:
    """Gains [1/s^2], weights, friction, force limits [N] and torque limit [N m] of the quadruped."""

    mu: float = 0.3
    f_min: float | None = None  # None: the robot's (min_normal_force); TSID's Solo demo: 1 N
    f_max: float | None = None  # None: the robot's (max_normal_force); TSID's Solo demo: 100 N
    kp_contact: float = 10.0
    kp_com: float = 10.0
    kp_posture: float = 10.0
    w_com: float = 1.0
    w_posture: float = 1e-3
    w_force_reg: float = 1e-5
    tau_max: float | None = None  # one torque limit for every joint; None: the URDF effort limits

    @classmethod
    def for_robot(cls, robot: SpecRobot) -> QuadrupedParams:
        """Defaults overridden by the spec's ``[quadruped]`` table."""
        return robot.controller_params(cls(), "quadruped")


class QuadrupedController(LeggedController):
    """Balance controller of a floating-base robot on point feet (every frame of the spec's ``[feet]``).

    Args:
        robot: A floating-base robot whose spec lists point feet.
        params: Gains and weights; ``QuadrupedParams.for_robot(robot)`` when omitted.
        solver: QP backend (quadprog by default).
    """

    @staticmethod
    def check_spec(spec: RobotSpec) -> None:
        """RobotSpecError unless ``spec`` is a quadruped's: a floating base and three [feet] or more."""
        if not spec.floating_base or len(spec.feet) < 3:
            raise RobotSpecError(f"{spec.name} is not a quadruped spec: it needs a floating base and [feet]")

    def __init__(
        self, robot: SpecRobot, params: QuadrupedParams | None = None, solver: Solver | None = None
    ) -> None:
        self.check_spec(robot.spec)
        super().__init__(robot, "quadruped", solver)
        params = params or QuadrupedParams.for_robot(robot)
        f_min = min_normal_force(robot.total_mass) if params.f_min is None else params.f_min
        f_max = max_normal_force(robot.total_mass) if params.f_max is None else params.f_max
        self.params = params = replace(params, f_min=f_min, f_max=f_max)
        for key, frame in robot.spec.feet.items():
            contact = ContactPoint(frame, robot, frame, [0.0, 0.0, 1.0], params.mu, f_min, f_max)
            contact.kp = params.kp_contact
            contact.use_local_frame(False)
            contact.set_reference(robot.frame_placement(self.data, frame))
            self.formulation.add_rigid_contact(contact, force_reg_weight=params.w_force_reg)
            self._contacts[key] = contact
        self._add_com_and_posture(params.kp_com, params.w_com, params.kp_posture, params.w_posture)
        self._schedule_feet(params.w_force_reg, 0.0)  # no foot tasks: its feet stay down
        self._add_torque_bounds(
            robot.effort_limit() if params.tau_max is None else np.full(robot.na, params.tau_max)
        )
