"""InverseDynamicsFormulation: tasks and contacts stacked into one HQP on x = [dv; f].

The equation of motion M dv + h = S^T tau + J_c^T f splits into the unactuated (base) rows u
and the actuated rows a (the last na joints, S = [0 I]):

    M_u dv + h_u = J_u^T f                  (level-0 equality "base-dynamics"; floating base only)
    tau = M_a dv + h_a - J_a^T f            (tau is not a variable: it is recovered after the solve)

where J_c stacks T_k^T J_k for every contact k (T_k its force generator, J_k the Jacobian of its
motion constraint). Motion tasks act on dv, force tasks on f, actuation tasks on tau through
the second line. Same structure as TSID's InverseDynamicsFormulationAccForce.

The formulation is a facade over two objects: the problem's *structure*
(:mod:`tsid_py.problem.structure`: what is in it, at which level and weight; changed by the
add/remove/update calls) and its *workspace* (:mod:`tsid_py.problem.workspace`: the buffers of
one layout, filled once per :meth:`compute_problem_data`).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import numpy as np

from tsid_py.constraints import Kind
from tsid_py.contacts.contact_base import ContactBase
from tsid_py.contacts.measured_force import MeasuredForceBase
from tsid_py.errors import InvalidParameterError, SolverFailedError
from tsid_py.hqp import HqpData
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
        robot: The robot; ``data`` is a Pinocchio Data owned by the formulation and refreshed by
            every :meth:`compute_problem_data` (read it through the robot's accessors, which copy).
    """

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        self.name = name
        self.robot = robot
        self.data = robot.create_data()
        self._structure = ProblemStructure(robot)
        self._workspace: Workspace | None = None
        self._last = SimpleNamespace(t=0.0)  # the time of the last step

    @property
    def t(self) -> float:
        """The time of the last computed problem [s]."""
        return self._last.t

    # ------------------------------------------------------------------ sizes
    @property
    def n_var(self) -> int:
        """Size of x = [dv; f]."""
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
        """Add a task on dv; priority 0 makes it hard, >= 1 a cost with this weight.

        With ``transition_duration`` > 0 [s] the weight ramps linearly from 0 (:mod:`tsid_py.transitions`).
        """
        self._structure.add_task(task, TaskMotion, weight, priority, transition_duration)

    def add_force_task(
        self, task: TaskContactForce, weight: float = 1.0, priority: int = 1, transition_duration: float = 0.0
    ) -> None:
        """Add a task on the contact forces (weight ramped from 0 over ``transition_duration`` [s])."""
        self._structure.add_task(task, TaskContactForce, weight, priority, transition_duration)

    def add_actuation_task(
        self, task: TaskActuation, weight: float = 1.0, priority: int = 1, transition_duration: float = 0.0
    ) -> None:
        """Add a task on the joint torques (e.g. :class:`TaskActuationBounds` at priority 0; a cost's
        weight ramped from 0 over ``transition_duration`` [s])."""
        self._structure.add_task(task, TaskActuation, weight, priority, transition_duration)

    def add_rigid_contact(
        self,
        contact: ContactBase,
        force_reg_weight: float = 1e-5,
        motion_weight: float = 1.0,
        motion_priority: int = 0,
        transition_duration: float = 0.0,
    ) -> None:
        """Add a contact: its motion constraint (hard by default), force inequality (hard) and
        force regularization (a level-1 cost with ``force_reg_weight``).

        With ``transition_duration`` > 0 [s] the contact is loaded gradually: its total normal
        force is capped by a bound rising linearly from f_min to its f_max over the duration, so
        a foot touching down on a moving robot cannot take its load in one control step.
        """
        self._structure.add_contact(
            contact, force_reg_weight, motion_weight, motion_priority, transition_duration
        )

    def add_measured_force(self, measured: MeasuredForceBase) -> None:
        """Add a measured external force (:class:`Measured6dWrench`, :class:`Measured3dForce`): the
        dynamics become M dv + h - J^T w = S^T tau + J_c^T f."""
        self._structure.add_measured_force(measured)

    @property
    def measured_forces(self) -> dict[str, MeasuredForceBase]:
        """The measured (and prescribed) external forces by name (a new dict)."""
        return dict(self._structure.measured)

    def remove_measured_force(self, name: str) -> None:
        """Remove a measured external wrench by name."""
        self._structure.remove_measured_force(name)

    def remove_task(self, name: str, duration: float = 0.0) -> None:
        """Remove a task by name; with ``duration`` > 0 [s] its weight first ramps linearly to 0,
        and it leaves the problem at the first :meth:`compute_problem_data` after the ramp."""
        self._structure.remove_task(name, duration)

    def remove_rigid_contact(
        self, name: str, transition_duration: float = 0.0, normal_force: float | None = None
    ) -> None:
        """Remove a contact (its force variables leave x).

        With ``transition_duration`` > 0 [s] the contact is unloaded first (TSID's contact
        transition): a cap on its total normal force ramps linearly from ``normal_force`` [N],
        its normal force now, down to f_min + 1e-3 N; the contact stays active during the ramp
        and leaves the problem at the first :meth:`compute_problem_data` whose t is past the end
        of the ramp. A ramp needs that force: the last solution's,
        ``contact.get_normal_force(form.get_contact_force(name, sol))`` (a controller's
        :meth:`~tsid_py.loop.Controller.planned_normal_force`), or the contact's
        ``max_normal_force`` for a ramp from its bound, where the cap bites only once it is below
        the contact's force. (TSID starts it from the last solution its getters read:
        ``tsid_py.compat`` does so.) A second ramped removal during the ramp raises; a removal
        with duration 0 takes the contact out at once. Bilateral contacts (no normal force) can
        only be removed at once.

        Raises:
            InvalidParameterError: A ramp (``transition_duration`` > 0) without ``normal_force``.
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
        """Change the weight of a task of a cost level, linearly over ``duration`` [s] if > 0."""
        self._structure.update_task_weight(name, weight, duration)

    def update_rigid_contact_weights(
        self, name: str, force_reg_weight: float | None = None, motion_weight: float | None = None
    ) -> None:
        """Change a contact's force-regularization and/or motion weight (None keeps it)."""
        self._structure.update_contact_weights(name, force_reg_weight, motion_weight)

    # ------------------------------------------------------------- the problem
    @one_blas_thread
    def compute_problem_data(self, t: float, q: object, v: object) -> HqpData:
        """Compute every task and contact at (t, q, v) and return the HQP on x = [dv; f].

        The problem's arrays are read-only views of the formulation's buffers: solve it (or keep
        ``snapshot()``) before the next call, which refills them.
        """
        t = self._last.t = as_scalar("t", t)
        robot, data = self.robot, self.data
        q, v = robot.check_state(q, v)
        robot.compute_all_terms_checked(data, q, v)
        structure = self._structure
        if structure.transitions:
            structure.advance(t)
        workspace = self._workspace
        if workspace is None or workspace.structure_layout != structure.layout or not workspace.shapes_hold():
            if workspace is not None:
                workspace.counter.step += 1  # its problems are stale
            workspace = self._workspace = Workspace(structure, self.robot)  # a new layout, or a new mask
        workspace.fill(t, q, v, data)
        return workspace.problem()

    # ------------------------------------------------------------ the solution
    def _x(self, sol: HqpOutput) -> np.ndarray:
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
        """dv, size nv [m/s^2, rad/s^2]."""
        return self._x(sol)[: self.robot.nv].copy()

    def get_contact_forces(self, sol: HqpOutput) -> np.ndarray:
        """All contact force variables f, stacked in contact order."""
        return self._x(sol)[self.robot.nv :].copy()

    def get_contact_force(self, name: str, sol: HqpOutput) -> np.ndarray:
        """The force variables of one contact (12 for a Contact6d, in its frame) [N]."""
        columns = self._structure.contact_columns(lookup("contact", name, self._structure.contacts))
        return self._x(sol)[columns].copy()

    def get_contact_forces_by_name(self, sol: HqpOutput) -> dict[str, np.ndarray]:
        """Every contact's force variables by name, in contact order (new arrays) [N]."""
        x, structure = self._x(sol), self._structure
        return {
            name: x[structure.contact_columns(entry)].copy() for name, entry in structure.contacts.items()
        }

    def get_actuator_forces(self, sol: HqpOutput) -> np.ndarray:
        """tau = M_a dv + h_a - J_a^T f (h less the measured wrenches' J^T w), size na [N m], with
        the dynamics of the problem ``sol`` solved (which must be the last one computed)."""
        x = self._x(sol)
        workspace = cast(Workspace, self._workspace)  # _x(sol) found it computed
        problem = sol.problem_id
        if problem is not None and (
            problem.layout != workspace.layout or problem.step != workspace.counter.step
        ):
            raise SolverFailedError(
                "tau is read with the dynamics of the problem the solution solved, and the formulation "
                "has computed another problem since: read tau before the next compute_problem_data"
            )
        return workspace.tau_map.dot(x) + workspace.h_a

    def check_task(self, name: str) -> bool:
        """Whether a task of this name is in the problem (without building :attr:`tasks`)."""
        return name in self._structure.tasks

    def check_contact(self, name: str, sol: HqpOutput | None = None) -> bool:
        """Whether a contact of this name is active: given a solution (TSID's ``checkContact(name,
        sol)``), whether that solution holds its force variables (it must be of this layout)."""
        if sol is not None:
            self._x(sol)
        return name in self._structure.contacts

    def contact_jacobian(self) -> np.ndarray:
        """J_c (n_force x nv) of the last computed problem: f enters the dynamics as J_c^T f (a copy)."""
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
