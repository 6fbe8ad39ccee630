"""Planar (surface) contact with a rectangular or polygonal sole."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.contacts.contact_base import ContactBase
from tsid_py.errors import InvalidParameterError
from tsid_py.robot_wrapper import Frame, RobotWrapper
from tsid_py.validation import as_matrix, as_vector


class Contact6d(ContactBase):
    """A foot flat on the ground: one 3-D force per corner point, 12 variables.

    Force variables f = [f_1; ...; f_4] in the contact frame. The wrench at the frame origin is
    T f with T = [I I I I; [p_1]x ... [p_4]x] (p_i the corners). Each f_i lies in the linearized
    friction pyramid (4 faces), and f_min <= n . sum(f_i) <= f_max. The regularization weights on
    the 6-D wrench default to (1, 1, 1e-3, 2, 2, 2), as in TSID's Contact6d.

    Args:
        contact_points: 3x4 matrix of corner positions in the contact frame [m].
        contact_normal: The surface normal in the contact frame (usually (0, 0, 1)).
    """

    n_points = 4
    n_force = 12
    wrench_size = 6

    def __init__(
        self,
        name: str,
        robot: RobotWrapper,
        frame: Frame,
        contact_points: object,
        contact_normal: object,
        mu: float,
        f_min: float,
        f_max: float,
    ) -> None:
        self._points = _corners(contact_points)
        self._force_generator = point_forces_generator(self._points)
        super().__init__(name, robot, frame, contact_normal, mu, f_min, f_max)

    def default_regularization_weights(self) -> np.ndarray:
        return np.array([1.0, 1.0, 1e-3, 2.0, 2.0, 2.0])

    @property
    def contact_points(self) -> np.ndarray:
        """Corner positions in the contact frame, 3x4 [m] (a copy)."""
        return self._points.copy()

    def set_contact_points(self, points: object) -> None:
        """New corner positions in the contact frame, 3x4 [m] (a new force generator T)."""
        self._points = _corners(points)
        self._force_generator = point_forces_generator(self._points)
        self._update_force_regularization()

    def _generator(self) -> np.ndarray:
        return self._force_generator

    def _local_points(self) -> np.ndarray:
        return self._points

    def corner_forces(self, forces: object) -> np.ndarray:
        """The forces as a 4x3 array, one row per corner, in the contact frame [N]."""
        return as_vector("contact forces", forces, self.n_force).reshape(4, 3)


MIN_CORNER_SPACING = 1e-4  # [m] corners closer than this, or all on one line, bound no area


def _corners(points: object) -> np.ndarray:
    """The 3x4 corner matrix, refused when the corners bound no area (two coincide, or all four
    lie on one line): the contact could not resist a moment about that line."""
    points = as_matrix("contact_points", points, (3, 4))
    gaps = np.linalg.norm(points[:, :, None] - points[:, None, :], axis=0)
    np.fill_diagonal(gaps, np.inf)
    i, j = np.unravel_index(np.argmin(gaps), gaps.shape)
    if gaps[i, j] < MIN_CORNER_SPACING:
        raise InvalidParameterError(
            f"contact_points: corners {i} and {j} coincide ({gaps[i, j]:.3g} m apart); "
            "four distinct corners are needed"
        )
    spread = np.linalg.svd(points - points.mean(axis=1, keepdims=True), compute_uv=False)
    if spread[1] < MIN_CORNER_SPACING:
        raise InvalidParameterError(
            "contact_points: the four corners lie on one line; they must span an area (a line contact "
            "holds no moment about its line)"
        )
    return points


def point_forces_generator(points: np.ndarray) -> np.ndarray:
    """T = [I ... I; [p_1]x ... [p_n]x] (6 x 3n): n point forces at ``points`` (3 x n, in the frame)
    to the wrench at the frame's origin, (sum f_i, sum p_i x f_i)."""
    n = points.shape[1]
    T = np.zeros((6, 3 * n))
    for i in range(n):
        T[:3, 3 * i : 3 * i + 3] = np.eye(3)
        T[3:, 3 * i : 3 * i + 3] = pin.skew(points[:, i])
    return T
