"""The structure of a problem: what is in it, at which level and weight, and where its variables sit.

Why the structure and the workspace are two objects: docs/architecture.md, section "Who owns
which array". x = [dv; f]: dv has nv entries, then come the force variables of every contact, in
the order the contacts were added.

:meth:`ProblemStructure.blocks` gives the rows of each level in a fixed order, the order of the
problem's rows:

- level 0: the base dynamics (a floating base), the contacts' motion constraints at priority 0,
  the contacts' force inequalities, then the hard tasks in the order they were added;
- a cost level: the contacts' motion constraints of that priority, the force regularizations
  (level 1 only), then its tasks in the order they were added.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

from tsid_py.constraints import Kind, as_kind
from tsid_py.contacts.contact_base import ContactBase
from tsid_py.contacts.measured_force import MeasuredForceBase
from tsid_py.errors import (
    DimensionError,
    DuplicateNameError,
    InvalidParameterError,
    UnknownNameError,
    UnsupportedProblemError,
)
from tsid_py.hqp import BASE_DYNAMICS
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.sealed import unwatch, watch
from tsid_py.solvers.dense_qp import RowSpec
from tsid_py.tasks.task_base import TaskBase, TaskContactForce, TaskMotion
from tsid_py.transitions import Transitions
from tsid_py.validation import as_scalar, lookup

_REVISIONS = itertools.count(1)  # revision numbers, unique in the process
CAP_MARGIN = 1e-3  # [N] a removal ramp ends at f_min + this, keeping f_min < cap (as TSID)


@dataclass
class TaskEntry:
    """A task in the problem: its priority (0: hard) and weight (in a cost level)."""

    task: TaskBase
    priority: int
    weight: float


@dataclass
class ContactEntry:
    """A contact in the problem: its motion constraint's priority and weight, its force
    regularization's weight, and ``offset``, the index of its first force variable in f."""

    contact: ContactBase
    motion_priority: int
    motion_weight: float
    force_reg_weight: float
    offset: int = 0


class Role(Enum):
    """What fills a block of rows."""

    BASE = "the base dynamics"
    CONTACT_MOTION = "a contact's motion"
    CONTACT_FORCE = "a contact's force inequality"
    CONTACT_REGULARIZATION = "a contact's force regularization"
    TASK = "a task"


@dataclass(frozen=True)
class RowBlock:
    """Rows of one level: their spec and what fills them (``role`` and ``entry``).

    ``entry`` is a :class:`ContactEntry` for the contacts' roles, a :class:`TaskEntry` for a task,
    None for the base dynamics.
    """

    spec: RowSpec
    role: Role
    entry: Any = None


def block_weight(block: RowBlock) -> float:
    """The weight of a block's rows now: 1 at level 0, the entry's weight in a cost level."""
    entry = block.entry
    if block.role is Role.CONTACT_MOTION:
        return entry.motion_weight if entry.motion_priority > 0 else 1.0
    if block.role is Role.CONTACT_REGULARIZATION:
        return entry.force_reg_weight
    if block.role is Role.TASK:
        return entry.weight if entry.priority > 0 else 1.0
    return 1.0


