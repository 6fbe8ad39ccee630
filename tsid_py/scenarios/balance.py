"""Balance: a biped stands on both feet and holds its initial CoM.

The classic first TSID exercise. The controller keeps both feet as hard contacts, tracks a
constant CoM reference and the reference posture, and respects the torque bounds. Standing
still, the CoM must not move, the feet must not slide, and the contact forces must carry the
weight m g.
"""

from __future__ import annotations

from dataclasses import dataclass

from tsid_py.controllers.biped import BipedController
from tsid_py.controllers.strategies.push_recovery import RECOVERIES, RecoveryParams
from tsid_py.robot_specs import load_robot
from tsid_py.scenarios.parameters import ScenarioParams, param, robot_spec, simulated_time
from tsid_py.scenarios.runner import RunResult, run_biped
from tsid_py.scenarios.scenario import RunOptions, Scenario
from tsid_py.solvers import make_solver
from tsid_py.trajectories import TrajectoryEuclidianConstant


@dataclass(frozen=True)
class BalanceParams(ScenarioParams):
    """Stand still for ``duration`` seconds with TSID's balance controller, or one that recovers
    from pushes (:mod:`tsid_py.controllers.strategies.push_recovery`)."""

    robot: str = robot_spec("talos")
    duration: float = simulated_time(2.0)
    recovery: str = param(
        "none",
        "none: TSID's balance controller; ankle: capture point feedback at the ankles; step: and a "
        "step when the capture point leaves the feet",
        choices=RECOVERIES,
    )
    recovery_params: RecoveryParams | None = param(None, "the recovery's parameters", python_only=True)


def simulate(p: BalanceParams, options: RunOptions) -> RunResult:
    """Hold the initial CoM on both feet; the summary and the per-step log."""
    controller = BipedController(
        load_robot(p.robot),
        solver=make_solver(p.backend),
        recovery=p.recovery,
        recovery_params=p.recovery_params,
    )
    com_reference = TrajectoryEuclidianConstant("com", controller.com_initial)
    return run_biped(
        controller,
        p.duration,
        p.dt,
        com_reference.sample,
        "balance",
        options.progress,
        options.observer,
        options.setup,
    )


SCENARIO = Scenario("balance", BalanceParams, simulate, BipedController, __doc__, push=True)
run, main = SCENARIO.run, SCENARIO.main
