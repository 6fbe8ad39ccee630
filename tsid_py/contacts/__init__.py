"""Contacts: constraints that bring contact-force variables into the problem."""

from tsid_py.contacts.contact_6d import Contact6d
from tsid_py.contacts.contact_base import ContactBase
from tsid_py.contacts.contact_point import ContactPoint

__all__ = ["Contact6d", "ContactBase", "ContactPoint"]