class ProblemStructure:
    """Tasks, contacts, measured forces, levels, weights and ramps of one formulation.

    Args:
        robot: The robot (sizes nv, na).

    Attributes:
        revision: A number, unique in the process, that changes with what the problem is made
            of, but for its per-step values: a task or contact added or removed, a weight, a
            ramp's normal-force cap lifted, a contact's parameters (an attribute set on it), a
            task's rows (a mask). The structure watches its tasks and contacts
            (:func:`tsid_py.sealed.watch`), which call :meth:`revise`. The workspace brings its
            rows up to it before a step.
        variables: The ``revision`` at which the contacts last changed: it names the layout of x.
        force_caps: The caps on the contacts' total normal force set by ramps in progress [N],
            by contact name: values of the step, applied at every step.
    """

    def __init__(self, robot: RobotWrapper) -> None:
        self.nv, self.na = robot.nv, robot.na
        self.nu = robot.nv - robot.na
        self.tasks: dict[str, TaskEntry] = {}
        self.contacts: dict[str, ContactEntry] = {}
        self.measured: dict[str, MeasuredForceBase] = {}
        self.transitions = Transitions()
        self.force_caps: dict[str, float] = {}  # contact name -> cap on its total normal force [N]
        self.revision = next(_REVISIONS)
        self.variables = self.revision
        self.n_force = 0

    @property
    def n_var(self) -> int:
        """Size of x = [dv; f]."""
        return self.nv + self.n_force

    # ------------------------------------------------------------------------- changes
    def add_task(
        self,
        task: TaskBase,
        family: type[TaskBase],
        weight: float,
        priority: int,
        transition_duration: float = 0.0,
    ) -> None:
        """Add a task of ``family`` (TaskMotion, TaskContactForce or TaskActuation).

        The arguments and errors are those of :meth:`InverseDynamicsFormulation.add_motion_task`.
        """
        if not isinstance(task, family):
            raise InvalidParameterError(f"{task!r} is not a {family.__name__}")
        self._check_new_name(task.name)
        weight, priority = check_weight(weight), check_priority(priority)
        kind = as_kind(f"task {task.name!r}", task.kind)
        if kind is Kind.BOUND and task.dim != task.cols:
            raise InvalidParameterError(
                f"bound task {task.name!r} bounds every variable it acts on (its matrix is the "
                f"identity): its dim must be {task.cols}, got {task.dim}"
            )
        if priority > 0 and kind is not Kind.EQUALITY:
            raise UnsupportedProblemError(
                f"{kind} {task.name!r} at priority {priority}: only equalities can be costs "
                "(put inequalities and bounds at priority 0)"
            )
        duration = _ramp_duration(transition_duration, priority)
        contact_name = task.contact_name if isinstance(task, TaskContactForce) else None
        if contact_name is not None:
            if contact_name not in self.contacts:
                raise UnknownNameError(
                    f"force task {task.name!r} acts on contact {contact_name!r}, which is not in the "
                    "formulation: add the contact first"
                )
            if self.transitions.is_leaving(contact_name):
                raise InvalidParameterError(
                    f"force task {task.name!r} acts on contact {contact_name!r}, which is being ramped out"
                )
        self.tasks[task.name] = TaskEntry(task, priority, 0.0 if duration > 0 else weight)
        watch(task, self)
        if duration > 0:
            self.transitions.start(task.name, 0.0, weight, duration)
        self._changed(variables=False)

    def add_contact(
        self,
        contact: ContactBase,
        force_reg_weight: float,
        motion_weight: float,
        motion_priority: int,
        transition_duration: float = 0.0,
    ) -> None:
        """Add a contact: its force variables go last in f. The arguments and errors are those of
        :meth:`InverseDynamicsFormulation.add_rigid_contact`."""
        if not isinstance(contact, ContactBase):
            raise InvalidParameterError(f"{contact!r} is not a contact")
        self._check_new_name(contact.name)
        entry = ContactEntry(
            contact,
            check_priority(motion_priority),
            check_weight(motion_weight),
            check_weight(force_reg_weight),
        )
        duration = _contact_ramp_duration(contact, transition_duration)
        self.contacts[contact.name] = entry
        watch(contact, self)
        watch(contact.motion_task, self)
        if duration > 0:
            self.transitions.start(contact.name, unloaded_cap(contact), contact.max_normal_force, duration)
        self._changed()

    def add_measured_force(self, measured: MeasuredForceBase) -> None:
        if not isinstance(measured, MeasuredForceBase):
            raise InvalidParameterError(f"{measured!r} is not a Measured6dWrench or a Measured3dForce")
        if measured.robot.nv != self.nv:
            raise DimensionError(
                f"measured force {measured.name!r} is on a robot with nv = {measured.robot.nv}, "
                f"the formulation's robot has nv = {self.nv}"
            )
        if measured.name in self.measured:
            raise DuplicateNameError(
                f"a measured force named {measured.name!r} is already in the formulation"
            )
        self.measured[measured.name] = measured

    def remove_measured_force(self, name: str) -> None:
        lookup("measured force", name, self.measured)
        del self.measured[name]

    def remove_task(self, name: str, duration: float = 0.0) -> None:
        """Remove a task now, or ramp its weight to 0 over ``duration`` [s] and remove it then."""
        entry = lookup("task", name, self.tasks)
        duration = _ramp_duration(duration, entry.priority)
        if duration > 0:
            self.transitions.start(name, entry.weight, 0.0, duration, remove_at_end=True)
            return
        self.transitions.cancel(name)
        del self.tasks[name]
        unwatch(entry.task, self)
        self._changed(variables=False)

    def remove_contact(self, name: str, duration: float = 0.0, normal_force: float | None = None) -> None:
        """Remove a contact now, or cap its normal force from ``normal_force`` (f_max if None) down
        to f_min + 1e-3 N over ``duration`` [s] and remove it then."""
        entry = lookup("contact", name, self.contacts)
        contact = entry.contact
        duration = _contact_ramp_duration(contact, duration)
        users = [t.task.name for t in self.tasks.values() if getattr(t.task, "contact_name", None) == name]
        if users:
            raise InvalidParameterError(
                f"force task {users[0]!r} acts on contact {name!r}: remove the task before the contact"
            )
        if duration > 0:
            end = unloaded_cap(contact)
            start = contact.max_normal_force if normal_force is None else normal_force
            self.transitions.start(name, max(start, end), end, duration, remove_at_end=True)
            return
        self.transitions.cancel(name)
        self.force_caps.pop(name, None)
        del self.contacts[name]
        unwatch(contact, self)
        unwatch(contact.motion_task, self)
        self._changed()

    def update_task_weight(self, name: str, weight: float, duration: float = 0.0) -> None:
        entry = lookup("task", name, self.tasks)
        weight, duration = check_weight(weight), _ramp_duration(duration, entry.priority)
        if self.transitions.is_leaving(name):
            raise InvalidParameterError(
                f"task {name!r} is being removed (its weight is ramping to 0); add it again once it has left"
            )
        if duration > 0:
            self.transitions.start(name, entry.weight, weight, duration)
        else:
            self.transitions.cancel(name)
            self._set_weight(entry, weight)

    def update_contact_weights(
        self, name: str, force_reg_weight: float | None = None, motion_weight: float | None = None
    ) -> None:
        entry = lookup("contact", name, self.contacts)
        if force_reg_weight is not None:
            entry.force_reg_weight = check_weight(force_reg_weight)
        if motion_weight is not None:
            entry.motion_weight = check_weight(motion_weight)
        self.revise()

    def advance(self, t: float) -> None:
        """Move the ramps to time t [s]: weights and force caps take their values, and what is due
        for removal leaves."""
        values, ended, due = self.transitions.advance(t)
        for name, value in values.items():
            if name in self.tasks:
                self._set_weight(self.tasks[name], value)
            elif name in ended:
                self.force_caps.pop(name, None)  # a finished loading ramp leaves the contact's own f_max
                self.revise()
            else:
                self.force_caps[name] = value
        for name in sorted(due, key=lambda n: n not in self.tasks):  # tasks leave before contacts
            if name in self.tasks:
                self.remove_task(name)
            else:
                self.remove_contact(name)

    def _set_weight(self, entry: TaskEntry, weight: float) -> None:
        if entry.weight != weight:
            entry.weight = weight
            self.revise()

    def revise(self) -> None:
        """A new revision: something the problem is made of changed (a task or contact of the
        problem calls it: :mod:`tsid_py.sealed`)."""
        self.revision = next(_REVISIONS)

    def _check_new_name(self, name: str) -> None:
        if name in self.tasks or name in self.contacts:
            leaving = " (it is being ramped out; add it again once it has left)"
            raise DuplicateNameError(
                f"a task or contact named {name!r} is already in the formulation"
                + (leaving if self.transitions.is_leaving(name) else "")
            )

    def _changed(self, variables: bool = True) -> None:
        """A task or contact added or removed (when contacts changed, their forces laid out anew in f)."""
        self.revise()
        if variables:
            offset = 0
            for entry in self.contacts.values():
                entry.offset = offset
                offset += entry.contact.n_force
            self.n_force = offset
            self.variables = self.revision

    # -------------------------------------------------------------------------- the rows
    def contact_columns(self, entry: ContactEntry) -> slice:
        """The columns of x that hold a contact's force variables."""
        start = self.nv + entry.offset
        return slice(start, start + entry.contact.n_force)

    def force_columns(self, entry: TaskEntry) -> slice:
        """The columns of x a force task acts on: one contact's forces, or all of them."""
        name = getattr(entry.task, "contact_name", None)
        if name is None:
            return slice(self.nv, self.n_var)
        return self.contact_columns(self.contacts[name])  # there while the task is (add_task, remove_contact)

    def fillers(self) -> list[tuple[object, ...]]:
        """What :meth:`blocks` lays out, without laying it out: each contact (the id of its entry,
        its motion rows, its force-inequality rows), then each task (its entry's id, its rows, the
        contact it acts on). The rest of the blocks is fixed with the entry (priorities, kinds,
        sizes): equal fillers give equal blocks, while the entries compared live."""
        fillers: list[tuple[object, ...]] = []
        for c in self.contacts.values():
            fillers.append((id(c), c.contact.motion_task.dim, c.contact.force_inequality_rows))
        for t in self.tasks.values():
            fillers.append((id(t), t.task.dim, getattr(t.task, "contact_name", None)))
        return fillers

    def blocks(self) -> list[list[RowBlock]]:
        """The rows of every level, in the problem's order (module docstring).

        Raises:
            DimensionError: A contact's motion task no longer has one row per wrench component
                (its mask was changed).
        """
        nv = self.nv
        motion = slice(0, nv)
        levels: list[list[RowBlock]] = [[], []]

        def level(priority: int) -> list[RowBlock]:
            while len(levels) <= priority:
                levels.append([])
            return levels[priority]

        if self.nu > 0:
            levels[0].append(RowBlock(RowSpec(BASE_DYNAMICS, Kind.EQUALITY, self.nu, None), Role.BASE))
        entry: Any  # the contacts' entries, then the tasks'
        for entry in self.contacts.values():
            contact = entry.contact
            if contact.motion_task.dim != contact.wrench_size:
                raise DimensionError(
                    f"the motion task of contact {contact.name!r} has {contact.motion_task.dim} rows, its "
                    f"wrench {contact.wrench_size}: its mask was changed; set it back to "
                    f"{contact.motion_mask}, or remove the contact"
                )
            spec = RowSpec(f"{contact.name}_motion_task", Kind.EQUALITY, contact.motion_task.dim, motion)
            level(entry.motion_priority).append(RowBlock(spec, Role.CONTACT_MOTION, entry))
        for entry in self.contacts.values():
            contact, forces = entry.contact, self.contact_columns(entry)
            spec = RowSpec(
                f"{contact.name}_force_constraint", Kind.INEQUALITY, contact.force_inequality_rows, forces
            )
            levels[0].append(RowBlock(spec, Role.CONTACT_FORCE, entry))
        for entry in self.contacts.values():
            contact, forces = entry.contact, self.contact_columns(entry)
            spec = RowSpec(f"{contact.name}_force_reg_task", Kind.EQUALITY, contact.wrench_size, forces)
            levels[1].append(RowBlock(spec, Role.CONTACT_REGULARIZATION, entry))
        for entry in self.tasks.values():
            task = entry.task
            if isinstance(task, TaskMotion):
                columns = motion
            elif isinstance(task, TaskContactForce):
                columns = self.force_columns(entry)
            else:  # an actuation task's rows are mapped onto x by the workspace
                columns = None
            spec = RowSpec(task.name, as_kind(f"task {task.name!r}", task.kind), task.dim, columns)
            level(entry.priority).append(RowBlock(spec, Role.TASK, entry))
        return levels


