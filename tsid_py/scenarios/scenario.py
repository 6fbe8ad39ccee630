"""The one adapter from a scenario's parameters (a dataclass, :mod:`~tsid_py.scenarios.parameters`)
to everything made of them: ``run(**keywords)`` for Python, the ``tsid-py NAME`` command, the
parameters a sweep may vary and the parameter table of the docs.

A scenario module writes its dataclass and one function ``simulate(params, options)``; then::

    SCENARIO = Scenario("balance", BalanceParams, simulate, BipedController, __doc__)
    run, main = SCENARIO.run, SCENARIO.main
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tsid_py.command import add_hint
from tsid_py.errors import InvalidParameterError
from tsid_py.loop.control_loop import Observer
from tsid_py.loop.plant import Push
from tsid_py.scenarios.cli_support import add_output_arguments, add_plant_arguments, loop_setup, scenario_main
from tsid_py.scenarios.parameters import Parameter, ScenarioParams, parameters
from tsid_py.scenarios.runner import LoopSetup, RunResult

COMMON = ("robot", "duration", "dt", "backend")  # the options every scenario lists first
LOOP = ("plant", "mode", "check_every", "sensing")  # run() keywords of the LoopSetup a sweep may vary


@dataclass(frozen=True)
class RunOptions:
    """How a run goes, apart from its parameters: a progress bar, an observer called after every
    logged step (a live viewer) and the loop's set-up (plant, command mode, pushes, log)."""

    progress: bool = False
    observer: Observer | None = None
    setup: LoopSetup = LoopSetup()


