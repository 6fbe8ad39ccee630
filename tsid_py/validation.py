"""The API's border: input checks that raise :mod:`tsid_py.errors` subclasses, and copies.

Values at the API are the caller's: what comes in is copied (:func:`as_vector`, :func:`as_matrix`
return new arrays) and what goes out is a copy (:class:`Copied`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from difflib import get_close_matches
from typing import TypeGuard

import numpy as np

from tsid_py.errors import (
    DimensionError,
    InvalidParameterError,
    NonFiniteError,
    UnknownNameError,
)


class Copied:
    """A read-only attribute that hands out copies: ``obj.name`` returns ``obj._name.copy()`` (an
    array, a ``pinocchio.SE3``), so the caller may change it without changing ``obj``."""

    def __init__(self, doc: str = "") -> None:
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self._attribute = f"_{name}"

    def __get__(self, obj: object, owner: type | None = None) -> np.ndarray:
        if obj is None:
            return self  # type: ignore[return-value]
        return getattr(obj, self._attribute).copy()


def read_only(array: np.ndarray) -> np.ndarray:
    """``array`` marked read-only, for a getter whose attribute has a setter: a copy handed out
    that ``task.kp[0] = 99`` could change would change nothing, silently; written to, it raises
    ``ValueError: assignment destination is read-only``, and ``task.kp = ...`` is the way."""
    array.flags.writeable = False
    return array


def is_plain_vector(value: object, size: int | None = None) -> TypeGuard[np.ndarray]:
    """Whether ``value`` is already a 1-D float64 ndarray (of ``size`` entries, if given): the common
    case, which hot paths check cheaply; a NaN or inf in it makes ``value.dot(value)`` non-finite."""
    return (
        type(value) is np.ndarray
        and value.dtype == np.float64
        and (value.ndim == 1 if size is None else value.shape == (size,))
    )


def as_vector(
    name: str, value: object, size: int | None = None, *, finite: bool = True, copy: bool = True
) -> np.ndarray:
    """Return ``value`` as a 1-D float array, checking its size and (by default) finiteness.

    The array is a new one that the caller owns (values at the API are copied in); with
    ``copy=False`` it may be ``value`` itself, for callers that only read it during the call.
    """
    if is_plain_vector(value, size) and (not finite or math.isfinite(value.dot(value))):
        return value.copy() if copy else value
    try:
        array = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DimensionError(f"{name} must be a vector of numbers, got {value!r}") from exc
    if array.ndim == 0 or (array.ndim == 2 and 1 in array.shape):
        array = array.reshape(-1)
    if array.ndim != 1:
        raise DimensionError(f"{name} must be a vector, got an array of shape {array.shape}")
    if size is not None and array.shape[0] != size:
        raise DimensionError(f"{name} must have size {size}, got size {array.shape[0]}")
    if finite and not np.all(np.isfinite(array)):
        bad = np.flatnonzero(~np.isfinite(array))
        raise NonFiniteError(f"{name} contains NaN or infinity at indices {bad.tolist()}")
    return array


def as_matrix(
    name: str, value: object, shape: tuple[int | None, int | None], *, finite: bool = True
) -> np.ndarray:
    """Return ``value`` as a new 2-D float array of the given shape (``None`` matches any size)."""
    try:
        array = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DimensionError(f"{name} must be a matrix of numbers, got {value!r}") from exc
    mismatch = array.ndim != 2 or any(
        w is not None and g != w for g, w in zip(array.shape, shape, strict=False)
    )
    if mismatch:
        wanted = "x".join("*" if s is None else str(s) for s in shape)
        raise DimensionError(f"{name} must be a {wanted} matrix, got shape {array.shape}")
    if finite and not np.all(np.isfinite(array)):
        raise NonFiniteError(f"{name} contains NaN or infinity")
    return array


def as_scalar(name: str, value: object, *, minimum: float | None = None, strict: bool = False) -> float:
    """Return ``value`` as a finite float, optionally checking ``value >= minimum`` (``>`` if strict)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"{name} must be a number, got {value!r}") from exc
    if not math.isfinite(number):
        raise NonFiniteError(f"{name} must be finite, got {number}")
    if minimum is not None and (number <= minimum if strict else number < minimum):
        relation = ">" if strict else ">="
        raise InvalidParameterError(f"{name} must be {relation} {minimum}, got {number}")
    return number


def as_time(t: object) -> float:
    """A time t [s] as a finite float, checked at every control step: a float is checked in a few
    tens of ns (anything else goes through :func:`as_scalar`)."""
    if isinstance(t, float) and math.isfinite(t):  # numpy.float64 is a float too
        return t
    return as_scalar("t", t)


def as_count(name: str, value: object, *, minimum: int = 0) -> int:
    """Return ``value`` as an int >= ``minimum`` (an integer, not a bool or a float)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InvalidParameterError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def as_unit_vector(name: str, value: object, size: int = 3) -> np.ndarray:
    """Return ``value`` normalized to unit length (e.g. a contact normal); a vector of norm below
    1e-9 has no direction and raises InvalidParameterError."""
    vector = as_vector(name, value, size)
    norm = np.linalg.norm(vector)
    if norm < 1e-9:
        raise InvalidParameterError(f"{name} must be a non-zero {size}-vector, got {vector.tolist()}")
    return vector / norm


def as_mask(name: str, value: object, size: int) -> np.ndarray:
    """Return a boolean mask from a vector of 0/1 values of the given size."""
    array = as_vector(name, value, size)
    if not np.all((array == 0.0) | (array == 1.0)):
        raise InvalidParameterError(f"{name} must contain only 0 and 1, got {array.tolist()}")
    return array.astype(bool)


def mask_rows(mask: np.ndarray) -> slice | np.ndarray:
    """The rows a boolean mask selects: a slice when they are contiguous (indexing then copies nothing)."""
    rows = np.flatnonzero(mask)
    if rows.size and rows[-1] - rows[0] + 1 == rows.size:
        return slice(int(rows[0]), int(rows[-1]) + 1)
    return rows


def unknown_name_message(kind: str, name: object, known: Iterable[str]) -> str:
    """A message for an unknown name that lists the closest known names (a name that is no string
    has none)."""
    known = list(known)
    close = get_close_matches(name, known, n=5, cutoff=0.4) if isinstance(name, str) else []
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    listing = "" if close or len(known) > 20 else f"; known: {', '.join(repr(k) for k in known)}"
    return f"unknown {kind} {name!r}{hint}{listing}"


def lookup(kind: str, name: object, table: dict):
    """``table[name]``, or an :class:`UnknownNameError` that suggests close names."""
    try:
        return table[name]
    except (KeyError, TypeError):  # TypeError: a name that cannot be a key (a list)
        raise UnknownNameError(unknown_name_message(kind, name, table)) from None


def as_gain(name: str, value: object, size: int) -> np.ndarray:
    """A non-negative gain vector of the given size; a scalar is broadcast to all components."""
    if np.ndim(value) == 0:  # type: ignore[arg-type]  # any array-like: np.ndim tells
        value = np.full(size, as_scalar(name, value))
    gain = as_vector(name, value, size)
    if np.any(gain < 0.0):
        raise InvalidParameterError(f"{name} must be >= 0, got {gain.tolist()}")
    return gain
