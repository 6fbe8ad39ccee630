"""Plain inverse dynamics of one frame of a motion: tau = M(q) a + h(q, v) (Pinocchio's RNEA)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.validation import as_vector


@dataclass(frozen=True)
class InverseDynamicsResult:
    """Generalized forces that produce an acceleration without any contact.

    Attributes:
        generalized_forces: M a + h, size nv [N, N m].
        joint_torques: The actuated rows, size na [N m] (N for prismatic joints).
        root_wrench: For a floating base, the first six rows: the wrench (force [N], moment [N m],
            base frame, about the base origin) that a "crane" holding the root would have to apply.
            No actuator can produce it; contacts must (see ``contact_inverse_dynamics``). Empty for a
            fixed base.
        physical: False for a floating base, whose root wrench is not a joint torque.
    """

    generalized_forces: np.ndarray
    joint_torques: np.ndarray
    root_wrench: np.ndarray
    physical: bool


def check_motion_state(
    robot: RobotWrapper, q: object, v: object, a: object
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated (q, v, a) as float vectors of sizes nq, nv, nv."""
    q, v = robot.check_state(q, v)
    return q, v, as_vector("a", a, robot.nv)


def inverse_dynamics(robot: RobotWrapper, q: object, v: object, a: object) -> InverseDynamicsResult:
    """Torques for acceleration ``a`` at state (q, v) with no contact: M a + h.

    Args:
        q: Configuration, size nq.
        v: Velocity, size nv [m/s, rad/s].
        a: Acceleration, size nv [m/s^2, rad/s^2].
    """
    q, v, a = check_motion_state(robot, q, v, a)
    generalized = np.array(pin.rnea(robot.model, robot.create_data(), q, v, a))
    root = robot.nv - robot.na
    return InverseDynamicsResult(
        generalized_forces=generalized,
        joint_torques=generalized[root:].copy(),
        root_wrench=generalized[:root].copy(),
        physical=robot.is_fixed_base,
    )
