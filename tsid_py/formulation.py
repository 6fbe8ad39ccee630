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

import itertools
from dataclasses import dataclass

import numpy as np

from tsid_py.constraints import ConstraintBase, ConstraintEquality, ConstraintInequality
from tsid_py.contacts.contact_base import ContactBase
from tsid_py.contacts.measured_force import MeasuredForceBase
from tsid_py.errors import (
    DimensionError,
    DuplicateNameError,
    InvalidParameterError,
    SolverFailedError,
    UnknownNameError,
)
from tsid_py.hqp import HqpData, WeightedConstraint
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.solvers.hqp_output import HqpOutput
from tsid_py.stacked import Binding, StackedLevels
from tsid_py.tasks.task_base import TaskActuation, TaskBase, TaskContactForce, TaskMotion
from tsid_py.transitions import Transitions
from tsid_py.validation import as_scalar, lookup

_LAYOUTS = itertools.count(1)  # layout numbers, unique across formulations
_CAP_MARGIN = 1e-3  # [N] a removal ramp ends at f_min + this, keeping f_min < cap (as TSID)


@dataclass
class _TaskLevel:
    task: TaskBase
    priority: int
    entry: WeightedConstraint
    rows: ConstraintEquality | None = None  # a motion task's rows of x, its dv columns (see _rows_view)
    source: ConstraintBase | None = None  # the task's constraint they were laid out for


