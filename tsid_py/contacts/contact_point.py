"""Point contact (e.g. a quadruped's foot)."""

from __future__ import annotations

import numpy as np

from tsid_py.contacts.contact_base import ContactBase

POINT_FORCE_GENERATOR = np.eye(3)  # T of a contact whose force variables are one 3-D force
POINT_FORCE_GENERATOR.flags.writeable = False


class ContactPoint(ContactBase):
    """A point in contact: one 3-D force f, applied at the frame origin.

    Only the linear acceleration of the point is constrained (motion mask (1, 1, 1, 0, 0, 0)).
    f is expressed in the contact frame by default, or in world-aligned axes after
    ``use_local_frame(False)``. Friction pyramid and f_min <= n . f <= f_max as in Contact6d;
    regularization weights (1, 1, 1e-3) on f. T is the 3x3 identity.
    """

    n_points = 1
    n_force = 3
    wrench_size = 3
    motion_mask = (1.0, 1.0, 1.0, 0.0, 0.0, 0.0)

    def default_regularization_weights(self) -> np.ndarray:
        return np.array([1.0, 1.0, 1e-3])

    def _generator(self) -> np.ndarray:
        return POINT_FORCE_GENERATOR

    def use_local_frame(self, local_frame: bool) -> None:
        """Express the force and motion constraint in the contact frame (True) or world axes (False)."""
        self.motion_task.use_local_frame(local_frame)
