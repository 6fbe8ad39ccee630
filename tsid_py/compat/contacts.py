"""TSID's contacts and measured wrench (bindings/python/contacts/*.hpp) over tsid_py's."""

from __future__ import annotations

from typing import Any

import pinocchio as pin

from tsid_py import contacts as _main
from tsid_py.compat._wrap import Set, Wrapper, deprecated, inner
from tsid_py.compat.constraints import _Constraint
from tsid_py.compat.robot import RobotWrapper

_CONTACT = {
    "name": "name",
    "n_force": "n_force",
    "Kp": "kp",
    "Kd": "kd",
    "setKp": Set("kp"),
    "setKd": Set("kd"),
    "getForceGeneratorMatrix": "force_generator",
    "getMinNormalForce": "min_normal_force",
    "getMaxNormalForce": "max_normal_force",
    "getNormalForce": "get_normal_force",
    "setContactNormal": "set_contact_normal",
    "setFrictionCoefficient": "set_friction_coefficient",
    "setMinNormalForce": "set_min_normal_force",
    "setMaxNormalForce": "set_max_normal_force",
    "setReference": "set_reference",
    "setForceReference": "set_force_reference",
    "setRegularizationTaskWeightVector": "set_regularization_task_weight_vector",
}


class _Contact(Wrapper):
    """The constraints a contact brings, computed (``computeMotionTask``, a new constraint) or as
    they stand (the force inequality and regularization: copies)."""

    _names = _CONTACT

    @property
    def n_motion(self) -> int:
        """Rows of the motion constraint (tsid_py: ``contact.motion_task.dim``)."""
        return self._inner.motion_task.dim

    def computeMotionTask(self, t: float, q: object, v: object, data: pin.Data) -> Any:
        return _Constraint._of(self._inner.compute_motion_task(t, q, v, data))

    def computeForceTask(self, t: float, q: object, v: object, data: pin.Data) -> Any:
        return _Constraint._of(self._inner.force_constraint)

    def computeForceRegularizationTask(self, t: float, q: object, v: object, data: pin.Data) -> Any:
        return _Constraint._of(self._inner.force_regularization)


class Contact6d(_Contact):
    """``(name, robot, frame, contactPoints (3x4), contactNormal, mu, fMin, fMax)``; TSID's
    deprecated 9th argument (the force-regularization weight, now given to ``addRigidContact``)
    is accepted with a warning and unused, as in TSID."""

    _names = {**_CONTACT, "setContactPoints": "set_contact_points"}

    def __init__(
        self,
        name: str,
        robot: RobotWrapper,
        frame: str,
        contact_points: object,
        contact_normal: object,
        mu: float,
        f_min: float,
        f_max: float,
        *deprecated_weight: float,
    ) -> None:
        if deprecated_weight:
            deprecated("Contact6d(..., forceRegWeight)", "addRigidContact(contact, forceRegWeight)")
        self._inner = _main.Contact6d(
            name, inner(robot), frame, contact_points, contact_normal, mu, f_min, f_max
        )


class ContactPoint(_Contact):
    """``(name, robot, frame, contactNormal, mu, fMin, fMax)``; Kp and Kd are 3-vectors."""

    _names = {**_CONTACT, "useLocalFrame": "use_local_frame"}

    def __init__(
        self,
        name: str,
        robot: RobotWrapper,
        frame: str,
        contact_normal: object,
        mu: float,
        f_min: float,
        f_max: float,
    ) -> None:
        self._inner = _main.ContactPoint(name, inner(robot), frame, contact_normal, mu, f_min, f_max)


class ContactTwoFramePositions(_Contact):
    """``(name, robot, frame1, frame2, minForce, maxForce)``."""

    def __init__(
        self, name: str, robot: RobotWrapper, frame1: str, frame2: str, f_min: float, f_max: float
    ) -> None:
        self._inner = _main.ContactTwoFramePositions(name, inner(robot), frame1, frame2, f_min, f_max)


class Measured6dWrench(Wrapper):
    """``(name, robot, frame)``: a measured wrench added to the dynamics (``addMeasuredForce``)."""

    _names = {
        "name": "name",
        "setMeasuredContactForce": "set_measured_contact_force",
        "measuredContactForce": "measured_force",
        "computeJointTorques": "compute_joint_torques",
        "useLocalFrame": "use_local_frame",
    }

    def __init__(self, name: str, robot: RobotWrapper, frame: str) -> None:
        self._inner = _main.Measured6dWrench(name, inner(robot), frame)
