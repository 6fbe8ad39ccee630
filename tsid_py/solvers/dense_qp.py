"""One dense QP, the primitive every backend solves:

    minimize 1/2 x^T H x + g^T x   subject to   A_eq x = b_eq,   lb <= A_in x <= ub

Inequality rows keep both sides (an infinite side means "no bound"; lb = ub is allowed); a
backend that needs one-sided rows splits them itself. Every row remembers the name of the
constraint it comes from, so that a failed solve can say which constraints were involved.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tsid_py.hqp import WeightedConstraint


@dataclass
class HardConstraints:
    """The constraints of level 0: equalities and two-sided inequalities, with row names.

    ``pinned`` (one flag per inequality row, None when there are none) marks rows that stand for
    equalities but are given as slabs lb <= A x <= ub a rounding error wide (a priority cascade
    pins the optimum of a level so; see :mod:`tsid_py.solvers.cascade`): a warm start may hold
    them at either side, with a multiplier of either sign.
    """

    A_eq: np.ndarray
    b_eq: np.ndarray
    A_in: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    eq_names: list[str]
    in_names: list[str]
    pinned: np.ndarray | None = None

    @classmethod
    def from_level(cls, level: list[WeightedConstraint], n: int) -> HardConstraints:
        """Stack the constraints of a hard level (rows bounded on no side are dropped)."""
        eq, in_, eq_names, in_names = [], [], [], []
        for item in level:
            c = item.constraint
            if c.is_equality():
                eq.append((c.matrix, c.vector))
                eq_names += [c.name] * c.rows
                continue
            keep = np.isfinite(c.lower_bound) | np.isfinite(c.upper_bound)
            in_.append((c.matrix[keep], c.lower_bound[keep], c.upper_bound[keep]))
            in_names += [c.name] * int(keep.sum())
        A_eq = np.vstack([m for m, _ in eq]) if eq else np.zeros((0, n))
        b_eq = np.concatenate([b for _, b in eq]) if eq else np.zeros(0)
        A_in = np.vstack([m for m, _, _ in in_]) if in_ else np.zeros((0, n))
        lb = np.concatenate([lo for _, lo, _ in in_]) if in_ else np.zeros(0)
        ub = np.concatenate([up for _, _, up in in_]) if in_ else np.zeros(0)
        return cls(A_eq, b_eq, A_in, lb, ub, eq_names, in_names)

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

    ``tail_inverse``, when given, is the inverse of the last k x k diagonal block of H, and H is
    block diagonal with that block apart (the f block of :mod:`tsid_py.stacked`): a solver may
    then factorize only the first block. ``rows``, when given, is one buffer [A_eq; g; A_in]
    whose rows ``constraints.A_eq``, ``g`` and ``constraints.A_in`` are (a stacked layout).
    """

    H: np.ndarray
    g: np.ndarray
    constraints: HardConstraints
    tail_inverse: np.ndarray | None = None
    rows: np.ndarray | None = None

    @property
    def n(self) -> int:
        return self.H.shape[0]
