"""A legged robot sways its CoM along y: what the ``com-sinusoid`` and ``quadruped`` scenarios share."""

from __future__ import annotations

from dataclasses import dataclass

from tsid_py.controllers.biped import BipedController
from tsid_py.controllers.quadruped import QuadrupedController
from tsid_py.robot_specs import load_robot
from tsid_py.scenarios.parameters import ScenarioParams, param, robot_spec, simulated_time, with_defaults
from tsid_py.scenarios.runner import RunResult, run_sway
from tsid_py.scenarios.scenario import RunOptions, Scenario
from tsid_py.solvers import make_solver


@dataclass(frozen=True)
class SwayParams(ScenarioParams):
    """c(t) = c_0 + a sin(2 pi f t) e_y around the initial CoM c_0 (the defaults: com-sinusoid's)."""

    robot: str = robot_spec("talos")
    duration: float = simulated_time(10.0)
    amplitude: float = param(0.05, "sway amplitude along y", unit="m")
    frequency: float = param(0.5, "sway frequency", unit="Hz")


@dataclass(frozen=True)
class Sway:
    """``simulate`` of a sway scenario: its name and its controller class (:class:`BipedController`
    or :class:`QuadrupedController`)."""

    name: str
    controller: type[BipedController] | type[QuadrupedController]

    def __call__(self, p: SwayParams, options: RunOptions) -> RunResult:
        controller = self.controller(load_robot(p.robot), solver=make_solver(p.backend))
        return run_sway(
            controller,
            p.duration,
            p.dt,
            p.amplitude,
            p.frequency,
            self.name,
            options.progress,
            options.observer,
            options.setup,
        )


def sway_scenario(
    name: str, controller: type[BipedController] | type[QuadrupedController], doc: str, **defaults: object
) -> Scenario:
    """The scenario ``name`` swaying the CoM of ``controller``'s robot, with its own ``defaults``."""
    params = with_defaults(SwayParams, f"{name.title().replace('-', '')}Params", **defaults)
    return Scenario(name, params, Sway(name, controller), controller, doc)
