"""The solver interface, shared by every backend."""

from __future__ import annotations

from tsid_py.hqp import HqpData
from tsid_py.solvers.hqp_output import HqpOutput


class Solver:
    """Turns an :class:`HqpData` into an :class:`HqpOutput`."""

    def __init__(self, name: str = "solver") -> None:
        self.name = name

    def solve(self, hqp: HqpData) -> HqpOutput:
        raise NotImplementedError
