"""TSID's constraints (bindings/python/constraint/*.hpp), ``ConstraintLevel`` and ``HQPData``
(bindings/python/solvers/HQPData.hpp, utils/container.hpp)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tsid_py import constraints as _main
from tsid_py.compat._wrap import Call, Wrapper, inner
from tsid_py.hqp import HqpData, WeightedConstraint

_COMMON = {
    "rows": "rows",
    "cols": "cols",
    "isEquality": Call("is_equality"),
    "isInequality": Call("is_inequality"),
    "isBound": Call("is_bound"),
}


def _copy(array: object) -> np.ndarray:
    return np.array(array, dtype=float)


class _Constraint(Wrapper):
    """Getters return copies and setters copy in, as TSID's (constraint-*.hpp). A bound of
    magnitude 1e10 or more means "no bound" (``tsid_py.constraints.NO_BOUND``)."""

    _names = _COMMON

    @property
    def matrix(self) -> np.ndarray:
        return _copy(self._inner.matrix)

    @property
    def lowerBound(self) -> np.ndarray:
        return _copy(self._inner.lower_bound)

    @property
    def upperBound(self) -> np.ndarray:
        return _copy(self._inner.upper_bound)

    def setMatrix(self, matrix: object) -> bool:
        return self._set("matrix", np.array(matrix, dtype=float, ndmin=2))

    def setLowerBound(self, lb: object) -> bool:
        return self._set("lower_bound", _copy(lb).reshape(-1))

    def setUpperBound(self, ub: object) -> bool:
        return self._set("upper_bound", _copy(ub).reshape(-1))

    def _set(self, name: str, value: np.ndarray) -> bool:
        """Set one array (checked, copied), as TSID's setters: one of a new size resizes the
        constraint, whose other arrays are kept where they still fit (zeros, no bounds elsewhere)."""
        inner = self._inner
        if value.shape != getattr(inner, name).shape:
            cols = value.shape[1] if name == "matrix" else inner.cols
            resized = _main.new_constraint(inner.kind, inner.name, value.shape[0], cols)
            kept = [n for n in inner.vector_names if getattr(inner, n).shape == getattr(resized, n).shape]
            if not inner.is_bound() and inner.matrix.shape == resized.matrix.shape:
                kept.append("matrix")
            for other in kept:
                setattr(resized, other, getattr(inner, other))
            self._inner = inner = resized
        setattr(inner, name, value)
        return True

    def resize(self, r: int, c: int) -> bool:
        """A zero constraint of r rows and c columns (a bound: r)."""
        self._inner = _main.new_constraint(self._inner.kind, self._inner.name, r, c)
        return True

    @classmethod
    def _of(cls, constraint: _main.ConstraintBase) -> Any:
        """The compat constraint of a tsid_py one, by its kind."""
        kind = {
            _main.Kind.EQUALITY: ConstraintEquality,
            _main.Kind.INEQUALITY: ConstraintInequality,
            _main.Kind.BOUND: ConstraintBound,
        }
        return kind[constraint.kind]._wrap(constraint)


class ConstraintEquality(_Constraint):
    """``(name)``, ``(name, rows, cols)`` or ``(name, A, b)``: A x = b."""

    def __init__(self, name: str, *args: object) -> None:
        if len(args) == 2 and np.ndim(args[0]) == 2:  # type: ignore[arg-type]  # array-like
            self._inner = _main.ConstraintEquality.from_arrays(name, args[0], args[1])
        else:
            self._inner = _main.ConstraintEquality(name, *(args or (0, 0)))

    @property
    def vector(self) -> np.ndarray:
        return _copy(self._inner.vector)

    lowerBound = vector  # noqa: N815  (TSID: an equality's bounds are its vector)
    upperBound = vector  # noqa: N815

    def setVector(self, vector: object) -> bool:
        return self._set("vector", _copy(vector).reshape(-1))

    setLowerBound = setVector  # type: ignore[assignment]  # noqa: N815  (TSID: sets the vector)
    setUpperBound = setVector  # type: ignore[assignment]  # noqa: N815


class ConstraintInequality(_Constraint):
    """``(name)``, ``(name, rows, cols)`` or ``(name, A, lb, ub)``: lb <= A x <= ub."""

    def __init__(self, name: str, *args: object) -> None:
        if len(args) == 3:
            self._inner = _main.ConstraintInequality.from_arrays(name, *args)
        else:
            self._inner = _main.ConstraintInequality(name, *(args or (0, 0)))


class ConstraintBound(_Constraint):
    """``(name)``, ``(name, size)`` or ``(name, lb, ub)``: lb <= x <= ub."""

    def __init__(self, name: str, *args: object) -> None:
        if len(args) == 2:
            self._inner = _main.ConstraintBound.from_arrays(name, *args)
        else:
            self._inner = _main.ConstraintBound(name, *(args or (0,)))


class ConstraintLevel(Wrapper):
    """One priority level built by hand: ``append(weight, constraint)``. The level keeps the
    constraints themselves (not copies), so a constraint changed after it was appended is solved
    changed, as with TSID's shared pointers."""

    def __init__(self) -> None:
        self._inner: list[tuple[float, _Constraint]] = []

    def append(self, weight: float, constraint: _Constraint) -> None:
        self._inner.append((float(weight), constraint))

    def print_all(self) -> None:
        print(_describe((w, inner(c)) for w, c in self._inner))


class HQPData(Wrapper):
    """The levels of a problem: ``computeProblemData``'s (a tsid_py ``HqpData``), or built by hand
    with ``append(level)`` (a list of ConstraintLevel, turned into an ``HqpData`` when solved)."""

    def __init__(self) -> None:
        self._inner: list[ConstraintLevel] | HqpData = []

    def append(self, level: ConstraintLevel) -> None:
        self._levels_by_hand().append(level)

    def resize(self, size: int) -> None:
        levels = self._levels_by_hand()
        del levels[size:]
        levels.extend(ConstraintLevel() for _ in range(size - len(levels)))

    def _levels_by_hand(self) -> list[ConstraintLevel]:
        if isinstance(self._inner, HqpData):  # a computed problem, extended by hand
            levels = []
            for level in self._inner:
                levels.append(ConstraintLevel())
                levels[-1]._inner = [(w, _Constraint._of(c)) for w, c in level]
            self._inner = levels
        return self._inner

    def print_all(self) -> None:
        levels = self.problem()
        print("\n".join(f"Level {i}\n{_describe(level)}" for i, level in enumerate(levels)))

    def problem(self) -> HqpData:
        """The tsid_py problem (levels built by hand: one made of their constraints)."""
        if isinstance(self._inner, HqpData):
            return self._inner
        levels = [[WeightedConstraint(w, inner(c)) for w, c in level._inner] for level in self._inner]
        n_var = next((c.cols for level in levels for _, c in level), 0)
        return HqpData(levels, n_var)


def _describe(level: Any) -> str:
    """TSID's print_all lines: `` - name: w=weight, kind, rows x cols``."""
    return "\n".join(f" - {c.name}: w={w:g}, {c.kind}, {c.rows}x{c.cols}" for w, c in level)
