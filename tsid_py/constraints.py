"""Affine constraints: math objects that do not know what they represent.

- :class:`ConstraintEquality`:   A x = b
- :class:`ConstraintInequality`: lb <= A x <= ub
- :class:`ConstraintBound`:      lb <= x <= ub

Each class is built from sizes (zeros, no bounds) or from arrays, as TSID's two constructors are:
``ConstraintEquality(name, rows, cols)`` or ``ConstraintEquality(name, A, b)``. A constraint owns
its arrays: constructors copy what they are given.

A bound of magnitude :data:`NO_BOUND` or more is no bound, as in TSID
(docs/concepts/conventions.md, section "The problem"). The C++ TSID writes 1e10 for a missing
side (``TaskJointBounds``, the contacts' friction rows). The QP builder treats 1e10 and an
infinite bound alike (:mod:`tsid_py.solvers.dense_qp`).
"""

from __future__ import annotations

from enum import StrEnum
from typing import TypeGuard

import numpy as np

from tsid_py.errors import DimensionError, InvalidParameterError
from tsid_py.validation import as_matrix, as_scalar, as_vector

NO_BOUND = 1e10  # |bound| >= NO_BOUND: no bound on that side (TSID's convention)


class Kind(StrEnum):
    """The three kinds of constraint, by their form: A x = b, lb <= A x <= ub, lb <= x <= ub.

    A string enum: a kind equals its value as a string (``Kind.EQUALITY == "equality"``).
    """

    EQUALITY = "equality"
    INEQUALITY = "inequality"
    BOUND = "bound"


def as_kind(what: str, kind: object) -> Kind:
    """``kind`` as a :class:`Kind`.

    Args:
        what: What has the kind, for the message (``"task 'com'"``).
        kind: A member of :class:`Kind`, or its string.

    Raises:
        InvalidParameterError: ``kind`` is no kind; the message names ``what`` and the kinds.
    """
    if isinstance(kind, Kind):
        return kind
    try:
        return Kind(kind)  # type: ignore[arg-type]  # any value: the enum tells
    except ValueError:
        choices = ", ".join(repr(k.value) for k in Kind)
        raise InvalidParameterError(f"the kind of {what} must be one of {choices}, got {kind!r}") from None


def _is_size(value: object) -> TypeGuard[int]:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


class ConstraintBase:
    """Common part of every constraint: a name and a matrix with ``cols`` columns."""

    kind: Kind
    vector_names: tuple[str, ...] = ()  # the vectors beside the matrix: ("vector",) or the two bounds

    def __init__(self, name: str, rows: int, cols: int) -> None:
        self.name = name
        self.matrix = np.zeros((rows, cols))

    @property
    def rows(self) -> int:
        """Number of scalar constraints."""
        return self.matrix.shape[0]

    @property
    def cols(self) -> int:
        """Size of the variable the constraint acts on."""
        return self.matrix.shape[1]

    def is_equality(self) -> bool:
        return self.kind == Kind.EQUALITY

    def is_inequality(self) -> bool:
        return self.kind == Kind.INEQUALITY

    def is_bound(self) -> bool:
        return self.kind == Kind.BOUND

    def copy(self) -> ConstraintBase:
        """An independent constraint of the same kind, name and values.

        The copy is writable, even when this one is a read-only view.
        """
        other = _CLASSES[self.kind].__new__(_CLASSES[self.kind])
        other.name = self.name
        other.matrix = self.matrix.copy()
        for name in self.vector_names:
            setattr(other, name, getattr(self, name).copy())
        return other

    def _x(self, x: object) -> np.ndarray:
        return as_vector(f"x for constraint {self.name!r}", x, self.cols, copy=False)

    def residual(self, x: object) -> np.ndarray:
        """The violation of each row at x.

        Returns:
            0 where a row holds; else the signed distance to the violated side (A x - b for an
                equality, A x - lb < 0 or A x - ub > 0 for an inequality).
        """
        raise NotImplementedError

    def check(self, x: object, tol: float = 1e-6) -> bool:
        """Whether x satisfies every row to ``tol``.

        Args:
            x: The variable, size ``cols``.
            tol: Absolute tolerance on each row's :meth:`residual` (>= 0).
        """
        tol = as_scalar("tol", tol, minimum=0.0)
        return bool(np.all(np.abs(self.residual(x)) <= tol))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, rows={self.rows}, cols={self.cols})"


class ConstraintEquality(ConstraintBase):
    """A x = b."""

    kind = Kind.EQUALITY
    vector_names = ("vector",)

    def __init__(self, name: str, rows: int | object, cols: int | object) -> None:
        """``(name, rows, cols)``: zeros; ``(name, A, b)``: the arrays (validated, copied)."""
        if not (_is_size(rows) and _is_size(cols)):
            A = as_matrix("A", rows, (None, None))
            super().__init__(name, *A.shape)
            self.matrix = A
            self.vector = as_vector("b", cols, A.shape[0])
            return
        super().__init__(name, rows, cols)
        self.vector = np.zeros(rows)

    @classmethod
    def from_arrays(cls, name: str, A: object, b: object) -> ConstraintEquality:
        """Build from a matrix and a vector (validated, copied)."""
        return cls(name, as_matrix("A", A, (None, None)), b)

    def residual(self, x: object) -> np.ndarray:
        return self.matrix @ self._x(x) - self.vector


