"""What the biped and quadruped controllers share: a floating base on its feet, a CoM task, a posture
task and torque bounds (the set-up of TSID's TsidBiped and quadruped demo), the feet's phases
(:class:`~tsid_py.controllers.feet.FootSchedule`) and the strategies that decide at each step.

A step of a legged controller is measure -> decide -> act: :meth:`LeggedController.observe`
takes the measured state, gives it to contact feedback and to each strategy, and applies what
they decide (the feet's steps, the CoM reference) in one place; :meth:`Controller.compute` solves.
"""

from __future__ import annotations

import inspect

import numpy as np
import pinocchio as pin

from tsid_py.controllers.feet import FootSchedule
from tsid_py.controllers.strategies.strategy import Decision, Strategy
from tsid_py.errors import InvalidParameterError
from tsid_py.formulation import InverseDynamicsFormulation
from tsid_py.loop.controller import Controller, ControlOutput
from tsid_py.loop.measured import MeasuredState, Measurer
from tsid_py.loop.plant import PlantState
from tsid_py.robot_specs import SpecRobot
from tsid_py.solvers.quadprog_solver import SolverHQuadProg
from tsid_py.solvers.solver_base import Solver
from tsid_py.spec_check import check_stance
from tsid_py.tasks.task_actuation_bounds import TaskActuationBounds
from tsid_py.tasks.task_com_equality import TaskComEquality
from tsid_py.tasks.task_joint_posture import TaskJointPosture
from tsid_py.tasks.task_se3_equality import TaskSE3Equality
from tsid_py.trajectories import TrajectorySample, as_sample
from tsid_py.validation import as_vector, lookup


