"""InverseDynamicsFormulation: tasks and contacts stacked into one HQP on x = [dv; f].

The equation of motion M dv + h = S^T tau + J_c^T f splits into the unactuated (base) rows u
and the actuated rows a (the last na joints, S = [0 I]):

    M_u dv + h_u = J_u^T f                  (level-0 equality "base-dynamics"; floating base only)
    tau = M_a dv + h_a - J_a^T f            (tau is not a variable: it is recovered after the solve)

where J_c stacks T_k^T J_k for every contact k (T_k its force generator, J_k the Jacobian of its
motion constraint). Motion tasks act on dv, force tasks on f, actuation tasks on tau through
the second line. Same structure as TSID's InverseDynamicsFormulationAccForce.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tsid_py.constraints import ConstraintBase, ConstraintEquality, ConstraintInequality
from tsid_py.contacts.contact_base import ContactBase
from tsid_py.contacts.measured_6d_wrench import Measured6dWrench
from tsid_py.errors import DuplicateNameError, InvalidParameterError, SolverFailedError, UnknownNameError
from tsid_py.hqp import HqpData, WeightedConstraint
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.solvers.hqp_output import HqpOutput
from tsid_py.tasks.task_base import TaskActuation, TaskBase, TaskContactForce, TaskMotion
from tsid_py.validation import as_scalar, lookup


@dataclass
class _TaskLevel:
    task: TaskBase
    priority: int
    entry: WeightedConstraint


@dataclass
class _ContactLevel:
    contact: ContactBase
    index: int
    motion: WeightedConstraint
    force: WeightedConstraint
    regularization: WeightedConstraint


class InverseDynamicsFormulation:
    """Builds the HQP of one control step from tasks and rigid contacts.

    Args:
        name: A label.
        robot: The robot; ``data`` is a Pinocchio Data owned by the formulation and refreshed by
            every :meth:`compute_problem_data`.
    """

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        self.name = name
        self.robot = robot
        self.data = robot.create_data()
        self._nv = robot.nv
        self._nu = robot.nv - robot.na
        self._tasks: dict[str, _TaskLevel] = {}
        self._contacts: dict[str, _ContactLevel] = {}
        self._n_force = 0
        self._levels: list[list[WeightedConstraint]] = [[], []]
        self._base_dynamics: WeightedConstraint | None = None
        if self._nu > 0:
            self._base_dynamics = WeightedConstraint(
                1.0, ConstraintEquality("base-dynamics", self._nu, self._nv)
            )
            self._levels[0].append(self._base_dynamics)
        self.t = 0.0
        self._Jc = np.zeros((0, self._nv))
        self._measured: dict[str, Measured6dWrench] = {}
        self._h = np.zeros(self._nv)  # h - sum J^T w of the measured wrenches, at the last problem

    # ------------------------------------------------------------------ sizes
    @property
    def n_var(self) -> int:
        """Size of x = [dv; f]."""
        return self._nv + self._n_force

    @property
    def n_eq(self) -> int:
        """Number of level-0 equality rows."""
        return sum(e.constraint.rows for e in self._levels[0] if e.constraint.is_equality())

    @property
    def n_in(self) -> int:
        """Number of level-0 inequality rows (each two-sided row counted once, as TSID)."""
        return sum(e.constraint.rows for e in self._levels[0] if not e.constraint.is_equality())

    @property
    def contacts(self) -> dict[str, ContactBase]:
        """The active contacts by name, in variable order."""
        return {name: level.contact for name, level in self._contacts.items()}

    @property
    def tasks(self) -> dict[str, TaskBase]:
        """The tasks by name."""
        return {name: level.task for name, level in self._tasks.items()}

    # ------------------------------------------------------------- add/remove
    def add_motion_task(self, task: TaskMotion, weight: float = 1.0, priority: int = 1) -> None:
        """Add a task on dv; priority 0 makes it hard, >= 1 a cost with this weight."""
        self._add_task(task, TaskMotion, weight, priority)

    def add_force_task(self, task: TaskContactForce, weight: float = 1.0, priority: int = 1) -> None:
        """Add a task on the contact forces."""
        self._add_task(task, TaskContactForce, weight, priority)

    def add_actuation_task(self, task: TaskActuation, weight: float = 1.0, priority: int = 1) -> None:
        """Add a task on the joint torques (e.g. :class:`TaskActuationBounds` at priority 0)."""
        self._add_task(task, TaskActuation, weight, priority)

    def _add_task(self, task: TaskBase, family: type, weight: float, priority: int) -> None:
        if not isinstance(task, family):
            raise InvalidParameterError(f"{task!r} is not a {family.__name__}")
        self._check_new_name(task.name)
        weight, priority = _weight(weight), _priority(priority)
        template = task.constraint
        constraint_type = ConstraintEquality if template.is_equality() else ConstraintInequality
        entry = WeightedConstraint(weight, constraint_type(task.name, template.rows, self.n_var))
        self._tasks[task.name] = _TaskLevel(task, priority, entry)
        self._level(priority).append(entry)

    def add_rigid_contact(
        self,
        contact: ContactBase,
        force_reg_weight: float = 1e-5,
        motion_weight: float = 1.0,
        motion_priority: int = 0,
    ) -> None:
        """Add a contact: its motion constraint (hard by default), force inequality (hard) and
        force regularization (a level-1 cost with ``force_reg_weight``)."""
        if not isinstance(contact, ContactBase):
            raise InvalidParameterError(f"{contact!r} is not a contact")
        self._check_new_name(contact.name)
        force_reg_weight, motion_weight = _weight(force_reg_weight), _weight(motion_weight)
        motion_priority = _priority(motion_priority)
        index = self._n_force
        self._n_force += contact.n_force
        self._resize_columns()
        n = self.n_var
        level = _ContactLevel(
            contact,
            index,
            WeightedConstraint(
                motion_weight,
                ConstraintEquality(f"{contact.name}_motion_task", contact.motion_constraint.rows, n),
            ),
            WeightedConstraint(
                1.0,
                ConstraintInequality(f"{contact.name}_force_constraint", contact.force_constraint.rows, n),
            ),
            WeightedConstraint(
                force_reg_weight,
                ConstraintEquality(f"{contact.name}_force_reg_task", contact.force_regularization.rows, n),
            ),
        )
        self._contacts[contact.name] = level
        self._level(motion_priority).append(level.motion)
        self._levels[0].append(level.force)
        self._levels[1].append(level.regularization)

    def add_measured_force(self, measured: Measured6dWrench) -> None:
        """Add a measured external wrench: the dynamics become M dv + h - J^T w = S^T tau + J_c^T f."""
        if not isinstance(measured, Measured6dWrench):
            raise InvalidParameterError(f"{measured!r} is not a Measured6dWrench")
        if measured.name in self._measured:
            raise DuplicateNameError(
                f"a measured force named {measured.name!r} is already in the formulation"
            )
        self._measured[measured.name] = measured

    def remove_measured_force(self, name: str) -> None:
        """Remove a measured external wrench by name."""
        lookup("measured force", name, self._measured)
        del self._measured[name]

    def remove_task(self, name: str) -> None:
        """Remove a task by name."""
        level = lookup("task", name, self._tasks)
        self._remove_entries([level.entry])
        del self._tasks[name]

    def remove_rigid_contact(self, name: str) -> None:
        """Remove a contact (its force variables leave x)."""
        level = lookup("contact", name, self._contacts)
        self._remove_entries([level.motion, level.force, level.regularization])
        del self._contacts[name]
        index = 0
        for other in self._contacts.values():
            other.index = index
            index += other.contact.n_force
        self._n_force = index
        self._resize_columns()

    def update_task_weight(self, name: str, weight: float) -> None:
        """Change the weight of a task of a cost level."""
        lookup("task", name, self._tasks).entry.weight = _weight(weight)

    def update_rigid_contact_weights(
        self, name: str, force_reg_weight: float | None = None, motion_weight: float | None = None
    ) -> None:
        """Change a contact's force-regularization and/or motion weight (None keeps it)."""
        level = lookup("contact", name, self._contacts)
        if force_reg_weight is not None:
            level.regularization.weight = _weight(force_reg_weight)
        if motion_weight is not None:
            level.motion.weight = _weight(motion_weight)

    def _check_new_name(self, name: str) -> None:
        if name in self._tasks or name in self._contacts:
            raise DuplicateNameError(f"a task or contact named {name!r} is already in the formulation")

    def _level(self, priority: int) -> list[WeightedConstraint]:
        while len(self._levels) <= priority:
            self._levels.append([])
        return self._levels[priority]

    def _remove_entries(self, entries: list[WeightedConstraint]) -> None:
        for level in self._levels:
            level[:] = [e for e in level if not any(e is entry for entry in entries)]

    def _resize_columns(self) -> None:
        """Give every x-space constraint n_var columns (force columns change with the contacts)."""
        n = self.n_var
        for level in self._levels:
            for entry in level:
                c = entry.constraint
                c.matrix = np.zeros((c.rows, n))
        self._Jc = np.zeros((self._n_force, self._nv))

    # ------------------------------------------------------------- the problem
    def compute_problem_data(self, t: float, q: object, v: object) -> HqpData:
        """Compute every task and contact at (t, q, v) and return the HQP on x = [dv; f]."""
        self.t = as_scalar("t", t)
        robot, data, nv = self.robot, self.data, self._nv
        q, v = robot.check_state(q, v)
        robot.compute_all_terms_checked(data, q, v)

        for level in self._contacts.values():
            contact, i, k = level.contact, level.index, level.contact.n_force
            columns = slice(nv + i, nv + i + k)
            motion = contact.compute_motion_task(t, q, v, data)
            level.motion.constraint.matrix[:, :nv] = motion.matrix
            level.motion.constraint.vector[:] = motion.vector
            self._Jc[i : i + k] = contact.force_generator.T @ motion.matrix
            force = level.force.constraint
            force.matrix[:, columns] = contact.force_constraint.matrix
            force.lower_bound = contact.force_constraint.lower_bound
            force.upper_bound = contact.force_constraint.upper_bound
            regularization = level.regularization.constraint
            regularization.matrix[:, columns] = contact.force_regularization.matrix
            regularization.vector[:] = contact.force_regularization.vector

        M, h = robot.mass(data), robot.nonlinear_effects(data)
        for measured in self._measured.values():
            h = h - measured.compute_joint_torques(data)
        self._h = h
        nu = self._nu
        if self._base_dynamics is not None:
            base = self._base_dynamics.constraint
            base.matrix[:, :nv] = M[:nu]
            base.matrix[:, nv:] = -self._Jc[:, :nu].T
            base.vector[:] = -h[:nu]

        for level in self._tasks.values():
            task = level.task
            c = task.compute(t, q, v, data)
            target = level.entry.constraint
            if isinstance(task, TaskMotion):
                _copy_into(target, c, c.matrix, slice(0, nv))
            elif isinstance(task, TaskActuation):
                A = c.matrix
                target.matrix[:, :nv] = A @ M[nu:]
                target.matrix[:, nv:] = -A @ self._Jc[:, nu:].T
                _copy_into(target, c, None, None, offset=A @ h[nu:])
            else:
                _copy_into(target, c, c.matrix, self._force_columns(task))
        return HqpData(self._levels, self.n_var)

    def _force_columns(self, task: TaskContactForce) -> slice:
        """The columns of x a force task acts on: one contact's forces, or all of them."""
        if task.contact_name is None:
            return slice(self._nv, self.n_var)
        level = self._contacts.get(task.contact_name)
        if level is None:
            raise UnknownNameError(
                f"force task {task.name!r} acts on contact {task.contact_name!r}, which is not in the "
                "formulation: add the contact, or remove the task with the contact"
            )
        start = self._nv + level.index
        return slice(start, start + level.contact.n_force)

    # ------------------------------------------------------------ the solution
    def _x(self, sol: HqpOutput) -> np.ndarray:
        if not sol.ok or sol.x is None:
            raise SolverFailedError(
                f"cannot read a solution from a failed solve (status {sol.status.name}): {sol.message}; "
                "sol.problem keeps the problem"
            )
        if sol.x.shape != (self.n_var,):
            raise SolverFailedError(
                f"the solution has {sol.x.shape[0]} variables but the formulation has {self.n_var}; "
                "was it computed before a contact was added or removed?"
            )
        return sol.x

    def get_accelerations(self, sol: HqpOutput) -> np.ndarray:
        """dv, size nv [m/s^2, rad/s^2]."""
        return self._x(sol)[: self._nv].copy()

    def get_contact_forces(self, sol: HqpOutput) -> np.ndarray:
        """All contact force variables f, stacked in contact order."""
        return self._x(sol)[self._nv :].copy()

    def get_contact_force(self, name: str, sol: HqpOutput) -> np.ndarray:
        """The force variables of one contact (12 for a Contact6d, in its frame) [N]."""
        level = lookup("contact", name, self._contacts)
        start = self._nv + level.index
        return self._x(sol)[start : start + level.contact.n_force].copy()

    def get_actuator_forces(self, sol: HqpOutput) -> np.ndarray:
        """tau = M_a dv + h_a - J_a^T f (h less the measured wrenches' J^T w), size na [N m]."""
        x = self._x(sol)
        nu, nv = self._nu, self._nv
        M, h = self.robot.mass(self.data), self._h
        return M[nu:] @ x[:nv] + h[nu:] - self._Jc[:, nu:].T @ x[nv:]

    def check_contact(self, name: str) -> bool:
        """Whether a contact of this name is active."""
        return name in self._contacts

    def contact_jacobian(self) -> np.ndarray:
        """J_c (n_force x nv) of the last computed problem: f enters the dynamics as J_c^T f."""
        return self._Jc.copy()

    def __repr__(self) -> str:
        return (
            f"InverseDynamicsFormulation({self.name!r}, n_var={self.n_var}, n_eq={self.n_eq}, "
            f"n_in={self.n_in}, tasks={list(self._tasks)}, contacts={list(self._contacts)})"
        )


def _copy_into(
    target: ConstraintBase,
    source: ConstraintBase,
    matrix: np.ndarray | None,
    columns: slice | None,
    offset: np.ndarray | float = 0.0,
) -> None:
    """Copy a task constraint into its x-space twin (matrix into ``columns``), shifting vectors by -offset."""
    if matrix is not None:
        target.matrix[:, columns] = matrix
    if source.is_equality():
        target.vector[:] = source.vector - offset
    else:
        target.lower_bound = source.lower_bound - offset
        target.upper_bound = source.upper_bound - offset


def _weight(weight: float) -> float:
    return as_scalar("weight", weight, minimum=0.0)


def _priority(priority: int) -> int:
    if not isinstance(priority, (int, np.integer)) or isinstance(priority, bool) or priority < 0:
        raise InvalidParameterError(f"priority must be an integer >= 0, got {priority!r}")
    return int(priority)
