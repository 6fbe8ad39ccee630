"""TSID's trajectory samples and constant trajectories (bindings/python/trajectories/*.hpp) and
``SE3ToVector`` / ``vectorToSE3`` (bindings/python/math/utils.cpp)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py import trajectories as _main
from tsid_py.compat._wrap import Wrapper, deprecated

_GET = object()  # no argument: the getter form of value(), pos(), ...


class TrajectorySample(Wrapper):
    """``TrajectorySample(n)`` / ``TrajectorySample(n, nd)``: a zero sample of size n (derivatives nd).

    ``value()`` returns a copy of the value and ``value(v)`` sets it (a ``pin.SE3`` too, stored as
    TSID's 12-vector); likewise ``derivative`` and ``second_derivative``. ``pos``, ``vel`` and
    ``acc`` are TSID's deprecated spellings of them and warn (trajectory-base.hpp). The tsid_py
    sample is ``TrajectorySample(value, vel, acc)``, or ``TrajectorySample.zeros(n, nd)``.
    """

    def __init__(self, size: int, derivative_size: int | None = None) -> None:
        self._inner = _main.TrajectorySample.zeros(size, derivative_size)

    def resize(self, size: int, derivative_size: int | None = None) -> None:
        """A zero sample of the new sizes."""
        self._inner = _main.TrajectorySample.zeros(size, derivative_size)

    def value(self, value: object = _GET) -> np.ndarray | None:
        if value is _GET:
            return np.array(self._inner.pos)
        self._inner.pos = _main.se3_to_vector(value) if isinstance(value, pin.SE3) else value
        return None

    def derivative(self, value: object = _GET) -> np.ndarray | None:
        if value is _GET:
            return np.array(self._inner.vel)
        self._inner.vel = value
        return None

    def second_derivative(self, value: object = _GET) -> np.ndarray | None:
        if value is _GET:
            return np.array(self._inner.acc)
        self._inner.acc = value
        return None

    def pos(self, value: object = _GET) -> np.ndarray | None:
        deprecated("TrajectorySample.pos", "value")
        return self.value(value)

    def vel(self, value: object = _GET) -> np.ndarray | None:
        deprecated("TrajectorySample.vel", "derivative")
        return self.derivative(value)

    def acc(self, value: object = _GET) -> np.ndarray | None:
        deprecated("TrajectorySample.acc", "second_derivative")
        return self.second_derivative(value)


class _Constant(Wrapper):
    """What TSID's constant trajectories share (the only trajectories its bindings expose)."""

    _names = {"setReference": "set_reference"}

    @property
    def size(self) -> int:
        """The size of the value."""
        return self._inner.compute_next().pos.shape[0]

    def computeNext(self) -> TrajectorySample:
        return TrajectorySample._wrap(self._inner.compute_next())

    def getSample(self, time: float) -> TrajectorySample:
        return TrajectorySample._wrap(self._inner.sample(time))

    def getLastSample(self, sample: TrajectorySample) -> None:
        """Copy the last sample into ``sample``: a constant's only one (tsid_py: ``compute_next()``)."""
        sample._inner = self._inner.compute_next()

    def has_trajectory_ended(self) -> bool:
        """True: a constant has always ended (tsid_py: ``trajectory.has_ended(t)``)."""
        return self._inner.has_ended(0.0)


class TrajectoryEuclidianConstant(_Constant):
    """``TrajectoryEuclidianConstant(name)`` or ``(name, reference)``; without a reference its
    samples have size 0, as TSID's."""

    def __init__(self, name: str, reference: object = None) -> None:
        self._inner = _main.TrajectoryEuclidianConstant(name, np.zeros(0) if reference is None else reference)


class TrajectorySE3Constant(_Constant):
    """``TrajectorySE3Constant(name)`` or ``(name, placement)``; samples are 12-vector placements
    with 6-vector derivatives."""

    def __init__(self, name: str, placement: pin.SE3 | None = None) -> None:
        self._inner = _main.TrajectorySE3Constant(name, placement)


def SE3ToVector(M: pin.SE3, vec: np.ndarray | None = None) -> np.ndarray | None:
    """[translation; rotation column-major], a 12-vector; written into ``vec`` if given (TSID's two forms)."""
    vector = _main.se3_to_vector(M)
    if vec is None:
        return vector
    vec[...] = vector.reshape(np.shape(vec))
    return None


def vectorToSE3(vec: object, M: pin.SE3 | None = None) -> pin.SE3 | None:
    """The inverse of :func:`SE3ToVector`; written into ``M`` if given."""
    placement = _main.vector_to_se3(vec)
    if M is None:
        return placement
    M.rotation, M.translation = placement.rotation, placement.translation
    return None
