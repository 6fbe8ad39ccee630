"""TSID's tasks (bindings/python/tasks/*.hpp) over tsid_py's.

TSID's gains are read as properties and set with methods (``task.Kp``, ``task.setKp(k)``);
tsid_py's are one property (``task.kp``, ``task.kp = k``). ``getDesiredAcceleration`` is a
property in TSID, as are ``position_error`` and ``velocity_error``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin

from tsid_py import tasks as _main
from tsid_py.compat._wrap import Getter, Set, Wrapper, inner
from tsid_py.compat.constraints import _Constraint
from tsid_py.compat.robot import RobotWrapper
from tsid_py.compat.trajectories import TrajectorySample
from tsid_py.validation import as_gain, as_vector

_TASK: dict[str, Any] = {"name": "name", "dim": "dim"}  # TSID name -> tsid_py name, Set, Call or Getter
_MASK = {"mask": "mask", "setMask": Set("mask")}
_GAINS = {"Kp": "kp", "Kd": "kd", "setKp": Set("kp"), "setKd": Set("kd")}
_TRACKING = {
    **_TASK,
    **_MASK,
    **_GAINS,
    "position_error": "position_error",
    "velocity_error": "velocity_error",
    "getDesiredAcceleration": "desired_acceleration",
    "getAcceleration": "get_acceleration",
}


class _Task(Wrapper):
    """``compute(t, q, v, data)`` returns the constraint (a new one), ``getConstraint()`` the last one."""

    _names = _TASK

    def compute(self, t: float, q: object, v: object, data: pin.Data) -> Any:
        return _Constraint._of(self._inner.compute(t, q, v, data))

    def getConstraint(self) -> Any:
        return _Constraint._of(self._inner.constraint)


class _Tracking(_Task):
    """A task on a reference sample: ``setReference(sample)``; ``position_ref`` and ``velocity_ref``
    read the reference (tsid_py: ``task.reference``, a sample)."""

    _names = _TRACKING

    def setReference(self, ref: TrajectorySample) -> None:
        self._inner.set_reference(inner(ref))

    @property
    def position_ref(self) -> np.ndarray:
        return np.array(self._inner.reference.pos)

    @property
    def velocity_ref(self) -> np.ndarray:
        return np.array(self._inner.reference.vel)


class TaskComEquality(_Tracking):
    def __init__(self, name: str, robot: RobotWrapper) -> None:
        self._inner = _main.TaskComEquality(name, inner(robot))


class TaskJointPosture(_Tracking):
    """The reference has nq_actuated entries and na derivatives (``TrajectorySample(nq_a, na)``)."""

    _names = {k: v for k, v in _TRACKING.items() if k != "getAcceleration"}

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        self._inner = _main.TaskJointPosture(name, inner(robot))

    def getAcceleration(self, dv: object) -> np.ndarray:
        """S dv, the accelerations of the masked joints (TSID: the constraint matrix times dv;
        tsid_py's task has no ``get_acceleration``)."""
        return self._inner.constraint.matrix.dot(np.asarray(dv, dtype=float).reshape(-1))


class TaskSE3Equality(_Tracking):
    """``(name, robot, frame_name)``; the reference is a 12-vector placement sample
    (``TrajectorySE3Constant.computeNext()``) or a ``pin.SE3``."""

    _names = {**_TRACKING, "useLocalFrame": "use_local_frame", "frame_id": "frame_id"}

    def __init__(self, name: str, robot: RobotWrapper, frame_name: str) -> None:
        self._inner = _main.TaskSE3Equality(name, inner(robot), frame_name)


class TaskTwoFramesEquality(_Task):
    _names = {
        **_TRACKING,
        "frame_id1": "frame_id1",
        "frame_id2": "frame_id2",
    }

    def __init__(self, name: str, robot: RobotWrapper, frame1: str, frame2: str) -> None:
        self._inner = _main.TaskTwoFramesEquality(name, inner(robot), frame1, frame2)


class TaskAMEquality(_Task):
    """Angular momentum: ``momentum_error``, ``getDesiredMomentumDerivative`` (a property),
    ``getdMomentum(dv)``. TSID's task keeps a Kd it does not use (task-angular-momentum-equality.cpp);
    tsid_py's has no kd, so this wrapper keeps it."""

    _names = {
        **_TASK,
        "Kp": "kp",
        "setKp": Set("kp"),
        "momentum_error": "momentum_error",
        "getDesiredMomentumDerivative": "desired_momentum_rate",
        "getdMomentum": "get_momentum_rate",
    }

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        self._inner = _main.TaskAMEquality(name, inner(robot))
        self._kd = np.zeros(3)

    def setReference(self, ref: TrajectorySample) -> None:
        self._inner.set_reference(inner(ref))

    @property
    def Kd(self) -> np.ndarray:
        return self._kd.copy()

    def setKd(self, Kd: object) -> None:
        self._kd = as_gain("Kd", Kd, 3)

    @property
    def momentum_ref(self) -> np.ndarray:
        return np.array(self._inner.reference.pos)

    @property
    def dmomentum_ref(self) -> np.ndarray:
        return np.array(self._inner.reference.vel)


class TaskCopEquality(_Task):
    """``setReference(cop)`` takes a 3-vector (world), not a sample."""

    _names = {**_TASK, "setReference": "set_reference", "setContactNormal": "set_contact_normal"}

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        self._inner = _main.TaskCopEquality(name, inner(robot))


class TaskContactForceEquality(_Task):
    """``(name, robot, dt, contact)``: track a wrench on one contact."""

    _names = {
        **_TASK,
        **_GAINS,
        "Ki": "ki",
        "setKi": Set("ki"),
        "getLeakRate": "leak_rate",
        "setLeakRate": "set_leak_rate",
    }

    def __init__(self, name: str, robot: RobotWrapper, dt: float, contact: object) -> None:
        self._inner = _main.TaskContactForceEquality(name, inner(robot), dt, inner(contact))

    def setReference(self, ref: TrajectorySample) -> None:
        self._inner.set_reference(inner(ref))

    def setExternalForce(self, f_ext: TrajectorySample) -> None:
        self._inner.set_external_force(inner(f_ext))


class TaskActuationBounds(_Task):
    """``setBounds(tau_min, tau_max)`` takes one bound per masked joint (size ``dim``), as TSID's;
    ``getLowerBounds`` / ``getUpperBounds`` are properties of that size (tsid_py's task takes and
    gives one per actuated joint). A joint keeps its bounds across masks (no bound until set),
    where TSID's ``setMask`` sets every bound to 0 and a new task has 0 bounds."""

    _names = {**_TASK, **_MASK}

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        self._inner = _main.TaskActuationBounds(name, inner(robot))

    def setBounds(self, lower: object, upper: object) -> None:
        task = self._inner
        masked = task.mask != 0
        full_lower, full_upper = np.array(task.lower_bound), np.array(task.upper_bound)
        full_lower[masked] = as_vector(
            "lower torque bounds (one per masked joint)", lower, task.dim, finite=False
        )
        full_upper[masked] = as_vector(
            "upper torque bounds (one per masked joint)", upper, task.dim, finite=False
        )
        task.set_bounds(full_lower, full_upper)

    @property
    def getLowerBounds(self) -> np.ndarray:
        """tau_min of the masked joints [N m] (a copy)."""
        return self._inner.lower_bound[self._inner.mask != 0]

    @property
    def getUpperBounds(self) -> np.ndarray:
        """tau_max of the masked joints [N m] (a copy)."""
        return self._inner.upper_bound[self._inner.mask != 0]


class TaskActuationEquality(_Task):
    _names = {
        **_TASK,
        **_MASK,
        "setReference": "set_reference",
        "getReference": Getter("reference"),
        "setWeightVector": "set_weight_vector",
        "getWeightVector": Getter("weights"),
    }

    def __init__(self, name: str, robot: RobotWrapper) -> None:
        self._inner = _main.TaskActuationEquality(name, inner(robot))


class TaskJointBounds(_Task):
    """``(name, robot, dt)``: joint velocity and acceleration bounds."""

    _names = {
        **_TASK,
        "setTimeStep": "set_time_step",
        "setVelocityBounds": "set_velocity_bounds",
        "setAccelerationBounds": "set_acceleration_bounds",
    }

    def __init__(self, name: str, robot: RobotWrapper, dt: float) -> None:
        self._inner = _main.TaskJointBounds(name, inner(robot), dt)


class TaskJointPosVelAccBounds(_Task):
    """``(name, robot, dt, verbose=True)``; ``verbose`` and ``setVerbose`` are accepted and unused."""

    _names = {
        **_TASK,
        **_MASK,
        "setTimeStep": "set_time_step",
        "setPositionBounds": "set_position_bounds",
        "setVelocityBounds": "set_velocity_bounds",
        "setAccelerationBounds": "set_acceleration_bounds",
        "setImposeBounds": "set_impose_bounds",
        "getPositionLowerBounds": "q_min",
        "getPositionUpperBounds": "q_max",
        "getVelocityBounds": "v_max",
        "getAccelerationBounds": "a_max",
    }

    def __init__(self, name: str, robot: RobotWrapper, dt: float, verbose: bool = True) -> None:
        self._inner = _main.TaskJointPosVelAccBounds(name, inner(robot), dt)

    def setVerbose(self, verbose: bool) -> None:
        """Accepted and unused (TSID prints diagnostics)."""
