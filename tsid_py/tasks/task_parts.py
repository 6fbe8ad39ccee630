"""The attributes a task is built from: its gains, its mask, a validated scalar (descriptors, one
of each kind for every task and contact), and the selection matrix of a mask over joints."""

from __future__ import annotations

from typing import Any

import numpy as np

from tsid_py.validation import as_gain, as_mask, as_scalar, mask_rows, read_only


class Gain:
    """A gain (``kp``, ``kd``, ``ki``): the one way tasks and contacts hold theirs.

    Set as a scalar or as a vector of the owner's ``gain_size`` entries, every entry >= 0; read as
    a read-only copy (set it with ``task.kp = ...``). Stored as a vector in ``_<name>``, which a
    fill reads at no cost. The docstring given states its unit.

    Args:
        doc: The docstring, with the unit.
        damps: The derivative gain this proportional gain sets to critical damping, 2 sqrt(kp),
            until that one is set itself (``kp = Gain(..., damps="kd")``).
        held_by: The attribute holding the gain instead of the owner: a contact's gains are its
            motion task's, one per row its ``_gain_rows()`` names.
    """

    def __init__(self, doc: str, *, damps: str | None = None, held_by: str | None = None) -> None:
        self.__doc__ = doc
        self._damps, self._held_by = damps, held_by

    def __set_name__(self, owner: type, name: str) -> None:
        self._name, self._attribute = name, f"_{name}"

    def __get__(self, owner: Any, owner_type: type | None = None) -> np.ndarray:
        if owner is None:
            return self  # type: ignore[return-value]
        if self._held_by is not None:
            return read_only(getattr(getattr(owner, self._held_by), self._attribute)[owner._gain_rows()])
        return read_only(getattr(owner, self._attribute).copy())

    def __set__(self, owner: Any, value: object) -> None:
        name = f"{self._name} of {owner.name!r}"
        if self._held_by is not None:
            holder, rows = getattr(owner, self._held_by), owner._gain_rows()
            gains = getattr(holder, self._attribute).copy()
            gains[rows] = as_gain(name, value, rows.size)
            setattr(holder, self._name, gains)
            return
        gain = as_gain(name, value, owner.gain_size)
        setattr(owner, self._attribute, gain)
        if self._damps is None:
            setattr(owner, f"_{self._name}_set", True)  # a derivative gain no longer follows kp
        elif not getattr(owner, f"_{self._damps}_set", False):
            setattr(owner, f"_{self._damps}", 2.0 * np.sqrt(gain))


class Mask:
    """A 0/1 ``mask`` over a task's ``_mask_size()`` entries (its error components, or joints),
    read as floats (a read-only copy) and stored as booleans.

    Setting it validates it and keeps the selected entries as ``_rows`` (a slice when they are
    contiguous), whether all are kept as ``_all_rows``, and their number as ``_dim``, the task's
    rows. The rows the task wrote before are no longer its constraint. The task's
    ``_apply_mask()``, if it has one, then rebuilds what depends on the mask.
    """

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc

    def __get__(self, task: Any, owner: type | None = None) -> np.ndarray:
        if task is None:
            return self  # type: ignore[return-value]
        return read_only(task._mask.astype(float))

    def __set__(self, task: Any, value: object) -> None:
        task._mask = mask = as_mask("mask", value, task._mask_size())
        task._rows = mask_rows(mask)
        task._all_rows = bool(mask.all())
        task._dim = int(mask.sum())
        task._state.rows = None
        apply = getattr(task, "_apply_mask", None)
        if apply is not None:
            apply()


class Scalar:
    """A scalar attribute (e.g. ``dt``), validated on assignment: a finite number >= ``minimum``
    (> with ``strict``). Stored in ``_<name>``, which a fill reads at no cost. The docstring
    given states its unit."""

    def __init__(self, doc: str, *, minimum: float, strict: bool = False) -> None:
        self.__doc__ = doc
        self._minimum, self._strict = minimum, strict

    def __set_name__(self, owner: type, name: str) -> None:
        self._name, self._attribute = name, f"_{name}"

    def __get__(self, task: object, owner: type | None = None) -> float:
        if task is None:
            return self  # type: ignore[return-value]
        return getattr(task, self._attribute)

    def __set__(self, task: object, value: object) -> None:
        name = f"{self._name} of task {getattr(task, 'name', '?')!r}"
        setattr(task, self._attribute, as_scalar(name, value, minimum=self._minimum, strict=self._strict))


def joint_selection(mask: np.ndarray, columns: int, first: int = 0) -> np.ndarray:
    """The rows of the identity that a mask over joints keeps: one row per kept joint k, with a 1
    in column ``first + k`` of ``columns``."""
    kept = np.flatnonzero(mask)
    selection = np.zeros((kept.size, columns))
    selection[np.arange(kept.size), first + kept] = 1.0
    return selection
