"""Strategies: what decides, at each control step, from the measured state and the feet's phases.

:class:`Strategy` is the protocol (``decide(state, feet, com) -> Decision``); the push recovery
(:class:`PushRecovery`), a footstep plan (:class:`Footsteps`) and a footstep plan that recovers
from pushes (:class:`WalkRecovery`) are the library's.
"""

from tsid_py.controllers.strategies.footsteps import Footsteps
from tsid_py.controllers.strategies.push_recovery import PushRecovery, RecoveryParams
from tsid_py.controllers.strategies.strategy import Decision, Strategy
from tsid_py.controllers.strategies.walk_recovery import WalkRecovery

__all__ = ["Decision", "Footsteps", "PushRecovery", "RecoveryParams", "Strategy", "WalkRecovery"]
