"""TSID's InverseDynamicsFormulationAccForce (bindings/python/formulations/formulation.hpp) over
:class:`tsid_py.InverseDynamicsFormulation`."""

from __future__ import annotations

import contextlib

import numpy as np
import pinocchio as pin

from tsid_py.compat._wrap import Wrapper, deprecated, inner
from tsid_py.compat.constraints import HQPData
from tsid_py.compat.robot import RobotWrapper
from tsid_py.compat.solvers import HQPOutput
from tsid_py.errors import SolverFailedError
from tsid_py.formulation import InverseDynamicsFormulation


class InverseDynamicsFormulationAccForce(Wrapper):
    """``(name, robot, verbose)``. ``data()`` returns a copy of the formulation's Pinocchio Data,
    as TSID's (tsid_py: ``formulation.data``, the Data itself). The ``add*``, ``remove*`` and
    ``update*`` methods return True, as TSID's; a transition duration may be left out (0).
    In ``addRigidContact(contact, w_force, w_motion, priority)`` the priority is a bool in TSID's
    bindings: 0 makes the motion constraint hard, anything else a cost of level 1.

    As TSID's, the getters keep the solution they read (its ``decodeSolution``), and a ramped
    ``removeRigidContact`` starts from the contact's normal force in it (tsid_py's
    ``remove_rigid_contact`` takes that force as an argument instead).
    """

    _decoded: object = None  # the last solution a getter read

    _names = {
        "nVar": "n_var",
        "nEq": "n_eq",
        "nIn": "n_in",
    }

    def __init__(self, name: str, robot: RobotWrapper, verbose: bool = False) -> None:
        self._inner = InverseDynamicsFormulation(name, inner(robot))

    def data(self) -> pin.Data:
        return self._inner.data.copy()

    def addMotionTask(
        self, task: object, weight: float, priorityLevel: int, transition_duration: float = 0.0
    ) -> bool:
        self._inner.add_motion_task(inner(task), weight, priorityLevel, transition_duration)
        return True

    def addForceTask(
        self, task: object, weight: float, priorityLevel: int, transition_duration: float = 0.0
    ) -> bool:
        self._inner.add_force_task(inner(task), weight, priorityLevel, transition_duration)
        return True

    def addActuationTask(
        self,
        task: object,
        weight: float,
        priorityLevel: int,
        transition_duration: float = 0.0,
    ) -> bool:
        self._inner.add_actuation_task(inner(task), weight, priorityLevel, transition_duration)
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
        self._inner.remove_task(task_name, duration)
        return True

    def removeRigidContact(self, contact_name: str, duration: float = 0.0) -> bool:
        form, normal_force = self._inner, None
        contact = form.contacts.get(contact_name)
        if contact is not None:  # TSID's start: the decoded solution's force, else f_max
            normal_force = contact.max_normal_force
        if contact is not None and self._decoded is not None:
            # the decoded solution's force, if it is of the current layout (else f_max)
            with contextlib.suppress(SolverFailedError):
                normal_force = contact.get_normal_force(form.get_contact_force(contact_name, self._decoded))
        form.remove_rigid_contact(contact_name, duration, normal_force)
        return True

    def computeProblemData(self, time: float, q: object, v: object) -> HQPData:
        return HQPData._wrap(self._inner.compute_problem_data(time, q, v))

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
