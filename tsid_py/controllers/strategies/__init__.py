"""Strategies: what decides, at each control step, from the measured state and the feet's phases.

:class:`Strategy` is the protocol (``decide(state, feet, com) -> Decision``); the push recovery
(:class:`PushRecovery`) and a footstep plan (:class:`Footsteps`) are the library's.
"""

from tsid_py.controllers.strategies.footsteps import Footsteps
from tsid_py.controllers.strategies.push_recovery import PushRecovery, RecoveryParams
from tsid_py.controllers.strategies.strategy import Decision, Strategy

__all__ = ["Decision", "Footsteps", "PushRecovery", "RecoveryParams", "Strategy"]
