"""Frame placement (SE3) tracking task."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.robot_wrapper import Frame, RobotWrapper
from tsid_py.tasks.task_motion_tracking import TaskMotionTracking, Terms
from tsid_py.trajectories import TrajectorySample, as_sample, as_se3, vector_to_se3


def se3_error(placement: pin.SE3, reference: pin.SE3) -> np.ndarray:
    """Placement error in the local frame, 6-vector (linear [m], angular [rad]).

    With M_err = M^-1 M_ref: linear = translation of M_err (= R^T (p_ref - p)), angular =
    log3(rotation of M_err). This is TSID's ``errorInSE3`` (src/math/utils.cpp): translation and
    rotation are decoupled, so the frame origin converges along a straight line.
    """
    error = placement.actInv(reference)
    vector = pin.log6(error).vector  # its angular part is log3 of the rotation
    vector[:3] = error.translation  # the decoupled linear part
    return vector


def rotate_motion(rotation: np.ndarray, motion: np.ndarray) -> np.ndarray:
    """R applied to both 3-D halves (linear, angular) of a 6-vector: a change of axes, no transport."""
    return motion.reshape(2, 3).dot(rotation.T).reshape(6)


class TaskSE3Equality(TaskMotionTracking):
    """Track a reference placement of a frame.

    In the local frame (default), e = se3_error(M, M_ref) points from the frame to the reference.
    de = M^-1 v_ref - v (rotation only). The constraint is
    J_local dv = Kp e + Kd de + R^T a_ref - a_drift, with a_drift the classical acceleration of the
    frame at dv = 0. With ``use_local_frame(False)``, the errors, Jacobian and drift are rotated to
    world axes (LOCAL_WORLD_ALIGNED), and a_ref is used as is. The 6-D mask selects the rows
    (linear x, y, z, angular x, y, z). The signs are TSID's: its error points to the reference.
    """

    error_points_to_reference = True

    def __init__(self, name: str, robot: RobotWrapper, frame: Frame) -> None:
        super().__init__(name, robot, 6)
        self.frame_id = robot.frame_id(frame)
        self.frame_name = robot.frame_name(frame)
        self.local_frame = True
        self._reference_placement = pin.SE3.Identity()
        self._reference: TrajectorySample | None = None  # None: a static placement's, made when asked
        self._reference_moves = False

    def use_local_frame(self, local_frame: bool) -> None:
        """Express the task in the local frame (True, default) or in world-aligned axes (False)."""
        self.local_frame = bool(local_frame)

    @property
    def reference(self) -> TrajectorySample:
        """The reference sample (a copy): 12-vector placement, 6-vector velocity and acceleration."""
        if self._reference is None:
            self._reference = TrajectorySample.from_se3(self._reference_placement)
        return self._reference.copy()

    @property
    def reference_placement(self) -> pin.SE3:
        """The reference placement (a copy)."""
        return pin.SE3(self._reference_placement)

    def set_reference(self, reference: TrajectorySample | pin.SE3) -> None:
        """Set the reference placement, as an ``SE3`` or an SE3 sample (12-vector pos, 6-vector vel/acc).

        Raises:
            NonFiniteError: The placement holds NaN or infinity.
            DimensionError: Its rotation is not a rotation matrix (:func:`~tsid_py.trajectories.as_se3`),
                or a sample has the wrong sizes.
        """
        name = f"reference of task {self.name!r}"
        if isinstance(reference, pin.SE3):
            self._reference = None  # at rest: its sample is made only if asked for (re-anchored feet)
            self._reference_placement = as_se3(name, reference)
            self._reference_moves = False
            return
        self._reference = as_sample(name, reference, 12, 6)
        self._reference_placement = vector_to_se3(self._reference.pos, name)
        self._reference_moves = bool(
            np.count_nonzero(self._reference.vel) or np.count_nonzero(self._reference.acc)
        )

    def compute_terms(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> Terms:
        """(e, J, drift, v_ref, a_ref) in the task's axes, so that J dv = Kp e + Kd de + a_ref - drift.

        Local axes: e = se3_error(M, M_ref), de = R^T v_ref - J v, a_ref -> R^T a_ref. World axes:
        e = R se3_error(M, M_ref), de = v_ref - J v, a_ref as is. A static reference (see
        :meth:`set_reference`) has zero velocity and acceleration.
        """
        placement, jacobian, drift = self.robot.frame_motion(data, self.frame_id, self.local_frame)
        error = se3_error(placement, self._reference_placement)
        if not self.local_frame:
            error = rotate_motion(placement.rotation, error)
        if not self._reference_moves:
            return error, jacobian, drift, self._zero, self._zero
        ref_vel, ref_acc = self._reference.vel, self._reference.acc  # type: ignore[union-attr]  # set with them
        if self.local_frame:
            rotation_t = placement.rotation.T
            ref_vel, ref_acc = rotate_motion(rotation_t, ref_vel), rotate_motion(rotation_t, ref_acc)
        return error, jacobian, drift, ref_vel, ref_acc
