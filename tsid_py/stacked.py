"""Levels 0 and 1 of an HQP laid out in contiguous buffers, so a solver needs no stacking.

The formulation allocates one buffer for the rows of level 0 and g, [A_eq; g; A_in], one for the
cost rows of level 1, and one per vector (b_eq, lb, ub, s), and makes every x-space constraint's
matrix, vector and bounds *views* of rows of those buffers. Filling the constraints in place
then fills the stacked QP (the :class:`~tsid_py.solvers.dense_qp.HardConstraints` of level 0 is
built once per layout):

    A_eq x = b_eq,  lb <= C x <= ub   (level 0),    sum_i w_i |S_i x - s_i|^2   (level 1).

A :class:`Binding` goes one step further for the constraints of a contact that are set rather
than computed (force inequality, regularization): their arrays become views of their x-space
twins, so they are not copied at every step.

Cost rows are grouped by the columns they can touch (dv only, f only, or both), so
H = sum_groups S_g^T W_g S_g is formed block by block; when no row spans both, H is block
diagonal and its f block (the force regularizations, constant in most problems) is kept, with
its inverse, while its rows and weights do not change. A layout is valid only while the levels
hold exactly the constraints it was built for: :meth:`StackedLevels.matches` checks that before
a solver trusts it, and the formulation retires a layout when it restacks.
"""

from __future__ import annotations

import numpy as np

from tsid_py.constraints import ConstraintBase
from tsid_py.hqp import WeightedConstraint
from tsid_py.solvers.dense_qp import DenseQp, HardConstraints


