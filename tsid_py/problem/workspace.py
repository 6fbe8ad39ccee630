"""The workspace of one problem layout: every per-step buffer, and the step that fills them.

Why one object owns and writes them: docs/architecture.md, section "Who owns which array". The
dense QP builder lays the levels out (:class:`HardRows` for level 0, :class:`CostRows` for each
cost level). Each task and contact gets a constraint whose arrays are views of those buffers.
:meth:`Workspace.fill` computes one step; :meth:`Workspace.problem` hands the problem out as
read-only views.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin

from tsid_py.constraints import ConstraintBase, Kind, new_constraint, read_only_view
from tsid_py.contacts.contact_base import ContactBase
from tsid_py.hqp import HqpData, ProblemId, ProblemLayout, StepClock, WeightedConstraint
from tsid_py.problem.structure import ContactEntry, ProblemStructure, Role, RowBlock, block_weight
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.solvers.dense_qp import CostRows, DenseQp, HardRows
from tsid_py.tasks.task_base import TaskActuation, TaskBase, TaskContactForce


@dataclass
class _ContactSlot:
    entry: ContactEntry
    contact: ContactBase
    # views of the problem's rows, set when the slot is assigned its rows (an equality, an
    # inequality, an equality)
    motion: Any = None  # its motion rows, dv columns
    force: Any = None  # its force inequality, force columns
    regularization: Any = None  # its regularization, force columns
    generator: np.ndarray | None = None  # its block of the block-diagonal -T


@dataclass
class _TaskSlot:
    task: TaskBase
    out: ConstraintBase  # motion and force tasks: views of the problem's rows on their columns
    rows: int
    target: ConstraintBase | None = None  # actuation tasks: their rows of x (``out`` is on tau)


_new_id = tuple.__new__  # a ProblemId made at every step: tuple.__new__(ProblemId, (layout, step))


class Workspace:
    """Every per-step buffer of one layout of a problem, and the step that fills them.

    Args:
        structure: The problem's structure. The workspace follows its revisions (:meth:`refresh`)
            while its layout holds; a new layout needs a new workspace.
        robot: The robot.
        clock: The formulation's step clock: the problems handed out name its step.

    Attributes:
        revision: The structure's revision the rows that change only with it were last made at.
    """

    def __init__(self, structure: ProblemStructure, robot: RobotWrapper, clock: StepClock) -> None:
        self.robot = robot
        self.structure = structure
        self.clock = clock
        nv, nu, n = structure.nv, structure.nu, structure.n_var
        self.nv, self.nu, self.n = nv, nu, n
        contacts = [(e.contact, e.offset) for e in structure.contacts.values()]
        for entry in structure.tasks.values():  # before their rows are counted: they may depend on them
            if isinstance(entry.task, TaskContactForce):
                entry.task.set_contacts(contacts)
        self._blocks = blocks = structure.blocks()
        self.hard = HardRows([b.spec for b in blocks[0]], n)
        self.costs = [CostRows([b.spec for b in level], n, nv) for level in blocks[1:]]
        self.dynamics = np.zeros((nv, n))  # [M, -J_c^T]
        self.tau_map = self.dynamics[nu:]
        self.h = np.zeros(nv)  # h less the measured wrenches' J^T w
        self.h_a = self.h[nu:]
        self._base: Any = None  # the base-dynamics equality (a floating base's)
        self._contacts = {
            name: _ContactSlot(entry, entry.contact) for name, entry in structure.contacts.items()
        }
        self._motion_tasks: list[_TaskSlot] = []
        self._force_tasks: list[_TaskSlot] = []
        self._actuation_tasks: list[_TaskSlot] = []
        motion_rows: list[tuple[int, int]] = []  # (level, index) of the contacts' motion rows
        for level, level_blocks in enumerate(blocks):
            for index, block in enumerate(level_blocks):
                self._assign(level, index, block, motion_rows)
        self._contact_motion = self._stacked_contact_motion(motion_rows)
        # views the step writes through, made once
        self._contact_motion_t = None if self._contact_motion is None else self._contact_motion.T
        self._dynamics_forces, self._dynamics_mass = self.dynamics[:, nv:], self.dynamics[:, :nv]
        self._dynamics_base, self._h_base = self.dynamics[:nu], self.h[:nu]
        self._contact_slots = list(self._contacts.values())
        self._minus_generators = np.zeros(
            (sum(s.motion.rows for s in self._contacts.values()), structure.n_force)
        )
        first = 0
        for slot in self._contacts.values():
            contact = slot.entry.contact
            columns = slice(slot.entry.offset, slot.entry.offset + contact.n_force)
            slot.generator = self._minus_generators[first : first + contact.wrench_size, columns]
            first += contact.wrench_size
        self._qp_constraints, self._qp_rows = self.hard.read_only()
        self._views = [  # the problem's constraints: read-only views of the rows, one per block
            [
                read_only_view((self.hard if level == 0 else self.costs[level - 1]).view(k))
                for k in range(len(b))
            ]
            for level, b in enumerate(blocks)
        ]
        self._hqp_levels = (  # the weights the rows have: 1 at level 0, a cost level's until set
            self._level(0, [1.0] * len(blocks[0])),
            *(self._level(level, cost.weights.tolist()) for level, cost in enumerate(self.costs, start=1)),
        )
        self._fillers = structure.fillers()  # the entries live in _blocks
        rows = tuple(sum(block.spec.rows for block in level) for level in blocks)  # per level
        self.layout = ProblemLayout(structure.revision, structure.variables, n, rows)
        self._dense = _DenseRows(self.hard, self.costs[0], self._qp_constraints, self._qp_rows)
        self.revision = -1
        self._copy_constants()

    # ------------------------------------------------------------------------- the layout
    def _view(self, level: int, index: int, columns: slice | None = None) -> ConstraintBase:
        return self.hard.view(index, columns) if level == 0 else self.costs[level - 1].view(index, columns)

    def _assign(self, level: int, index: int, block: RowBlock, motion_rows: list[tuple[int, int]]) -> None:
        """Give the rows of ``block`` to what fills them."""
        spec, entry = block.spec, block.entry
        if block.role is Role.BASE:
            self._base = self._view(level, index)
        elif block.role is Role.CONTACT_MOTION:
            self._contacts[entry.contact.name].motion = self._view(level, index, spec.columns)
            motion_rows.append((level, index))
        elif block.role is Role.CONTACT_FORCE:
            self._contacts[entry.contact.name].force = self._view(level, index, spec.columns)
        elif block.role is Role.CONTACT_REGULARIZATION:
            self._contacts[entry.contact.name].regularization = self._view(level, index, spec.columns)
        else:
            task = entry.task
            view = self._view(level, index, spec.columns)
            if spec.kind is Kind.BOUND:  # a bound's matrix is the identity on the task's variable
                view.matrix[...] = np.eye(spec.rows, view.matrix.shape[1])
            if isinstance(task, TaskActuation):
                scratch = new_constraint(task.kind, task.name, spec.rows, task.cols)
                self._actuation_tasks.append(_TaskSlot(task, scratch, spec.rows, view))
            elif isinstance(task, TaskContactForce):
                self._force_tasks.append(_TaskSlot(task, view, spec.rows))
            else:
                self._motion_tasks.append(_TaskSlot(task, view, spec.rows))

    def _stacked_contact_motion(self, motion_rows: list[tuple[int, int]]) -> np.ndarray | None:
        """The contacts' motion rows (dv columns) as one view when they are consecutive in level 0
        (they are when every contact's motion is hard), for J_c^T in one product."""
        if any(level != 0 for level, _ in motion_rows):
            return None
        rows = self.hard.rows_of([index for _, index in motion_rows])
        return None if rows is None else rows[:, : self.nv]

    def _level(self, level: int, weights: list[float]) -> tuple[WeightedConstraint, ...]:
        """Level ``level`` of the problem: its views, with ``weights``."""
        entries = zip(weights, self._views[level], self._blocks[level], strict=True)
        return tuple(WeightedConstraint(w, view, b.spec.columns) for w, view, b in entries)

    def _update_weights(self) -> None:
        """The cost levels' weights from the structure, into their rows and the problem's levels,
        for each level where one changed."""
        levels = list(self._hqp_levels)
        for level, cost in enumerate(self.costs, start=1):
            weights = [block_weight(b) for b in self._blocks[level]]
            if cost.weights.tolist() != weights:
                cost.set_weights(weights)
                levels[level] = self._level(level, weights)
        self._hqp_levels = tuple(levels)

    def _copy_constants(self) -> None:
        """The rows that change only with the structure, at its revision now: the weights, and
        each contact's force inequality, regularization and generator T."""
        revision = self.structure.revision
        self._update_weights()
        for slot in self._contact_slots:
            slot.contact.write_force_constraints(slot.force, slot.regularization)
            np.negative(slot.contact.force_generator, out=slot.generator)
        self.revision = revision

    def refresh(self) -> bool:
        """Bring the workspace to the structure's revision, if its layout holds.

        Whether the layout changed is not counted but checked: the structure's tasks and contacts
        must be this workspace's, with as many rows each (:meth:`ProblemStructure.fillers`). A
        weight, a contact's parameter or a mask that keeps the rows leaves it.

        Returns:
            False, with nothing written, when the layout changed: a new workspace is needed.
        """
        if self.structure.fillers() != self._fillers:
            return False
        self._copy_constants()
        return True

    # --------------------------------------------------------------------------- the step
    def fill(self, t: float, q: np.ndarray, v: np.ndarray, data: pin.Data) -> None:
        """Compute the problem at (t, q, v), top to bottom.

        1. The contacts' motion rows: each contact's motion task fills its rows.
        2. The normal-force caps of the ramps in progress, on the contacts' force inequalities.
           The rest of the force rows, and the force generators T, change only with the
           structure's revision (:meth:`refresh`).
        3. The equation of motion M dv - J_c^T f = S^T tau - h, as the matrix [M, -J_c^T] and h
           (less the measured wrenches' J^T w). Its unactuated rows are the level-0 equality
           "base-dynamics". Its actuated rows are the torque map tau = [M_a, -J_a^T] x + h_a.
        4. The tasks. Motion tasks fill their rows on the dv columns, force tasks on their force
           columns. An actuation task fills a constraint on tau, mapped onto x through the torque map.

        The workspace is at the structure's revision (:meth:`refresh`).

        Args:
            t: Time [s].
            q: Configuration, checked.
            v: Velocity, checked.
            data: Pinocchio's data, filled at (q, v) by ``robot.compute_all_terms``.
        """
        robot = self.robot
        contacts = self._contact_slots
        slot: Any  # a _ContactSlot, then a _TaskSlot

        # 1. the contacts' motion rows
        for slot in contacts:
            slot.contact.motion_task.compute_into(t, q, v, data, slot.motion)

        # 2. the ramps' caps (a cap lifted moves the revision: refresh copies f_max back)
        caps = self.structure.force_caps
        if caps:
            for name, cap in caps.items():
                slot = self._contacts[name]
                slot.force.upper_bound[-1] = min(slot.contact.max_normal_force, cap)

        # 3. the equation of motion [M, -J_c^T] x = S^T tau - h
        if contacts:
            contact_motion_t = self._contact_motion_t
            if contact_motion_t is None:
                contact_motion_t = np.concatenate([s.motion.matrix for s in contacts]).T
            np.matmul(contact_motion_t, self._minus_generators, out=self._dynamics_forces)
        robot.mass(data, out=self._dynamics_mass)
        h = robot.nonlinear_effects(data, out=self.h)
        for measured in self.structure.measured.values():
            measured.advance(t)  # a scheduled wrench takes its value at t
            h -= measured.compute_joint_torques(data)
        base = self._base
        if base is not None:
            base.matrix[...] = self._dynamics_base
            np.negative(self._h_base, out=base.vector)

        # 4. the tasks
        for slot in self._motion_tasks:
            slot.task.compute_into(t, q, v, data, slot.out)
        for slot in self._force_tasks:
            slot.task.compute_into(t, q, v, data, slot.out)
        tau_map, h_a = self.tau_map, self.h_a
        for slot in self._actuation_tasks:
            task, c, target = slot.task, slot.out, slot.target
            task.compute_into(t, q, v, data, c)
            joints = task.selected_joints
            if joints is None:
                np.matmul(c.matrix, tau_map, out=target.matrix)
                offset = c.matrix.dot(h_a)
            else:  # the matrix selects joints: their rows of the torque map
                target.matrix[...] = tau_map[joints]
                offset = h_a[joints]
            if c.kind is Kind.EQUALITY:
                np.subtract(c.vector, offset, out=target.vector)
            else:
                np.subtract(c.lower_bound, offset, out=target.lower_bound)
                np.subtract(c.upper_bound, offset, out=target.upper_bound)

    # --------------------------------------------------------------------------- read-outs
    def problem(self) -> HqpData:
        """The problem of the last step: read-only views of this workspace's buffers, with its
        identity (this layout, this step) and the rows the dense QP builder forms its QP from."""
        step = _new_id(ProblemId, (self.layout, self.clock.step))
        return HqpData._view(self._hqp_levels, self.n, self.nv, step, self.clock, self._dense)


@dataclass(frozen=True)
class _DenseRows:
    """A workspace's rows of levels 0 and 1 as the dense QP builder laid them out."""

    hard: HardRows
    cost: CostRows
    constraints: Any  # read-only views of the hard rows (HardRows.read_only)
    rows: Any

    def dense_qp(self) -> DenseQp:
        """The QP of levels 0 and 1: its constraints read-only views (only the workspace writes
        them), H and g formed anew by this call (the backends want them writable), all valid
        until the workspace's next step."""
        H = self.cost.cost(self.hard.g)
        return DenseQp(H, self.hard.g, self.constraints, self.cost.tail_inverse, self.rows)