def unloaded_cap(contact: ContactBase) -> float:
    """Where an unloading ramp ends and a loading ramp starts: f_min + CAP_MARGIN (<= f_max) [N]."""
    return min(contact.min_normal_force + CAP_MARGIN, contact.max_normal_force)


MAX_WEIGHT = 1e8  # above, a cost level's Hessian is too ill-conditioned for quadprog (it fails)


def check_weight(weight: float) -> float:
    """``weight`` checked: a number in [0, MAX_WEIGHT].

    Raises:
        InvalidParameterError: Out of range. Weights are relative within a level: the message
            says to scale them all down.
    """
    weight = as_scalar("weight", weight, minimum=0.0)
    if weight > MAX_WEIGHT:
        raise InvalidParameterError(
            f"weight {weight:g} is above {MAX_WEIGHT:g}: the QP becomes too ill-conditioned to solve; "
            "weights are relative within a level, so divide them all by the same factor"
        )
    return weight


def check_priority(priority: int) -> int:
    if isinstance(priority, bool) or not isinstance(priority, (int, np.integer)) or priority < 0:
        raise InvalidParameterError(f"priority must be an integer >= 0, got {priority!r}")
    return int(priority)


def _ramp_duration(duration: float, priority: int) -> float:
    """A transition duration [s] >= 0; only cost levels (priority >= 1) have a weight to ramp."""
    duration = as_scalar("transition_duration", duration, minimum=0.0)
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