class StackedLevels:
    """Buffers behind the constraints of levels 0 and 1 (see the module docstring).

    Args:
        hard: The entries of level 0.
        cost: The entries of level 1 (equalities).
        n: Size of x.
        nv: Size of dv (x = [dv; f]); cost rows whose ``columns`` stay within dv or within f
            form the blocks of H.
    """

    def __init__(
        self, hard: list[WeightedConstraint], cost: list[WeightedConstraint], n: int, nv: int
    ) -> None:
        self.n = n
        equalities = [e for e in hard if e.constraint.is_equality()]
        inequalities = [e for e in hard if not e.constraint.is_equality()]
        self._spans: dict[int, tuple[np.ndarray, int, int]] = {}
        n_eq = sum(e.constraint.rows for e in equalities)
        n_in = sum(e.constraint.rows for e in inequalities)
        # [A_eq; g; A_in] in one buffer: the warm start's right-hand side [A_eq^T g] is a view
        self.rows = np.zeros((n_eq + 1 + n_in, n))
        A_eq, b_eq = _rows(equalities, self.rows[:n_eq], ("vector",), self._spans)
        A_in, lb, ub = _rows(inequalities, self.rows[n_eq + 1 :], ("lower_bound", "upper_bound"), self._spans)
        self.hard = HardConstraints(
            A_eq, b_eq, A_in, lb, ub, _row_names(equalities), _row_names(inequalities)
        )
        groups: dict[tuple[int, int], list[WeightedConstraint]] = {}
        for e in cost:
            start, stop, _ = (e.columns or slice(0, n)).indices(n)
            key = (0, nv) if stop <= nv else (nv, n) if start >= nv else (0, n)
            groups.setdefault(key, []).append(e)
        ordered = [e for key in sorted(groups) for e in groups[key]]
        self.S, self.s = _rows(
            ordered, np.zeros((sum(e.constraint.rows for e in ordered), n)), ("vector",), self._spans
        )
        self._H, self._g = np.zeros((n, n)), self.rows[n_eq]
        self._diagonal = self._H.ravel()[:: n + 1]  # a view: adds to the diagonal of H in place
        self._in_place = (0, n) not in groups or len(groups) == 1
        self._uncovered = (
            []
            if (0, n) in groups
            else [slice(a, b) for a, b in ((0, nv), (nv, n)) if a < b and (a, b) not in groups]
        )
        self.groups: list[_CostGroup] = []
        self._tail: _CostGroup | None = None  # the group of the f block, when H is block diagonal
        rows_total = self.S.shape[0]
        self._weights = np.zeros((rows_total, 1))  # each cost row's weight
        self._minus_weights = np.zeros(rows_total)  # and its opposite, for g
        self._ws = np.zeros(rows_total)  # -w s
        first = 0
        for (start, stop), entries in sorted(groups.items()):
            rows = slice(first, first + sum(e.constraint.rows for e in entries))
            columns = slice(start, stop)
            group = _CostGroup(
                entries,
                self.S[rows, columns],
                columns,
                self._H,
                self._weights[rows],
                self._minus_weights[rows],
            )
            self.groups.append(group)
            if (start, stop) == (nv, n) and (0, n) not in groups:
                self._tail = group
            first = rows.stop
        self.tail_inverse: np.ndarray | None = None
        self._tail_key: bytes | None = None  # the f block's rows when its block of H was built
        self._hard, self._cost = list(hard), list(cost)  # compared entry by entry (identity first)
        self.retired = False

    def matches(self, levels: list[list[WeightedConstraint]]) -> bool:
        """Whether ``levels`` 0 and 1 still hold exactly the entries this layout was made for (and
        the layout was not retired: its formulation restacks after every change of structure)."""
        return not self.retired and levels[0] == self._hard and levels[1] == self._cost

    def rows_of(self, entries: list[WeightedConstraint]) -> np.ndarray | None:
        """The rows of ``entries`` (levels 0 and 1), in order, as one view of a buffer when they
        are consecutive there; None otherwise."""
        if not entries:
            return np.zeros((0, self.n))
        spans = [self._spans.get(id(e)) for e in entries]
        if None in spans:
            return None
        buffer, start, stop = spans[0]
        for other, first, last in spans[1:]:
            if other is not buffer or first != stop:
                return None
            stop = last
        return buffer[start:stop]

    def qp(self, regularization: float) -> DenseQp:
        """The QP of levels 0 and 1 with the current rows and weights (see :meth:`cost`); its
        arrays are this layout's buffers, which the next call overwrites."""
        H, g = self.cost(regularization)
        return DenseQp(H, g, self.hard, self.tail_inverse, self.rows)

    def cost(self, regularization: float) -> tuple[np.ndarray, np.ndarray]:
        """H = sum w S^T S + regularization I and g = -sum w S^T s, with the current weights.

        H and g are buffers of this layout, overwritten by the next call (do not modify them).
        When the groups' blocks are disjoint (no cost row spans dv and f), each product is written
        in place, and H is block diagonal: its f block, which the force regularizations make
        constant in most problems, is then rebuilt only when its rows or weights changed, and
        from the second call with the same block on, ``tail_inverse`` holds its inverse (None
        otherwise), which :mod:`tsid_py.solvers.active_set` uses instead of factorizing it.
        """
        in_place = self._in_place
        if not in_place:
            self._H.fill(0.0)
        for group in self.groups:
            reweighted = group.update_weights()
            if group is self._tail and self._tail_unchanged(reweighted):
                continue  # its block of H is the same as at the last call
            WS = np.multiply(group.weights, group.S, out=group.WS)
            if in_place:
                np.matmul(group.S.T, WS, out=group.H)
                group.diagonal += regularization
            else:
                group.H += group.S.T @ WS
        if not in_place:
            self._diagonal += regularization
        for columns in self._uncovered:
            self._diagonal[columns] = regularization
        np.multiply(self._minus_weights, self.s, out=self._ws)
        self._ws.dot(self.S, out=self._g)  # g = -S^T W s, every row at once
        return self._H, self._g

    def _tail_unchanged(self, reweighted: bool) -> bool:
        """Whether the f block's rows and weights are those of the last call (its block of H is
        then kept, and its inverse computed once, from the second such call on)."""
        key = self._tail.S.tobytes()  # bytes: a cheap, exact test of "unchanged"
        if not reweighted and key == self._tail_key:
            if self.tail_inverse is None:
                self.tail_inverse = np.linalg.inv(self._tail.H)
            return True
        self._tail_key, self.tail_inverse = key, None
        return False


