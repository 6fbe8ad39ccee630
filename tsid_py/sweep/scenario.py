"""Sweeps of a scenario: which keywords its ``run`` takes, and the job that runs it at a point.

A scenario is a name of ``tsid-py`` (``balance``, ``com-sinusoid``, ``step``, ``walk``, ``reach``,
``quadruped``), a function given as ``package.module:function`` (your own scenario: any function
of keyword arguments returning a summary dict or a ``RunResult``; it must be importable on every
worker), or, from Python, the function itself.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass

from tsid_py.errors import InvalidParameterError
from tsid_py.loop.plant import check_mode
from tsid_py.loop.plants import PUSHABLE, check_plant
from tsid_py.robot_specs import load_spec
from tsid_py.scenarios import SCENARIOS
from tsid_py.solvers import installed_backends
from tsid_py.sweep.space import PUSH_NAMES, Axis, scenario_kwargs

NOT_SWEPT = (
    "progress",
    "observer",
    "params",
    "push",
    "setup",
    "recovery_params",
)  # run() keywords that are no table values


def scenario_function(scenario: str | Callable[..., object]) -> Callable[..., object]:
    """The run function of a scenario name, of ``module:function``, or the function itself."""
    if callable(scenario):
        return scenario
    if scenario in SCENARIOS:
        return SCENARIOS[scenario].run
    module_name, sep, name = scenario.partition(":")
    if not sep:
        raise InvalidParameterError(
            f"unknown scenario {scenario!r} (choose from {', '.join(SCENARIOS)}, or give module:function)"
        )
    try:
        function = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as exc:
        raise InvalidParameterError(f"scenario {scenario}: cannot import it ({exc})") from None
    if not callable(function):
        raise InvalidParameterError(f"scenario {scenario}: not a function")
    return function


def sweepable(function: Callable[..., object]) -> dict[str, inspect.Parameter] | None:
    """The keywords a sweep may set (None: any, the function takes ``**kwargs``)."""
    parameters = inspect.signature(function).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return None
    return {
        name: p
        for name, p in parameters.items()
        if name not in NOT_SWEPT and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }


def whole_numbers(function: Callable[..., object]) -> set[str]:
    """The keywords whose default is an int: they take whole numbers."""
    return {
        name
        for name, p in inspect.signature(function).parameters.items()
        if isinstance(p.default, int) and not isinstance(p.default, bool)
    }


def check_keywords(function: Callable[..., object], axes: list[Axis], label: str) -> None:
    """Every axis names a keyword of ``function`` (push names need a ``push`` keyword); robots
    (and that they suit the scenario ``label``, as its command checks them), plants, command modes
    and QP backends are checked before the runs."""
    allowed = sweepable(function)
    controller = getattr(SCENARIOS.get(label), "CONTROLLER", None)
    takes_push = "push" in inspect.signature(function).parameters or allowed is None
    for axis in axes:
        if axis.name in PUSH_NAMES:
            if not takes_push:
                raise InvalidParameterError(
                    f"--param {axis.name}: {label} takes no push (its run() has no 'push' keyword)"
                )
        elif allowed is not None and axis.name not in allowed:
            names = [*allowed, *(PUSH_NAMES if takes_push else ())]
            raise InvalidParameterError(
                f"--param {axis.name}: {label} has no such parameter (it has {', '.join(names)})"
            )
        values = axis.values or ()
        if axis.name == "robot":
            for value in values:
                spec = load_spec(str(value))
                if controller is not None:
                    controller.check_spec(spec)
        for name, check in (("plant", check_plant), ("mode", check_mode)):
            if axis.name == name:
                for text in map(str, axis.values or (axis.low,)):  # a range of numbers: no name either
                    check(text)
        if axis.name == "backend":
            for value in values:
                if value not in installed_backends():
                    raise InvalidParameterError(
                        f"--param backend: {value!r} is not an installed QP backend "
                        f"({', '.join(installed_backends())})"
                    )
    _check_pushable(function, axes)


def _check_pushable(function: Callable[..., object], axes: list[Axis]) -> None:
    """A push needs a plant with physics: every point of a sweep that pushes runs on one."""
    if not any(axis.name in PUSH_NAMES for axis in axes):
        return
    plant = next((axis for axis in axes if axis.name == "plant"), None)
    if plant is not None:
        plants = [str(value) for value in plant.values or ()]
    else:
        parameter = inspect.signature(function).parameters.get("plant")
        default = inspect.Parameter.empty if parameter is None else parameter.default
        plants = [] if default is inspect.Parameter.empty else [str(default)]
    for name in plants:
        if name not in PUSHABLE:
            raise InvalidParameterError(
                f"a push needs a plant with physics, and this sweep runs on the {name} plant: "
                "add --param plant=pinocchio (rigid contacts) or plant=mujoco (the [sim] extra)"
            )


@dataclass(frozen=True)
class ScenarioJob:
    """Run a scenario at a point: ``run(**scenario_kwargs(values))``, its summary back.

    Attributes:
        scenario: A scenario name, ``module:function``, or a (picklable) function.
    """

    scenario: str | Callable[..., object]

    def __call__(self, values: dict[str, object]) -> object:
        return scenario_function(self.scenario)(**scenario_kwargs(values))
