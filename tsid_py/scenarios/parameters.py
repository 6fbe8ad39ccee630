"""A scenario's parameters as data: one frozen dataclass per scenario, each field described once.

A field made with :func:`param` carries its help text, its unit and how the command line reads it;
:class:`Parameter` is that description read back, the one source of a scenario's options, of what
a sweep may vary and of the parameter tables of the docs (:class:`~tsid_py.scenarios.scenario.Scenario`).
Every scenario's dataclass derives from :class:`ScenarioParams` (``dt``, ``backend``) and declares
``robot`` first (:func:`robot_spec`), then ``duration`` where it has one (:func:`simulated_time`):
``run("talos", 2.0)`` is robot and duration, as it always was; the other parameters go by keyword
(:attr:`Scenario.positional`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from tsid_py.command import HERTZ, METRES, NEWTONS, SECONDS
from tsid_py.errors import InvalidParameterError
from tsid_py.robot_specs import available_robots
from tsid_py.solvers import installed_backends

P = TypeVar("P", bound="ScenarioParams")
PARSERS: dict[str, Callable[[str], float]] = {"s": SECONDS, "m": METRES, "Hz": HERTZ, "N": NEWTONS}
TRUE, FALSE = ("true", "yes", "1"), ("false", "no", "0")  # how a sweep writes a flag's values


def param(
    default: Any,
    help: str | Callable[[], str],
    *,
    unit: str = "",
    shown: str | None = None,
    option: str | None = None,
    option_help: str | None = None,
    choices: Sequence[object] | Callable[[], Sequence[object]] | None = None,
    parse: Callable[[str], Any] | None = None,
    metavar: str | tuple[str, ...] | None = None,
    nargs: int | None = None,
    python_only: bool = False,
    sweep: bool = True,
    kw_only: bool = False,
) -> Any:
    """A dataclass field described for the command line, sweeps and docs.

    Args:
        default: The default value (a tuple for a sequence).
        help: What the parameter is, without unit or default (a function for a text read late,
            e.g. the robots installed).
        unit: Its unit, e.g. "m", "s", "Hz", "N", "1/s^2" ("" for none). The command line reads
            "s", "m", "Hz" and "N" with a parser that names the unit in its error.
        shown: The default as the help writes it (e.g. "the robot's" for None).
        option: The command-line option (default: ``--name-with-dashes``; ``--no-name`` for a flag
            that defaults to True).
        option_help: The option's help where it differs from the field's (a ``--no-...`` flag).
        choices: The values it takes (a function for a list read late).
        parse: How the command line reads one value (default: from ``unit`` and the default's type).
        metavar, nargs: As argparse's.
        python_only: A value of Python only (a parameter object): no option, not swept.
        sweep: Whether a sweep may vary it.
        kw_only: Keyword-only in the dataclass (and in ``run``).
    """
    metadata = {
        "help": help,
        "unit": unit,
        "shown": shown,
        "option": option,
        "option_help": option_help,
        "choices": choices,
        "parse": parse,
        "metavar": metavar,
        "nargs": nargs,
        "python_only": python_only,
        "sweep": sweep,
    }
    return dataclasses.field(default=default, metadata=metadata, kw_only=kw_only)


def robot_spec(default: str) -> Any:
    """The ``robot`` field: a shipped robot's name or a .toml spec's path."""
    return param(default, lambda: f"a shipped robot ({', '.join(available_robots())}) or a .toml spec's path")


def simulated_time(default: float) -> Any:
    """The ``duration`` field [s] (a scenario whose plan sets its length has none)."""
    return param(default, "simulated time", unit="s")


@dataclass(frozen=True)
class ScenarioParams:
    """What every scenario takes: the control period [s] and the QP backend (keywords only)."""

    dt: float = param(0.002, "control period", unit="s", kw_only=True)
    backend: str = param("quadprog", "QP backend", choices=installed_backends, kw_only=True)

    def __post_init__(self) -> None:
        """A field with a list of choices takes one of them (the command line's argparse
        says so there; this says it to ``run``)."""
        for field in dataclasses.fields(self):
            choices = field.metadata.get("choices")
            if choices is None:
                continue
            choices = tuple(choices() if callable(choices) else choices)  # (a list read late: now)
            value = getattr(self, field.name)
            if value not in choices:
                raise InvalidParameterError(
                    f"{field.name} must be one of {', '.join(map(str, choices))}, got {value!r}"
                )


def with_defaults(cls: type[P], name: str, **defaults: object) -> type[P]:
    """A subclass of the dataclass ``cls`` named ``name`` whose fields take other ``defaults`` (help
    and units kept): two scenarios that differ only in their defaults."""
    own = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(defaults) - set(own))
    if unknown:
        raise InvalidParameterError(f"{cls.__name__} has no field {unknown[0]!r}")
    changed = [
        (
            key,
            own[key].type,
            dataclasses.field(default=value, metadata=own[key].metadata, kw_only=own[key].kw_only),
        )
        for key, value in defaults.items()
    ]
    return dataclasses.make_dataclass(
        name, changed, bases=(cls,), frozen=True, namespace={"__module__": cls.__module__}
    )


@dataclass(frozen=True)
class Parameter:
    """A field of a scenario's dataclass as the command line, a sweep and the docs read it.

    Attributes:
        name: The field's (and ``run``'s keyword's) name.
        kind: "whole", "number", "flag" or "word" (what a sweep's values must be).
        default: Its default.
        unit: Its unit ("" for none).
        metadata: The rest of its :func:`param` description.
    """

    name: str
    kind: str
    default: Any
    unit: str
    metadata: dict[str, Any]

    @classmethod
    def plain(cls, name: str, default: object) -> Parameter:
        """A keyword known by its name and default only (the loop's, or a function's of one's own):
        whole numbers when the default is an int, else any word."""
        kind = "whole" if isinstance(default, int) and not isinstance(default, bool) else "word"
        return cls(name, kind, default, "", {"help": name})

    @classmethod
    def of(cls, field: dataclasses.Field) -> Parameter:
        """The parameter of a dataclass field (a field made without :func:`param` is Python-only)."""
        metadata = dict(field.metadata) or {"help": field.name, "python_only": True, "sweep": False}
        return cls(field.name, _kind(field), field.default, metadata.get("unit", ""), metadata)

    @property
    def help(self) -> str:
        text = self.metadata["help"]
        return text() if callable(text) else text

    @property
    def choices(self) -> tuple[object, ...] | None:
        choices = self.metadata.get("choices")
        return tuple(choices() if callable(choices) else choices) if choices is not None else None

    @property
    def option(self) -> str | None:
        """The command-line option, None for a Python-only parameter."""
        if self.metadata.get("python_only"):
            return None
        if self.metadata.get("option"):
            return self.metadata["option"]
        dashed = self.name.replace("_", "-")
        return f"--no-{dashed}" if self.default is True else f"--{dashed}"

    @property
    def dest(self) -> str:
        """Where argparse keeps its value: the option's name (another option's ``dest`` may be the
        field's name, e.g. ``force`` of hand-contact is ``--hand-force``, ``--force`` the outputs')."""
        return (self.option or self.name).lstrip("-").replace("-", "_")

    @property
    def swept(self) -> bool:
        """Whether a sweep may vary it."""
        return not self.metadata.get("python_only") and self.metadata.get("sweep", True)

    def shown(self) -> str:
        """The default as written in help and docs."""
        if self.metadata.get("shown") is not None:
            return self.metadata["shown"]
        return show(self.default, " " if self.metadata.get("nargs") else ",")

    def describe(self) -> str:
        """What it is, its unit and its default, e.g. "sway frequency [Hz] (default: 0.5)"."""
        unit = f" [{self.unit}]" if self.unit else ""
        default = "" if self.kind == "flag" else f" (default: {self.shown()})"
        return f"{self.help}{unit}{default}"

    def argument(self) -> tuple[str, dict[str, Any]]:
        """The option and the keywords of ``parser.add_argument`` for it."""
        option = self.option
        if option is None:
            raise InvalidParameterError(f"{self.name} is a Python-only parameter: it has no option")
        text = (self.metadata.get("option_help") or self.describe()).replace("%", "%%")
        if self.kind == "flag":
            action = "store_false" if self.default else "store_true"
            return option, {"dest": self.dest, "action": action, "help": text}
        keywords: dict[str, Any] = {"dest": self.dest, "default": self.default, "help": text}
        parse = (
            self.metadata.get("parse")
            or PARSERS.get(self.unit)
            or {"whole": int, "number": float}.get(self.kind)
        )
        if parse is not None:
            keywords["type"] = parse
        for key in ("metavar", "nargs"):
            if self.metadata.get(key) is not None:
                keywords[key] = self.metadata[key]
        if self.choices is not None:
            keywords["choices"] = self.choices
        return option, keywords

    def from_cli(self, value: Any) -> Any:
        """The field's value of what argparse read (a list of several numbers as a tuple)."""
        return tuple(value) if isinstance(value, list) else value

    def check(self, value: object) -> None:
        """A value given to ``run`` for it, from Python: a flag takes True or False (the word
        "false" would be true), a number is no bool.

        Raises:
            InvalidParameterError: a flag given anything but a bool, a number given a bool.
        """
        flag = isinstance(value, bool | np.bool_)
        if self.kind == "flag" and not flag:
            raise InvalidParameterError(f"{self.name} takes True or False, got {value!r}")
        if self.kind in ("number", "whole") and flag:
            raise InvalidParameterError(f"{self.name} takes a number, got {value!r}")

    def value(self, value: float | int | str) -> float | int | str:
        """A sweep's value for it, checked (and a flag's word read as a bool).

        Raises:
            InvalidParameterError: a word where a number is expected, a value not among the
                choices, a flag that is not true or false.
        """
        if self.kind == "flag":
            word = str(value).strip().lower()
            if word in TRUE + FALSE:
                return word in TRUE
            raise InvalidParameterError(f"--param {self.name} takes true or false, got {value!r}")
        if self.kind == "number" and not (isinstance(value, int | float) and math.isfinite(value)):
            raise InvalidParameterError(f"--param {self.name} takes numbers, got {value!r}")
        choices = self.choices
        if choices is not None and value not in choices:
            raise InvalidParameterError(
                f"--param {self.name}: {value!r} is not one of {', '.join(map(str, choices))}"
            )
        return value


def parameters(cls: type) -> list[Parameter]:
    """The parameters of a scenario's dataclass, in its fields' order."""
    return [Parameter.of(field) for field in dataclasses.fields(cls)]


def show(value: object, separator: str = ",") -> str:
    """A default as written for people: numbers with ``:g``, sequences joined by ``separator``."""
    if isinstance(value, tuple | list):
        return separator.join(show(item) for item in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _kind(field: dataclasses.Field) -> str:
    """What a sweep's values for ``field`` must be, from its annotation (a string: annotations are
    postponed) or its default."""
    annotation = field.type if isinstance(field.type, str) else getattr(field.type, "__name__", "")
    if annotation == "bool":
        return "flag"
    if annotation.startswith("int"):
        return "whole"
    if annotation.startswith(("float", "tuple[float")):
        return "number"
    return "word"
