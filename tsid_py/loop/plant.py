"""What the controller drives: a plant takes commands and reports its measured state.

A plant is the robot, real or simulated, seen from the control loop: reset it to (q, v), apply a
command, advance it by dt, read its state. q is Pinocchio's configuration (a free flyer's
position, then its quaternion x, y, z, w); v is Pinocchio's velocity (a free flyer's linear and
angular velocity in the base frame, LOCAL). A simulator with other conventions converts at its
plant, once.

Two command modes (:class:`Command`): torque (tau is applied as it is) and position (each joint's
own servo tracks q_des, v_des with feed-forward tau: tau + Kp (q_des - q) + Kd (v_des - v), as
position-controlled robots take it). A plant with physics also reports what its contacts measure
(:class:`ContactMeasurement`) and can be pushed (:meth:`Plant.push`).

Writing a plant for another simulator takes the four methods; a minimal one::

    class MySimPlant(tsid.loop.Plant):
        def __init__(self, sim):
            self.sim = sim
        def reset(self, q, v, t=0.0):
            self.sim.set_state(q, v, t)
        def apply(self, command):
            self.sim.set_torques(command.tau)
        def advance(self, dt):
            self.sim.step(dt)
        def state(self):
            return tsid.loop.PlantState(self.sim.time, self.sim.q.copy(), self.sim.v.copy())
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from tsid_py.errors import InvalidParameterError, SimulationDivergedError, UnsupportedProblemError
from tsid_py.integration import integrate
from tsid_py.robot_wrapper import MAX_VELOCITY, RobotWrapper
from tsid_py.validation import as_scalar, as_vector

COMMAND_MODES = ("torque", "position")


def check_mode(mode: str) -> None:
    """InvalidParameterError unless ``mode`` is one of :data:`COMMAND_MODES`."""
    if mode not in COMMAND_MODES:
        raise InvalidParameterError(f"mode must be one of {COMMAND_MODES}, got {mode!r}")


@dataclass
class Command:
    """One control step's command: joint torques tau [N m] (size na); the controller's planned
    accelerations dv [m/s^2, rad/s^2] (size nv) for plants that use them; and, in position mode,
    the joint targets q_des [rad, m] (size nq - nq of the base) and v_des (size na) integrated from
    dv on the manifold, with tau as the feed-forward torque."""

    tau: np.ndarray
    dv: np.ndarray | None = None
    q_des: np.ndarray | None = None
    v_des: np.ndarray | None = None

    @property
    def mode(self) -> str:
        return "torque" if self.q_des is None else "position"


@dataclass
class ContactMeasurement:
    """What a plant measures at one contact frame: the wrench the ground exerts on the robot,
    at the frame's origin in world axes (force, moment) [N, N m], whether it is touching, and
    where: the points at which it touches the ground, k x 3 in the world [m] (None when the plant
    does not say; the support polygon is then taken from the spec's sole at the frame)."""

    wrench: np.ndarray
    touching: bool
    friction_ratio: float = 0.0  # |f_t| / f_n of the total ground force (0 when not measured)
    points: np.ndarray | None = None


@dataclass
class ImuMeasurement:
    """What an IMU on the floating base measures, noise-free, in the base frame: its angular
    velocity [rad/s] and its specific force (the acceleration of the base frame's origin less
    gravity: +g up at rest) [m/s^2], at the plant's last measurement (MuJoCo's: the state its last
    physics step started from, as its contacts). Robot sensing adds the sensors' noise and bias."""

    gyro: np.ndarray
    accelerometer: np.ndarray


@dataclass
class PlantState:
    """What a plant reports: time t [s], measured q and v, its contact measurements by contact
    frame name (empty when the plant measures none: then the controller gets no contact feedback),
    the bodies touching the ground, named as the joints that move them (None when the plant
    does not measure it; a body other than a foot on the ground is a fall), and what its own IMU
    on the base measures (None when it has none: robot sensing then differences the base's
    velocity for the specific force)."""

    t: float
    q: np.ndarray
    v: np.ndarray
    contacts: dict[str, ContactMeasurement] = field(default_factory=dict)
    ground_bodies: frozenset[str] | None = None
    imu: ImuMeasurement | None = None


_PUSH_NEEDS = "a push needs three finite forces, t >= 0 and a duration > 0"


@dataclass(frozen=True)
class Push:
    """A force on the robot's base [N] (world axes) from time t [s] for ``duration`` [s].

    Raises:
        InvalidParameterError: Not three finite forces, t < 0, a duration <= 0, or a value not finite.
    """

    force: tuple[float, float, float]
    t: float
    duration: float

    def __post_init__(self) -> None:
        try:
            force = tuple(float(f) for f in self.force)
            t, duration = float(self.t), float(self.duration)
        except (TypeError, ValueError):
            raise InvalidParameterError(f"{_PUSH_NEEDS}, got {self!r}") from None
        if len(force) != 3 or not all(map(math.isfinite, (*force, t, duration))) or t < 0 or duration <= 0:
            raise InvalidParameterError(f"{_PUSH_NEEDS}, got {self!r}")
        object.__setattr__(self, "force", force)  # plain floats, as checked (frozen: set once here)
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "duration", duration)

    @classmethod
    def parse(cls, text: str) -> Push:
        """``"FX,FY,FZ@T+DURATION"``, e.g. ``"0,300,0@1+0.1"``: 300 N along y at 1 s for 0.1 s."""
        try:
            force, _, timing = text.partition("@")
            start, _, duration = timing.partition("+")
            fx, fy, fz = (float(x) for x in force.split(","))
            values = (fx, fy, fz), float(start), float(duration)
        except ValueError:
            raise InvalidParameterError(f"a push is FX,FY,FZ@T+DURATION (N, s), got {text!r}") from None
        try:
            return cls(*values)
        except InvalidParameterError:
            raise InvalidParameterError(f"{_PUSH_NEEDS}, got {text!r}") from None

    def text(self) -> str:
        """The push as :meth:`parse` reads it, e.g. ``"0,300,0@1+0.1"``."""
        return f"{','.join(f'{f:g}' for f in self.force)}@{self.t:g}+{self.duration:g}"


