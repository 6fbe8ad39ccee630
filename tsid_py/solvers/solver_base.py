"""The solver interface, shared by every backend."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from tsid_py.errors import InvalidParameterError
from tsid_py.hqp import HqpData
from tsid_py.sealed import Sealed
from tsid_py.solvers.cascade import solve_hierarchy
from tsid_py.solvers.hqp_output import HqpOutput, QPStatus
from tsid_py.threads import one_blas_thread

if TYPE_CHECKING:
    from tsid_py.solvers.dense_qp import DenseQp


class Solver(Sealed):
    """Turns an :class:`HqpData` into an :class:`HqpOutput`; a backend provides :meth:`solve_qp`."""

    def __init__(self, name: str = "solver") -> None:
        self.name = name

    @one_blas_thread
    def solve(self, hqp: HqpData) -> HqpOutput:
        """Solve every priority level (:func:`~tsid_py.solvers.cascade.solve_hierarchy`).

        Args:
            hqp: The problem: a formulation's, or one built by hand.

        Returns:
            The solution. Its ``problem_id`` is ``hqp.id``. A solution with NaN or infinite values
            comes back as ``QPStatus.ERROR``, never as optimal.

        Raises:
            InvalidParameterError: ``hqp`` is not an :class:`HqpData`.
        """
        if not isinstance(hqp, HqpData):
            raise InvalidParameterError(f"solve needs an HqpData (a formulation's problem), got {hqp!r}")
        out = solve_hierarchy(hqp, self.solve_qp)
        # never an OPTIMAL with NaN or inf in it (out.ok: x is set)
        if out.ok and not math.isfinite(out.x.dot(out.x)):  # type: ignore[union-attr,arg-type]
            out = HqpOutput(
                QPStatus.ERROR,
                message="the QP solver returned non-finite values (a state or weight of absurd magnitude?)",
                problem=hqp.snapshot(),
            )
        out.problem_id = hqp.id
        return out

    def solve_qp(self, qp: DenseQp) -> HqpOutput:
        """Solve one dense QP: the primitive of the priority cascade (:mod:`tsid_py.solvers.cascade`).

        A backend implements it. The output's multipliers hold the equality rows, then the
        inequality rows, with H x + g = A_eq^T l_eq + A_in^T l_in.
        """
        raise NotImplementedError
