"""Time integration of the controller's accelerations on the configuration manifold."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.validation import as_scalar, as_vector


def integrate(
    robot: RobotWrapper, q: object, v: object, dv: object, dt: float
) -> tuple[np.ndarray, np.ndarray]:
    """One semi-implicit step: v_mean = v + dt/2 dv, v' = v + dt dv, q' = q (+) dt v_mean.

    (+) is Pinocchio's ``integrate`` (the exponential map on each joint's Lie group), so a
    free-flyer's quaternion stays unit. This is the integration of TSID's exercises.

    Returns:
        (q', v') with q' of size nq and v' of size nv.
    """
    q, v = robot.check_state(q, v)
    dv = as_vector("dv", dv, robot.nv)
    dt = as_scalar("dt", dt, minimum=0.0, strict=True)
    v_mean = v + 0.5 * dt * dv
    return pin.integrate(robot.model, q, dt * v_mean), v + dt * dv
