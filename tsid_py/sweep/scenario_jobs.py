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
from dataclasses import dataclass, replace
from typing import cast

from tsid_py.errors import InvalidParameterError
from tsid_py.loop.control_loop import check_pushes
from tsid_py.loop.plant import check_mode
from tsid_py.loop.plants import PUSHABLE, check_plant
from tsid_py.robot_specs import load_spec
from tsid_py.scenarios import SCENARIOS
from tsid_py.scenarios.parameters import Parameter
from tsid_py.scenarios.scenario import Scenario
from tsid_py.solvers import installed_backends
from tsid_py.sweep.space import PUSH_NAMES, Axis, Value, make_push, scenario_kwargs

# keywords of your own function that are no table values: the run's options, and objects (a push
# is made from the push names; parameters' dataclasses have no text form)
NOT_SWEPT = ("progress", "observer", "setup", "push", "params", "recovery_params")


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
        raise InvalidParameterError(
            f"scenario {scenario}: cannot import it ({exc}); is its directory on PYTHONPATH?"
        ) from None
    if not callable(function):
        raise InvalidParameterError(f"scenario {scenario}: not a function")
    return function


def parameter_space(scenario: str | Callable[..., object]) -> dict[str, Parameter] | None:
    """What a sweep of ``scenario`` may vary, by name (None: anything, a function of ``**kwargs``).

    A scenario of ``tsid-py`` says it (:meth:`~tsid_py.scenarios.scenario.Scenario.space`, from its
    parameters' dataclass); your own function's keywords are read from its signature (those whose
    default is an int take whole numbers).
    """
    library = _library(scenario)
    if library is not None:
        return library.space()
    parameters = inspect.signature(scenario_function(scenario)).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return None
    return {
        name: Parameter.plain(name, p.default)
        for name, p in parameters.items()
        if name not in NOT_SWEPT and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }


def _library(scenario: str | Callable[..., object]) -> Scenario | None:
    """The scenario of tsid-py of that name; None for ``module:function`` or a function (even one
    named like a scenario of tsid-py)."""
    return SCENARIOS[scenario].SCENARIO if isinstance(scenario, str) and scenario in SCENARIOS else None


def takes_push(scenario: str | Callable[..., object]) -> bool:
    """Whether ``scenario``'s run takes one ``push`` (the push names of a sweep make it)."""
    library = _library(scenario)
    if library is not None:
        return library.push
    parameters = inspect.signature(scenario_function(scenario)).parameters
    return "push" in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def check_keywords(scenario: str | Callable[..., object], axes: list[Axis]) -> list[Axis]:
    """The axes, checked: every one names a parameter of ``scenario`` (push names need a scenario
    that takes a push) and its values suit it (numbers, choices, flags read as booleans); robots
    (and that they suit a ``tsid-py`` scenario's controller, as its command checks them), plants,
    command modes and QP backends are checked before the runs."""
    space = parameter_space(scenario)
    pushable = takes_push(scenario)
    label = scenario if isinstance(scenario, str) else getattr(scenario, "__name__", "the function")
    library = _library(scenario)
    controller = library.controller if library is not None else None
    checked = []
    for axis in axes:
        if axis.name in PUSH_NAMES:
            if not pushable:
                raise InvalidParameterError(
                    f"--param {axis.name}: {label} takes no push (its run() has no 'push' keyword)"
                )
        elif space is not None and axis.name not in space:
            names = [*space, *(PUSH_NAMES if pushable else ())]
            raise InvalidParameterError(
                f"--param {axis.name}: {label} has no such parameter (it has {', '.join(names)})"
            )
        if library is not None:  # a scenario of tsid-py: its robots, plants, modes, backends are its
            _check_library_names(axis, controller)
        parameter = None if space is None else space.get(axis.name)
        if parameter is not None and axis.values is not None:
            axis = replace(axis, values=tuple(parameter.value(value) for value in axis.values))
        checked.append(axis)
    if library is not None:
        _check_pushable(space, checked)
    _check_push_force(checked)
    return checked


def _check_library_names(axis: Axis, controller: type | None) -> None:
    """The robots (and that they suit ``controller``), plants, command modes and QP backends of a
    scenario of tsid-py, before any run."""
    values = axis.values or ()
    if axis.name == "robot":
        for value in values:
            spec = load_spec(str(value))
            if controller is not None:
                controller.check_spec(spec)  # type: ignore[attr-defined]  # a controller class
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


def _check_push_times(scenario: Scenario, points: list[dict[str, object]]) -> None:
    """Every point's push starts before its run ends (the scenario's default duration where the
    sweep does not set one), as the command checks its --push."""
    space = scenario.space()
    if "duration" not in space:  # its plan sets its length
        return
    default = cast(float, space["duration"].default)
    for point in cast(list[dict[str, float]], points):  # (checked: numbers)
        duration = float(point.get("duration", default))
        push = make_push({name: float(value) for name, value in point.items() if name in PUSH_NAMES})
        try:
            check_pushes((push,), duration)
        except InvalidParameterError as error:
            raise InvalidParameterError(f"--param push_t: {error} (set push_t or duration)") from None


def _check_push_force(axes: list[Axis]) -> None:
    """Push names without a force would push with 0 N: a push needs ``push_force`` or a component."""
    names = {axis.name for axis in axes}
    if names & set(PUSH_NAMES) and not names & {"push_force", "push_fx", "push_fy", "push_fz"}:
        raise InvalidParameterError(
            "a push needs a force: add --param push_force=... (with push_angle) or push_fx, push_fy, push_fz"
        )


def _check_pushable(space: dict[str, Parameter] | None, axes: list[Axis]) -> None:
    """A push needs a plant with physics: every point of a sweep that pushes runs on one."""
    if not any(axis.name in PUSH_NAMES for axis in axes):
        return
    plant = next((axis for axis in axes if axis.name == "plant"), None)
    if plant is not None:
        plants = [str(value) for value in plant.values or ()]
    else:
        default = None if space is None or "plant" not in space else space["plant"].default
        plants = [] if default in (None, inspect.Parameter.empty) else [str(default)]
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
        """Run the scenario at the point ``values``, each value read as its parameter takes it (a
        flag's word "false" as False, as :meth:`check` read it)."""
        space = parameter_space(self.scenario) or {}
        points = cast(dict[str, Value], values)  # (the point's values: numbers and words)
        read: dict[str, object] = {
            name: space[name].value(v) if name in space else v for name, v in points.items()
        }
        return scenario_function(self.scenario)(**scenario_kwargs(read))

    def defaults(self) -> dict[str, object] | None:
        """Its parameters' defaults by name, a push's None (no push); None for a function of
        ``**kwargs`` (anything)."""
        space = parameter_space(self.scenario)
        if space is None:
            return None
        pushes = dict.fromkeys(PUSH_NAMES if takes_push(self.scenario) else ())
        return {**{name: parameter.default for name, parameter in space.items()}, **pushes}

    def check(self, points: list[dict[str, object]]) -> None:
        """The points' names and values, checked before any run as the command checks its
        ``--param`` (:func:`check_keywords`).

        Raises:
            InvalidParameterError: a name the scenario does not have, a value of the wrong kind.
        """
        values = {name: tuple(dict.fromkeys(p[name] for p in points)) for name in points[0]}
        check_keywords(self.scenario, [Axis(name, cast(tuple[Value, ...], v)) for name, v in values.items()])
        library = _library(self.scenario)
        if library is not None and set(values) & set(PUSH_NAMES):
            _check_push_times(library, points)
