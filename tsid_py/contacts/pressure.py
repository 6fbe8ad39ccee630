"""The centre of pressure of contacts' forces (the ZMP on flat ground)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from tsid_py.geometry import GROUND_NORMAL, center_of_pressure

if TYPE_CHECKING:
    import pinocchio as pin

    from tsid_py.contacts.contact_base import ContactBase


def contacts_center_of_pressure(
    contacts: Iterable[tuple[ContactBase, np.ndarray]], data: pin.Data, normal: np.ndarray = GROUND_NORMAL
) -> np.ndarray:
    """CoP of the contacts' point forces, sum_j p_j (n . f_j) / sum_j (n . f_j) [m] (world frame).

    ``contacts`` yields (contact, its force variables); ``data`` holds the placements of the
    contact frames. A bilateral contact (no contact surface) raises :class:`InvalidParameterError`,
    as does a total normal force that is not positive (:func:`tsid_py.geometry.center_of_pressure`).
    """
    points, forces = [], []
    for contact, f in contacts:
        points.append(contact.world_points(data).T)
        forces.append(contact.world_forces(data, f))
    if not points:
        return center_of_pressure(np.zeros((0, 3)), np.zeros((0, 3)), normal)
    return center_of_pressure(np.vstack(points), np.vstack(forces), normal)
