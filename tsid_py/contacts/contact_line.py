"""Line contact: an edge of a body on a surface (a foot on its toe, a knee on the ground)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.contacts.contact_6d import point_forces_generator
from tsid_py.contacts.contact_base import ContactBase
from tsid_py.errors import InvalidParameterError
from tsid_py.robot_wrapper import Frame, RobotWrapper
from tsid_py.tasks.task_motion_tracking import TaskMotionTracking, Terms
from tsid_py.tasks.task_se3_equality import se3_error
from tsid_py.trajectories import TrajectorySample, as_sample, as_se3, vector_to_se3
from tsid_py.validation import as_matrix, as_scalar, as_unit_vector, as_vector

MIN_LINE_LENGTH = 1e-4  # [m] end points closer than this define no line
NORMAL_TOLERANCE = 1e-6  # |n . d| above this: the normal is not orthogonal to the line
LINE_MASK = (1.0, 1.0, 1.0, 0.0, 1.0, 1.0)  # the line frame's rows that are held: all but the roll
HELD_ROWS = np.flatnonzero(LINE_MASK)


def line_frame(endpoints: np.ndarray, normal: np.ndarray) -> pin.SE3:
    """The line frame L in the contact frame: origin at the segment's midpoint c, x along the line
    d = (p_2 - p_1) / |p_2 - p_1|, z along the contact normal n (which must be orthogonal to d),
    y = n x d."""
    d = endpoints[:, 1] - endpoints[:, 0]
    length = float(np.linalg.norm(d))
    if length < MIN_LINE_LENGTH:
        raise InvalidParameterError(
            f"endpoints: the two end points are {length:.3g} m apart; a line contact needs two "
            f"distinct points (>= {MIN_LINE_LENGTH} m apart)"
        )
    d = d / length
    if abs(float(normal.dot(d))) > NORMAL_TOLERANCE:
        raise InvalidParameterError(
            f"contact_normal {normal.tolist()} is not orthogonal to the line {d.tolist()} "
            f"(n . d = {normal.dot(d):.3g}): the surface contains the line"
        )
    rotation = np.column_stack([d, np.cross(normal, d), normal])
    return pin.SE3(rotation, endpoints.mean(axis=1))


class TaskLineHold(TaskMotionTracking):
    """The motion constraint of a line contact: the line frame L keeps its placement, but for the
    roll about the line.

    L is fixed on the body (:func:`line_frame`); X is its placement in the contact frame, and
    M_L = M X. In L's axes:

    - the error is se3_error(M_L, M_L_ref);
    - the Jacobian is J_L = Ad(X^-1) J, with J the frame's LOCAL Jacobian;
    - the drift is L's classical acceleration at dv = 0, a_L + (w_L x v_L,lin, 0). Here
      a_L = Ad(X^-1) a, with a the frame's spatial acceleration (its classical one less
      (w x v_lin, 0)).

    The rows kept are the three translations and the two rotations orthogonal to the line (mask
    (1, 1, 1, 0, 1, 1)). The reference is a fixed placement of the contact frame: a contact does
    not follow a trajectory. The task is written in local axes only.
    """

    error_points_to_reference = True  # as TSID's SE3 task's, and the surface contact's hold

    def __init__(self, name: str, robot: RobotWrapper, frame: Frame, offset: pin.SE3) -> None:
        super().__init__(name, robot, 6)
        self.frame_id = robot.frame_id(frame)
        self.frame_name = robot.frame_name(frame)
        self.local_frame = True
        self._reference_placement = pin.SE3.Identity()
        self.set_line_offset(offset)

    def set_line_offset(self, offset: pin.SE3) -> None:
        """The placement of the line frame L in the contact frame."""
        self._offset = pin.SE3(offset)
        self._offset_inverse_action = self._offset.inverse().toActionMatrix()

    def use_local_frame(self, local_frame: bool) -> None:
        """The line's axes only: ``False`` is refused."""
        if not local_frame:
            raise InvalidParameterError(
                f"the motion constraint of line contact {self.name!r} is written in the line's axes only"
            )

    def set_reference(self, reference: TrajectorySample | pin.SE3) -> None:
        """The placement of the contact frame to hold (an ``SE3``, or an SE3 sample at rest)."""
        name = f"reference of task {self.name!r}"
        if isinstance(reference, pin.SE3):
            self._reference_placement = as_se3(name, reference)
            return
        sample = as_sample(name, reference, 12, 6)
        if np.count_nonzero(sample.vel) or np.count_nonzero(sample.acc):
            raise InvalidParameterError(
                f"line contact {self.name!r} holds a fixed placement: its reference cannot move"
            )
        self._reference_placement = vector_to_se3(sample.pos, name)

    @property
    def reference_placement(self) -> pin.SE3:
        """The placement of the contact frame held (a copy)."""
        return pin.SE3(self._reference_placement)

    @property
    def line_offset(self) -> pin.SE3:
        """The placement of the line frame L in the contact frame (a copy)."""
        return pin.SE3(self._offset)

    def compute_terms(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> Terms:
        """(e, J_L, L's classical drift, 0, 0) in L's axes (class docstring)."""
        placement, frame_jacobian, classical = self.robot.frame_motion(data, self.frame_id, True)
        to_line = self._offset_inverse_action
        frame_twist = frame_jacobian.dot(v)
        spatial = classical  # the frame's spatial acceleration at dv = 0: classical less (w x v, 0)
        spatial[:3] -= np.cross(frame_twist[3:], frame_twist[:3])
        jacobian, twist, drift = to_line.dot(frame_jacobian), to_line.dot(frame_twist), to_line.dot(spatial)
        drift[:3] += np.cross(twist[3:], twist[:3])  # L's classical acceleration
        error = se3_error(placement * self._offset, self._reference_placement * self._offset)
        return error, jacobian, drift, self._zero, self._zero


class ContactLine(ContactBase):
    """A body touching a surface along a segment: two 3-D point forces at its end points.

    Force variables f = [f_1; f_2] (6, in the contact frame [N]) at the end points p_1, p_2. Each
    f_i lies in the linearized friction pyramid (4 faces, friction coefficient mu) and
    f_min <= n . (f_1 + f_2) <= f_max (n the contact normal, orthogonal to the line).

    Motion: the motion constraint (:class:`TaskLineHold`, 5 rows) holds the translation of the
    segment's midpoint and the two rotations orthogonal to the line. The body may roll about the
    edge: a foot tipping onto its toe, a box pivoting on an edge. Why: docs/concepts/contacts.md,
    section "Parametrisations". The hold constrains exactly the motions that do work against the
    wrenches the contact can exert: the reciprocity of contact twists and wrenches (Featherstone,
    "Rigid Body Dynamics Algorithms", 2008, ch. 11). PlaCo's LineContact holds the same 5
    directions.

    The formulation sees the wrench in the 5 held directions. The force generator T (5 x 6) maps f
    to (F_x, F_y, F_z, tau_y, tau_z) at the midpoint c, in the line frame L (x along the line, z
    along n, y = n x d; :func:`line_frame`). tau_x is zero for any f. So ``force_generator``,
    ``set_force_reference`` and a force task on this contact use those 5 components.
    :meth:`wrench` gives the full 6-D wrench at the frame origin in the frame's axes, as every
    contact's does, for the physics checks. Regularization weights (1, 1, 1e-3, 2, 2) on the 5
    components.

    Args:
        name: Contact name.
        robot: The robot.
        frame: The contact frame; forces and end points are expressed in it.
        endpoints: 3x2 matrix, the end points p_1, p_2 of the segment in the contact frame [m].
        contact_normal: Unit normal of the surface in the contact frame, orthogonal to the line.
        mu: Friction coefficient, > 0.
        f_min: Minimum total normal force [N] (>= 0).
        f_max: Maximum total normal force [N].
    """

    n_points = 2
    n_force = 6
    wrench_size = 5
    motion_mask = LINE_MASK

    def __init__(
        self,
        name: str,
        robot: RobotWrapper,
        frame: Frame,
        endpoints: object,
        contact_normal: object,
        mu: float,
        f_min: float,
        f_max: float,
    ) -> None:
        self._points = as_matrix("endpoints", endpoints, (3, 2))
        normal = as_unit_vector("contact_normal", contact_normal)
        self._line = line_frame(self._points, normal)
        self._full_generator = point_forces_generator(self._points)
        self._line_generator = _line_generator(self._points, self._line)
        self._hold = TaskLineHold(name, robot, frame, self._line)
        self._init_motion(name, robot, self._hold)
        self.frame_id = self._hold.frame_id
        self.frame_name = self._hold.frame_name
        self._normal = normal
        self._mu = as_scalar("mu", mu, minimum=0.0, strict=True)
        f_min = as_scalar("f_min", f_min, minimum=0.0)
        f_max = as_scalar("f_max", f_max)
        if f_min > f_max:
            raise InvalidParameterError(f"f_min must be <= f_max, got f_min = {f_min} N > f_max = {f_max} N")
        self._f_min, self._f_max = f_min, f_max
        self._init_forces()

    def default_regularization_weights(self) -> np.ndarray:
        return np.array([1.0, 1.0, 1e-3, 2.0, 2.0])

    def _generator(self) -> np.ndarray:
        return self._line_generator

    def _local_points(self) -> np.ndarray:
        return self._points

    @property
    def endpoints(self) -> np.ndarray:
        """The end points p_1, p_2 in the contact frame, 3x2 [m] (a copy)."""
        return self._points.copy()

    @property
    def line_placement(self) -> pin.SE3:
        """The line frame L in the contact frame (a copy): origin at the midpoint, x along the
        line, z along the normal."""
        return pin.SE3(self._line)

    def set_contact_normal(self, normal: object) -> None:
        """A new normal, orthogonal to the line (the line frame and T follow)."""
        normal = as_unit_vector("contact_normal", normal)
        line = line_frame(self._points, normal)
        self._normal, self._line = normal, line
        self._line_generator = _line_generator(self._points, line)
        self._hold.set_line_offset(line)
        self._update_force_inequality()
        self._update_force_regularization()

    def wrench(self, forces: object) -> np.ndarray:
        """The 6-D wrench of the end-point forces at the frame origin, in the frame's axes [N, N m]:
        (f_1 + f_2, p_1 x f_1 + p_2 x f_2)."""
        return self._full_generator.dot(as_vector("contact forces", forces, self.n_force, copy=False))

    def line_wrench(self, forces: object) -> np.ndarray:
        """The 5 components T f: (F_x, F_y, F_z, tau_y, tau_z) at the midpoint in the line frame."""
        return super().wrench(forces)


def _line_generator(points: np.ndarray, line: pin.SE3) -> np.ndarray:
    """The wrench at the midpoint in the line frame, without its (zero) roll moment (5x6)."""
    R, c = line.rotation, line.translation
    T = np.zeros((6, 6))
    for i in range(2):
        T[:3, 3 * i : 3 * i + 3] = R.T
        T[3:, 3 * i : 3 * i + 3] = R.T.dot(pin.skew(points[:, i] - c))
    return T[HELD_ROWS]
