"""A controller: a formulation and its solver, one control step at a time, and what a step produces."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tsid_py.formulation import InverseDynamicsFormulation
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.sealed import Sealed
from tsid_py.solvers.hqp_output import HqpOutput
from tsid_py.solvers.solver_base import Solver


@dataclass
class ControlOutput:
    """What one control step produced: the solver's output and, when it solved, the accelerations
    dv [m/s^2, rad/s^2], the joint torques tau [N m] and each contact's force variables [N]
    (zeros and no forces when it failed)."""

    solution: HqpOutput
    dv: np.ndarray
    tau: np.ndarray
    forces: dict[str, np.ndarray]

    @property
    def ok(self) -> bool:
        """Whether the step solved."""
        return self.solution.ok


def solve_step(
    formulation: InverseDynamicsFormulation, solver: Solver, t: float, q: np.ndarray, v: np.ndarray
) -> ControlOutput:
    """Build the problem at (t, q, v), solve it, read dv, tau and every contact's forces out."""
    solution = solver.solve(formulation.compute_problem_data(t, q, v))
    robot = formulation.robot
    if not solution.ok:
        return ControlOutput(solution, np.zeros(robot.nv), np.zeros(robot.na), {})
    forces = {name: formulation.get_contact_force(name, solution) for name in formulation.contacts}
    return ControlOutput(
        solution, formulation.get_accelerations(solution), formulation.get_actuator_forces(solution), forces
    )


class Controller(Sealed):
    """A robot's formulation and QP solver, with the state it starts from.

    The ready-made controllers (biped, quadruped, arm) build their tasks and contacts on it; a
    :class:`~tsid_py.loop.ControlLoop` drives any controller through :meth:`compute`.

    Attributes:
        robot: The robot.
        formulation: The formulation (its ``data`` is filled at every step).
        solver: The QP solver.
        q0: The initial configuration (size nq).
        tau_max: Torque limits of the actuated joints [N m] (inf: unbounded), for the physics checks.
    """

    def __init__(self, robot: RobotWrapper, formulation: InverseDynamicsFormulation, solver: Solver) -> None:
        self.robot = robot
        self.formulation = formulation
        self.data = formulation.data
        self.solver = solver
        self._contacts: dict[str, object] = {}
        self._q0 = robot.neutral_configuration()
        self._tau_max = np.full(robot.na, np.inf)

    @property
    def contacts(self) -> dict[str, object]:
        """The controller's contacts by key (a foot's side or name; a new dict)."""
        return dict(self._contacts)

    @property
    def q0(self) -> np.ndarray:
        """The initial configuration (a copy)."""
        return self._q0.copy()

    @property
    def tau_max(self) -> np.ndarray:
        """Torque limits of the actuated joints [N m] (a copy)."""
        return self._tau_max.copy()

    def compute(self, t: float, q: np.ndarray, v: np.ndarray) -> ControlOutput:
        """Solve one control step at time t [s] from the state (q, v); ``out.ok`` tells whether it solved."""
        return solve_step(self.formulation, self.solver, t, q, v)
