"""Affine constraints: math objects that do not know what they represent.

- :class:`ConstraintEquality`:   A x = b
- :class:`ConstraintInequality`: lb <= A x <= ub
- :class:`ConstraintBound`:      lb <= x <= ub

Each class is built from sizes (zeros, no bounds) or from arrays, as TSID's two constructors are:
``ConstraintEquality(name, rows, cols)`` or ``ConstraintEquality(name, A, b)``. A constraint owns
its arrays: constructors and setters (``c.matrix = A``, ``c.vector = b``, ``c.lower_bound = lb``,
``c.upper_bound = ub``) check and copy what they are given, and a constraint keeps its shape. Its
arrays may be written in place (``c.vector[:] = b``): that is how a task fills the rows it is given.

A bound of magnitude :data:`NO_BOUND` or more is no bound, as in TSID
(docs/concepts/conventions.md, section "The problem"). The C++ TSID writes 1e10 for a missing
side (``TaskJointBounds``, the contacts' friction rows). The QP builder treats 1e10 and an
infinite bound alike (:mod:`tsid_py.solvers.dense_qp`).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Self, TypeGuard

import numpy as np

from tsid_py.errors import InvalidParameterError, NonFiniteError
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
    """Common part of every constraint: a name and a matrix with ``cols`` columns.

    Setting ``matrix`` or a vector (``vector``, ``lower_bound``, ``upper_bound``) checks and copies
    the value: the matrix keeps its shape, a vector has ``rows`` entries, finite (a bound may be
    infinite, never NaN). Reading them gives the constraint's own arrays, to read or write in place.
    """

    kind: Kind
    vector_names: tuple[str, ...] = ()  # the vectors beside the matrix: ("vector",) or the two bounds
    name: str
    matrix: np.ndarray  # A, rows x cols

    def _hold(self, name: str, matrix: np.ndarray, *vectors: np.ndarray) -> None:
        """Hold these arrays themselves, unchecked and not copied (the vectors in the order of
        :attr:`vector_names`): arrays checked or made by the caller, nothing else holds them."""
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "matrix", matrix)
        for vector_name, vector in zip(self.vector_names, vectors, strict=True):
            object.__setattr__(self, vector_name, vector)

    @classmethod
    def _holding(cls, name: str, matrix: np.ndarray, *vectors: np.ndarray) -> Self:
        """A constraint holding these arrays themselves (:meth:`_hold`): a workspace's views of
        its buffers, which it fills in place at every step (tasks write into them)."""
        constraint = cls.__new__(cls)
        constraint._hold(name, matrix, *vectors)
        return constraint

    def __setattr__(self, name: str, value: object) -> None:
        if name == "matrix":
            value = self._checked_matrix(value)
        elif name in self.vector_names:
            value = self._checked_vector(name, value)
        object.__setattr__(self, name, value)

    def _checked_matrix(self, value: object) -> np.ndarray:
        return as_matrix(f"matrix of constraint {self.name!r}", value, self.matrix.shape)

    def _checked_vector(self, name: str, value: object) -> np.ndarray:
        """``value`` as a new vector of ``rows`` entries: finite (an equality's), or not NaN (bounds)."""
        finite = self.kind is Kind.EQUALITY
        vector = as_vector(f"{name} of constraint {self.name!r}", value, self.rows, finite=finite)
        if not finite and np.isnan(vector.dot(vector)):
            raise NonFiniteError(f"{name} of constraint {self.name!r} contains NaN")
        return vector

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
        vectors = [getattr(self, name).copy() for name in self.vector_names]
        return _CLASSES[self.kind]._holding(self.name, self.matrix.copy(), *vectors)

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
    vector: np.ndarray  # b, rows entries

    def __init__(self, name: str, rows: int | object, cols: int | object) -> None:
        """``(name, rows, cols)``: zeros; ``(name, A, b)``: the arrays (validated, copied)."""
        if not (_is_size(rows) and _is_size(cols)):
            A = as_matrix("A", rows, (None, None))
            self._hold(name, A, as_vector("b", cols, A.shape[0]))
        else:
            self._hold(name, np.zeros((rows, cols)), np.zeros(rows))

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
    lower_bound: np.ndarray  # lb, rows entries
    upper_bound: np.ndarray  # ub, rows entries

    def __init__(self, name: str, rows: int | object, cols: int | object, *bounds: object) -> None:
        """``(name, rows, cols)``: zeros, no bounds; ``(name, A, lb, ub)``: the arrays (validated,
        copied; infinities allowed in the bounds)."""
        if not (_is_size(rows) and _is_size(cols) and not bounds):
            if len(bounds) != 1:
                raise InvalidParameterError(
                    f"ConstraintInequality {name!r}: give (name, rows, cols) or (name, A, lb, ub)"
                )
            A = as_matrix("A", rows, (None, None))
            lb = as_vector("lb", cols, A.shape[0], finite=False)
            ub = as_vector("ub", bounds[0], A.shape[0], finite=False)
            check_bounds(name, lb, ub)
            self._hold(name, A, lb, ub)
        else:
            self._hold(name, np.zeros((rows, cols)), np.full(rows, -np.inf), np.full(rows, np.inf))

    @classmethod
    def from_arrays(cls, name: str, A: object, lb: object, ub: object) -> ConstraintInequality:
        """Build from a matrix and two bound vectors (validated, copied; infinities allowed in the bounds)."""
        return cls(name, as_matrix("A", A, (None, None)), lb, ub)

    def residual(self, x: object) -> np.ndarray:
        Ax = self.matrix @ self._x(x)
        return np.minimum(Ax - self.lower_bound, 0.0) + np.maximum(Ax - self.upper_bound, 0.0)


class ConstraintBound(ConstraintBase):
    """lb <= x <= ub (the matrix is the identity, which cannot be set)."""

    kind = Kind.BOUND
    vector_names = ("lower_bound", "upper_bound")
    lower_bound: np.ndarray  # lb, rows entries
    upper_bound: np.ndarray  # ub, rows entries

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
        self._hold(name, np.eye(lb.shape[0]), lb, ub)

    def _checked_matrix(self, value: object) -> np.ndarray:
        raise InvalidParameterError(f"the matrix of bound {self.name!r} is the identity: set its bounds")

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
    arrays = [getattr(constraint, name).view() for name in ("matrix", *constraint.vector_names)]
    for array in arrays:
        array.flags.writeable = False
    return cls._holding(constraint.name, *arrays)


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
        NonFiniteError: A NaN.
        InvalidParameterError: lb > ub at some rows (named in the message, with ``name``).
    """
    if np.any(np.isnan(lb)) or np.any(np.isnan(ub)):
        raise NonFiniteError(f"bounds of {name!r} contain NaN")
    if np.any(lb > ub):
        rows = np.flatnonzero(lb > ub).tolist()
        raise InvalidParameterError(f"bounds of {name!r}: lower > upper at rows {rows}")
