"""Task base classes: a task turns (t, q, v, data) into one affine constraint.

Three families, by the variable the constraint is linear in (TSID's TaskMotion,
TaskContactForce, TaskActuation): motion tasks constrain the accelerations dv (size nv),
force tasks the contact forces f, actuation tasks the joint torques tau (size na).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tsid_py.constraints import ConstraintBase
from tsid_py.validation import as_gain, as_mask, mask_rows

if TYPE_CHECKING:
    import pinocchio as pin

    from tsid_py.contacts.contact_base import ContactBase
    from tsid_py.robot_wrapper import RobotWrapper


class TaskBase:
    """A named task on a robot. Subclasses set ``family`` and implement :meth:`compute`."""

    family: str = ""

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        self.name = name
        self.robot = robot

    @property
    def constraint(self) -> ConstraintBase:
        """The constraint, as last computed."""
        return self._constraint

    def compute(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> ConstraintBase:
        """Fill and return the task's constraint at time t [s] from the state (q, v) and ``data``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class TaskMotion(TaskBase):
    """A task on accelerations: its constraint is J dv = a* - drift (or bounds on dv)."""

    family = "motion"


class TaskActuation(TaskBase):
    """A task on joint torques tau (size na)."""

    family = "actuation"


class TaskContactForce(TaskBase):
    """A task on contact forces: on every force variable, or on those of ``contact_name`` if set."""

    family = "force"
    contact_name: str | None = None

    def set_contacts(self, contacts: list[tuple[ContactBase, int]]) -> None:
        """The active contacts with the offsets of their force variables in f, given by the formulation
        before every compute (TSID's ``setContactList``); tasks that do not need them ignore them."""


class PdGains:
    """Proportional-derivative gains ``kp``, ``kd`` of a fixed size.

    ``kd`` defaults to critical damping, 2 sqrt(kp), until it is set.
    """

    def __init__(self, size: int, kp: float = 0.0) -> None:
        self._size = size
        self._kp = np.full(size, kp)
        self._kd_set: np.ndarray | None = None
        self._kd = 2.0 * np.sqrt(self._kp)

    @property
    def kp(self) -> np.ndarray:
        """Proportional gains [1/s^2]."""
        return self._kp

    @kp.setter
    def kp(self, value: object) -> None:
        self._kp = as_gain("kp", value, self._size)
        if self._kd_set is None:
            self._kd = 2.0 * np.sqrt(self._kp)

    @property
    def kd(self) -> np.ndarray:
        """Derivative gains [1/s]; 2 sqrt(kp) when never set."""
        return self._kd

    @kd.setter
    def kd(self, value: object) -> None:
        self._kd = self._kd_set = as_gain("kd", value, self._size)


class Masked:
    """A 0/1 ``mask`` over a task's rows or joints, read as floats and stored as booleans.

    Setting it validates the values, stores the selected rows as ``_rows`` (a slice when all are
    selected) and lets the task rebuild its constraint in ``_apply_mask``; ``_mask_size`` says how
    many entries it has and what they mean.
    """

    _mask: np.ndarray
    _rows: slice | np.ndarray

    @property
    def mask(self) -> np.ndarray:
        """The mask, one 0/1 float per entry (see the task's ``_mask_size``)."""
        return self._mask.astype(float)

    @mask.setter
    def mask(self, value: object) -> None:
        self._mask = as_mask("mask", value, self._mask_size())
        self._rows = mask_rows(self._mask)
        self._apply_mask()

    def _mask_size(self) -> int:
        raise NotImplementedError

    def _apply_mask(self) -> None:
        raise NotImplementedError
