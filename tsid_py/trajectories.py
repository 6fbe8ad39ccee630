"""Reference trajectories: samples (pos, vel, acc) that tasks take as references.

How an SE3 sample stores a placement: :meth:`TrajectorySample.from_se3`, and
docs/concepts/conventions.md, section "Frames, velocities and accelerations".
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin

from tsid_py.errors import DimensionError, InvalidParameterError, UnsetReferenceError
from tsid_py.sealed import Sealed
from tsid_py.validation import Copied, as_count, as_scalar, as_time, as_vector

_ORTHONORMAL_TOLERANCE = 1e-6 + 1e-5 * np.eye(3)  # on R^T R - I: np.allclose's against I


class TrajectorySample:
    """A reference value with its first and second time derivatives.

    A sample is an immutable value, like a tuple: its arrays are read-only copies of what it was
    given, so it can be handed around without copies and nothing can change it behind a task's back.
    Assigning ``pos``, ``vel`` or ``acc`` gives the sample new arrays (the old ones, wherever they
    were handed, stay as they were); change a value with ``sample.pos = sample.pos + d``.

    Args:
        pos: The value (a vector of size n; TSID's ``TrajectorySample(n)``, a zero sample of size
            n, is :meth:`zeros`, and a bare number is refused rather than read as either).
        vel: Its time derivative; zeros of the tangent size when omitted.
        acc: Its second time derivative; zeros of the tangent size when omitted.
        tangent_size: Size of vel/acc when it differs from n (6 for an SE3 sample).
    """

    __slots__ = ("_pos", "_vel", "_acc")

    def __init__(
        self, pos: object, vel: object = None, acc: object = None, *, tangent_size: int | None = None
    ) -> None:
        if np.ndim(pos) == 0 and not isinstance(pos, np.ndarray):  # type: ignore[arg-type]  # array-like
            raise InvalidParameterError(
                f"a sample's value is a vector, got the number {pos!r}; for a zero sample of size n "
                "(TSID's TrajectorySample(n)) use TrajectorySample.zeros(n), for a 1-D value [value]"
            )
        self._pos = _frozen(as_vector("sample pos", pos))
        n = self._pos.shape[0] if tangent_size is None else as_count("tangent_size", tangent_size)
        self._vel = _frozen(np.zeros(n) if vel is None else as_vector("sample vel", vel, n))
        self._acc = _frozen(np.zeros(n) if acc is None else as_vector("sample acc", acc, n))

    @property
    def pos(self) -> np.ndarray:
        """The value (read-only)."""
        return self._pos

    @pos.setter
    def pos(self, value: object) -> None:
        self._pos = _frozen(as_vector("sample pos", value, self._pos.shape[0]))

    @property
    def vel(self) -> np.ndarray:
        """The first time derivative, tangent size (read-only)."""
        return self._vel

    @vel.setter
    def vel(self, value: object) -> None:
        self._vel = _frozen(as_vector("sample vel", value, self._vel.shape[0]))

    @property
    def acc(self) -> np.ndarray:
        """The second time derivative, tangent size (read-only)."""
        return self._acc

    @acc.setter
    def acc(self, value: object) -> None:
        self._acc = _frozen(as_vector("sample acc", value, self._acc.shape[0]))

    @classmethod
    def zeros(cls, size: int, tangent_size: int | None = None) -> TrajectorySample:
        """A zero sample: pos of ``size``, vel and acc of ``tangent_size`` (default ``size``)."""
        size = as_count("size", size)
        tangent = size if tangent_size is None else as_count("tangent_size", tangent_size)
        return cls._owning(np.zeros(size), np.zeros(tangent), np.zeros(tangent))

    @classmethod
    def from_se3(cls, placement: pin.SE3, vel: object = None, acc: object = None) -> TrajectorySample:
        """An SE3 sample, as TSID's.

        Args:
            placement: The placement, stored as a 12-vector: the translation [m], then the rotation
                matrix column-major (:func:`se3_to_vector`).
            vel: The 6-D velocity (linear [m/s], angular [rad/s]) in the world frame; zeros if None.
            acc: The 6-D acceleration (linear [m/s^2], angular [rad/s^2]) in the world frame; zeros if None.
        """
        return cls(se3_to_vector(placement), vel, acc, tangent_size=6)

    def copy(self) -> TrajectorySample:
        """Another sample with the same values (its arrays are shared: they cannot change)."""
        sample = TrajectorySample.__new__(TrajectorySample)
        sample._pos, sample._vel, sample._acc = self._pos, self._vel, self._acc
        return sample

    @classmethod
    def _owning(cls, pos: np.ndarray, vel: np.ndarray, acc: np.ndarray) -> TrajectorySample:
        """A sample holding these float vectors, unchecked: read-only ones, or new ones that nothing
        else holds (trajectories that compute them from checked parameters); made read-only here."""
        sample = cls.__new__(cls)
        pos.flags.writeable = vel.flags.writeable = acc.flags.writeable = False
        sample._pos, sample._vel, sample._acc = pos, vel, acc
        return sample

    def __repr__(self) -> str:
        return f"TrajectorySample(pos={self._pos}, vel={self._vel}, acc={self._acc})"


def _frozen(array: np.ndarray) -> np.ndarray:
    """``array`` (new, the caller's to give away) made read-only."""
    array.flags.writeable = False
    return array


def as_sample(name: str, sample: object, size: int, tangent_size: int | None = None) -> TrajectorySample:
    """``sample`` checked, as a new :class:`TrajectorySample`.

    Its arrays are read-only, so they are shared with the caller's sample safely.

    Args:
        name: What the sample is, for the message.
        sample: A sample, or a bare vector (a sample with zero derivatives).
        size: The size of pos.
        tangent_size: The size of vel and acc; ``size`` if None.

    Raises:
        DimensionError: A size does not match.
    """
    tangent_size = size if tangent_size is None else tangent_size
    if isinstance(sample, TrajectorySample):
        sample = sample.copy()
    else:
        sample = TrajectorySample(sample, tangent_size=tangent_size)
    pos, vel, acc = sample._pos, sample._vel, sample._acc
    if pos.shape != (size,) or vel.shape != (tangent_size,) or acc.shape != (tangent_size,):
        raise DimensionError(
            f"{name} must have pos of size {size} and vel, acc of size {tangent_size}; got sizes "
            f"{pos.shape[0]}, {vel.shape[0]}, {acc.shape[0]}"
        )
    return sample


def se3_to_vector(placement: pin.SE3) -> np.ndarray:
    """[translation; rotation matrix column-major] as a 12-vector (TSID's ``SE3ToVector``)."""
    return np.concatenate([placement.translation, placement.rotation.reshape(-1, order="F")])


def vector_to_se3(vector: object, name: str = "SE3 vector") -> pin.SE3:
    """The placement of a 12-vector, the inverse of :func:`se3_to_vector`.

    Args:
        vector: [translation; rotation matrix column-major].
        name: What the vector is, for the messages.

    Raises:
        DimensionError: The vector is not of size 12, or its last 9 entries are not a rotation
            matrix (orthonormal, determinant +1, to 1e-5).
        NonFiniteError: It holds NaN or infinity.
    """
    vector = as_vector(name, vector, 12)
    return pin.SE3(_checked_rotation(name, vector[3:].reshape(3, 3, order="F")), vector[:3])


def _checked_rotation(name: str, rotation: np.ndarray) -> np.ndarray:
    """``rotation`` if it is a rotation matrix (orthonormal, determinant +1, to 1e-5), else a
    DimensionError (NaN entries too: they fail the comparisons)."""
    gram = rotation.T.dot(rotation)
    gram.ravel()[::4] -= 1.0  # R^T R - I
    (a, b, c), (d, e, f), (g, h, i) = rotation.tolist()
    determinant = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    # every entry of R^T R - I within tolerance (a NaN, from overflowing entries, is not)
    if np.count_nonzero(np.abs(gram) <= _ORTHONORMAL_TOLERANCE) != 9 or determinant < 0:
        raise DimensionError(
            f"the rotation of {name} must be a rotation matrix (orthonormal, determinant +1), "
            f"got {rotation.tolist()}"
        )
    return rotation


def as_se3(name: str, placement: object) -> pin.SE3:
    """A copy of ``placement``, checked as an SE3 sample's placement is (:func:`vector_to_se3`).

    Raises:
        InvalidParameterError: It is not a ``pinocchio.SE3``.
        NonFiniteError: Its translation or rotation holds NaN or infinity.
        DimensionError: Its rotation is not a rotation matrix (orthonormal, determinant +1, to 1e-5).
    """
    if not isinstance(placement, pin.SE3):
        raise InvalidParameterError(f"{name} must be a pinocchio.SE3, got {type(placement).__name__}")
    translation, rotation = placement.translation, placement.rotation  # (views: pin.SE3 copies them)
    if not (np.isfinite(translation).all() and np.isfinite(rotation).all()):
        as_vector(name, se3_to_vector(placement), 12)  # raises NonFiniteError naming the entry
    return pin.SE3(_checked_rotation(name, rotation), translation)


def min_jerk_shape(s: float) -> tuple[float, float, float]:
    """The minimum-jerk blend 10 s^3 - 15 s^4 + 6 s^5 on s in [0, 1] and its first two derivatives in s."""
    return (
        s**3 * (10 - 15 * s + 6 * s**2),
        30 * s**2 * (1 - s) ** 2,
        60 * s * (1 - s) * (1 - 2 * s),
    )


class Trajectory(Sealed):
    """A reference trajectory: ``sample(t)`` gives the reference at time t [s], a new sample each call.

    Trajectories copy the arrays they are built from: changing those arrays afterwards leaves the
    trajectory as it was.

    Attributes:
        end_time: The time from which the reference stops moving [s]: -inf for a constant, inf for
            one that never stops.
    """

    end_time = math.inf

    def __init__(self, name: str) -> None:
        self.name = name

    def sample(self, t: float) -> TrajectorySample:
        """The reference at time t [s]: a new sample.

        Raises:
            NonFiniteError: t is NaN or infinite.
            InvalidParameterError: t is not a number.
        """
        raise NotImplementedError

    def has_ended(self, t: float) -> bool:
        """Whether the reference is at rest from time t [s] on (TSID's ``has_trajectory_ended``)."""
        return as_scalar("t", t) >= self.end_time


class _Constant(Trajectory):
    """A reference that never moves: the same sample at every time."""

    end_time = -math.inf
    _sample: TrajectorySample | None

    def _constant(self) -> TrajectorySample:
        if self._sample is None:
            raise UnsetReferenceError(
                f"trajectory {self.name!r} has no reference yet: call set_reference first"
            )
        return self._sample.copy()

    def compute_next(self) -> TrajectorySample:
        """The constant sample (TSID's ``computeNext``), a new one at each call."""
        return self._constant()

    def sample(self, t: float) -> TrajectorySample:
        as_time(t)
        return self._constant()


class TrajectoryEuclidianConstant(_Constant):
    """A constant vector reference (zero velocity and acceleration)."""

    def __init__(self, name: str, reference: object) -> None:
        super().__init__(name)
        self._sample = TrajectorySample(reference)

    def set_reference(self, reference: object) -> None:
        """A new constant value (copied)."""
        self._sample = TrajectorySample(reference)


class TrajectorySE3Constant(_Constant):
    """A constant placement reference.

    Built without a placement, as TSID allows, it needs :meth:`set_reference` before its first sample.
    """

    def __init__(self, name: str, placement: pin.SE3 | None = None) -> None:
        super().__init__(name)
        self._sample = None
        if placement is not None:
            self.set_reference(placement)

    def set_reference(self, placement: pin.SE3) -> None:
        """A new constant placement (copied, checked: :func:`as_se3`)."""
        self._sample = TrajectorySample.from_se3(as_se3(f"placement of trajectory {self.name!r}", placement))


class TrajectoryEuclidianSinusoid(Trajectory):
    """c + a sin(2 pi f t + phi), per component, with its exact derivatives.

    Args:
        center: The offset c.
        amplitude: a, same size as c [units of c].
        frequency: f per component [Hz].
        phase: phi per component [rad].
    """

    center = Copied("The offset c.")
    amplitude = Copied("The amplitude a per component.")
    omega = Copied("The angular frequency 2 pi f per component [rad/s].")
    phase = Copied("The phase phi per component [rad].")

    def __init__(
        self, name: str, center: object, amplitude: object, frequency: object, phase: object = 0.0
    ) -> None:
        super().__init__(name)
        self._center = as_vector("center", center)
        n = self._center.shape[0]
        self._amplitude = _per_component("amplitude", amplitude, n)
        self._omega = 2.0 * np.pi * _per_component("frequency", frequency, n)
        self._phase = _per_component("phase", phase, n)

    def sample(self, t: float) -> TrajectorySample:
        amplitude, omega = self._amplitude, self._omega
        angle = omega * as_time(t) + self._phase
        s, c = np.sin(angle), np.cos(angle)
        return TrajectorySample._owning(
            self._center + amplitude * s, amplitude * omega * c, -amplitude * omega**2 * s
        )


def _per_component(name: str, value: object, size: int) -> np.ndarray:
    """``value`` as ``size`` components: one number for all, or one per component."""
    if np.ndim(value) == 0:  # type: ignore[arg-type]  # any value: np.ndim tells
        return np.full(size, as_scalar(name, value))
    return as_vector(name, value, size)


class TimedTrajectory(Trajectory):
    """A motion over [t0, t0 + duration] [s], held at its ends outside: at time t its phase is
    s = (t - t0) / duration clamped to [0, 1] (:meth:`phase`)."""

    def __init__(self, name: str, t0: float, duration: float) -> None:
        super().__init__(name)
        self.t0, self.duration = t0, duration

    @property
    def t0(self) -> float:
        """When the motion starts [s]."""
        return self._t0

    @t0.setter
    def t0(self, value: float) -> None:
        self._t0 = as_scalar("t0", value)

    @property
    def duration(self) -> float:
        """How long the motion lasts [s] (> 0)."""
        return self._duration

    @duration.setter
    def duration(self, value: float) -> None:
        self._duration = as_scalar("duration", value, minimum=0.0, strict=True)

    @property
    def end_time(self) -> float:  # type: ignore[override]
        """t0 + duration [s]."""
        return self._t0 + self._duration

    def phase(self, t: float) -> float:
        """s = (t - t0) / duration, clamped to [0, 1], at time t [s] (checked: :meth:`sample`)."""
        return min(max((as_time(t) - self._t0) / self._duration, 0.0), 1.0)


class TrajectoryEuclidianMinJerk(TimedTrajectory):
    """Minimum-jerk point-to-point motion from ``start`` to ``end`` over [t0, t0 + duration].

    p(s) = start + (end - start)(10 s^3 - 15 s^4 + 6 s^5), s = (t - t0) / duration, held
    at the ends outside the interval.
    """

    start = Copied("The start point.")
    end = Copied("The end point.")

    def __init__(self, name: str, start: object, end: object, t0: float, duration: float) -> None:
        super().__init__(name, t0, duration)
        self._start = as_vector("start", start)
        self._end = as_vector("end", end, self._start.shape[0])

    def sample(self, t: float) -> TrajectorySample:
        s = self.phase(t)
        delta = self._end - self._start
        shape, d_shape, dd_shape = min_jerk_shape(s)
        T = self.duration
        return TrajectorySample._owning(
            self._start + delta * shape, delta * d_shape / T, delta * dd_shape / T**2
        )