@dataclass(frozen=True)
class Scenario:
    """A scenario: its parameters' dataclass, what runs them, and what is made of them.

    Attributes:
        name: The command's name (``tsid-py NAME``) and the summary's ``scenario``.
        params: The frozen dataclass of its parameters (a :class:`ScenarioParams`).
        simulate: ``simulate(params, options)`` runs it: the :class:`RunResult`.
        controller: The controller class it runs (a sweep checks its robots with ``check_spec``).
        doc: Its module's docstring (the first line describes the command).
        plan: For a scenario without ``duration``: how to change its length, said to a user who
            gives ``--duration`` (e.g. "choose --steps").
        push: Whether ``run`` takes one ``push`` (a sweep then varies pushes).
        positional: How many of its first parameters ``run`` takes by position: robot and
            duration (2), or the first ones of the scenario's own (walk: robot, steps,
            step_length, single_support, double_support, swing_height). The rest, ``dt``
            included, by keyword: a value given in the wrong place is refused, not misread.
    """

    name: str
    params: type[ScenarioParams]
    simulate: Callable[[Any, RunOptions], RunResult]
    controller: type
    doc: str
    plan: str = ""
    push: bool = False
    positional: int = 2

    def parameters(self) -> list[Parameter]:
        """Its parameters, the common ones first (robot, duration, dt, backend), then its own."""
        every = parameters(self.params)
        return sorted(every, key=lambda p: COMMON.index(p.name) if p.name in COMMON else len(COMMON))

    def run(
        self,
        *args: object,
        progress: bool = False,
        observer: Observer | None = None,
        setup: LoopSetup | None = None,
        plant: str | None = None,
        mode: str | None = None,
        check_every: int | None = None,
        push: Push | None = None,
        sensing: str | None = None,
        **keywords: object,
    ) -> RunResult:
        """Run the scenario with its parameters as arguments and return the summary and the
        per-step log. By position: ``robot``, then ``duration`` where it has one, or the first
        parameters of its own (step: ``height``; walk: ``steps``, ...: :attr:`positional`); the
        others by keyword.

        Args:
            progress: Show a progress bar on stderr.
            observer: Called with (controller, log) after every logged step (e.g. a live viewer).
            setup: The whole loop set-up (:class:`LoopSetup`), instead of ``plant``, ``mode``,
                ``check_every``, ``sensing`` and ``push``.
            plant, mode: What the controller drives (:data:`~tsid_py.loop.plants.PLANTS`) and
                how ("torque" or "position"); by default the integrator, torque commands.
            check_every: Check the solutions against the physics every N steps (0 never).
            push: One push on the base (scenarios with ``push``).
            sensing: What the controller gets: "truth" (the default) or "robot" (sensors, an
                estimator, latency: :mod:`tsid_py.loop.sensing`).

        Raises:
            InvalidParameterError: an unknown parameter, a push to a scenario that takes none, or
                a setup with plant, mode, check_every or push.
        """
        params = self.make_params(*args, **keywords)
        if push is not None and not self.push:
            raise InvalidParameterError(
                f"{self.name}.run takes no push argument: give setup=LoopSetup(plant, pushes=(push,)), "
                "as the command's --push does"
            )
        if push is not None and not isinstance(push, Push):
            raise InvalidParameterError(
                f"push must be a tsid_py.loop.Push((fx, fy, fz), t, duration), got {type(push).__name__} "
                "(several pushes: setup=LoopSetup(plant, pushes=...))"
            )
        loop = {"plant": plant, "mode": mode, "check_every": check_every, "sensing": sensing}
        given = {key: value for key, value in loop.items() if value is not None}
        if setup is not None and (given or push is not None):
            raise InvalidParameterError(
                f"{self.name}.run takes plant, mode, check_every, sensing and push, or a setup, not both"
            )
        if setup is None:
            setup = LoopSetup(pushes=() if push is None else (push,), **given)  # type: ignore[arg-type]
        return self.simulate(params, RunOptions(progress, observer, setup))

    def make_params(self, *args: object, **keywords: object) -> ScenarioParams:
        """Its dataclass of ``args`` and ``keywords``; an unknown keyword is named with the closest one."""
        described = {p.name: p for p in parameters(self.params)}
        names = list(described)
        for key in keywords:
            if key not in names:
                close = difflib.get_close_matches(key, names, n=1)
                hint = f"did you mean {close[0]}?" if close else f"it has {', '.join(names)}"
                raise InvalidParameterError(f"{self.name} has no parameter {key!r} ({hint})")
        fields = self.params.__dataclass_fields__
        positional = [f for f in names if not fields[f].kw_only][: self.positional]
        if len(args) > len(positional):
            raise InvalidParameterError(
                f"{self.name}.run takes at most {len(positional)} arguments by position "
                f"({', '.join(positional)}), got {len(args)}"
            )
        for name, value in [*zip(positional, args, strict=False), *keywords.items()]:
            described[name].check(value)
        return self.params(*args, **keywords)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ the command line
    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Its options: one per parameter (the common ones first), the outputs', the plant's."""
        own = self.parameters()
        if "duration" not in {p.name for p in own}:
            name = parser.prog.split()[-1]
            add_hint(
                parser,
                "--duration",
                f"{name}'s plan sets its length" + (f": {self.plan}" if self.plan else ""),
            )
        common = sum(p.name in COMMON for p in own)  # (listed first)
        for index, p in enumerate(own):
            if index == common:
                add_output_arguments(parser)
            if p.option is not None:
                option, keywords = p.argument()
                parser.add_argument(option, **keywords)
        add_plant_arguments(parser)

    def run_from_args(self, args: argparse.Namespace, observer: Observer | None = None) -> RunResult:
        """Run it with the parsed options (:meth:`add_arguments`)."""
        values = {
            p.name: p.from_cli(getattr(args, p.dest)) for p in self.parameters() if p.option is not None
        }
        return self.simulate(self.params(**values), RunOptions(not args.json, observer, loop_setup(args)))

    def main(self, argv: list[str] | None = None) -> int:
        """``tsid-py NAME [options]``: exit codes as :func:`~tsid_py.scenarios.cli_support.scenario_main`."""
        return scenario_main(
            self.name, self.add_arguments, self.run_from_args, self.doc.splitlines()[0], argv
        )

    # ------------------------------------------------------------------ sweeps
    def space(self) -> dict[str, Parameter]:
        """What a sweep may vary, by name: its parameters (not the Python-only ones) and the loop's
        ``plant``, ``mode`` and ``check_every`` (a push's names are the sweep's: see ``push``)."""
        space = {p.name: p for p in self.parameters() if p.swept}
        defaults = LoopSetup()
        space.update({name: Parameter.plain(name, getattr(defaults, name)) for name in LOOP})
        space["check_every"] = Parameter("check_every", "whole", None, "", {"help": "check_every"})
        return space

    # ------------------------------------------------------------------ docs
    def reference(self) -> str:
        """Its parameters as a Markdown table: keyword, option, default, unit, what."""
        rows = [
            "| keyword | option | default | unit | what |",
            "|---|---|---|---|---|",
        ]
        for p in self.parameters():
            option = f"`{p.option}`" if p.option else "(Python only)"
            default = "" if p.metadata.get("python_only") else p.shown()
            rows.append(f"| `{p.name}` | {option} | {default} | {p.unit} | {p.help} |")
        return "\n".join(rows)
