"""A legged robot sways its CoM along y: what the ``com-sinusoid`` and ``quadruped`` scenarios share."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from tsid_py.controllers.biped import BipedController
from tsid_py.controllers.quadruped import QuadrupedController
from tsid_py.loop.control_loop import Observer
from tsid_py.robot_specs import load_robot
from tsid_py.scenarios.cli_support import (
    add_common_arguments,
    add_plant_arguments,
    add_sway_arguments,
    loop_setup,
)
from tsid_py.scenarios.runner import LoopSetup, RunResult, run_sway
from tsid_py.solvers import make_solver


@dataclass(frozen=True)
class SwayScenario:
    """c(t) = c_0 + a sin(2 pi f t) e_y for a controller class, with the scenario's defaults.

    Attributes:
        name: The scenario's name (the CLI's subcommand).
        controller: :class:`BipedController` or :class:`QuadrupedController`.
        robot: Default robot spec.
        duration: Default duration [s].
        amplitude: Default amplitude a [m].
        frequency: Default frequency f [Hz].
    """

    name: str
    controller: type[BipedController] | type[QuadrupedController]
    robot: str
    duration: float
    amplitude: float
    frequency: float

    def run(
        self,
        robot: str | None = None,
        duration: float | None = None,
        dt: float = 0.002,
        amplitude: float | None = None,
        frequency: float | None = None,
        backend: str = "quadprog",
        progress: bool = False,
        observer: Observer | None = None,
        setup: LoopSetup | None = None,
    ) -> RunResult:
        """Sway for ``duration`` seconds (None: the scenario's defaults); amplitude [m] and frequency [Hz];
        ``setup``: the plant, command mode and pushes."""
        controller = self.controller(load_robot(robot or self.robot), solver=make_solver(backend))
        return run_sway(
            controller,
            self.duration if duration is None else duration,
            dt,
            self.amplitude if amplitude is None else amplitude,
            self.frequency if frequency is None else frequency,
            self.name,
            progress,
            observer,
            setup,
        )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_common_arguments(parser, robot=self.robot, duration=self.duration)
        add_sway_arguments(parser, amplitude=self.amplitude, frequency=self.frequency)
        add_plant_arguments(parser)

    def run_from_args(self, args: argparse.Namespace, observer: Observer | None = None) -> RunResult:
        return self.run(
            args.robot,
            args.duration,
            args.dt,
            args.amplitude,
            args.frequency,
            args.backend,
            not args.json,
            observer,
            loop_setup(args),
        )
