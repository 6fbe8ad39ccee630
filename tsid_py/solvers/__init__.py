"""QP solvers: one adapter per backend behind the :class:`Solver` interface."""

from tsid_py.solvers.backends import installed_backends, make_solver
from tsid_py.solvers.daqp_solver import SolverDAQP
from tsid_py.solvers.hqp_output import HqpOutput, QPStatus
from tsid_py.solvers.quadprog_solver import SolverHQuadProg
from tsid_py.solvers.solver_base import Solver

__all__ = [
    "HqpOutput",
    "QPStatus",
    "Solver",
    "SolverDAQP",
    "SolverHQuadProg",
    "installed_backends",
    "make_solver",
]
