"""tsid_py: task-space inverse dynamics for robots, in Python, on Pinocchio.

The package exports what a controller is written with: the formulation, the robot, the concrete
tasks and contacts, the trajectories and the solvers. The rest is in its module (the constraints
in :mod:`tsid_py.constraints`, the exceptions in :mod:`tsid_py.errors`, ...); the names this
package exported up to 0.2.0 still resolve, with a DeprecationWarning naming their home.
"""

from tsid_py.contacts import Contact6d, ContactLine, ContactPoint, ContactTwoFramePositions, ContactWrench
from tsid_py.deprecation import moved_names
from tsid_py.errors import TsidError
from tsid_py.formulation import InverseDynamicsFormulation
from tsid_py.integration import integrate
from tsid_py.robot_specs import available_robots, load_robot
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.solvers import Solver, SolverHQuadProg, make_solver
from tsid_py.tasks import (
    TaskActuationBounds,
    TaskActuationEquality,
    TaskAMEquality,
    TaskCapturePointInequality,
    TaskComEquality,
    TaskContactForceEquality,
    TaskCopEquality,
    TaskJointBounds,
    TaskJointCoupling,
    TaskJointPosture,
    TaskJointPosVelAccBounds,
    TaskMotionTracking,
    TaskMotorEnvelope,
    TaskSE3Equality,
    TaskSelfCollision,
    TaskTwoFramesEquality,
)
from tsid_py.trajectories import (
    TrajectoryEuclidianConstant,
    TrajectoryEuclidianMinJerk,
    TrajectoryEuclidianSinusoid,
    TrajectorySample,
    TrajectorySE3Constant,
)

__version__ = "0.2.0"  # the one place the version is written (pyproject reads it)

__all__ = [  # sorted; at most 40 names (tests/test_public_surface.py)
    "Contact6d",
    "ContactLine",
    "ContactPoint",
    "ContactTwoFramePositions",
    "ContactWrench",
    "InverseDynamicsFormulation",
    "RobotWrapper",
    "Solver",
    "SolverHQuadProg",
    "TaskAMEquality",
    "TaskActuationBounds",
    "TaskActuationEquality",
    "TaskCapturePointInequality",
    "TaskComEquality",
    "TaskContactForceEquality",
    "TaskCopEquality",
    "TaskJointBounds",
    "TaskJointCoupling",
    "TaskJointPosVelAccBounds",
    "TaskJointPosture",
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
    "available_robots",
    "integrate",
    "load_robot",
    "make_solver",
    "__version__",
]


def _homes(module: str, *names: str) -> dict[str, str]:
    """Each name with its home in ``module``."""
    return {name: f"{module}.{name}" for name in names}


# Names this package exported up to 0.2.0, each with its home: they resolve with a DeprecationWarning.
_MOVED = {
    **_homes(
        "tsid_py.errors",
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
    ),
    **_homes("tsid_py.constraints", "ConstraintBound", "ConstraintEquality", "ConstraintInequality"),
    **_homes("tsid_py.contacts", "ContactBase", "Measured3dForce", "Measured6dWrench", "PrescribedWrench"),
    **_homes("tsid_py.hqp", "HqpData", "WeightedConstraint"),
    **_homes("tsid_py.solvers", "HqpOutput", "QPStatus", "SolverDAQP", "installed_backends"),
    **_homes("tsid_py.tasks", "TaskActuation", "TaskBase", "TaskContactForce", "TaskMotion"),
    **_homes("tsid_py.threads", "limit_blas_threads", "step_blas_threads"),
    "Robot": "tsid_py.robot_specs.SpecRobot",
}

__getattr__ = moved_names(__name__, _MOVED)
