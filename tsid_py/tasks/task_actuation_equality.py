"""Joint torque reference, with per-joint weights (also: passive joints held at zero torque)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.constraints import ConstraintEquality
from tsid_py.errors import InvalidParameterError
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.tasks.task_base import TaskActuation
from tsid_py.tasks.task_parts import Mask
from tsid_py.validation import Copied, as_vector


class TaskActuationEquality(TaskActuation):
    """W S_mask tau = W S_mask tau_ref on the actuated joints [N m].

    W = diag(weights) scales each joint's row (TSID's TaskActuationEquality ``setWeightVector``).
    At priority 0, with tau_ref = 0 and a mask on some joints, those joints are passive: the
    solution gives them exactly zero torque.
    """

    reference = Copied("tau_ref of every actuated joint [N m].")
    weights = Copied("Per-joint weights W, size na.")
    mask = Mask("Which actuated joints the task acts on (0/1 per joint; read-only copy).")

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        super().__init__(name, robot)
        self._reference = np.zeros(robot.na)
        self._weights = np.ones(robot.na)
        self.mask = np.ones(robot.na)

    def _apply_mask(self) -> None:
        """Nothing to rebuild: W S_mask is written at each fill (not a selection: W scales it)."""

    def set_reference(self, tau_ref: object) -> None:
        """Set tau_ref of every actuated joint, size na [N m]."""
        self._reference = as_vector(f"torque reference of {self.name!r}", tau_ref, self.robot.na)

    def set_weight_vector(self, weights: object) -> None:
        """Set the per-joint weights W, size na.

        Raises:
            InvalidParameterError: A weight < 0.
        """
        weights = as_vector(f"weights of {self.name!r}", weights, self.robot.na)
        if np.any(weights < 0.0):
            raise InvalidParameterError(f"weights of {self.name!r} must be >= 0, got {weights.tolist()}")
        self._weights = weights

    def fill(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data, out: ConstraintEquality) -> None:
        """W S_mask tau = W S_mask tau_ref."""
        weights, axes = self._weights, np.flatnonzero(self._mask)
        out.matrix[...] = 0.0
        out.matrix[np.arange(axes.size), axes] = weights[axes]
        out.vector[...] = (weights * self._reference)[axes]