class ConstraintInequality(ConstraintBase):
    """lb <= A x <= ub, with -inf / +inf for a missing side."""

    kind = Kind.INEQUALITY
    vector_names = ("lower_bound", "upper_bound")

    def __init__(self, name: str, rows: int | object, cols: int | object, *bounds: object) -> None:
        """``(name, rows, cols)``: zeros, no bounds; ``(name, A, lb, ub)``: the arrays (validated,
        copied; infinities allowed in the bounds)."""
        if not (_is_size(rows) and _is_size(cols) and not bounds):
            if len(bounds) != 1:
                raise InvalidParameterError(
                    f"ConstraintInequality {name!r}: give (name, rows, cols) or (name, A, lb, ub)"
                )
            A = as_matrix("A", rows, (None, None))
            super().__init__(name, *A.shape)
            self.matrix = A
            self.lower_bound = as_vector("lb", cols, A.shape[0], finite=False)
            self.upper_bound = as_vector("ub", bounds[0], A.shape[0], finite=False)
            check_bounds(name, self.lower_bound, self.upper_bound)
            return
        super().__init__(name, rows, cols)
        self.lower_bound = np.full(rows, -np.inf)
        self.upper_bound = np.full(rows, np.inf)

    @classmethod
    def from_arrays(cls, name: str, A: object, lb: object, ub: object) -> ConstraintInequality:
        """Build from a matrix and two bound vectors (validated, copied; infinities allowed in the bounds)."""
        return cls(name, as_matrix("A", A, (None, None)), lb, ub)

    def residual(self, x: object) -> np.ndarray:
        Ax = self.matrix @ self._x(x)
        return np.minimum(Ax - self.lower_bound, 0.0) + np.maximum(Ax - self.upper_bound, 0.0)


class ConstraintBound(ConstraintBase):
    """lb <= x <= ub (the matrix is the identity)."""

    kind = Kind.BOUND
    vector_names = ("lower_bound", "upper_bound")

    def __init__(self, name: str, size: int | object, *upper: object) -> None:
        """``(name, size)``: no bounds; ``(name, lb, ub)``: the vectors (validated, copied;
        infinities allowed)."""
        if _is_size(size) and not upper:
            lb, ub = np.full(size, -np.inf), np.full(size, np.inf)
        elif len(upper) == 1:
            lb = as_vector("lb", size, finite=False)
            ub = as_vector("ub", upper[0], lb.shape[0], finite=False)
            check_bounds(name, lb, ub)
        else:
            raise InvalidParameterError(f"ConstraintBound {name!r}: give (name, size) or (name, lb, ub)")
        super().__init__(name, lb.shape[0], lb.shape[0])
        self.matrix[:] = np.eye(lb.shape[0])
        self.lower_bound, self.upper_bound = lb, ub

    @classmethod
    def from_arrays(cls, name: str, lb: object, ub: object) -> ConstraintBound:
        """Build from two bound vectors of the same size (validated, copied; infinities allowed)."""
        return cls(name, as_vector("lb", lb, finite=False), ub)

    def residual(self, x: object) -> np.ndarray:
        x = self._x(x)
        return np.minimum(x - self.lower_bound, 0.0) + np.maximum(x - self.upper_bound, 0.0)


_CLASSES: dict[Kind, type[ConstraintBase]] = {
    Kind.EQUALITY: ConstraintEquality,
    Kind.INEQUALITY: ConstraintInequality,
    Kind.BOUND: ConstraintBound,
}


class _ReadOnly:
    """A constraint whose arrays are read-only views and whose attributes cannot be assigned: a
    view of a formulation's problem (:func:`read_only_view`)."""

    def __setattr__(self, name: str, value: object) -> None:
        raise InvalidParameterError(
            f"constraint {self.name!r} is a read-only view of a formulation's problem: "  # type: ignore[attr-defined]
            "change a copy (hqp.snapshot(), constraint.copy())"
        )


class _ReadOnlyEquality(_ReadOnly, ConstraintEquality):
    pass


class _ReadOnlyInequality(_ReadOnly, ConstraintInequality):
    pass


def read_only_view(constraint: ConstraintBase) -> ConstraintBase:
    """A view of ``constraint`` that cannot be changed.

    Its arrays are read-only views of the constraint's, and any assignment raises. An equality gives
    an equality; an inequality or a bound gives an inequality.
    """
    cls: type[ConstraintBase] = _ReadOnlyEquality if constraint.is_equality() else _ReadOnlyInequality
    view = cls.__new__(cls)
    object.__setattr__(view, "name", constraint.name)
    for name in ("matrix", *constraint.vector_names):
        array = getattr(constraint, name).view()
        array.flags.writeable = False
        object.__setattr__(view, name, array)
    return view


def new_constraint(kind: Kind | str, name: str, rows: int, cols: int) -> ConstraintBase:
    """A zero constraint of a :class:`Kind` (a bound has cols = rows)."""
    kind = as_kind(f"constraint {name!r}", kind)
    if kind is Kind.EQUALITY:
        return ConstraintEquality(name, rows, cols)
    if kind is Kind.INEQUALITY:
        return ConstraintInequality(name, rows, cols)
    return ConstraintBound(name, rows)


def check_bounds(name: str, lb: np.ndarray, ub: np.ndarray) -> None:
    """Check that lb <= ub, row by row, and that neither holds NaN.

    Raises:
        DimensionError: A NaN.
        InvalidParameterError: lb > ub at some rows (named in the message, with ``name``).
    """
    if np.any(np.isnan(lb)) or np.any(np.isnan(ub)):
        raise DimensionError(f"bounds of {name!r} contain NaN")
    if np.any(lb > ub):
        rows = np.flatnonzero(lb > ub).tolist()
        raise InvalidParameterError(f"bounds of {name!r}: lower > upper at rows {rows}")
