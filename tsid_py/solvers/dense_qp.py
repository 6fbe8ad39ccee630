"""The one dense QP builder: every backend, the cascade, the diagnostics and a formulation solve this.

    minimize 1/2 x^T H x + g^T x   subject to   A_eq x = b_eq,   lb <= A_in x <= ub

Level 0 gives the constraints: its equalities in order, then its inequalities and bounds in
order, every row kept. A side of magnitude ``NO_BOUND`` = 1e10 or more, or infinite, is no bound.
quadprog skips it; DAQP holds it as a far bound that never binds. The row keeps its number, so
active sets and multipliers count the same rows everywhere.

A cost level gives H = sum w A^T A + eps I and g = -sum w A^T b. eps = 1e-8 is TSID's
DEFAULT_HESSIAN_REGULARIZATION: H is positive definite even where the costs leave directions free.

:class:`HardRows` lays level 0 out in one buffer, with the gradient g in it: the warm start's
[A_eq; g] is one view. :class:`CostRows` lays a cost level out. Why one builder serves every
problem: docs/architecture.md, section "One QP builder".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

import numpy as np

from tsid_py.constraints import ConstraintBase, ConstraintEquality, ConstraintInequality, Kind
from tsid_py.errors import UnsupportedProblemError
from tsid_py.hqp import HqpData, WeightedConstraint
from tsid_py.solvers.hqp_output import HqpOutput

HESSIAN_REGULARIZATION = 1e-8


@dataclass
class HardConstraints:
    """The constraints of level 0: equalities and two-sided inequalities, with row names.

    ``pinned`` has one flag per inequality row, or is None when no row is pinned. A pinned row
    stands for an equality, given as a slab lb <= A x <= ub a rounding error wide: a priority
    cascade pins the optimum of a level so (:mod:`tsid_py.solvers.cascade`). A warm start may hold
    a pinned row at either side, with a multiplier of either sign.
    """

    A_eq: np.ndarray
    b_eq: np.ndarray
    A_in: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    eq_names: list[str]
    in_names: list[str]
    pinned: np.ndarray | None = None

    @property
    def n_eq(self) -> int:
        return self.A_eq.shape[0]

    @property
    def n_in(self) -> int:
        return self.A_in.shape[0]

    def with_inequalities(
        self, A: np.ndarray, lb: np.ndarray, ub: np.ndarray, name: str, pinned: bool = False
    ) -> HardConstraints:
        """These constraints plus the rows lb <= A x <= ub named ``name`` (``pinned``: see the class)."""
        before = np.zeros(self.n_in, dtype=bool) if self.pinned is None else self.pinned
        return HardConstraints(
            self.A_eq,
            self.b_eq,
            np.vstack([self.A_in, A]),
            np.concatenate([self.lb, lb]),
            np.concatenate([self.ub, ub]),
            self.eq_names,
            self.in_names + [name] * A.shape[0],
            np.concatenate([before, np.full(A.shape[0], pinned)]),
        )


@dataclass
class DenseQp:
    """minimize 1/2 x^T H x + g^T x subject to ``constraints``.

    ``tail_inverse`` (read-only), when given, is the inverse of the last k x k diagonal block of
    H, and H is block diagonal with that block apart (:class:`CostRows`). A solver may then
    factorize only the first block. ``rows``, when given, is one buffer [A_eq; g; A_in]:
    ``constraints.A_eq``, ``g`` and ``constraints.A_in`` are its rows (:class:`HardRows`).
    """

    H: np.ndarray
    g: np.ndarray
    constraints: HardConstraints
    tail_inverse: np.ndarray | None = None
    rows: np.ndarray | None = None

    @property
    def n(self) -> int:
        return self.H.shape[0]

    def non_finite(self) -> str:
        """Which rows hold NaN or infinity (a bound may be infinite, not NaN), as a message; "" if none.

        The backends check it: quadprog before a cold solve (it drops a NaN row as if it were met;
        a warm start never confirms such a QP), DAQP before every solve. One dot product per array
        when all is finite ([A_eq; g; A_in] is one with ``rows``); the rows are looked at one by
        one only when one is not. A cost level's rows reach g (a NaN or infinite entry of S, s or
        a weight makes g non-finite).
        """
        c = self.constraints
        matrices = (self.rows,) if self.rows is not None else (c.A_eq, self.g[None], c.A_in)
        if (
            all(math.isfinite(m.ravel().dot(m.ravel())) for m in matrices)
            and math.isfinite(c.b_eq.dot(c.b_eq))
            and not math.isnan(c.lb.dot(c.lb))
            and not math.isnan(c.ub.dot(c.ub))
        ):
            return ""
        bad_eq = ~(np.isfinite(c.A_eq).all(axis=1) & np.isfinite(c.b_eq))
        bad_in = ~np.isfinite(c.A_in).all(axis=1) | np.isnan(c.lb) | np.isnan(c.ub)
        names = [c.eq_names[k] for k in np.flatnonzero(bad_eq)]
        names += [c.in_names[k] for k in np.flatnonzero(bad_in)]
        where = [f"the rows of {name!r}" for name in dict.fromkeys(names)]
        if not np.isfinite(self.g).all():
            where.append("the cost (the rows or weights of the cost level)")
        # none: the quick test's squares overflowed on finite entries beyond 1e154
        return f"NaN or infinity in {', '.join(where)}" if where else ""


SolveQp = Callable[[DenseQp], HqpOutput]  # a backend's primitive: one dense QP, one output


class RowSpec(NamedTuple):
    """One constraint of a level as a layout sees it: its name, kind, number of rows and the columns
    of x its matrix may be non-zero in (None: all)."""

    name: str
    kind: Kind
    rows: int
    columns: slice | None = None


def spec_of(entry: WeightedConstraint) -> RowSpec:
    c = entry.constraint
    return RowSpec(c.name, c.kind, c.rows, entry.columns)


class HardRows:
    """Level 0 in one buffer [A_eq; g; A_in] and the vectors b_eq, lb, ub.

    Equalities come first in the order given, then inequalities and bounds (as rows
    lb <= A x <= ub) in the order given. :meth:`view` gives each constraint's rows as a
    constraint whose arrays are views of the buffers.
    """

    def __init__(self, specs: Sequence[RowSpec], n: int) -> None:
        self.n = n
        self.specs = list(specs)
        equalities = [k for k, s in enumerate(self.specs) if s.kind is Kind.EQUALITY]
        inequalities = [k for k, s in enumerate(self.specs) if s.kind is not Kind.EQUALITY]
        n_eq = sum(self.specs[k].rows for k in equalities)
        n_in = sum(self.specs[k].rows for k in inequalities)
        self.buffer = np.zeros((n_eq + 1 + n_in, n))
        self.b_eq, self.lb, self.ub = np.zeros(n_eq), np.full(n_in, -np.inf), np.full(n_in, np.inf)
        self.g = self.buffer[n_eq]
        self._spans: list[slice] = [slice(0)] * len(self.specs)  # each spec's rows of buffer
        first = 0
        for k in equalities:
            self._spans[k] = slice(first, first + self.specs[k].rows)
            first += self.specs[k].rows
        first += 1  # the g row
        for k in inequalities:
            self._spans[k] = slice(first, first + self.specs[k].rows)
            first += self.specs[k].rows
        self.constraints = HardConstraints(
            self.buffer[:n_eq],
            self.b_eq,
            self.buffer[n_eq + 1 :],
            self.lb,
            self.ub,
            [self.specs[k].name for k in equalities for _ in range(self.specs[k].rows)],
            [self.specs[k].name for k in inequalities for _ in range(self.specs[k].rows)],
        )
        self._n_eq = n_eq

    def read_only(self) -> tuple[HardConstraints, np.ndarray]:
        """The constraints and the buffer [A_eq; g; A_in] as read-only views (for solvers: only the
        owner of the rows writes them)."""
        c = self.constraints
        arrays = [_read_only(a) for a in (c.A_eq, c.b_eq, c.A_in, c.lb, c.ub, self.buffer)]
        return HardConstraints(*arrays[:5], c.eq_names, c.in_names), arrays[5]  # type: ignore[arg-type,call-arg]  # 5 arrays

    def view(self, index: int, columns: slice | None = None) -> ConstraintBase:
        """Spec ``index``'s rows as a constraint whose arrays are views of the buffers (its matrix on
        ``columns`` of x when given); a bound comes as an inequality on rows of x."""
        spec, span = self.specs[index], self._spans[index]
        matrix = self.buffer[span] if columns is None else self.buffer[span, columns]
        if spec.kind is Kind.EQUALITY:
            return ConstraintEquality._holding(spec.name, matrix, self.b_eq[span])
        shifted = slice(span.start - self._n_eq - 1, span.stop - self._n_eq - 1)
        return ConstraintInequality._holding(spec.name, matrix, self.lb[shifted], self.ub[shifted])

    def rows_of(self, indices: Sequence[int]) -> np.ndarray | None:
        """The rows of the specs ``indices``, in order, as one view of the buffer when they are
        consecutive there; None otherwise."""
        if not indices:
            return self.buffer[:0]
        spans = [self._spans[k] for k in indices]
        if any(a.stop != b.start for a, b in zip(spans, spans[1:], strict=False)):
            return None
        return self.buffer[spans[0].start : spans[-1].stop]


class CostRows:
    """A cost level's rows S and vector s in buffers, their weights, and H and g made from them.

    Rows are grouped by the columns they can touch: dv only, f only, or both. So
    H = sum_groups S_g^T W_g S_g is formed block by block. When no row spans both, H is block
    diagonal. Its f block holds the force regularizations, constant in most problems: it is
    rebuilt, and its inverse computed, only when its rows or weights changed.

    Args:
        specs: The level's constraints (equalities).
        n: Size of x.
        nv: Size of dv (x = [dv; f]).
    """

    def __init__(self, specs: Sequence[RowSpec], n: int, nv: int) -> None:
        for spec in specs:
            if spec.kind is not Kind.EQUALITY:
                raise UnsupportedProblemError(
                    f"{spec.kind} {spec.name!r} is in a cost level; only equalities can be costs "
                    "(put inequalities at priority 0)"
                )
        self.n, self.specs = n, list(specs)
        groups: dict[tuple[int, int], list[int]] = {}
        for k, spec in enumerate(self.specs):
            start, stop, _ = (spec.columns or slice(0, n)).indices(n)
            key = (0, nv) if stop <= nv else (nv, n) if start >= nv else (0, n)
            groups.setdefault(key, []).append(k)
        total = sum(spec.rows for spec in self.specs)
        self.S, self.s = np.zeros((total, n)), np.zeros(total)
        self._spans: list[slice] = [slice(0)] * len(self.specs)
        self.H = np.zeros((n, n))
        self._diagonal = self.H.ravel()[:: n + 1]  # a view: adds to the diagonal of H in place
        self._in_place = (0, n) not in groups or len(groups) == 1
        self._uncovered = (
            []
            if (0, n) in groups
            else [slice(a, b) for a, b in ((0, nv), (nv, n)) if a < b and (a, b) not in groups]
        )
        self._row_weights = np.zeros((total, 1))
        self._minus_weights = np.zeros(total)
        self._ws = np.zeros(total)
        self._groups: list[_CostGroup] = []
        self._tail: _CostGroup | None = None  # the group of the f block, when H is block diagonal
        first = 0
        for (start, stop), members in sorted(groups.items()):
            rows = slice(first, first + sum(self.specs[k].rows for k in members))
            for k in members:
                self._spans[k] = slice(first, first + self.specs[k].rows)
                first += self.specs[k].rows
            group = _CostGroup(members, self.S[rows, start:stop], slice(start, stop), self.H, rows)
            self._groups.append(group)
            if (start, stop) == (nv, n) and (0, n) not in groups:
                self._tail = group
        self.tail_inverse: np.ndarray | None = None
        self._tail_key: tuple[bytes, bytes] | None = None  # the f block's rows and weights at the last call
        self._tail_block: np.ndarray | None = None  # and the f block of H they gave
        self.weights = np.zeros(len(self.specs))

    def view(self, index: int, columns: slice | None = None) -> ConstraintEquality:
        """Spec ``index``'s rows as an equality whose arrays are views of S and s (its matrix on
        ``columns`` of x when given)."""
        span = self._spans[index]
        matrix = self.S[span] if columns is None else self.S[span, columns]
        return ConstraintEquality._holding(self.specs[index].name, matrix, self.s[span])

    def set_weights(self, weights: Sequence[float]) -> None:
        """One weight (>= 0) per spec."""
        self.weights = np.array(weights, dtype=float)
        for k, span in enumerate(self._spans):
            self._row_weights[span, 0] = self.weights[k]
        np.negative(self._row_weights[:, 0], out=self._minus_weights)

    def cost(self, g: np.ndarray, regularization: float = HESSIAN_REGULARIZATION) -> np.ndarray:
        """H = sum w S^T S + regularization I (returned, this object's buffer) and g = -sum w S^T s
        (written into ``g``), from the current rows and weights."""
        if not self._in_place:
            self.H.fill(0.0)
        for group in self._groups:
            if group is self._tail and self._tail_unchanged():
                group.H[...] = self._tail_block  # the same block as at the last call, copied back
                continue
            WS = np.multiply(self._row_weights[group.rows], group.S, out=group.WS)
            if self._in_place:
                np.matmul(group.S.T, WS, out=group.H)
                group.diagonal += regularization
            else:
                group.H += group.S.T @ WS
        if not self._in_place:
            self._diagonal += regularization
        for columns in self._uncovered:
            self._diagonal[columns] = regularization
        if self._tail is not None and self._tail_block is None:
            self._tail_block = self._tail.H.copy()
        np.multiply(self._minus_weights, self.s, out=self._ws)
        self._ws.dot(self.S, out=g)  # g = -S^T W s, every row at once
        return self.H

    def _tail_unchanged(self) -> bool:
        """Whether the f block's rows and weights are those of the last call (its block of H is
        then copied from the one kept, and its inverse computed once, from the second such call on)."""
        tail = cast(_CostGroup, self._tail)  # called for the group of the f block only
        key = (tail.S.tobytes(), self._row_weights[tail.rows].tobytes())  # a cheap, exact "unchanged"
        if key == self._tail_key:
            if self.tail_inverse is None:
                self.tail_inverse = np.linalg.inv(self._tail_block)  # type: ignore[arg-type]  # kept by now
                self.tail_inverse.flags.writeable = False  # solvers read it
            return True
        self._tail_key, self._tail_block, self.tail_inverse = key, None, None
        return False


class _CostGroup:
    """Cost rows that act on the same block of columns of x, with their block of H.

    ``S`` is a view of the level's rows on the block's columns, ``H`` and ``diagonal`` views of the
    level's H; ``rows`` are its rows of the level; ``WS`` holds W S.
    """

    def __init__(self, members: list[int], S: np.ndarray, columns: slice, H: np.ndarray, rows: slice) -> None:
        self.members, self.S, self.rows = members, S, rows
        self.H = H[columns, columns]
        self.diagonal = H.ravel()[:: H.shape[0] + 1][columns]
        self.WS = np.empty(S.shape)


def load_hard(level: Sequence[WeightedConstraint], n: int) -> HardRows:
    """Level 0 of a problem laid out as a formulation's workspace lays it out, its values copied in."""
    hard = HardRows([spec_of(e) for e in level], n)
    for k, entry in enumerate(level):
        _copy_into(hard.view(k), entry.constraint)
    return hard


