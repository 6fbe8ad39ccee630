"""tsid_py: task-space inverse dynamics for robots, in Python, on Pinocchio."""

import warnings

from tsid_py import errors
from tsid_py.constraints import ConstraintBound, ConstraintEquality, ConstraintInequality
from tsid_py.contacts import (
    Contact6d,
    ContactBase,
    ContactLine,
    ContactPoint,
    ContactTwoFramePositions,
    ContactWrench,
    Measured3dForce,
    Measured6dWrench,
    PrescribedWrench,
)
from tsid_py.errors import TsidError
from tsid_py.formulation import InverseDynamicsFormulation
from tsid_py.hqp import HqpData, WeightedConstraint
from tsid_py.integration import integrate
from tsid_py.robot_specs import Robot, available_robots, load_robot
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.solvers import (
    HqpOutput,
    QPStatus,
    Solver,
    SolverDAQP,
    SolverHQuadProg,
    installed_backends,
    make_solver,
)
from tsid_py.tasks import (
    TaskActuation,
    TaskActuationBounds,
    TaskActuationEquality,
    TaskAMEquality,
    TaskBase,
    TaskCapturePointInequality,
    TaskComEquality,
    TaskContactForce,
    TaskContactForceEquality,
    TaskCopEquality,
    TaskJointBounds,
    TaskJointCoupling,
    TaskJointPosture,
    TaskJointPosVelAccBounds,
    TaskMotion,
    TaskMotionTracking,
    TaskMotorEnvelope,
    TaskSE3Equality,
    TaskSelfCollision,
    TaskTwoFramesEquality,
)
from tsid_py.threads import limit_blas_threads, step_blas_threads
from tsid_py.trajectories import (
    TrajectoryEuclidianConstant,
    TrajectoryEuclidianMinJerk,
    TrajectoryEuclidianSinusoid,
    TrajectorySample,
    TrajectorySE3Constant,
)

__version__ = "0.2.0"  # the one place the version is written (pyproject reads it)

__all__ = [  # sorted; the exceptions live in tsid_py.errors, their root TsidError is here
    "ConstraintBound",
    "ConstraintEquality",
    "ConstraintInequality",
    "Contact6d",
    "ContactBase",
    "ContactLine",
    "ContactPoint",
    "ContactTwoFramePositions",
    "ContactWrench",
    "HqpData",
    "HqpOutput",
    "InverseDynamicsFormulation",
    "Measured3dForce",
    "Measured6dWrench",
    "PrescribedWrench",
    "QPStatus",
    "Robot",
    "RobotWrapper",
    "Solver",
    "SolverDAQP",
    "SolverHQuadProg",
    "TaskAMEquality",
    "TaskActuation",
    "TaskActuationBounds",
    "TaskActuationEquality",
    "TaskBase",
    "TaskCapturePointInequality",
    "TaskComEquality",
    "TaskContactForce",
    "TaskContactForceEquality",
    "TaskCopEquality",
    "TaskJointBounds",
    "TaskJointCoupling",
    "TaskJointPosVelAccBounds",
    "TaskJointPosture",
    "TaskMotion",
    "TaskMotionTracking",
    "TaskMotorEnvelope",
    "TaskSE3Equality",
    "TaskSelfCollision",
    "TaskTwoFramesEquality",
    "TrajectoryEuclidianConstant",
    "TrajectoryEuclidianMinJerk",
    "TrajectoryEuclidianSinusoid",
    "TrajectorySE3Constant",
    "TrajectorySample",
    "TsidError",
    "WeightedConstraint",
    "available_robots",
    "installed_backends",
    "integrate",
    "limit_blas_threads",
    "load_robot",
    "make_solver",
    "step_blas_threads",
    "__version__",
]


# Up to 0.2.0 the package also exported every exception: those names still resolve, with a warning.
_MOVED_TO_ERRORS = frozenset(
    {
        "DimensionError",
        "DuplicateNameError",
        "InvalidParameterError",
        "MissingFileError",
        "NonFiniteError",
        "OutputError",
        "RobotSpecError",
        "SolverFailedError",
        "StaleProblemError",
        "UnknownAttributeError",
        "UnknownFrameError",
        "UnknownNameError",
        "UnsetReferenceError",
        "UnsupportedProblemError",
    }
)


def __getattr__(name: str) -> object:
    if name in _MOVED_TO_ERRORS:
        warnings.warn(
            f"tsid_py.{name} is deprecated and will be removed: use tsid_py.errors.{name}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(errors, name)
    raise AttributeError(f"module 'tsid_py' has no attribute {name!r}")
