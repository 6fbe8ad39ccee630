"""Ready-made controllers that own a formulation and the usual tasks."""

from tsid_py.controllers.arm import ArmController, ArmParams
from tsid_py.controllers.biped import BipedController, BipedParams
from tsid_py.controllers.feet import FootSchedule, StepRequest
from tsid_py.controllers.quadruped import QuadrupedController, QuadrupedParams
from tsid_py.controllers.strategies import (
    Decision,
    Footsteps,
    PushRecovery,
    RecoveryParams,
    Strategy,
    WalkRecovery,
)

__all__ = [
    "ArmController",
    "ArmParams",
    "BipedController",
    "BipedParams",
    "Decision",
    "FootSchedule",
    "Footsteps",
    "QuadrupedController",
    "PushRecovery",
    "QuadrupedParams",
    "RecoveryParams",
    "StepRequest",
    "Strategy",
    "WalkRecovery",
]