def load_cost(level: Sequence[WeightedConstraint], n: int, nv: int | None = None) -> CostRows:
    """A cost level laid out as a formulation's workspace lays it out, its values and weights copied in."""
    cost = CostRows([spec_of(e) for e in level], n, n if nv is None else nv)
    for k, entry in enumerate(level):
        _copy_into(cost.view(k), entry.constraint)
    cost.set_weights([e.weight for e in level])
    return cost


def dense_qp(hqp: HqpData, level: int = 1) -> DenseQp:
    """The QP of level 0 (constraints) and the cost level ``level`` of ``hqp``.

    A problem a formulation computed comes from its workspace's buffers as they are; any other is
    laid out the same way from a copy of its constraints.
    """
    if level == 1:
        qp = hqp.dense_qp()
        if qp is not None:
            return qp  # type: ignore[return-value]  # the formulation's rows
    n = hqp.n_var
    levels = hqp.levels
    hard = load_hard(levels[0] if levels else [], n)
    cost = load_cost(levels[level] if level < len(levels) else [], n, hqp.nv)
    H = cost.cost(hard.g)
    return DenseQp(H, hard.g, hard.constraints, cost.tail_inverse, hard.buffer)


def _copy_into(target: Any, source: Any) -> None:  # two constraints of one kind
    """Copy a constraint's values into its layout's views (a bound's identity matrix included)."""
    target.matrix[...] = source.matrix
    if source.is_equality():
        target.vector[...] = source.vector
    else:
        target.lower_bound[...] = source.lower_bound
        target.upper_bound[...] = source.upper_bound


def _read_only(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view
