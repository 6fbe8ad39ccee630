"""Angular-momentum task (about the CoM)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from tsid_py.constraints import ConstraintEquality
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.tasks.task_base import TaskMotion, TaskState
from tsid_py.tasks.task_parts import Gain
from tsid_py.trajectories import TrajectorySample, as_sample


@dataclass(slots=True, kw_only=True)
class MomentumState(TaskState):
    """The last momentum error L - L_ref, desired rate dL* and drift dA_g,ang v (3-vectors)."""

    momentum_error: np.ndarray
    desired_momentum_rate: np.ndarray
    drift: np.ndarray


class TaskAMEquality(TaskMotion):
    """Track a centroidal angular momentum reference L_ref [kg m^2/s].

    L = A_g,ang v is a velocity-level quantity, so the task is first order:
    dL* = dL_ref - Kp (L - L_ref), and the constraint is A_g,ang dv = dL* - dA_g,ang v. Only ``kp``
    is used, as in TSID, whose ``TaskAMEquality`` ignores Kd. ``kp`` = (1, 1, 0) leaves the vertical
    axis free.
    """

    kp = Gain("Proportional gain on the momentum error [1/s], one per axis.")
    gain_size = 3
    _dim = 3
    _kp: np.ndarray
    _state: MomentumState

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        super().__init__(name, robot)
        self.kp = 0.0
        self._reference = TrajectorySample(np.zeros(3))
        self._state = MomentumState(
            momentum_error=np.zeros(3), desired_momentum_rate=np.zeros(3), drift=np.zeros(3)
        )
        self._momentum_jacobian = np.zeros((6, robot.nv))  # A_g of the step, filled by the robot

    @property
    def reference(self) -> TrajectorySample:
        """L_ref (pos) and dL_ref (vel), a copy."""
        return self._reference.copy()

    def set_reference(self, sample: TrajectorySample) -> None:
        """Set L_ref (pos) and dL_ref (vel), 3-vectors in world axes."""
        self._reference = as_sample(f"reference of task {self.name!r}", sample, 3)

    @property
    def momentum_error(self) -> np.ndarray:
        """L - L_ref at the last computation [kg m^2/s] (a copy)."""
        return self._state.momentum_error.copy()

    @property
    def desired_momentum_rate(self) -> np.ndarray:
        """dL* at the last computation [N m] (a copy)."""
        return self._state.desired_momentum_rate.copy()

    def fill(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data, out: ConstraintEquality) -> None:
        """A_g,ang dv = dL_ref - Kp (A_g,ang v - L_ref) - dA_g,ang v."""
        ref, robot, state = self._reference, self.robot, self._state
        A_ang = robot.momentum_jacobian(data, out=self._momentum_jacobian)[3:]
        state.drift = drift = robot.angular_momentum_time_variation(data)
        state.momentum_error = momentum_error = data.hg.angular - ref.pos  # L = A_g,ang v, computed with A_g
        state.desired_momentum_rate = desired = ref.vel - self._kp * momentum_error
        out.matrix[...] = A_ang
        np.subtract(desired, drift, out=out.vector)

    def get_momentum_rate(self, dv: object) -> np.ndarray:
        """The momentum rate dL = A_g,ang dv + dA_g,ang v that dv (size nv) gives [N m]."""
        return self.constraint.matrix.dot(dv) + self._state.drift  # type: ignore[call-overload]  # array-like dv
