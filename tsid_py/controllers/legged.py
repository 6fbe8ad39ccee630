"""What the biped and quadruped controllers share: a floating base on its feet, a CoM task, a posture
task and torque bounds (the set-up of TSID's TsidBiped and quadruped demo)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.formulation import InverseDynamicsFormulation
from tsid_py.geometry import flat_rotation, heading
from tsid_py.loop.controller import Controller
from tsid_py.loop.measured import FootState, MeasuredState, Measurer
from tsid_py.loop.plant import PlantState
from tsid_py.robot_specs import Robot
from tsid_py.solvers.quadprog_solver import SolverHQuadProg
from tsid_py.solvers.solver_base import Solver
from tsid_py.spec_check import check_stance
from tsid_py.tasks.task_actuation_bounds import TaskActuationBounds
from tsid_py.tasks.task_com_equality import TaskComEquality
from tsid_py.tasks.task_joint_posture import TaskJointPosture
from tsid_py.trajectories import TrajectorySample
from tsid_py.validation import as_vector, lookup

CONTACT_DEBOUNCE = 3  # measured control steps a contact must be lost (or back) before the controller acts
CONTACT_RAMP = 0.02  # [s] over which a contact lost unplanned is unloaded, or a regained one loaded
CONTACT_SETTLE = 0.05  # [s] after its touch-down a contact is not released: a landing foot bounces


class LeggedController(Controller):
    """A legged robot's formulation, solver and initial state; subclasses add the contacts and tasks.

    Args:
        robot: A floating-base robot whose spec names its feet (``[feet]``).
        name: The formulation's name.
        solver: QP backend (quadprog by default).
        q0: Initial configuration; by default the spec's, lowered so that its feet stand on the
            ground (:meth:`~tsid_py.robot_specs.Robot.standing_configuration`).

    Raises:
        RobotSpecError: The spec's feet do not stand on the ground in q0, as its own collision
            geometry says (:func:`~tsid_py.spec_check.check_stance`).
    """

    def __init__(self, robot: Robot, name: str, solver: Solver | None, q0: np.ndarray | None = None) -> None:
        super().__init__(robot, InverseDynamicsFormulation(name, robot), solver or SolverHQuadProg("qp"))
        self._q0 = robot.standing_configuration() if q0 is None else as_vector("q0", q0, robot.nq)
        check_stance(robot, self._q0)
        robot.compute_all_terms(self.data, self._q0, robot.zero_velocity())
        self.measurer = Measurer(robot, self._q0)  # for a plant's state given to observe
        self.measured: MeasuredState | None = None  # the last observed
        self._feedback_counts: dict[str, int] = {}
        self._landed: dict[str, float] = {}  # contacts that touched since they were added: when [s]
        self._landing_rotation: dict[str, np.ndarray] = {}  # and their rotation then, flat (yaw only)
        sole = robot.spec.sole  # the sole's depth below its frame [m] (point feet: None)
        self._sole_depth = None if sole is None else sole.lz
        self.released: set[str] = set()  # feet released by contact feedback, not by a plan

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
        self.com_task.set_reference(TrajectorySample(self._com_initial))

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
        """CoM reference (pos [m], vel [m/s], acc [m/s^2]) in the world frame."""
        self.com_task.set_reference(sample)

    # ------------------------------------------------------------ contact feedback
    def observe(self, state: MeasuredState | PlantState) -> None:
        """Take in the step's measured state (a plant's state is measured first, with
        :attr:`measurer`): contact feedback, from a plant that measures its contacts (the
        integrator measures none).

        Each contact of the problem that touches is re-anchored where it is measured on the ground
        (its x, y and yaw; flat at its height: :meth:`_on_ground`), so that ground compliance (soles
        sinking a millimetre) does not turn, through the contact's position gain, into the robot
        rising off its CoM reference, and a foot that rolls on an edge is brought back flat. A
        contact of the problem that stops touching for ``CONTACT_DEBOUNCE`` measured steps, after
        it touched once since it was added (a contact added for a planned touch-down first waits
        for the foot to land) and ``CONTACT_SETTLE`` after its touch-down (a landing foot bounces),
        was lost unplanned (a push lifted the foot): :meth:`contact_lost` releases it; a foot
        released that way touches again for as many steps: :meth:`contact_regained` puts it back
        where it landed. Planned swings (contacts removed by the caller) are the caller's. (The
        debounce is no touch rule: the feet touch as the measured state says; it is how long the
        controller waits before it acts on a change.)
        """
        measured = self.measured = state if isinstance(state, MeasuredState) else self.measurer.measure(state)
        if not measured.measures_contacts:
            return
        counts = self._feedback_counts
        for key, foot in measured.feet.items():
            contact = self._contacts.get(key)
            if foot.measurement is None or contact is None:
                continue
            placement, touching = foot.placement, foot.touching
            active = self.formulation.check_contact(contact.name)
            if active and touching:
                counts[key] = 0
                if key not in self._landed:
                    self._landed[key] = measured.t
                    self._landing_rotation[key] = flat_rotation(heading(placement.rotation))
                contact.set_reference(self._on_ground(foot, self._landing_rotation[key]))
            elif active and (key not in self._landed or measured.t - self._landed[key] < CONTACT_SETTLE):
                counts[key] = 0  # added by a plan and not down yet, or just landed (it may bounce)
            elif active or (key in self.released and touching):
                counts[key] = counts.get(key, 0) + 1
                if counts[key] >= CONTACT_DEBOUNCE:
                    counts[key] = 0
                    (self.contact_lost if active else self.contact_regained)(key, pin.SE3(placement))
            else:
                counts[key] = 0

    def lifted(self) -> set[str]:
        """The feet (keys of the spec's ``[feet]``) lifted or being unloaded, by a plan or by contact
        feedback (:attr:`released`). None by default: the quadruped keeps its feet down."""
        return set()

    def held_feet(self) -> list[str]:
        """The feet (keys of the spec's ``[feet]``, in the contacts' order) held in contact: their
        contact in the problem, not lifted nor being unloaded."""
        lifted, check_contact = self.lifted(), self.formulation.check_contact
        return [
            key
            for key, contact in self._contacts.items()
            if key not in lifted and check_contact(contact.name)
        ]

    def held_contact_frames(self) -> tuple[str, ...]:
        feet = self.robot.spec.feet
        return tuple(feet[key] for key in self.held_feet())

    @property
    def stepping(self) -> bool:
        return bool(self.lifted() - self.released)

    def _on_ground(self, foot: FootState, rotation: np.ndarray) -> pin.SE3:
        """A measured foot placement as a contact holds it: where it is (x, y), flat, turned as it
        landed (``rotation``, the flat rotation of its yaw then), its sole's lowest corner where it
        was measured (a sole sunk a millimetre into soft ground stays there; the ground is flat).
        A foot that a push rolls on an edge, where it can pivot, is then held back flat and facing
        as it landed instead of where it rolled and turned to."""
        translation = foot.placement.translation
        height = float(translation[2])
        if self._sole_depth is not None:
            height = foot.lowest + self._sole_depth
        return pin.SE3(rotation, np.array([translation[0], translation[1], height]))

    def contact_lost(self, key: str, placement: pin.SE3) -> None:
        """A contact of the problem stopped touching, unplanned; ``placement`` is the foot's now.

        Nothing by default (the foot stays a contact); the biped releases it."""

    def contact_regained(self, key: str, placement: pin.SE3) -> None:
        """A foot released by :meth:`contact_lost` touches again at ``placement``."""

    def foot_placement(self, key: str) -> pin.SE3:
        """Placement of a foot frame (a key of the spec's ``[feet]``) at the last computed state."""
        return self.robot.frame_placement(self.data, lookup("foot", key, self.robot.spec.feet))
