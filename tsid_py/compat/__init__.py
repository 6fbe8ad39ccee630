"""TSID's Python API over tsid_py: a TSID script runs with ``import tsid_py.compat as tsid``.

The names, constructors and conventions are those of TSID's bindings (stack-of-tasks/tsid,
``include/tsid/bindings/python``): camelCase methods, gains read as properties and set with
``setKp``, ``robot.model()`` and ``formulation.data()`` returning copies, ``TrajectorySample(n)``
a zero sample of size n. Each compat object translates onto a tsid_py object and has no control
logic of its own; docs/migrating-from-tsid.md maps every name onto tsid_py's.
"""

from tsid_py.compat._wrap import TsidDeprecationWarning
from tsid_py.compat.constraints import (
    ConstraintBound,
    ConstraintEquality,
    ConstraintInequality,
    ConstraintLevel,
    HQPData,
)
from tsid_py.compat.contacts import Contact6d, ContactPoint, ContactTwoFramePositions, Measured6dWrench
from tsid_py.compat.formulation import InverseDynamicsFormulationAccForce
from tsid_py.compat.robot import FIXED_BASE_SYSTEM, FLOATING_BASE_SYSTEM, RobotWrapper, RootJointType
from tsid_py.compat.solvers import HQPOutput, SolverHQuadProg, SolverHQuadProgFast
from tsid_py.compat.tasks import (
    TaskActuationBounds,
    TaskActuationEquality,
    TaskAMEquality,
    TaskComEquality,
    TaskContactForceEquality,
    TaskCopEquality,
    TaskJointBounds,
    TaskJointPosture,
    TaskJointPosVelAccBounds,
    TaskSE3Equality,
    TaskTwoFramesEquality,
)
from tsid_py.compat.trajectories import (
    SE3ToVector,
    TrajectoryEuclidianConstant,
    TrajectorySample,
    TrajectorySE3Constant,
    vectorToSE3,
)

Measured6Dwrench = Measured6dWrench  # the C++ class name

__all__ = [
    "FIXED_BASE_SYSTEM",
    "FLOATING_BASE_SYSTEM",
    "ConstraintBound",
    "ConstraintEquality",
    "ConstraintInequality",
    "ConstraintLevel",
    "Contact6d",
    "ContactPoint",
    "ContactTwoFramePositions",
    "HQPData",
    "HQPOutput",
    "InverseDynamicsFormulationAccForce",
    "Measured6Dwrench",
    "Measured6dWrench",
    "RobotWrapper",
    "RootJointType",
    "SE3ToVector",
    "SolverHQuadProg",
    "SolverHQuadProgFast",
    "TaskAMEquality",
    "TaskActuationBounds",
    "TaskActuationEquality",
    "TaskComEquality",
    "TaskContactForceEquality",
    "TaskCopEquality",
    "TaskJointBounds",
    "TaskJointPosVelAccBounds",
    "TaskJointPosture",
    "TaskSE3Equality",
    "TaskTwoFramesEquality",
    "TrajectoryEuclidianConstant",
    "TrajectorySE3Constant",
    "TrajectorySample",
    "TsidDeprecationWarning",
    "vectorToSE3",
]
