"""Track a reference wrench on one contact (TSID's TaskContactForceEquality)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin

from tsid_py.constraints import ConstraintEquality
from tsid_py.errors import InvalidParameterError
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.tasks.task_base import TaskContactForce, TaskState
from tsid_py.tasks.task_parts import Gain, Scalar
from tsid_py.trajectories import TrajectorySample, as_sample


@dataclass(slots=True, kw_only=True)
class IntegralState(TaskState):
    """The leaky integral I of the wrench error [N s, N m s], advanced once per computation."""

    integral_error: np.ndarray


class TaskContactForceEquality(TaskContactForce):
    """T f = f* on the force variables f of one contact, T its force generator.

    f_ref(t) is the reference wrench and f_ext(t) a measured external wrench, both in the contact
    frame [N, N m]. Then

        f* = f_ref + Kp (f_ref - f_ext) + Kd (df_ref - df_ext) + Ki I,

    with the leaky integral I += dt ((f_ref - f_ext) - leak_rate I). I advances once per fill:
    once per control step in a formulation, and once at every :meth:`compute` of your own. With
    the default zero gains, f* = f_ref. The formulation maps the rows onto the columns of
    ``contact``, which must be in it.

    Args:
        name: The task's name.
        robot: The robot.
        dt: The control period [s], for the integral.
        contact: The contact whose force variables the task acts on.
    """

    kp = Gain("Proportional gains on the wrench error [-].")
    kd = Gain("Derivative gains on the wrench-rate error [s].")
    ki = Gain("Integral gains on the leaky integral of the wrench error [1/s].")
    dt = Scalar("The control period [s] (> 0), for the integral.", minimum=0.0, strict=True)
    leak_rate = Scalar("The leak of the integral term [1/s] (>= 0; TSID's default 0.05).", minimum=0.0)
    _kp: np.ndarray  # where the five descriptors keep their values
    _kd: np.ndarray
    _ki: np.ndarray
    _dt: float
    _leak_rate: float
    _state: IntegralState

    def __init__(self, name: str, robot: RobotWrapper, dt: float, contact: Any) -> None:  # a ContactBase
        super().__init__(name, robot)
        if not all(hasattr(contact, a) for a in ("name", "n_force", "wrench_size", "force_generator")):
            raise InvalidParameterError(f"{name!r} needs a contact (e.g. a Contact6d), got {contact!r}")
        self.dt = dt
        self.contact = contact
        self.contact_name = contact.name
        size = contact.wrench_size
        self.kp = self.kd = self.ki = 0.0
        self.leak_rate = 0.05  # [1/s], TSID's default
        self._state = IntegralState(integral_error=np.zeros(size))
        self._reference = TrajectorySample(np.zeros(size))
        self._external = TrajectorySample(np.zeros(size))

    @property
    def integral_error(self) -> np.ndarray:
        """The leaky integral I of the wrench error [N s, N m s] (a copy)."""
        return self._state.integral_error.copy()

    @property
    def dim(self) -> int:
        return self.contact.wrench_size

    @property
    def cols(self) -> int:
        """The contact's force variables."""
        return self.contact.n_force

    @property
    def gain_size(self) -> int:
        """Size of the gains: the contact's wrench size (6 for a Contact6d)."""
        return self.contact.wrench_size

    def set_leak_rate(self, leak_rate: float) -> None:
        """Set the leak of the integral term [1/s], >= 0 (as ``task.leak_rate = leak_rate``)."""
        self.leak_rate = leak_rate

    def set_reference(self, reference: TrajectorySample) -> None:
        """Set the reference wrench f_ref (pos) and its derivative (vel), in the contact frame."""
        self._reference = as_sample(f"reference of task {self.name!r}", reference, self.contact.wrench_size)

    def set_external_force(self, measured: TrajectorySample) -> None:
        """Set the measured wrench f_ext (pos) and its derivative (vel), in the contact frame."""
        self._external = as_sample(
            f"external force of task {self.name!r}", measured, self.contact.wrench_size
        )

    def fill(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data, out: ConstraintEquality) -> None:
        """T f = f*, and the integral advanced by one dt."""
        ref, ext, state = self._reference, self._external, self._state
        error = ref.pos - ext.pos
        integral = state.integral_error
        out.matrix[...] = self.contact.force_generator
        out.vector[...] = ref.pos + self._kp * error + self._kd * (ref.vel - ext.vel) + self._ki * integral
        state.integral_error = integral + self._dt * (error - self._leak_rate * integral)
