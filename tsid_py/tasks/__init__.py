"""Tasks: each turns the robot state into one affine constraint on dv, f or tau."""

from tsid_py.tasks.task_actuation_bounds import TaskActuationBounds
from tsid_py.tasks.task_actuation_equality import TaskActuationEquality
from tsid_py.tasks.task_am_equality import TaskAMEquality
from tsid_py.tasks.task_base import TaskActuation, TaskBase, TaskContactForce, TaskMotion
from tsid_py.tasks.task_capture_point_inequality import TaskCapturePointInequality
from tsid_py.tasks.task_com_equality import TaskComEquality
from tsid_py.tasks.task_contact_force_equality import TaskContactForceEquality
from tsid_py.tasks.task_cop_equality import TaskCopEquality
from tsid_py.tasks.task_joint_bounds import TaskJointBounds
from tsid_py.tasks.task_joint_coupling import TaskJointCoupling
from tsid_py.tasks.task_joint_pos_vel_acc_bounds import TaskJointPosVelAccBounds
from tsid_py.tasks.task_joint_posture import TaskJointPosture
from tsid_py.tasks.task_motion_tracking import TaskMotionTracking
from tsid_py.tasks.task_motor_envelope import TaskMotorEnvelope
from tsid_py.tasks.task_se3_equality import TaskSE3Equality, se3_error
from tsid_py.tasks.task_self_collision import TaskSelfCollision
from tsid_py.tasks.task_two_frames_equality import TaskTwoFramesEquality

__all__ = [
    "TaskAMEquality",
    "TaskActuation",
    "TaskActuationBounds",
    "TaskActuationEquality",
    "TaskBase",
    "TaskCapturePointInequality",
    "TaskComEquality",
    "TaskCopEquality",
    "TaskContactForce",
    "TaskContactForceEquality",
    "TaskJointBounds",
    "TaskJointCoupling",
    "TaskJointPosVelAccBounds",
    "TaskJointPosture",
    "TaskMotorEnvelope",
    "TaskMotion",
    "TaskMotionTracking",
    "TaskSE3Equality",
    "TaskSelfCollision",
    "TaskTwoFramesEquality",
    "se3_error",
]