class LeggedController(Controller):
    """A legged robot's formulation, solver and initial state; subclasses add the contacts and tasks.

    Args:
        robot: A floating-base robot whose spec names its feet (``[feet]``).
        name: The formulation's name.
        solver: QP backend (quadprog by default).
        q0: Initial configuration; by default the spec's, lowered so that its feet stand on the
            ground (:meth:`~tsid_py.robot_specs.SpecRobot.standing_configuration`).

    Raises:
        RobotSpecError: The spec's feet do not stand on the ground in q0, as its own collision
            geometry says (:func:`~tsid_py.spec_check.check_stance`).
    """

    def __init__(
        self, robot: SpecRobot, name: str, solver: Solver | None, q0: np.ndarray | None = None
    ) -> None:
        super().__init__(robot, InverseDynamicsFormulation(name, robot), solver or SolverHQuadProg("qp"))
        self._q0 = robot.standing_configuration() if q0 is None else as_vector("q0", q0, robot.nq)
        check_stance(robot, self._q0)
        robot.compute_all_terms(self.data, self._q0, robot.zero_velocity())
        self.measurer = Measurer(robot, self._q0, learn_ground=True)  # for a plant's state given to observe
        self.measured: MeasuredState | None = None  # the last observed
        self.feet: FootSchedule  # made by the subclass with its contacts (_schedule_feet)
        self.foot_tasks: dict[str, TaskSE3Equality] = {}
        self._strategies: list[Strategy] = []
        self._com_reference: TrajectorySample  # the caller's (set_com_reference)
        self._com_decided = False  # whether a strategy set the CoM task's reference at the last step

    def _schedule_feet(self, force_reg_weight: float, foot_weight: float) -> None:
        """The feet's phases, over the contacts and foot tasks made (:class:`FootSchedule`)."""
        sole = self.robot.spec.sole
        self.feet = FootSchedule(
            self.formulation,
            self._contacts,
            self.foot_tasks,
            force_reg_weight,
            foot_weight,
            self.planned_normal_force,
            None if sole is None else sole.lz,
        )

    def _add_com_and_posture(
        self, kp_com: float, w_com: float, kp_posture: float | np.ndarray, w_posture: float
    ) -> None:
        """A CoM task held at the initial CoM and a posture task held at q0, both at level 1."""
        robot, form = self.robot, self.formulation
        self.com_task = TaskComEquality("task-com", robot)
        self.com_task.kp = kp_com
        form.add_motion_task(self.com_task, weight=w_com, priority=1)
        self.posture_task = TaskJointPosture("task-posture", robot)
        self.posture_task.kp = kp_posture
        actuated = self._q0[robot.nq - robot.nq_actuated :]
        self.posture_task.set_reference(TrajectorySample(actuated, tangent_size=robot.na))
        form.add_motion_task(self.posture_task, weight=w_posture, priority=1)
        self._com_initial = robot.com(self.data)
        self._com_reference = TrajectorySample(self._com_initial)
        self.com_task.set_reference(self._com_reference)

    def _add_torque_bounds(self, tau_max: np.ndarray) -> None:
        """|tau| <= tau_max at level 0 [N m] (inf: unbounded)."""
        self._tau_max = np.array(tau_max, dtype=float)
        self.actuation_task = TaskActuationBounds("task-actuation-bounds", self.robot)
        self.actuation_task.set_bounds(-self._tau_max, self._tau_max)
        self.formulation.add_actuation_task(self.actuation_task, weight=1.0, priority=0)

    @property
    def com_initial(self) -> np.ndarray:
        """The CoM at q0 [m] (a copy)."""
        return self._com_initial.copy()

    def set_com_reference(self, sample: TrajectorySample) -> None:
        """CoM reference (pos [m], vel [m/s], acc [m/s^2]) in the world frame (kept as a copy). The
        strategies (a push recovery) are given it at :meth:`observe` and may answer with another:
        set it before."""
        self._com_reference = as_sample("CoM reference", sample, 3)
        self.com_task.set_reference(self._com_reference)

    # ------------------------------------------------------------ strategies
    def add_strategy(self, strategy: Strategy) -> None:
        """A strategy that decides at every :meth:`observe`, after those added before
        (:class:`~tsid_py.controllers.strategies.strategy.Strategy`)."""
        decide = getattr(strategy, "decide", None)
        try:
            inspect.signature(decide).bind(None, None, None)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise InvalidParameterError(
                f"a strategy needs a decide(state, feet, com) method, got {type(strategy).__name__}"
            ) from None
        self._strategies.append(strategy)

    @property
    def strategies(self) -> tuple[Strategy, ...]:
        """The strategies, in the order they decide."""
        return tuple(self._strategies)

    # ------------------------------------------------------------ measure, decide, act
    def observe(self, state: MeasuredState | PlantState) -> None:
        """Take in the step's measured state (a plant's state is measured first, with
        :attr:`measurer`) and act on it: contact feedback (:meth:`FootSchedule.feedback`), the
        steps due put down (:meth:`FootSchedule.land`), then each strategy's decision, applied
        here and nowhere else: the steps it asks for go to the feet
        (:meth:`FootSchedule.request_step`), its CoM reference to the CoM task (the caller's when
        no strategy gives one); then the feet's swing references (:meth:`FootSchedule.drive`)."""
        measured = self.measured = state if isinstance(state, MeasuredState) else self.measurer.measure(state)
        feet = self.feet
        feet.feedback(measured)
        feet.land(measured)
        com = self._com_reference
        decided = False
        for strategy in self._strategies:
            decision = strategy.decide(measured, feet, com)
            if not isinstance(decision, Decision):
                raise InvalidParameterError(
                    f"{type(strategy).__name__}.decide returned {type(decision).__name__}, not a Decision"
                )
            for request in decision.steps:
                feet.request_step(request, measured)
            if decision.com is not None:
                com, decided = decision.com, True
        feet.drive(measured)
        if decided or self._com_decided:  # (a strategy's; or the caller's back after one)
            self.com_task.set_reference(com)
        self._com_decided = decided

    def compute(self, t: float, q: np.ndarray, v: np.ndarray) -> ControlOutput:
        """One control step at (t, q, v) (:meth:`Controller.compute`); with strategies, the state
        is observed first when :meth:`observe` did not take it at t (they decide from it)."""
        if self._strategies and (self.measured is None or self.measured.t != t):
            self.observe(PlantState(t, q, v))
        return super().compute(t, q, v)

    @property
    def released(self) -> set[str]:
        """The feet contact feedback released (lost unplanned; a new set)."""
        return self.feet.released

    def lifted(self) -> set[str]:
        """The feet (keys of the spec's ``[feet]``) lifted or being unloaded, by a step or by
        contact feedback (a new set)."""
        return self.feet.lifted()

    def held_feet(self) -> list[str]:
        """The feet (keys of the spec's ``[feet]``, in the contacts' order) held in contact: their
        contact in the problem, not lifted nor being unloaded."""
        check_contact = self.formulation.check_contact
        return [key for key in self.feet.held() if check_contact(self._contacts[key].name)]

    def held_contact_frames(self) -> tuple[str, ...]:
        feet = self.robot.spec.feet
        return tuple(feet[key] for key in self.held_feet())

    @property
    def stepping(self) -> bool:
        """Whether a planned step is under way (:attr:`FootSchedule.stepping`)."""
        return self.feet.stepping

    def foot_placement(self, key: str) -> pin.SE3:
        """Placement of a foot frame (a key of the spec's ``[feet]``) at the last computed state."""
        return self.robot.frame_placement(self.data, lookup("foot", key, self.robot.spec.feet))