@dataclass
class _ContactLevel:
    contact: ContactBase
    index: int
    motion: WeightedConstraint
    force: WeightedConstraint
    regularization: WeightedConstraint
    binding: Binding | None = None  # the contact's force-inequality and regularization arrays as views
    motion_rows: ConstraintEquality | None = None  # its motion rows of x, their dv columns
    motion_source: ConstraintEquality | None = None  # the motion constraint they were laid out for
    generator: np.ndarray | None = None  # the force generator T in the stacked -T


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
        self._dynamics = np.zeros((self._nv, self._nv))  # [M, -J_c^T], see compute_problem_data
        self._tau_map = self._dynamics[self._nu :]
        self._transitions = Transitions()
        self._last_x: np.ndarray | None = None  # the last solution read, to start contact unloading ramps
        self._measured: dict[str, MeasuredForceBase] = {}
        self._h_a = np.zeros(robot.na)  # actuated rows of h - sum J^T w (measured), last problem
        self._layout = next(_LAYOUTS)  # names the order of the contact forces in x
        self._stacked: StackedLevels | None = None
        self._stack()

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
    def add_motion_task(
        self, task: TaskMotion, weight: float = 1.0, priority: int = 1, transition_duration: float = 0.0
    ) -> None:
        """Add a task on dv; priority 0 makes it hard, >= 1 a cost with this weight.

        With ``transition_duration`` > 0 [s] the weight ramps linearly from 0 (:mod:`tsid_py.transitions`).
        """
        self._add_task(task, TaskMotion, weight, priority, transition_duration)

    def add_force_task(
        self, task: TaskContactForce, weight: float = 1.0, priority: int = 1, transition_duration: float = 0.0
    ) -> None:
        """Add a task on the contact forces (weight ramped from 0 over ``transition_duration`` [s])."""
        self._add_task(task, TaskContactForce, weight, priority, transition_duration)

    def add_actuation_task(self, task: TaskActuation, weight: float = 1.0, priority: int = 1) -> None:
        """Add a task on the joint torques (e.g. :class:`TaskActuationBounds` at priority 0)."""
        self._add_task(task, TaskActuation, weight, priority)

    def _add_task(
        self, task: TaskBase, family: type, weight: float, priority: int, transition_duration: float = 0.0
    ) -> None:
        if not isinstance(task, family):
            raise InvalidParameterError(f"{task!r} is not a {family.__name__}")
        self._check_new_name(task.name)
        weight, priority = _weight(weight), _priority(priority)
        duration = _ramp_duration(transition_duration, priority)
        template = task.constraint
        constraint_type = ConstraintEquality if template.is_equality() else ConstraintInequality
        columns = {"motion": slice(0, self._nv), "force": slice(self._nv, self.n_var)}.get(task.family)
        entry = WeightedConstraint(weight, constraint_type(task.name, template.rows, self.n_var), columns)
        self._tasks[task.name] = _TaskLevel(task, priority, entry)
        self._level(priority).append(entry)
        if duration > 0:
            entry.weight = 0.0
            self._transitions.ramp_weight(task.name, entry, weight, duration)
        self._stack()

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
        if not isinstance(contact, ContactBase):
            raise InvalidParameterError(f"{contact!r} is not a contact")
        self._check_new_name(contact.name)
        force_reg_weight, motion_weight = _weight(force_reg_weight), _weight(motion_weight)
        motion_priority = _priority(motion_priority)
        duration = _contact_ramp_duration(contact, transition_duration)
        n = self.n_var + contact.n_force
        level = _ContactLevel(
            contact,
            self._n_force,
            WeightedConstraint(
                motion_weight,
                ConstraintEquality(f"{contact.name}_motion_task", contact.motion_constraint.rows, n),
                slice(0, self._nv),
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
        self._resize_columns()
        if duration > 0:
            self._transitions.ramp_force_cap(
                contact.name, _unloaded_cap(contact), contact.max_normal_force, duration
            )

    def add_measured_force(self, measured: MeasuredForceBase) -> None:
        """Add a measured external force (:class:`Measured6dWrench`, :class:`Measured3dForce`): the
        dynamics become M dv + h - J^T w = S^T tau + J_c^T f."""
        if not isinstance(measured, MeasuredForceBase):
            raise InvalidParameterError(f"{measured!r} is not a Measured6dWrench or a Measured3dForce")
        if measured.robot.nv != self._nv:
            raise DimensionError(
                f"measured force {measured.name!r} is on a robot with nv = {measured.robot.nv}, "
                f"the formulation's robot has nv = {self._nv}"
            )
        if measured.name in self._measured:
            raise DuplicateNameError(
                f"a measured force named {measured.name!r} is already in the formulation"
            )
        self._measured[measured.name] = measured

    def remove_measured_force(self, name: str) -> None:
        """Remove a measured external wrench by name."""
        lookup("measured force", name, self._measured)
        del self._measured[name]

    def remove_task(self, name: str, duration: float = 0.0) -> None:
        """Remove a task by name; with ``duration`` > 0 [s] its weight first ramps linearly to 0,
        and it leaves the problem at the first :meth:`compute_problem_data` after the ramp."""
        level = lookup("task", name, self._tasks)
        duration = _ramp_duration(duration, level.priority)
        if duration > 0:
            self._transitions.ramp_weight(name, level.entry, 0.0, duration, remove_at_end=True)
            return
        self._transitions.cancel(name)
        self._remove_entries([level.entry])
        del self._tasks[name]
        self._stack()

    def remove_rigid_contact(self, name: str, transition_duration: float = 0.0) -> None:
        """Remove a contact (its force variables leave x).

        With ``transition_duration`` > 0 [s] the contact is unloaded first (TSID's contact
        transition): a cap on its total normal force ramps linearly from its normal force in
        the last solution read from this formulation (f_max if none) down to f_min + 1e-3 N;
        the contact stays active during the ramp and leaves the problem at the first
        :meth:`compute_problem_data` whose t is past the end of the ramp. A second ramped removal
        during the ramp raises; a removal with duration 0 takes the contact out at once.
        Bilateral contacts (no normal force) can only be removed at once.
        """
        level = lookup("contact", name, self._contacts)
        duration = _contact_ramp_duration(level.contact, transition_duration)
        if duration > 0:
            contact = level.contact
            start = contact.max_normal_force
            if self._last_x is not None:
                begin = self._nv + level.index
                start = contact.get_normal_force(self._last_x[begin : begin + contact.n_force])
            end = _unloaded_cap(contact)
            self._transitions.ramp_force_cap(name, max(start, end), end, duration, remove_at_end=True)
            return
        self._transitions.cancel(name)
        self._remove_entries([level.motion, level.force, level.regularization])
        del self._contacts[name]
        self._resize_columns()

    def update_task_weight(self, name: str, weight: float, duration: float = 0.0) -> None:
        """Change the weight of a task of a cost level, linearly over ``duration`` [s] if > 0."""
        level = lookup("task", name, self._tasks)
        weight, duration = _weight(weight), _ramp_duration(duration, level.priority)
        if self._transitions.is_leaving(name):
            raise InvalidParameterError(
                f"task {name!r} is being removed (its weight is ramping to 0); add it again once it has left"
            )
        if duration > 0:
            self._transitions.ramp_weight(name, level.entry, weight, duration)
        else:
            self._transitions.cancel(name)
            level.entry.weight = weight

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
            leaving = " (it is being ramped out; add it again once it has left)"
            raise DuplicateNameError(
                f"a task or contact named {name!r} is already in the formulation"
                + (leaving if self._transitions.is_leaving(name) else "")
            )

    def _level(self, priority: int) -> list[WeightedConstraint]:
        while len(self._levels) <= priority:
            self._levels.append([])
        return self._levels[priority]

    def _remove_entries(self, entries: list[WeightedConstraint]) -> None:
        for level in self._levels:
            level[:] = [e for e in level if not any(e is entry for entry in entries)]

    def _resize_columns(self) -> None:
        """Lay the contacts' forces out in x and give every x-space constraint n_var columns."""
        index = 0
        for level in self._contacts.values():
            level.index = index
            level.force.columns = level.regularization.columns = slice(
                self._nv + index, self._nv + index + level.contact.n_force
            )
            index += level.contact.n_force
        self._n_force = index
        n = self.n_var
        for level in self._levels:
            for entry in level:
                c = entry.constraint
                c.matrix = np.zeros((c.rows, n))
        for level in self._tasks.values():
            if level.task.family == "force":
                level.entry.columns = slice(self._nv, n)
        self._dynamics = np.zeros((self._nv, n))
        self._tau_map = self._dynamics[self._nu :]
        self._last_x = None  # its force layout is gone
        self._layout = next(_LAYOUTS)
        self._stack()

    def _stack(self) -> None:
        """Lay levels 0 and 1 out in contiguous buffers (after every change of structure), and
        bind the contacts' force inequalities and regularizations to their rows (see Binding).

        A task whose mask changed since it was added (as TSID allows) gets x-space rows of its
        new size here.
        """
        for level in self._tasks.values():
            rows, target = level.task.constraint.rows, level.entry.constraint
            if rows != target.rows:
                level.entry.constraint = type(target)(level.task.name, rows, self.n_var)
        cost = self._levels[1] if len(self._levels) > 1 else []
        if self._stacked is not None:
            self._stacked.retired = True  # its buffers no longer back the constraints
        self._stacked = StackedLevels(self._levels[0], cost, self.n_var, self._nv)
        self._hqp = HqpData(self._levels, self.n_var, self._stacked, self._layout)
        # J_c^T = sum J^T T over the contacts, as one product with block-diagonal -T when the
        # contacts' motion rows are consecutive in a stacked buffer (they are unless a task of
        # the same level was added between two contacts)
        rows = self._stacked.rows_of([level.motion for level in self._contacts.values()])
        self._contact_rows = None if rows is None else rows[:, : self._nv]
        self._stack_generators()
        motion = slice(0, self._nv)
        self._direct_tasks, self._other_tasks = [], []
        for level in self._tasks.values():
            source = level.task.constraint
            if level.task.family == "motion" and source.is_equality():
                level.rows, level.source = _rows_view(source, level.entry.constraint, motion), source
                self._direct_tasks.append(level)
            else:
                self._other_tasks.append(level)
        for level in self._contacts.values():
            source = level.contact.motion_constraint
            level.motion_rows = _rows_view(source, level.motion.constraint, motion)
            level.motion_source = source
            contact, forces = level.contact, level.force.columns
            level.binding = Binding(
                [
                    (contact.force_constraint, level.force.constraint, forces),
                    (contact.force_regularization, level.regularization.constraint, forces),
                ]
            )

    def _stack_generators(self) -> None:
        """Block-diagonal -T over the contacts (rows: their motion rows; columns: their forces),
        remembering each contact's T to notice a new one (``Contact6d.set_contact_points``)."""
        contacts = list(self._contacts.values())
        self._minus_generators = np.zeros((sum(c.motion.constraint.rows for c in contacts), self._n_force))
        first = 0
        for level in contacts:
            level.generator = generator = level.contact.force_generator
            columns = slice(level.index, level.index + level.contact.n_force)
            np.negative(generator, out=self._minus_generators[first : first + generator.shape[0], columns])
            first += generator.shape[0]

    # ------------------------------------------------------------- the problem
    def compute_problem_data(self, t: float, q: object, v: object) -> HqpData:
        """Compute every task and contact at (t, q, v) and return the HQP on x = [dv; f]."""
        self.t = as_scalar("t", t)
        robot, data, nv = self.robot, self.data, self._nv
        q, v = robot.check_state(q, v)
        robot.compute_all_terms_checked(data, q, v)
        if self._transitions:
            for name in self._transitions.advance(self.t):
                if name in self._tasks:
                    self.remove_task(name)
                else:
                    self.remove_rigid_contact(name)
        force_caps = self._transitions.force_caps

        # the equation of motion M dv - J_c^T f = S^T tau - h: [M, -J_c^T], with J_c^T = J^T T over
        # the contacts in one product (block-diagonal -T, see _stack); its rows nu: are the torque map
        dynamics = self._dynamics
        for level in self._contacts.values():
            contact = level.contact
            motion = contact.motion_task
            if motion.compute_into(t, q, v, data, level.motion_rows, level.motion_source) is None:
                raise DimensionError(
                    f"the motion task of contact {contact.name!r} changed its mask after the contact was "
                    "added; remove the contact and add it again"
                )
            force, source = level.force.constraint, contact.force_constraint
            if not level.binding.holds(source, contact.force_regularization):
                self._copy_forces(level)
            if force_caps and contact.name in force_caps:
                if source.upper_bound is force.upper_bound:  # the cap is the formulation's alone:
                    source.upper_bound = source.upper_bound.copy()  # the contact keeps its own f_max
                force.upper_bound[-1] = min(source.upper_bound[-1], force_caps[contact.name])
            if contact.force_generator is not level.generator:
                self._stack_generators()  # new contact points
        rows = self._contact_rows
        if rows is None:
            rows = np.concatenate(
                [level.motion.constraint.matrix[:, :nv] for level in self._contacts.values()]
            )
        np.matmul(rows.T, self._minus_generators, out=dynamics[:, nv:])
        dynamics[:, :nv] = robot.mass(data)
        h = robot.nonlinear_effects(data)
        for measured in self._measured.values():
            h = h - measured.compute_joint_torques(data)
        nu = self._nu
        self._h_a = h[nu:]
        if self._base_dynamics is not None:
            base = self._base_dynamics.constraint
            base.matrix[...] = dynamics[:nu]
            np.negative(h[:nu], out=base.vector)

        for level in self._direct_tasks:  # motion tasks that write their rows of the problem
            if level.task.compute_into(t, q, v, data, level.rows, level.source) is None:
                self._compute_task(level, t, q, v)  # it has a new mask: rows of the new size
        for level in self._other_tasks:
            self._compute_task(level, t, q, v)
        return self._hqp  # one per layout: its levels are refilled in place

    def _compute_task(self, level: _TaskLevel, t: float, q: np.ndarray, v: np.ndarray) -> None:
        """Compute a task and copy its constraint into its x-space entry (motion tasks: their dv
        columns; actuation tasks: through tau = tau_map x + h_a; force tasks: their force columns)."""
        task, nv = level.task, self._nv
        if task.family == "force":
            task.set_contacts([(c.contact, c.index) for c in self._contacts.values()])
        c = task.compute(t, q, v, self.data)
        if c.rows != level.entry.constraint.rows:
            self._stack()  # the task's mask changed since it was added: rows of the new size
        target = level.entry.constraint
        if task.family == "motion":
            target.matrix[:, :nv] = c.matrix
            _copy_vectors(target, c)
        elif task.family == "actuation":
            tau_map, h_a = self._tau_map, self._h_a
            joints = task.selected_joints
            if joints is None:
                np.matmul(c.matrix, tau_map, out=target.matrix)
                _copy_vectors(target, c, offset=c.matrix.dot(h_a))
            else:  # the matrix selects joints: copy their rows of the torque map
                target.matrix[...] = tau_map[joints]
                _copy_vectors(target, c, offset=h_a[joints])
        else:
            target.matrix[:, self._force_columns(task)] = c.matrix
            _copy_vectors(target, c)

    def _copy_forces(self, level: _ContactLevel) -> None:
        """Copy a contact's force inequality and regularization into its x-space entries (when
        the contact replaced an array since it was bound: a new friction coefficient, or an upper
        bound of its own again once a ramp capped the formulation's)."""
        columns, force, source = level.force.columns, level.force.constraint, level.contact.force_constraint
        force.matrix[:, columns] = source.matrix
        force.lower_bound[:] = source.lower_bound
        force.upper_bound[:] = source.upper_bound
        regularization, source = level.regularization.constraint, level.contact.force_regularization
        regularization.matrix[:, columns] = source.matrix
        regularization.vector[:] = source.vector

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
        if sol.layout is not None:
            if sol.layout != self._layout:
                raise SolverFailedError(
                    "the solution was computed before a contact was added or removed (the contact "
                    "forces are laid out differently now); solve the current problem and read that solution"
                )
        elif sol.x.shape != (self.n_var,):  # a solution of a problem built by hand
            raise SolverFailedError(
                f"the solution has {sol.x.shape[0]} variables but the formulation has {self.n_var}; "
                "was it computed before a contact was added or removed?"
            )
        self._last_x = sol.x
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
        return self._tau_map.dot(self._x(sol)) + self._h_a

    def check_contact(self, name: str) -> bool:
        """Whether a contact of this name is active."""
        return name in self._contacts

    def contact_jacobian(self) -> np.ndarray:
        """J_c (n_force x nv) of the last computed problem: f enters the dynamics as J_c^T f."""
        return -self._dynamics[:, self._nv :].T

    def __repr__(self) -> str:
        return (
            f"InverseDynamicsFormulation({self.name!r}, n_var={self.n_var}, n_eq={self.n_eq}, "
            f"n_in={self.n_in}, tasks={list(self._tasks)}, contacts={list(self._contacts)})"
        )


def _rows_view(source: ConstraintEquality, target: ConstraintEquality, columns: slice) -> ConstraintEquality:
    """A constraint whose arrays are views of ``target``'s (its matrix on ``columns``), filled
    with ``source``'s values: where a task writes its rows of the problem (``compute_into``)."""
    view = ConstraintEquality(target.name, 0, 0)
    view.matrix, view.vector = target.matrix[:, columns], target.vector
    view.matrix[...] = source.matrix
    view.vector[...] = source.vector
    return view


def _copy_vectors(target: ConstraintBase, source: ConstraintBase, offset: np.ndarray | None = None) -> None:
    """Copy the vector (equality) or bounds of a task constraint to its x-space twin, minus ``offset``."""
    if source.is_equality():
        target.vector[...] = source.vector if offset is None else source.vector - offset
    elif offset is None:
        target.lower_bound[...] = source.lower_bound
        target.upper_bound[...] = source.upper_bound
    else:
        np.subtract(source.lower_bound, offset, out=target.lower_bound)
        np.subtract(source.upper_bound, offset, out=target.upper_bound)


def _unloaded_cap(contact: ContactBase) -> float:
    """Where an unloading ramp ends and a loading ramp starts: f_min + _CAP_MARGIN (<= f_max) [N]."""
    return min(contact.min_normal_force + _CAP_MARGIN, contact.max_normal_force)


def _weight(weight: float) -> float:
    return as_scalar("weight", weight, minimum=0.0)


def _ramp_duration(duration: float, priority: int) -> float:
    """A transition duration [s] >= 0; only cost levels (priority >= 1) have a weight to ramp."""
    duration = as_scalar("transition duration", duration, minimum=0.0)
    if duration > 0 and priority == 0:
        raise InvalidParameterError("a weight transition needs a cost level (priority >= 1), not level 0")
    return duration


def _contact_ramp_duration(contact: ContactBase, duration: float) -> float:
    """A contact transition duration [s] >= 0; only a unilateral contact has a normal force to ramp."""
    duration = as_scalar("transition_duration", duration, minimum=0.0)
    if duration > 0 and not contact.unilateral:
        raise InvalidParameterError(
            f"{contact.name!r} is bilateral: it has no normal force to ramp; add or remove it "
            "without a transition_duration"
        )
    return duration


def _priority(priority: int) -> int:
    if not isinstance(priority, (int, np.integer)) or isinstance(priority, bool) or priority < 0:
        raise InvalidParameterError(f"priority must be an integer >= 0, got {priority!r}")
    return int(priority)