SIMULATOR_CHECK_EVERY = 10  # a simulator's default rate of the physics checks (see Plant)


class Plant:
    """The interface of a plant; subclasses implement the four methods (and :meth:`push` if they
    have physics).

    Attributes:
        check_every: How often a :class:`~tsid_py.loop.ControlLoop` checks the controller's
            solutions against the physics by default (every N steps; its ``check_every`` argument
            overrides it). 1 for a plant that only integrates the controller's plan (the check is
            then the only witness of the physics) and for a plant of one's own;
            :data:`SIMULATOR_CHECK_EVERY` for the simulators (pinocchio, mujoco), which measure
            the physics themselves: the run's verdict comes from their state, and a check of one
            step in ten still finds a formulation that is wrong at every step, at a tenth of its
            cost (a check costs about half a Talos step).
    """

    name = "plant"
    check_every = 1

    def reset(self, q: np.ndarray, v: np.ndarray, t: float = 0.0) -> None:
        """Put the plant in state (q, v) at time t [s]."""
        raise NotImplementedError

    def apply(self, command: Command) -> None:
        """Hold ``command`` until the next one."""
        raise NotImplementedError

    def advance(self, dt: float) -> None:
        """Move the plant forward by dt [s] under the command applied.

        Raises:
            SimulationDivergedError: The simulation diverged (see :meth:`diverged`).
        """
        raise NotImplementedError

    def state(self) -> PlantState:
        """The measured state (arrays the caller owns)."""
        raise NotImplementedError

    def diverged(self, t: float, why: str) -> SimulationDivergedError:
        """The error a plant raises when its simulation diverged at t [s], ``why`` in a few words."""
        return SimulationDivergedError(
            f"the {self.name} plant's simulation diverged at t = {t:.4g} s ({why}): is a force or a "
            "gain beyond what the robot can take?"
        )

    def check_velocity(self, t: float, v: np.ndarray) -> None:
        """Raise :meth:`diverged` when a velocity of v is not finite or beyond MAX_VELOCITY (no
        robot's state: the controller would refuse it as input)."""
        if not np.abs(v).max() <= MAX_VELOCITY:  # NaN fails the comparison too
            raise self.diverged(t, f"a velocity of {np.abs(v).max():.3g} m/s or rad/s")

    def push(self, force: np.ndarray, duration: float) -> None:
        """Apply ``force`` [N] (world axes) on the base from now for ``duration`` [s]."""
        raise UnsupportedProblemError(
            f"the {self.name} plant has no physics to push: use the pinocchio or mujoco plant"
        )


class IntegratorPlant(Plant):
    """The default plant: integrates the controller's own accelerations dv on the manifold.

    No physics of its own: the robot does exactly what the controller planned (the loop of TSID's
    exercises, :func:`tsid_py.integrate`). It measures no contacts and takes torque commands only
    through their dv.
    """

    name = "integrator"

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


def servo_gains(
    robot: RobotWrapper, data: pin.Data, frequency: float, damping: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Joint servo gains (kp [N m/rad], kd [N m s/rad]) per actuated joint, size na each.

    The spec's ``servo`` entry (a mapping with ``kp`` and ``kd``, scalars or one per actuated joint)
    if the spec has one; else a 2nd-order loop at ``frequency`` [Hz] with damping ratio ``damping``
    on each joint's diagonal inertia: kp = M_ii w^2, kd = 2 damping M_ii w (w = 2 pi frequency).

    Args:
        robot: The robot.
        data: A ``pinocchio.Data`` of the robot in which the mass matrix is computed
            (``pin.crba`` or ``robot.compute_all_terms``).
    """
    na = robot.na
    servo = getattr(getattr(robot, "spec", None), "servo", None)
    if servo:
        try:
            kp, kd = servo["kp"], servo["kd"]
        except (KeyError, TypeError):
            raise InvalidParameterError(f"{robot.name}: a spec's servo entry needs kp and kd") from None
        return tuple(  # type: ignore[return-value]
            as_vector(f"servo {name}", np.broadcast_to(np.asarray(gain, dtype=float), (na,)), na)
            for name, gain in (("kp", kp), ("kd", kd))
        )
    frequency = as_scalar("frequency", frequency, minimum=0.0, strict=True)
    damping = as_scalar("damping", damping, minimum=0.0)
    diagonal = np.array(np.diag(data.M)[robot.nv - na :], dtype=float)
    if not np.any(diagonal > 0.0):
        raise InvalidParameterError("servo_gains needs data with the mass matrix computed (pin.crba)")
    omega = 2.0 * np.pi * frequency
    return diagonal * omega**2, 2.0 * damping * diagonal * omega
