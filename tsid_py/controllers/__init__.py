"""Ready-made controllers that own a formulation and the usual tasks."""

from tsid_py.controllers.arm import ArmController, ArmParams
from tsid_py.controllers.biped import BipedController, BipedParams
from tsid_py.controllers.quadruped import QuadrupedController, QuadrupedParams
from tsid_py.controllers.recovery import PushRecovery, RecoveryParams

__all__ = [
    "ArmController",
    "ArmParams",
    "BipedController",
    "BipedParams",
    "QuadrupedController",
    "PushRecovery",
    "QuadrupedParams",
    "RecoveryParams",
]
