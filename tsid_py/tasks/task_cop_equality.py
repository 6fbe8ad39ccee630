"""Centre-of-pressure task on all the contact forces (a force task)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin

from tsid_py.constraints import ConstraintEquality
from tsid_py.errors import InvalidParameterError
from tsid_py.geometry import GROUND_NORMAL
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.tasks.task_base import TaskContactForce
from tsid_py.validation import Copied, as_unit_vector, as_vector


class TaskCopEquality(TaskContactForce):
    """Pull the centre of pressure (CoP) of all the active contacts toward a reference point.

    With p_j the world position of contact point j, f_j its force and n the world ground normal,
    the CoP p satisfies sum_j (p_j - p) (n . f_j) = 0. The task asks the CoP to be p_ref:

        sum_j (p_j - p_ref) (n . f_j) = 0,   i.e. A f = 0 with blocks A_j = (p_j - p_ref) n^T R_j,

    R_j is the rotation from the axes f_j is expressed in to the world. TSID's
    task-cop-equality.cpp uses the contact-frame normal component of f_j instead of the world one;
    the two agree for a flat foot. A contact whose force variables are not its point forces (a
    :class:`~tsid_py.contacts.ContactWrench`: a wrench y) has f_j = (P y)_j, P its
    ``point_force_map()`` (the least-norm corner forces of the wrench): this CoP is then
    :func:`~tsid_py.contacts.pressure.contacts_center_of_pressure`'s, and on a flat sole the CoP of
    the wrench, c + n x tau_c / (n . f). Rows are in [m N]. Use a low weight: the task moves load
    between the contacts within what the other tasks leave free. The contacts must be unilateral:
    they have points on a surface (``world_points``, ``force_rotation``).
    """

    reference = Copied("The CoP reference in the world frame [m].")
    contact_normal = Copied("The ground normal n in the world frame.")
    _dim = 3

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        super().__init__(name, robot)
        self._contact_normal = GROUND_NORMAL.copy()
        self._reference = np.zeros(3)

    def set_reference(self, reference: object) -> None:
        """Set the desired CoP p_ref, a world point [m] (usually on the ground)."""
        self._reference = as_vector(f"reference of task {self.name!r}", reference, 3)

    def set_contact_normal(self, normal: object) -> None:
        """Set the world ground normal (normalized here)."""
        self._contact_normal = as_unit_vector("contact normal", normal)

    def set_contacts(self, contacts: list[tuple[Any, int]]) -> None:
        """Take the active contacts (the formulation calls this); see :meth:`TaskContactForce.set_contacts`.

        Raises:
            InvalidParameterError: A bilateral contact, or forces not laid out contiguously.
        """
        contacts = list(contacts)
        offset = 0
        for contact, index in contacts:
            if not getattr(contact, "unilateral", False):  # a contact with a contact surface
                raise InvalidParameterError(f"{self.name!r}: {contact!r} is not a unilateral contact")
            if index != offset:
                raise InvalidParameterError(
                    f"{self.name!r}: the forces of {contact.name!r} start at {index}, expected {offset}"
                )
            offset += contact.n_force
        super().set_contacts(contacts)

    def fill(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data, out: ConstraintEquality) -> None:
        A = np.zeros((3, self.cols))
        for contact, index in self._contacts:
            arms = contact.world_points(data) - self._reference[:, None]  # p_j - p_ref, 3 x n_points
            normal_row = self._contact_normal.dot(contact.force_rotation(data))
            on_points = np.einsum("rj,c->rjc", arms, normal_row).reshape(3, -1)  # (p_j - p_ref) n^T R_j
            A[:, index : index + contact.n_force] = on_points.dot(contact.point_force_map())
        out.matrix[...] = A
        out.vector[...] = 0.0
