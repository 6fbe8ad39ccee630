"""InverseDynamicsFormulation: tasks and contacts stacked into one HQP on x = [dv; f].

This is TSID's InverseDynamicsFormulationAccForce. dv are the accelerations (size nv) and f the
force variables of the contacts. The torques are not variables: tau = M_a dv + h_a - J_a^T f is
recovered after the solve.

The equation of motion and how tasks enter it: docs/concepts/formulation.md. The formulation is
a facade over a structure and a workspace: docs/architecture.md, section "Who owns which array".
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import numpy as np

from tsid_py.constraints import Kind
from tsid_py.contacts.contact_base import ContactBase
from tsid_py.contacts.measured_force import MeasuredForceBase
from tsid_py.errors import InvalidParameterError, SolverFailedError
from tsid_py.hqp import HqpData, StepClock
from tsid_py.problem.structure import ProblemStructure
from tsid_py.problem.workspace import Workspace
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.sealed import Sealed
from tsid_py.solvers.hqp_output import HqpOutput
from tsid_py.tasks.task_base import TaskActuation, TaskBase, TaskContactForce, TaskMotion
from tsid_py.threads import one_blas_thread
from tsid_py.validation import as_scalar, lookup


class InverseDynamicsFormulation(Sealed):
    """Builds the HQP of one control step from tasks and rigid contacts.

    Args:
        name: A label.
        robot: The robot.

    Attributes:
        data: The Pinocchio ``Data`` the formulation owns. Every :meth:`compute_problem_data`
            refills it. Read it through the robot's accessors, which copy.
    """

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        self.name = name
        self.robot = robot
        self.data = robot.create_data()
        self._structure = ProblemStructure(robot)
        self._workspace: Workspace | None = None
        self._clock = StepClock()  # the id of the last step, which names the problems
        self._last = SimpleNamespace(t=0.0)  # the time of the last step

    @property
    def t(self) -> float:
        """The time of the last computed problem [s]."""
        return self._last.t

    # ------------------------------------------------------------------ sizes
    @property
    def n_var(self) -> int:
        """Size of x = [dv; f]: nv plus the contacts' force variables."""
        return self._structure.n_var

    @property
    def n_eq(self) -> int:
        """Number of level-0 equality rows."""
        return sum(b.spec.rows for b in self._structure.blocks()[0] if b.spec.kind is Kind.EQUALITY)

    @property
    def n_in(self) -> int:
        """Number of level-0 inequality rows (each two-sided row counted once, as TSID)."""
        return sum(b.spec.rows for b in self._structure.blocks()[0] if b.spec.kind is not Kind.EQUALITY)

    @property
    def contacts(self) -> dict[str, ContactBase]:
        """The active contacts by name, in variable order (a new dict)."""
        return {name: entry.contact for name, entry in self._structure.contacts.items()}

    @property
    def tasks(self) -> dict[str, TaskBase]:
        """The tasks by name (a new dict)."""
        return {name: entry.task for name, entry in self._structure.tasks.items()}

    # ------------------------------------------------------------- add/remove
    def add_motion_task(
        self, task: TaskMotion, weight: float = 1.0, priority: int = 1, transition_duration: float = 0.0
    ) -> None:
        """Add a task on the accelerations dv.

        Args:
            task: The task.
            weight: Its weight at a cost level, in [0, 1e8]; unused at priority 0.
            priority: 0 makes it a hard constraint; 1, 2, ... a cost level.
            transition_duration: With > 0 [s], the weight ramps linearly from 0 (cost levels only;
                docs/concepts/transitions.md).

        Raises:
            DuplicateNameError: A task or contact of this name is in the formulation.
            UnsupportedProblemError: An inequality or a bound at a cost level.
            InvalidParameterError: A bad weight or priority, or a transition at priority 0.
        """
        self._structure.add_task(task, TaskMotion, weight, priority, transition_duration)

    def add_force_task(
        self, task: TaskContactForce, weight: float = 1.0, priority: int = 1, transition_duration: float = 0.0
    ) -> None:
        """Add a task on the contact forces f.

        The arguments are those of :meth:`add_motion_task`. A task on one contact's forces
        (``task.contact_name``) must be added after that contact.

        Raises:
            UnknownNameError: The task's contact is not in the formulation.
        """
        self._structure.add_task(task, TaskContactForce, weight, priority, transition_duration)

    def add_actuation_task(
        self, task: TaskActuation, weight: float = 1.0, priority: int = 1, transition_duration: float = 0.0
    ) -> None:
        """Add a task on the joint torques tau, e.g. :class:`TaskActuationBounds` at priority 0.

        The arguments are those of :meth:`add_motion_task`. The task's rows on tau are mapped onto x
        through tau = M_a dv + h_a - J_a^T f.
        """
        self._structure.add_task(task, TaskActuation, weight, priority, transition_duration)

    def add_rigid_contact(
        self,
        contact: ContactBase,
        force_reg_weight: float = 1e-5,
        motion_weight: float = 1.0,
        motion_priority: int = 0,
        transition_duration: float = 0.0,
    ) -> None:
        """Add a contact: its force variables join x, with its three constraints.

        The motion constraint sits at ``motion_priority``. The force inequality is hard. The force
        regularization is a cost at level 1.

        Args:
            contact: The contact.
            force_reg_weight: Weight of the force regularization (1e-5 in TSID's examples).
            motion_weight: Weight of the motion constraint when ``motion_priority`` >= 1.
            motion_priority: 0 (default) makes the motion constraint hard.
            transition_duration: With > 0 [s], the contact is loaded gradually: a cap on its total
                normal force rises linearly from f_min to f_max. A foot touching down then cannot
                take its load in one control step.

        Raises:
            DuplicateNameError: A task or contact of this name is in the formulation.
            InvalidParameterError: A bad weight or priority, or a transition on a bilateral contact.
        """
        self._structure.add_contact(
            contact, force_reg_weight, motion_weight, motion_priority, transition_duration
        )

    def add_measured_force(self, measured: MeasuredForceBase) -> None:
        """Add a known external force w: measured or prescribed, not a variable.

        w enters the equation of motion through J^T w (:class:`~tsid_py.contacts.MeasuredForceBase`).

        Args:
            measured: A :class:`Measured6dWrench`, :class:`Measured3dForce` or :class:`PrescribedWrench`.

        Raises:
            DuplicateNameError: A measured force of this name is in the formulation.
            DimensionError: It is on a robot of another size.
        """
        self._structure.add_measured_force(measured)

    @property
    def measured_forces(self) -> dict[str, MeasuredForceBase]:
        """The measured (and prescribed) external forces by name (a new dict)."""
        return dict(self._structure.measured)

    def remove_measured_force(self, name: str) -> None:
        """Remove a measured external wrench by name."""
        self._structure.remove_measured_force(name)

    def remove_task(self, name: str, duration: float = 0.0) -> None:
        """Remove a task, at once or after a ramp of its weight to 0.

        Args:
            name: The task's name.
            duration: With > 0 [s], the weight ramps linearly to 0 first. The task leaves at the
                first :meth:`compute_problem_data` after the ramp.

        Raises:
            UnknownNameError: No task of this name.
        """
        self._structure.remove_task(name, duration)

    def remove_rigid_contact(
        self, name: str, transition_duration: float = 0.0, normal_force: float | None = None
    ) -> None:
        """Remove a contact: its force variables leave x.

        With a ``transition_duration``, the contact is unloaded first (TSID's contact transition).
        A cap on its total normal force ramps linearly from ``normal_force`` down to
        f_min + 1e-3 N. The contact stays in the problem during the ramp. It leaves at the first
        :meth:`compute_problem_data` whose t is past the end of the ramp. A removal with duration 0
        takes it out at once, even during a ramp.

        Args:
            name: The contact's name.
            transition_duration: The ramp's duration [s]; 0 removes the contact at once. A bilateral
                contact (no normal force) can only be removed at once.
            normal_force: The contact's normal force now [N], where the ramp starts. Take it from the
                last solution, ``contact.get_normal_force(form.get_contact_force(name, sol))``, or
                from a controller's :meth:`~tsid_py.loop.Controller.planned_normal_force`. The
                contact's ``max_normal_force`` works too: the cap then bites only once it has fallen
                below the contact's force. TSID starts the ramp from the last solution its getters
                read; ``tsid_py.compat`` does the same.

        Raises:
            InvalidParameterError: A ramp without ``normal_force``, a second ramped removal, a ramp
                on a bilateral contact, or a force task still acting on the contact.
            UnknownNameError: No contact of this name.
        """
        entry = lookup("contact", name, self._structure.contacts)
        transition_duration = as_scalar("transition_duration", transition_duration, minimum=0.0)
        if normal_force is not None:
            normal_force = as_scalar("normal_force", normal_force, minimum=0.0)
        elif transition_duration > 0 and entry.contact.unilateral:
            raise InvalidParameterError(
                f"removing contact {name!r} over {transition_duration} s: give the normal force the "
                "ramp starts from, normal_force=contact.get_normal_force(form.get_contact_force("
                f"{name!r}, sol)) of the last solution (a controller's planned_normal_force({name!r}))"
            )
        self._structure.remove_contact(name, transition_duration, normal_force)

    def update_task_weight(self, name: str, weight: float, duration: float = 0.0) -> None:
        """Change the weight of a task at a cost level.

        Args:
            name: The task's name.
            weight: The new weight, in [0, 1e8].
            duration: With > 0 [s], the weight ramps linearly from its current value.

        Raises:
            InvalidParameterError: A task being removed, or a ramp at priority 0.
        """
        self._structure.update_task_weight(name, weight, duration)

    def update_rigid_contact_weights(
        self, name: str, force_reg_weight: float | None = None, motion_weight: float | None = None
    ) -> None:
        """Change a contact's weights at once.

        Args:
            name: The contact's name.
            force_reg_weight: The new weight of its force regularization; None keeps it.
            motion_weight: The new weight of its motion constraint (used at a cost level); None keeps it.
        """
        self._structure.update_contact_weights(name, force_reg_weight, motion_weight)

    # ------------------------------------------------------------- the problem
    @one_blas_thread
    def compute_problem_data(self, t: float, q: object, v: object) -> HqpData:
        """Compute every task and contact at (t, q, v) and return the HQP on x = [dv; f].

        Args:
            t: Time [s].
            q: Configuration, size nq (Pinocchio's).
            v: Velocity, size nv (Pinocchio's).

        Returns:
            The problem, a view of the formulation's buffers until the next call
                (:class:`~tsid_py.hqp.HqpData`).

        Raises:
            TsidError: An invalid state: a wrong size, a value not finite or out of physical range,
                or a base quaternion whose norm is not 1.
        """
        t = self._last.t = as_scalar("t", t)
        robot, data = self.robot, self.data
        q, v = robot.check_state(q, v)
        robot.compute_all_terms_checked(data, q, v)
        structure = self._structure
        if structure.transitions:
            structure.advance(t)
        self._clock.tick()  # the problems handed out so far are stale from here on
        workspace = self._workspace
        if workspace is None or (workspace.revision != structure.revision and not workspace.refresh()):
            workspace = self._workspace = Workspace(structure, self.robot, self._clock)  # a new layout
        workspace.fill(t, q, v, data)
        return workspace.problem()

    # ------------------------------------------------------------ the solution
    def _x(self, sol: HqpOutput) -> np.ndarray:
        if not isinstance(sol, HqpOutput):
            raise InvalidParameterError(f"a solution is the HqpOutput of solver.solve(hqp), got {sol!r}")
        if not sol.ok or sol.x is None:
            raise SolverFailedError(
                f"cannot read a solution from a failed solve (status {sol.status.name}): {sol.message}; "
                "sol.problem keeps the problem"
            )
        self._computed()  # a solution of this formulation needs a problem computed
        if sol.problem_id is not None:
            if sol.problem_id.layout.variables != self._structure.variables:
                raise SolverFailedError(
                    "the solution was computed before a contact was added or removed (the contact "
                    "forces are laid out differently now); solve the current problem and read that solution"
                )
        elif sol.x.shape != (self.n_var,):  # a solution of a problem built by hand
            raise SolverFailedError(
                f"the solution has {sol.x.shape[0]} variables but the formulation has {self.n_var}; "
                "was it computed before a contact was added or removed?"
            )
        return sol.x

    def get_accelerations(self, sol: HqpOutput) -> np.ndarray:
        """The accelerations dv of a solution, size nv [m/s^2, rad/s^2] (a new array).

        Args:
            sol: A solution of a problem of this formulation, laid out as x is now.

        Raises:
            SolverFailedError: A failed solve, or a solution from before a contact was added or removed.
        """
        return self._x(sol)[: self.robot.nv].copy()

    def get_contact_forces(self, sol: HqpOutput) -> np.ndarray:
        """Every contact's force variables f, in contact order [N] (a new array).

        Raises:
            SolverFailedError: As :meth:`get_accelerations`.
        """
        return self._x(sol)[self.robot.nv :].copy()

    def get_contact_force(self, name: str, sol: HqpOutput) -> np.ndarray:
        """One contact's force variables (12 for a Contact6d, in its frame) [N] (a new array).

        Raises:
            UnknownNameError: No contact of this name.
            SolverFailedError: As :meth:`get_accelerations`.
        """
        columns = self._structure.contact_columns(lookup("contact", name, self._structure.contacts))
        return self._x(sol)[columns].copy()

    def get_contact_forces_by_name(self, sol: HqpOutput) -> dict[str, np.ndarray]:
        """Every contact's force variables by name, in contact order [N] (new arrays).

        Raises:
            SolverFailedError: As :meth:`get_accelerations`.
        """
        x, structure = self._x(sol), self._structure
        return {
            name: x[structure.contact_columns(entry)].copy() for name, entry in structure.contacts.items()
        }

    def get_actuator_forces(self, sol: HqpOutput) -> np.ndarray:
        """The joint torques tau = M_a dv + h_a - J_a^T f, size na [N m] (a new array).

        h is less the measured wrenches' J^T w. M_a, h_a and J_a are those of the problem ``sol``
        solved.

        Args:
            sol: A solution of the last problem computed.

        Raises:
            SolverFailedError: A failed solve, or a solution of an earlier problem.
        """
        x = self._x(sol)
        workspace = cast(Workspace, self._workspace)  # _x(sol) found it computed
        problem = sol.problem_id
        # step ids are unique in the process: the last step's is that of this workspace's problem
        if problem is not None and problem.step != self._clock.step:
            raise SolverFailedError(
                "tau is read with the dynamics of the problem the solution solved, and the formulation "
                "has computed another problem since: read tau before the next compute_problem_data"
            )
        return workspace.tau_map.dot(x) + workspace.h_a

    def check_task(self, name: str) -> bool:
        """Whether a task of this name is in the problem (without building :attr:`tasks`)."""
        return name in self._structure.tasks

    def check_contact(self, name: str, sol: HqpOutput | None = None) -> bool:
        """Whether a contact of this name is in the problem.

        Args:
            name: The contact's name.
            sol: As TSID's ``checkContact(name, sol)``: the solution must then be laid out as x is
                now, so that it holds the contact's force variables.

        Raises:
            SolverFailedError: ``sol`` is failed or laid out otherwise.
        """
        if sol is not None:
            self._x(sol)
        return name in self._structure.contacts

    def contact_jacobian(self) -> np.ndarray:
        """J_c of the last problem computed, n_force x nv (a copy).

        f enters the equation of motion as J_c^T f, with J_c stacking T_k^T J_k over the contacts.
        """
        workspace = self._computed()
        return -workspace.dynamics[:, workspace.nv :].T.copy()

    def _computed(self) -> Workspace:
        """The workspace of the last computed problem."""
        if self._workspace is None:
            raise SolverFailedError(
                "no problem was computed by this formulation: call compute_problem_data first"
            )
        return self._workspace

    def __repr__(self) -> str:
        return (
            f"InverseDynamicsFormulation({self.name!r}, n_var={self.n_var}, "
            f"tasks={list(self._structure.tasks)}, contacts={list(self._structure.contacts)})"
        )
