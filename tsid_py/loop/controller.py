"""A controller: a formulation and its solver, one control step at a time, and what a step produces."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from tsid_py.errors import SolverFailedError
from tsid_py.formulation import InverseDynamicsFormulation
from tsid_py.loop.measured import MeasuredState
from tsid_py.loop.plant import PlantState
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.sealed import Sealed
from tsid_py.solvers.hqp_output import HqpOutput
from tsid_py.solvers.solver_base import Solver
from tsid_py.threads import one_blas_thread


@dataclass
class ControlOutput:
    """What one control step produced: the solver's output, the accelerations dv [m/s^2, rad/s^2],
    the joint torques tau [N m] and each contact's force variables [N].

    ``held`` is True when the solve failed and the controller's fallback policy (see
    :attr:`Controller.hold_steps`) handed the last good step's dv, tau and forces again.
    """

    solution: HqpOutput
    dv: np.ndarray
    tau: np.ndarray
    forces: dict[str, np.ndarray]
    held: bool = False

    @property
    def ok(self) -> bool:
        """Whether this step solved."""
        return self.solution.ok


def failure_cause(solution: HqpOutput) -> str:
    """Why a solve failed, in one line: the status, the solver's message and, when level 0 is
    infeasible, the hard constraints that conflict (from :mod:`tsid_py.solvers.diagnostics`)."""
    parts = [f"status {solution.status.name}"]
    if solution.message:
        parts.append(solution.message.splitlines()[0])
    if solution.conflicting_set:
        parts.append("conflicting hard constraints: " + ", ".join(solution.conflicting_set))
    elif solution.infeasible_constraints:
        parts.append("hard constraints that must give way: " + ", ".join(solution.infeasible_constraints))
    return "; ".join(parts)


@one_blas_thread
def solve_step(
    formulation: InverseDynamicsFormulation, solver: Solver, t: float, q: np.ndarray, v: np.ndarray
) -> ControlOutput:
    """Build the problem at (t, q, v), solve it, read dv, tau and every contact's forces out.

    Raises:
        SolverFailedError: The QP did not solve (the message gives :func:`failure_cause`; the
            error's ``solution`` keeps the failed output and its problem).
    """
    solution = solver.solve(formulation.compute_problem_data(t, q, v))
    if not solution.ok:
        error = SolverFailedError(f"the QP failed at t = {t:.6g} s: {failure_cause(solution)}")
        error.solution = solution  # type: ignore[attr-defined]
        raise error
    forces = formulation.get_contact_forces_by_name(solution)
    return ControlOutput(
        solution, formulation.get_accelerations(solution), formulation.get_actuator_forces(solution), forces
    )


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Keep the garbage collector off every object made before the block while it runs
    (``gc.freeze()``), for a control loop's steady timing: a collection during the loop then looks
    only at what the steps made since, not at the robot models, the modules and the set-up, so its
    pause stays short (a step itself leaves no garbage for the collector: its temporaries die by
    reference counting). :class:`~tsid_py.loop.ControlLoop` runs in it; wrap your own loop of
    :meth:`Controller.compute` the same way. The objects go back under the collector after the
    block; a heap frozen already (by you) is left as it is."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


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
        hold_steps: The fallback policy when a solve fails: 0 (the default) raises
            :class:`~tsid_py.errors.SolverFailedError` at once; N > 0 hands the last good step's
            dv, tau and forces again (``out.held`` True) for at most N failed steps in a row, then
            raises. A failed solve never becomes zero torques.
    """

    def __init__(self, robot: RobotWrapper, formulation: InverseDynamicsFormulation, solver: Solver) -> None:
        self.robot = robot
        self.formulation = formulation
        self.data = formulation.data
        self.solver = solver
        self._contacts: dict[str, object] = {}
        self._q0 = robot.neutral_configuration()
        self._tau_max = np.full(robot.na, np.inf)
        self.hold_steps = 0
        # the last good output (with hold_steps), failures in a row, the last step's contact forces
        self._last = SimpleNamespace(good=None, held=0, forces={})

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

    def observe(self, state: MeasuredState | PlantState) -> None:
        """Take in the measured state before the step at ``state.t`` (a
        :class:`~tsid_py.loop.measured.MeasuredState`, or a plant's state, measured then); the loop
        calls it before :meth:`compute`. Nothing by default: the legged controllers re-anchor their
        contacts and handle contacts lost or regained (``LeggedController.observe``)."""

    def planned_normal_force(self, name: str) -> float | None:
        """The total normal force [N] of the formulation's contact ``name`` in the last step's
        solution (None before the first step, or when it was not a contact then): where a
        ramped removal starts (:meth:`InverseDynamicsFormulation.remove_rigid_contact`)."""
        forces = self._last.forces.get(name)
        contact = self.formulation.contacts.get(name)
        return None if forces is None or contact is None else contact.get_normal_force(forces)

    def held_contact_frames(self) -> tuple[str, ...]:
        """The frames the controller holds as contacts now (loaded, not being released): the loop
        reports those the plant measures as not touching. None by default."""
        return ()

    @property
    def stepping(self) -> bool:
        """Whether a planned step is under way (a foot lifted on purpose, not yet down again): the
        loop's verdict then judges capturability after the touch-down. False by default."""
        return False

    def compute(self, t: float, q: np.ndarray, v: np.ndarray) -> ControlOutput:
        """Solve one control step at time t [s] from the state (q, v).

        Raises:
            SolverFailedError: The QP failed (and the ``hold_steps`` policy allows no more holding).
        """
        last = self._last
        try:
            out = solve_step(self.formulation, self.solver, t, q, v)
        except SolverFailedError as error:
            if last.good is None or last.held >= self.hold_steps:
                raise
            last.held += 1
            good, solution = last.good, error.solution  # type: ignore[attr-defined]
            forces = {name: f.copy() for name, f in good.forces.items()}
            return ControlOutput(solution, good.dv.copy(), good.tau.copy(), forces, held=True)
        # copies: the caller owns ``out`` and may change it
        last.forces = forces = {name: f.copy() for name, f in out.forces.items()}
        if self.hold_steps:
            last.good = ControlOutput(out.solution, out.dv.copy(), out.tau.copy(), forces)
        last.held = 0
        return out
