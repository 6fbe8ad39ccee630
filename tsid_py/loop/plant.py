"""What the controller drives: a plant takes commands and reports its measured state.

A plant is the robot, real or simulated, seen from the control loop: reset it to (q, v), apply a
command, advance it by dt, read its state. q is Pinocchio's configuration (a free flyer's
position, then its quaternion x, y, z, w); v is Pinocchio's velocity (a free flyer's linear and
angular velocity in the base frame, LOCAL). A simulator with other conventions converts at its
plant, once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tsid_py.errors import InvalidParameterError
from tsid_py.integration import integrate
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.validation import as_scalar, as_vector


@dataclass
class Command:
    """One control step's command: joint torques tau [N m] (size na), and the controller's planned
    accelerations dv [m/s^2, rad/s^2] (size nv) for plants that use them."""

    tau: np.ndarray
    dv: np.ndarray | None = None


@dataclass
class PlantState:
    """What a plant reports: time t [s], measured q and v, and the measured contact wrenches by
    contact name [N, N m] (empty when the plant measures none)."""

    t: float
    q: np.ndarray
    v: np.ndarray
    contact_wrenches: dict[str, np.ndarray] = field(default_factory=dict)


class Plant:
    """The interface of a plant; subclasses implement the four methods."""

    def reset(self, q: np.ndarray, v: np.ndarray, t: float = 0.0) -> None:
        """Put the plant in state (q, v) at time t [s]."""
        raise NotImplementedError

    def apply(self, command: Command) -> None:
        """Hold ``command`` until the next one."""
        raise NotImplementedError

    def advance(self, dt: float) -> None:
        """Move the plant forward by dt [s] under the command applied."""
        raise NotImplementedError

    def state(self) -> PlantState:
        """The measured state (arrays the caller owns)."""
        raise NotImplementedError


class IntegratorPlant(Plant):
    """The default plant: integrates the controller's own accelerations dv on the manifold.

    No physics of its own: the robot does exactly what the controller planned (the loop of TSID's
    exercises, :func:`tsid_py.integrate`). It measures no contact wrenches.
    """

    def __init__(self, robot: RobotWrapper) -> None:
        self.robot = robot
        self._t0, self._t, self._steps, self._dt = 0.0, 0.0, 0, 0.0
        self._q = robot.neutral_configuration()
        self._v = robot.zero_velocity()
        self._dv = robot.zero_velocity()

    def reset(self, q: np.ndarray, v: np.ndarray, t: float = 0.0) -> None:
        self._q, self._v = self.robot.check_state(q, v)
        self._q, self._v = self._q.copy(), self._v.copy()
        self._t0 = self._t = as_scalar("t", t)
        self._steps, self._dt = 0, 0.0
        self._dv = self.robot.zero_velocity()

    def apply(self, command: Command) -> None:
        if command.dv is None:
            raise InvalidParameterError("the integrator plant needs the controller's dv in the command")
        self._dv = as_vector("dv", command.dv, self.robot.nv)

    def advance(self, dt: float) -> None:
        self._q, self._v = integrate(self.robot, self._q, self._v, self._dv, dt)
        if dt != self._dt:  # t = t0 + steps dt since the last change of dt: no sum of rounding errors
            self._t0, self._steps, self._dt = self._t, 0, dt
        self._steps += 1
        self._t = self._t0 + self._steps * dt

    def state(self) -> PlantState:
        return PlantState(self._t, self._q.copy(), self._v.copy())