class _CostGroup:
    """Cost rows that act on the same block of columns of x, with their block of H.

    ``S`` is a view of the stacked cost rows, ``H`` and ``diagonal`` of the layout's H,
    ``weights`` and ``minus_weights`` of the layout's row weights; ``WS`` holds W S.
    """

    def __init__(
        self,
        entries: list[WeightedConstraint],
        S: np.ndarray,
        columns: slice,
        H: np.ndarray,
        weights: np.ndarray,
        minus_weights: np.ndarray,
    ) -> None:
        self.entries, self.S = entries, S
        self.H = H[columns, columns]
        self.diagonal = H.ravel()[:: H.shape[0] + 1][columns]
        self.weights, self.minus_weights = weights, minus_weights
        self.WS = np.empty(S.shape)
        self._counts = [e.constraint.rows for e in entries]
        self._last: list[float] = []
        self._revision = -1  # WeightedConstraint.revision at the last look at the weights

    def update_weights(self) -> bool:
        """Write each row's weight (its entry's) into ``weights``; whether any changed (looked at
        only when some entry was assigned to since the last call: ``WeightedConstraint.revision``)."""
        revision = WeightedConstraint.revision
        if revision == self._revision:
            return False
        self._revision = revision
        weights = [e.weight for e in self.entries]
        if weights == self._last:
            return False
        self._last = weights
        self.weights[:, 0] = np.repeat(weights, self._counts)
        np.negative(self.weights[:, 0], out=self.minus_weights)
        return True


def _rows(
    entries: list[WeightedConstraint],
    matrix: np.ndarray,
    vectors: tuple[str, ...],
    spans: dict[int, tuple[np.ndarray, int, int]],
) -> list:
    """``matrix`` (rows of every entry, stacked) and one buffer per vector attribute; each
    constraint's matrix and vectors become views of them.

    ``spans`` receives, for each entry (by id), ``matrix`` and the entry's first and last + 1 rows.
    """
    buffers = [matrix] + [np.zeros(matrix.shape[0]) for _ in vectors]
    first = 0
    for e in entries:
        c = e.constraint
        rows = slice(first, first + c.rows)
        for name, buffer in zip(("matrix", *vectors), buffers, strict=True):
            buffer[rows] = getattr(c, name)
            setattr(c, name, buffer[rows])
        spans[id(e)] = (matrix, rows.start, rows.stop)
        first += c.rows
    return buffers


def _row_names(entries: list[WeightedConstraint]) -> list[str]:
    return [e.constraint.name for e in entries for _ in range(e.constraint.rows)]


class Binding:
    """Constraints of a contact that are set, not computed, sharing their arrays with their
    x-space twins (the force inequality, the regularization).

    For each (source, target, columns), the source's matrix becomes the view of the target's
    matrix on ``columns``, and its vector (an equality) or bounds (an inequality) the target's,
    after their values are copied: a setter that writes into the source in place (a new f_min, a
    new force reference) then writes into the stacked buffers too, with no copy per step. Only
    arrays nothing recomputes are shared, so evaluating a task or contact elsewhere never changes
    a problem already built.

    :meth:`holds` tells whether the sources still hold those views: one that replaced an array (a
    new friction coefficient) or was replaced must be copied again; it looks at the arrays only
    when some constraint attribute was assigned since it last did (``ConstraintBase.revision``).
    """

    def __init__(self, pairs: list[tuple[ConstraintBase, ConstraintBase, slice]]) -> None:
        self.sources = tuple(source for source, _, _ in pairs)
        views = []
        for source, target, columns in pairs:
            target.matrix[:, columns] = source.matrix
            source.matrix = target.matrix[:, columns]
            views.append((source, "matrix", source.matrix))
            for name in ("vector",) if source.is_equality() else ("lower_bound", "upper_bound"):
                getattr(target, name)[:] = getattr(source, name)
                setattr(source, name, getattr(target, name))
                views.append((source, name, getattr(source, name)))
        self._views = tuple(views)
        self._revision = -1  # ConstraintBase.revision when the views were last found held

    def holds(self, *sources: ConstraintBase) -> bool:
        """Whether ``sources`` are the constraints bound, each still holding its views."""
        if sources != self.sources:
            return False
        revision = ConstraintBase.revision
        if revision != self._revision:
            if any(getattr(c, name) is not view for c, name, view in self._views):
                return False
            self._revision = revision
        return True
