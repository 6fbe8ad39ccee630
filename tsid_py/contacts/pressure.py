"""Where contacts touch and where they push: world contact points and the centre of pressure."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from tsid_py.errors import InvalidParameterError
from tsid_py.validation import as_vector

if TYPE_CHECKING:
    import pinocchio as pin

    from tsid_py.contacts.contact_base import ContactBase

GROUND_NORMAL = np.array([0.0, 0.0, 1.0])


def contact_points_world(contact: ContactBase, data: pin.Data) -> tuple[np.ndarray, np.ndarray]:
    """The contact's points in the world (3 x points) [m] and the rotation of its force axes to the world.

    The points are a Contact6d's corners (``contact_points``) or the frame origin of a point
    contact; forces are in the contact frame, or in world axes for a point contact using
    world-aligned axes. A bilateral contact (two frames held together) has no contact surface:
    it raises :class:`InvalidParameterError`.
    """
    if not contact.unilateral:
        raise InvalidParameterError(f"contact {contact.name!r} is bilateral: it has no centre of pressure")
    placement = data.oMf[contact.frame_id]
    points = getattr(contact, "contact_points", np.zeros((3, 1)))
    world = placement.rotation @ points + placement.translation[:, None]
    rotation = placement.rotation if contact.motion_task.local_frame else np.eye(3)
    return world, rotation


def center_of_pressure(
    contacts: Iterable[tuple[ContactBase, np.ndarray]], data: pin.Data, normal: np.ndarray = GROUND_NORMAL
) -> np.ndarray:
    """CoP of point forces: sum_j p_j (n . f_j) / sum_j (n . f_j), p_j the world contact points [m].

    For contact points on a plane of normal n this is the ZMP of the contact forces. ``contacts``
    yields (contact, its force variables).
    """
    normal = as_vector("normal", normal, 3)
    weighted, total = np.zeros(3), 0.0
    for contact, forces in contacts:
        points, rotation = contact_points_world(contact, data)
        forces = as_vector(f"forces of {contact.name!r}", forces, contact.n_force)
        normal_forces = forces.reshape(-1, 3) @ (rotation.T @ normal)
        weighted += points @ normal_forces
        total += float(normal_forces.sum())
    if total <= 0:
        raise InvalidParameterError(f"no centre of pressure: the total normal force is {total} N")
    return weighted / total
