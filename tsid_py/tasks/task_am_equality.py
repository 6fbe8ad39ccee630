"""Angular-momentum task (about the CoM)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.constraints import ConstraintEquality
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.tasks.task_base import TaskMotion, equality_as_computed
from tsid_py.trajectories import TrajectorySample, as_sample
from tsid_py.validation import as_gain, read_only


class TaskAMEquality(TaskMotion):
    """Track a centroidal angular momentum reference L_ref [kg m^2/s].

    L = A_g,ang v is a velocity-level quantity, so the task is first order:
    dL* = dL_ref - Kp (L - L_ref), and the constraint is A_g,ang dv = dL* - dA_g,ang v. Only ``kp``
    is used, as in TSID, whose ``TaskAMEquality`` ignores Kd. ``kp`` = (1, 1, 0) leaves the vertical
    axis free.
    """

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        super().__init__(name, robot)
        self._kp = np.zeros(3)
        self._reference = TrajectorySample(np.zeros(3))
        self._last.momentum_error = np.zeros(3)
        self._last.desired_momentum_rate = np.zeros(3)
        self._last.drift = np.zeros(3)
        self._momentum_jacobian = np.zeros((6, robot.nv))  # A_g of the step, filled by the robot

    @property
    def dim(self) -> int:
        return 3

    @property
    def kp(self) -> np.ndarray:
        """Proportional gain on the momentum error [1/s] (a read-only copy)."""
        return read_only(self._kp.copy())

    @kp.setter
    def kp(self, value: object) -> None:
        self._kp = as_gain("kp", value, 3)

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
        return self._last.momentum_error.copy()

    @property
    def desired_momentum_rate(self) -> np.ndarray:
        """dL* at the last computation [N m] (a copy)."""
        return self._last.desired_momentum_rate.copy()

    def fill(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data, out: ConstraintEquality) -> None:
        """A_g,ang dv = dL_ref - Kp (A_g,ang v - L_ref) - dA_g,ang v."""
        ref, robot = self._reference, self.robot
        A_ang = robot.momentum_jacobian(data, out=self._momentum_jacobian)[3:]
        drift = robot.angular_momentum_time_variation(data)
        self._last.drift = drift
        self._last.momentum_error = momentum_error = A_ang.dot(v) - ref.pos
        self._last.desired_momentum_rate = desired = ref.vel - self._kp * momentum_error
        out.matrix[...] = A_ang
        np.subtract(desired, drift, out=out.vector)

    def _last_constraint(self) -> ConstraintEquality:
        """From the last A_g (the task's buffer), dL* and drift."""
        desired, drift = self._last.desired_momentum_rate, self._last.drift
        return equality_as_computed(self.name, self._momentum_jacobian[3:], desired - drift)

    def get_momentum_rate(self, dv: object) -> np.ndarray:
        """The momentum rate dL = A_g,ang dv + dA_g,ang v that dv (size nv) gives [N m]."""
        return self.constraint.matrix.dot(dv) + self._last.drift  # type: ignore[call-overload]  # array-like dv
