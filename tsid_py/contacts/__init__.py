"""Contacts: constraints that bring contact-force variables into the problem."""

from tsid_py.contacts.contact_6d import Contact6d
from tsid_py.contacts.contact_base import ContactBase
from tsid_py.contacts.contact_line import ContactLine
from tsid_py.contacts.contact_point import ContactPoint
from tsid_py.contacts.contact_two_frame_positions import ContactTwoFramePositions
from tsid_py.contacts.contact_wrench import ContactWrench
from tsid_py.contacts.measured_force import Measured3dForce, Measured6dWrench, MeasuredForceBase
from tsid_py.contacts.prescribed_wrench import PrescribedWrench, linear_ramp

__all__ = [
    "Contact6d",
    "ContactBase",
    "ContactLine",
    "ContactPoint",
    "ContactTwoFramePositions",
    "ContactWrench",
    "Measured3dForce",
    "Measured6dWrench",
    "MeasuredForceBase",
    "PrescribedWrench",
    "linear_ramp",
]
