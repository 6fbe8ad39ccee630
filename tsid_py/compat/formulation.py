"""TSID's InverseDynamicsFormulationAccForce (bindings/python/formulations/formulation.hpp) over
:class:`tsid_py.InverseDynamicsFormulation`."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from tsid_py.compat._wrap import Wrapper, deprecated, inner
from tsid_py.compat.constraints import HQPData
from tsid_py.compat.robot import RobotWrapper
from tsid_py.compat.solvers import HQPOutput
from tsid_py.contacts import ContactBase
from tsid_py.errors import InvalidParameterError, SolverFailedError
from tsid_py.formulation import InverseDynamicsFormulation
from tsid_py.problem.structure import CAP_MARGIN
from tsid_py.validation import as_scalar, lookup


@dataclass
class _Unloading:
    """TSID's ContactTransitionInfo: the contact's f_max [N] goes from ``f_start`` at ``t_start``
    to ``f_end`` at ``t_end`` [s]."""

    contact: ContactBase
    t_start: float
    t_end: float
    f_start: float
    f_end: float


def _ignored_duration(duration: float) -> None:
    """A transition duration TSID checks (>= 0, else a ValueError) and then ignores."""
    as_scalar("transition_duration", duration, minimum=0.0)


class InverseDynamicsFormulationAccForce(Wrapper):
    """``(name, robot, verbose)``. ``data()`` returns a copy of the formulation's Pinocchio Data,
    as TSID's (tsid_py: ``formulation.data``, the Data itself). The ``add*``, ``remove*`` and
    ``update*`` methods return True, as TSID's. In ``addRigidContact(contact, w_force, w_motion,
    priority)`` the priority is a bool in TSID's bindings: 0 makes the motion constraint hard,
    anything else a cost of level 1.

    TSID accepts and ignores the transition durations of ``addMotionTask``, ``addForceTask``,
    ``addActuationTask`` and ``removeTask``: so does this class (a negative one raises, as in
    TSID's ``add*``); the task comes in or goes out at once, at any level.

    ``removeRigidContact(name, duration)`` ramps as TSID's: the contact's f_max goes linearly from
    its normal force in the last solution a getter read (TSID's ``decodeSolution``; f_max without
    one) at the time of the last ``computeProblemData`` to f_min + 1e-3 N at that time + duration,
    so the next problem already has a lower f_max; the contact leaves at the first problem past the
    end, and keeps its lowered f_max. (tsid_py's ramps start at the first problem after the call,
    and cap the force without changing the contact: docs/migrating-from-tsid.md.)
    """

    _decoded: object = None  # the last solution a getter read

    _names = {
        "nVar": "n_var",
        "nEq": "n_eq",
        "nIn": "n_in",
    }

    def __init__(self, name: str, robot: RobotWrapper, verbose: bool = False) -> None:
        self._inner = InverseDynamicsFormulation(name, inner(robot))
        self._unloading: dict[str, _Unloading] = {}  # TSID's contact transitions, in their order

    def data(self) -> pin.Data:
        return self._inner.data.copy()

    def addMotionTask(
        self, task: object, weight: float, priorityLevel: int, transition_duration: float = 0.0
    ) -> bool:
        _ignored_duration(transition_duration)
        self._inner.add_motion_task(inner(task), weight, priorityLevel)
        return True

    def addForceTask(
        self, task: object, weight: float, priorityLevel: int, transition_duration: float = 0.0
    ) -> bool:
        _ignored_duration(transition_duration)
        self._inner.add_force_task(inner(task), weight, priorityLevel)
        return True

    def addActuationTask(
        self,
        task: object,
        weight: float,
        priorityLevel: int,
        transition_duration: float = 0.0,
    ) -> bool:
        _ignored_duration(transition_duration)
        self._inner.add_actuation_task(inner(task), weight, priorityLevel)
        return True

    def addRigidContact(
        self,
        contact: object,
        force_reg_weight: float | None = None,
        motion_weight: float = 1.0,
        priority_level: int = 0,
    ) -> bool:
        if force_reg_weight is None:
            deprecated("addRigidContact(contact)", "addRigidContact(contact, force_reg_weight)")
            force_reg_weight = 1e-5  # TSID's default of the deprecated form
        self._inner.add_rigid_contact(
            inner(contact), force_reg_weight, motion_weight, int(bool(priority_level))
        )
        return True

    def addMeasuredForce(self, measured_force: object) -> bool:
        self._inner.add_measured_force(inner(measured_force))
        return True

    def updateTaskWeight(self, task_name: str, weight: float) -> bool:
        self._inner.update_task_weight(task_name, weight)
        return True

    def updateRigidContactWeights(
        self, contact_name: str, force_regularization_weight: float, motion_weight: float | None = None
    ) -> bool:
        self._inner.update_rigid_contact_weights(contact_name, force_regularization_weight, motion_weight)
        return True

    def removeTask(self, task_name: str, duration: float = 0.0) -> bool:
        _ignored_duration(duration)
        self._inner.remove_task(task_name)
        return True

    def removeRigidContact(self, contact_name: str, duration: float = 0.0) -> bool:
        form = self._inner
        duration = as_scalar("transition_duration", duration, minimum=0.0)
        if duration == 0.0:
            self._unloading.pop(contact_name, None)
            form.remove_rigid_contact(contact_name)
            return True
        contact = lookup("contact", contact_name, form.contacts)
        if not contact.unilateral:
            raise InvalidParameterError(
                f"{contact_name!r} is bilateral: it has no normal force to ramp; remove it without a duration"
            )
        if contact_name in self._unloading:
            raise InvalidParameterError(
                f"{contact_name!r} is already being ramped out of the problem; remove it now (duration 0) "
                "or wait until it has left"
            )
        normal_force = contact.max_normal_force  # TSID's start: the decoded solution's force, else f_max
        if self._decoded is not None:
            # the decoded solution's force, if it is of the current layout (else f_max)
            with contextlib.suppress(SolverFailedError):
                normal_force = contact.get_normal_force(form.get_contact_force(contact_name, self._decoded))
        f_start = max(normal_force, contact.min_normal_force)  # (below f_min, TSID's setter would throw)
        self._unloading[contact_name] = _Unloading(
            contact, form.t, form.t + duration, f_start, contact.min_normal_force + CAP_MARGIN
        )
        return True

    def computeProblemData(self, time: float, q: object, v: object) -> HQPData:
        time = as_scalar("t", time)
        self._unload(time)
        return HQPData._wrap(self._inner.compute_problem_data(time, q, v))

    def _unload(self, time: float) -> None:
        """TSID's contact transitions at ``time`` [s]: each unloading contact's f_max takes its ramp's
        value, or, past the ramp's end, the contact leaves (one a step, as TSID's loop)."""
        for name, ramp in list(self._unloading.items()):
            if time <= ramp.t_end:
                alpha = (time - ramp.t_start) / (ramp.t_end - ramp.t_start)
                ramp.contact.set_max_normal_force(ramp.f_start + alpha * (ramp.f_end - ramp.f_start))
            else:
                del self._unloading[name]
                self._inner.remove_rigid_contact(name)
                break

    def _decode(self, sol: HQPOutput) -> object:
        """The tsid_py solution of ``sol``, kept (after the formulation read it) as TSID keeps it."""
        self._decoded = inner(sol)
        return self._decoded

    def getActuatorForces(self, sol: HQPOutput) -> np.ndarray:
        tau = self._inner.get_actuator_forces(inner(sol))
        self._decode(sol)
        return tau

    def getAccelerations(self, sol: HQPOutput) -> np.ndarray:
        dv = self._inner.get_accelerations(inner(sol))
        self._decode(sol)
        return dv

    def getContactForces(self, sol: HQPOutput) -> np.ndarray:
        forces = self._inner.get_contact_forces(inner(sol))
        self._decode(sol)
        return forces

    def getContactForce(self, name: str, sol: HQPOutput) -> np.ndarray:
        force = self._inner.get_contact_force(name, inner(sol))
        self._decode(sol)
        return force

    def checkContact(self, name: str, sol: HQPOutput) -> bool:
        """Whether the solution has force variables for this contact."""
        return self._inner.check_contact(name, inner(sol))
