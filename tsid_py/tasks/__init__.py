"""Tasks: each turns the robot state into one affine constraint on dv, f or tau."""

from tsid_py.tasks.task_actuation_bounds import TaskActuationBounds
from tsid_py.tasks.task_am_equality import TaskAMEquality
from tsid_py.tasks.task_base import TaskActuation, TaskBase, TaskContactForce, TaskMotion
from tsid_py.tasks.task_com_equality import TaskComEquality
from tsid_py.tasks.task_cop_equality import TaskCopEquality
from tsid_py.tasks.task_joint_bounds import TaskJointBounds
from tsid_py.tasks.task_joint_posture import TaskJointPosture
from tsid_py.tasks.task_se3_equality import TaskSE3Equality, se3_error

__all__ = [
    "TaskAMEquality",
    "TaskActuation",
    "TaskActuationBounds",
    "TaskBase",
    "TaskComEquality",
    "TaskCopEquality",
    "TaskContactForce",
    "TaskJointBounds",
    "TaskJointPosture",
    "TaskMotion",
    "TaskSE3Equality",
    "se3_error",
]
