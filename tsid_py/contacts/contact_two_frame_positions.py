"""Bilateral contact between two frames of the robot: closes a kinematic chain."""

from __future__ import annotations

import numpy as np

from tsid_py.constraints import ConstraintInequality
from tsid_py.contacts.contact_base import ContactBase
from tsid_py.contacts.contact_point import POINT_FORCE_GENERATOR
from tsid_py.errors import InvalidParameterError
from tsid_py.robot_wrapper import Frame, RobotWrapper
from tsid_py.tasks.task_two_frames_equality import TaskTwoFramesEquality
from tsid_py.validation import as_scalar


class ContactTwoFramePositions(ContactBase):
    """Glue the origins of two frames together with a 3-D force (TSID's ContactTwoFramePositions).

    Motion constraint: the relative acceleration of the two origins follows a* = Kp e + Kd de, so
    the frames stay together (TaskTwoFramesEquality, linear rows, world-aligned axes). The force
    variables f (3, world-aligned axes [N]) act as +f on frame 1 and -f on frame 2: the dynamics
    gain (J_1 - J_2)^T f. Each component is bounded, f_min <= f_k <= f_max, with no friction. The
    contact is bilateral, so f_min may be negative: TSID's exercise uses -1e3 and 1e3.
    Regularization weights (1, 1, 1).
    """

    n_points = 1
    n_force = 3
    wrench_size = 3
    motion_mask = (1.0, 1.0, 1.0, 0.0, 0.0, 0.0)
    unilateral = False

    def __init__(
        self, name: str, robot: RobotWrapper, frame1: Frame, frame2: Frame, f_min: float, f_max: float
    ) -> None:
        self._init_motion(name, robot, TaskTwoFramesEquality(name, robot, frame1, frame2))
        self.frame_id, self.frame_name = self.motion_task.frame_id1, self.motion_task.frame_name1
        self.frame_id2, self.frame_name2 = self.motion_task.frame_id2, self.motion_task.frame_name2
        self._f_min, self._f_max = _force_bounds(f_min, f_max)
        self._init_forces()

    def default_regularization_weights(self) -> np.ndarray:
        return np.ones(3)

    def _generator(self) -> np.ndarray:
        return POINT_FORCE_GENERATOR

    def _update_force_inequality(self) -> None:
        bounds = np.full(3, self._f_min), np.full(3, self._f_max)
        self._force_constraint = ConstraintInequality(self.name, np.eye(3), *bounds)

    def set_min_normal_force(self, f_min: float) -> None:
        """Lower bound of each force component [N] (may be negative)."""
        self._f_min, self._f_max = _force_bounds(f_min, self._f_max)
        self._update_force_inequality()

    def set_max_normal_force(self, f_max: float) -> None:
        """Upper bound of each force component [N]."""
        self._f_min, self._f_max = _force_bounds(self._f_min, f_max)
        self._update_force_inequality()

    def set_reference(self, placement: object) -> None:
        """Refused: the contact holds two frames together, toward no placement."""
        raise InvalidParameterError(f"{self.name!r} holds two frames together: it has no reference placement")

    @property
    def reference(self) -> object:
        raise InvalidParameterError(f"{self.name!r} holds two frames together: it has no reference placement")

    @property
    def contact_normal(self) -> np.ndarray:
        raise InvalidParameterError(f"{self.name!r} holds two frames together: it has no contact normal")

    @property
    def mu(self) -> float:
        raise InvalidParameterError(
            f"{self.name!r} holds two frames together: it has no friction coefficient"
        )

    def get_normal_force(self, forces: object) -> float:
        """A bilateral contact has no normal direction: 0, as in TSID."""
        return 0.0


def _force_bounds(f_min: float, f_max: float) -> tuple[float, float]:
    f_min, f_max = as_scalar("f_min", f_min), as_scalar("f_max", f_max)
    if f_min > f_max:
        raise InvalidParameterError(f"f_min must be <= f_max, got f_min = {f_min} N > f_max = {f_max} N")
    return f_min, f_max
