"""tsid_py: task-space inverse dynamics for robots, in Python, on Pinocchio."""

from tsid_py.constraints import ConstraintBound, ConstraintEquality, ConstraintInequality
from tsid_py.contacts import (
    Contact6d,
    ContactBase,
    ContactPoint,
    ContactTwoFramePositions,
    Measured3dForce,
    Measured6dWrench,
)
from tsid_py.errors import (
    DimensionError,
    DuplicateNameError,
    InvalidParameterError,
    NonFiniteError,
    RobotSpecError,
    SolverFailedError,
    TsidError,
    UnknownFrameError,
    UnknownNameError,
    UnsupportedProblemError,
)
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
    TaskActuationBounds,
    TaskActuationEquality,
    TaskAMEquality,
    TaskCapturePointInequality,
    TaskComEquality,
    TaskContactForceEquality,
    TaskCopEquality,
    TaskJointBounds,
    TaskJointPosture,
    TaskJointPosVelAccBounds,
    TaskSE3Equality,
    TaskTwoFramesEquality,
)
from tsid_py.threads import limit_blas_threads
from tsid_py.trajectories import (
    TrajectoryEuclidianConstant,
    TrajectoryEuclidianMinJerk,
    TrajectoryEuclidianSinusoid,
    TrajectorySample,
    TrajectorySE3Constant,
)

__version__ = "0.1.0"

__all__ = [
    "ConstraintBound",
    "ConstraintEquality",
    "ConstraintInequality",
    "Contact6d",
    "ContactBase",
    "ContactPoint",
    "ContactTwoFramePositions",
    "DimensionError",
    "DuplicateNameError",
    "HqpData",
    "HqpOutput",
    "InvalidParameterError",
    "InverseDynamicsFormulation",
    "Measured3dForce",
    "Measured6dWrench",
    "NonFiniteError",
    "QPStatus",
    "Robot",
    "RobotSpecError",
    "RobotWrapper",
    "Solver",
    "SolverDAQP",
    "SolverFailedError",
    "SolverHQuadProg",
    "TaskAMEquality",
    "TaskActuationBounds",
    "TaskActuationEquality",
    "TaskCapturePointInequality",
    "TaskComEquality",
    "TaskContactForceEquality",
    "TaskCopEquality",
    "TaskJointBounds",
    "TaskJointPosVelAccBounds",
    "TaskJointPosture",
    "TaskSE3Equality",
    "TaskTwoFramesEquality",
    "TrajectoryEuclidianConstant",
    "TrajectoryEuclidianMinJerk",
    "TrajectoryEuclidianSinusoid",
    "TrajectorySE3Constant",
    "TrajectorySample",
    "TsidError",
    "UnknownFrameError",
    "UnknownNameError",
    "UnsupportedProblemError",
    "WeightedConstraint",
    "__version__",
    "available_robots",
    "installed_backends",
    "integrate",
    "limit_blas_threads",
    "load_robot",
    "make_solver",
]
