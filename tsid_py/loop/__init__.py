"""The closed loop: a controller, a plant and a log, stepped together (:class:`ControlLoop`)."""

from tsid_py.loop.control_loop import ControlLoop, LoopOutcome, StepHooks
from tsid_py.loop.controller import Controller, ControlOutput, solve_step
from tsid_py.loop.log import RunLog
from tsid_py.loop.measured import FootState, MeasuredState, Measurer
from tsid_py.loop.plant import (
    COMMAND_MODES,
    Command,
    ContactMeasurement,
    IntegratorPlant,
    Plant,
    PlantState,
    Push,
    servo_gains,
)
from tsid_py.loop.verdict import VERDICTS, BalanceJudge, Verdict, VerdictLimits

__all__ = [
    "COMMAND_MODES",
    "VERDICTS",
    "BalanceJudge",
    "Command",
    "ContactMeasurement",
    "ControlLoop",
    "ControlOutput",
    "Controller",
    "FootState",
    "IntegratorPlant",
    "LoopOutcome",
    "MeasuredState",
    "Measurer",
    "Plant",
    "PlantState",
    "Push",
    "RunLog",
    "StepHooks",
    "Verdict",
    "VerdictLimits",
    "servo_gains",
    "solve_step",
]
