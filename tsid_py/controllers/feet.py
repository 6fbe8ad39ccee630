"""The feet's phases: the one owner of a legged controller's contacts and foot tasks.

Each foot of a :class:`~tsid_py.controllers.legged.LeggedController` is in one phase:

- ``stance``: its contact is in the problem (while it is loaded after a touch-down too);
- ``unloading``: a step was asked for; its contact is being unloaded (a ramp to zero force
  before lift-off, :meth:`InverseDynamicsFormulation.remove_rigid_contact`), and its foot task
  (an SE3 task at level 1) holds it;
- ``swing``: off the ground, the foot task follows the step's trajectory (or, for a foot lifted by
  hand with :meth:`FootSchedule.lift`, the references its caller sets);
- ``landing``: past the planned touch-down of a step asked to land on touch, the foot goes on down
  at ``descent_speed`` until the plant says it touches (such a step also lands early, on a touch
  the plant measures in the second half of its swing once the foot was off the ground, its sole
  flat: the ground was higher than the foot was told; :class:`StepRequest`);
- ``released``: contact feedback found it lost unplanned (a push lifted it): its contact is
  unloaded over :data:`CONTACT_RAMP` and the foot task holds it where it was.

Only this object adds or removes contacts and foot tasks. A step is asked for with a
:class:`StepRequest` (:meth:`FootSchedule.request_step`): unload, swing along the trajectory,
land (at the planned time, or when the foot touches), load. Strategies ask; the schedule acts,
once per control step: contact feedback (:meth:`FootSchedule.feedback`), the steps due put down
(:meth:`FootSchedule.land`), then, after the strategies' requests, the swing references
(:meth:`FootSchedule.drive`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import cast

import numpy as np
import pinocchio as pin

from tsid_py.contacts.contact_base import ContactBase
from tsid_py.errors import InvalidParameterError
from tsid_py.formulation import InverseDynamicsFormulation
from tsid_py.geometry import flat_rotation, heading
from tsid_py.loop.measured import FootState, MeasuredState
from tsid_py.planning.swing_foot import TrajectorySE3SwingFoot
from tsid_py.tasks.task_se3_equality import TaskSE3Equality
from tsid_py.trajectories import TrajectorySample
from tsid_py.validation import as_scalar, lookup

PHASES = ("stance", "unloading", "swing", "landing", "released")
CONTACT_DEBOUNCE = 3  # measured control steps a contact must be lost (or back) before the feet act
CONTACT_RAMP = 0.02  # [s] over which a contact lost unplanned is unloaded, or a regained one loaded
CONTACT_SETTLE = 0.05  # [s] after its touch-down a contact is not released: a landing foot bounces
EVENT_TOLERANCE = 1e-9  # [s] an event at time t_e happens at the first control step with t >= t_e - this
EARLY_LANDING_TILT = (
    0.05  # [rad] by default, a foot touching before its planned touch-down lands only this flat
)


@dataclass(frozen=True)
class StepRequest:
    """A step asked of the feet.

    Attributes:
        side: The foot (a key of the spec's ``[feet]``).
        trajectory: Its swing: lift-off at ``trajectory.t0``, touch-down at ``t0 + duration``.
        unload: [s] the contact's unloading ramp, from the request to the lift-off.
        load: [s] the contact's loading ramp after touch-down.
        land_on_touch: After the planned touch-down, go on down at ``descent_speed`` [m/s] until
            the plant says the foot touches; and land on a touch the plant measures in the second
            half of the swing, before the planned touch-down, once the foot was off the ground and
            with its sole within ``flat_tilt`` of flat (else the contact comes back at the planned
            time, where the foot is).
        descent_speed: [m/s] see ``land_on_touch``.
        flat_tilt: [rad] see ``land_on_touch`` (the push recovery's ``tilt``: a foot it would take
            as rolled on an edge does not land early).
        planned: A planned step (the verdict judges capturability again after its touch-down);
            False for a step that answers a lost balance (the verdict goes on judging through it).
    """

    side: str
    trajectory: TrajectorySE3SwingFoot
    unload: float = 0.0
    load: float = 0.0
    land_on_touch: bool = False
    descent_speed: float = 0.2
    planned: bool = True
    flat_tilt: float = EARLY_LANDING_TILT

    def __post_init__(self) -> None:
        if not isinstance(self.side, str):
            raise InvalidParameterError(f"a step's side must be a foot's name, got {self.side!r}")
        trajectory = self.trajectory
        if not isinstance(trajectory, TrajectorySE3SwingFoot):
            raise InvalidParameterError(
                f"a step's trajectory must be a TrajectorySE3SwingFoot, got {type(trajectory).__name__}"
            )
        for name in ("land_on_touch", "planned"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidParameterError(
                    f"StepRequest.{name} must be True or False, got {getattr(self, name)!r}"
                )
        own = TrajectorySE3SwingFoot(  # its own: the caller's may change after
            trajectory.name,
            trajectory.start,
            trajectory.end,
            trajectory.t0,
            trajectory.duration,
            trajectory.height,
            trajectory.step_over,
        )
        object.__setattr__(self, "trajectory", own)
        for name in ("unload", "load"):
            object.__setattr__(self, name, as_scalar(name, getattr(self, name), minimum=0.0))
        object.__setattr__(
            self, "descent_speed", as_scalar("descent_speed", self.descent_speed, minimum=0.0, strict=True)
        )
        object.__setattr__(self, "flat_tilt", as_scalar("flat_tilt", self.flat_tilt, minimum=0.0))

    @property
    def t_lift(self) -> float:
        """The lift-off [s]."""
        return self.trajectory.t0

    @property
    def t_land(self) -> float:
        """The planned touch-down [s]."""
        return self.trajectory.t0 + self.trajectory.duration


class Landing:
    """A step's foot back on the ground: its request, when its contact came back [s] and where the
    foot frame was measured then (world; a copy at each read)."""

    __slots__ = ("_placement", "request", "t")

    def __init__(self, request: StepRequest, t: float, placement: pin.SE3) -> None:
        self.request, self.t, self._placement = request, float(t), pin.SE3(placement)

    @property
    def placement(self) -> pin.SE3:
        return pin.SE3(self._placement)

    @property
    def side(self) -> str:
        return self.request.side


class FootSchedule:
    """The phases of a legged controller's feet (see the module docstring).

    Args:
        formulation: The controller's formulation.
        contacts: Each foot's contact, by key.
        foot_tasks: Each foot's SE3 task, by key (none: the feet never leave the ground, as the
            quadruped's; a contact lost unplanned then stays a contact).
        force_reg_weight: The contacts' force regularization weight (when they come back).
        foot_weight: The foot tasks' weight (level 1).
        planned_force: The total normal force [N] of a contact in the last step's solution (None:
            not solved yet), where its unloading starts.
        sole_depth: The sole's depth below its frame [m] (None: point feet).
    """

    def __init__(
        self,
        formulation: InverseDynamicsFormulation,
        contacts: Mapping[str, ContactBase],
        foot_tasks: dict[str, TaskSE3Equality],
        force_reg_weight: float,
        foot_weight: float,
        planned_force: Callable[[str], float | None],
        sole_depth: float | None,
    ) -> None:
        self._formulation, self._contacts, self._tasks = formulation, contacts, foot_tasks
        self._force_reg_weight, self._foot_weight = force_reg_weight, foot_weight
        self._planned_force, self._sole_depth = planned_force, sole_depth
        self._phase = dict.fromkeys(contacts, "stance")
        self._requests: dict[str, StepRequest] = {}  # the steps under way
        self._airborne: set[str] = set()  # feet of a step under way seen off the ground after lift-off
        self._counts = dict.fromkeys(contacts, 0)  # measured steps a contact is lost (or back)
        self._landed: dict[str, float] = {}  # contacts that touched since they were added: when [s]
        self._landing_rotation: dict[str, np.ndarray] = {}  # and their rotation then, flat (yaw only)
        self._landings: list[Landing] = []  # every step's touch-down, in order

    # ------------------------------------------------------------------ queries
    def phase(self, side: str) -> str:
        """The phase of a foot (one of :data:`PHASES`)."""
        return lookup("foot", side, self._phase)

    def request(self, side: str) -> StepRequest | None:
        """The step a foot is carrying out (None: none)."""
        return self._requests.get(side)

    @property
    def released(self) -> set[str]:
        """The feet contact feedback released (lost unplanned; a new set)."""
        return {side for side, phase in self._phase.items() if phase == "released"}

    def lifted(self) -> set[str]:
        """The feet off the ground or being unloaded to lift (every phase but stance; a new set)."""
        return {side for side, phase in self._phase.items() if phase != "stance"}

    def held(self) -> list[str]:
        """The feet in stance, in the contacts' order."""
        return [side for side, phase in self._phase.items() if phase == "stance"]

    @property
    def stepping(self) -> bool:
        """Whether a planned step is under way: a foot lifted on purpose (by a planned request,
        or by hand), not one contact feedback released nor one a strategy steps with to answer a
        lost balance (``StepRequest.planned`` False)."""
        for side, phase in self._phase.items():
            if phase in ("stance", "released"):
                continue
            request = self._requests.get(side)
            if request is None or request.planned:
                return True
        return False

    # ------------------------------------------------------------------ lift and put down
    def lift(self, side: str, transition_duration: float, placement: pin.SE3) -> None:
        """Lift a foot by hand: its contact is unloaded over ``transition_duration`` [s], then
        removed; its foot task holds ``placement`` until :meth:`set_reference` moves it. A foot
        contact feedback released is taken over as it is (nothing to unload)."""
        lookup("foot", side, self._phase)
        if self._phase[side] == "released":
            self._phase[side] = "swing"
            return
        if self._phase[side] != "stance":
            raise InvalidParameterError(f"the {side} foot is already lifted (or being unloaded)")
        task = lookup("foot task", side, self._tasks)
        transition_duration = as_scalar("transition_duration", transition_duration, minimum=0.0)
        contact = self._contacts[side]
        task.set_reference(placement)
        self._formulation.add_motion_task(task, weight=self._foot_weight, priority=1)
        planned = self._planned_force(contact.name)
        self._formulation.remove_rigid_contact(
            contact.name, transition_duration, contact.max_normal_force if planned is None else planned
        )
        self._phase[side] = "swing"

    def put_down(self, side: str, transition_duration: float, placement: pin.SE3) -> None:
        """Put a foot down at ``placement``: its contact holds it, the foot task leaves, and with
        ``transition_duration`` > 0 [s] the contact's normal force may grow linearly from f_min to
        f_max over it (no force jump at touch-down). Contact feedback waits for its touch-down."""
        lookup("foot", side, self._phase)
        contact = self._contacts[side]
        if self._formulation.check_contact(contact.name):
            raise InvalidParameterError(
                f"the {side} foot is in contact (or its contact is still being unloaded): nothing to add"
            )
        transition_duration = as_scalar("transition_duration", transition_duration, minimum=0.0)
        self._landed.pop(side, None)
        contact.set_reference(placement)
        self._formulation.remove_task(self._tasks[side].name)
        self._formulation.add_rigid_contact(
            contact, force_reg_weight=self._force_reg_weight, transition_duration=transition_duration
        )
        self._phase[side] = "stance"
        self._requests.pop(side, None)
        self._airborne.discard(side)

    def set_reference(self, side: str, sample: TrajectorySample | pin.SE3) -> None:
        """The reference of a lifted foot's task: a placement or an SE3 sample (world frame)."""
        lookup("foot task", side, self._tasks).set_reference(sample)

    # ------------------------------------------------------------------ steps
    def request_step(self, request: StepRequest, state: MeasuredState) -> None:
        """Start (or, for a foot carrying out a step, retarget) a step; :meth:`drive` and
        :meth:`land` carry it out. A foot in stance starts unloading now, held where it is
        measured; a foot contact feedback released is taken over (it swings from where it is)."""
        if not isinstance(request, StepRequest):
            raise InvalidParameterError(f"request_step needs a StepRequest, got {type(request).__name__}")
        side = request.side
        if side in self._phase and side not in self._tasks:
            raise InvalidParameterError(f"the {side} foot has no foot task: it stays down (no step for it)")
        phase = self.phase(side)
        if phase == "stance":
            self.lift(side, request.unload, state.feet[side].placement)
        elif phase == "released":
            self._phase[side] = "swing"
        elif side not in self._requests:
            raise InvalidParameterError(f"the {side} foot was lifted by hand: put it down before a step")
        self._requests[side] = request
        self._phase[side] = "unloading" if state.t < request.t_lift - EVENT_TOLERANCE else "swing"

    def land(self, state: MeasuredState) -> tuple[Landing, ...]:
        """Put down the feet whose step is due at the measured state: past its planned touch-down
        (and touching, for a step that lands on touch), the contact comes back where the foot is
        measured, loaded over the request's ``load``. The touch-downs of this step (also in
        :attr:`landings`). Called before the strategies decide, so that they see them."""
        landed = []
        for side, request in list(self._requests.items()):
            foot = state.feet[side]
            if not foot.touching and state.t >= request.t_lift - EVENT_TOLERANCE:
                self._airborne.add(side)
            if state.t < request.t_land - EVENT_TOLERANCE:
                early = (  # a step that lands on touch: on a measured touch once it comes down
                    request.land_on_touch
                    and side in self._airborne
                    and foot.touching
                    and foot.measurement is not None  # (the height rule's 5 mm may be in the air)
                    and state.t >= request.t_lift + request.trajectory.duration / 2 - EVENT_TOLERANCE
                    and foot.rotation[2, 2] >= math.cos(request.flat_tilt)  # (tilted: its swing flattens it)
                )
                if not early:
                    continue
            elif request.land_on_touch and not foot.touching:
                continue  # late: on down until it touches (drive)
            self.put_down(side, request.load, foot.placement)
            landed.append(Landing(request, state.t, foot.placement))
        self._landings.extend(landed)
        return tuple(landed)

    def drive(self, state: MeasuredState) -> None:
        """The foot tasks' references of the steps under way at the measured state: the swing
        trajectory's sample, or, past the planned touch-down of a step that lands on touch, the
        landing placement going on down at its ``descent_speed``. Called after the strategies'
        requests."""
        t = state.t
        for side, request in self._requests.items():
            if t < request.t_land - EVENT_TOLERANCE:
                self._phase[side] = "unloading" if t < request.t_lift - EVENT_TOLERANCE else "swing"
                self._tasks[side].set_reference(request.trajectory.sample(t))
            else:
                self._phase[side] = "landing"
                self._tasks[side].set_reference(_descending(request, t))

    @property
    def landings(self) -> tuple[Landing, ...]:
        """Every step's touch-down so far, in order (a new tuple)."""
        return tuple(self._landings)

    @property
    def landed(self) -> int:
        """How many steps have touched down (the length of :attr:`landings`)."""
        return len(self._landings)

    # ------------------------------------------------------------------ contact feedback
    def feedback(self, state: MeasuredState) -> None:
        """Contact feedback, from a plant that measures its contacts (nothing otherwise).

        Each contact of the problem that touches is re-anchored where it is measured on the ground
        (its x, y and yaw; flat at its height: :meth:`_on_ground`), so that ground compliance (soles
        sinking a millimetre) does not turn, through the contact's position gain, into the robot
        rising off its CoM reference, and a foot that rolls on an edge is brought back flat. A
        contact of the problem that stops touching for :data:`CONTACT_DEBOUNCE` measured steps,
        after it touched once since it was added (a contact added for a planned touch-down first
        waits for the foot to land) and :data:`CONTACT_SETTLE` after its touch-down (a landing
        foot bounces), was lost unplanned (a push lifted the foot): a foot with a task (a
        quadruped's have none: they stay down), while another foot is in contact (the last one
        stays), is released, its contact unloaded over :data:`CONTACT_RAMP`; a foot released that
        way that touches again for as many steps is put back where it landed. (The debounce is no
        touch rule: the feet touch as the measured state says; it is how long the feet wait before
        they act on a change.)
        """
        if not state.measures_contacts:
            return
        counts, check_contact = self._counts, self._formulation.check_contact
        for key, contact in self._contacts.items():
            foot = state.feet[key]
            if foot.measurement is None:
                continue
            active, touching = check_contact(contact.name), foot.touching
            if active and touching:
                counts[key] = 0
                if key not in self._landed:
                    self._landed[key] = state.t
                    self._landing_rotation[key] = flat_rotation(heading(foot.rotation))
                contact.set_reference(self._on_ground(foot, self._landing_rotation[key]))
            elif active and (key not in self._landed or state.t - self._landed[key] < CONTACT_SETTLE):
                counts[key] = 0  # added by a plan and not down yet, or just landed (it may bounce)
            elif active or (self._phase[key] == "released" and touching):
                counts[key] += 1
                if counts[key] >= CONTACT_DEBOUNCE:
                    counts[key] = 0
                    (self._release if active else self._regain)(key, foot.placement)
            else:
                counts[key] = 0

    def _release(self, key: str, placement: pin.SE3) -> None:
        """A foot that stopped touching, unplanned: released, held where it is (a push must not be
        answered by pulling on the ground), unless it is the last one in contact or is not held
        in stance."""
        check_contact = self._formulation.check_contact
        others = [side for side, c in self._contacts.items() if side != key and check_contact(c.name)]
        if others and key in self._tasks and self._phase[key] == "stance":
            self.lift(key, CONTACT_RAMP, placement)
            self._phase[key] = "released"

    def _regain(self, key: str, placement: pin.SE3) -> None:
        """A released foot touches again: its contact comes back where it landed, loaded over
        CONTACT_RAMP."""
        self.put_down(key, CONTACT_RAMP, placement)

    def _on_ground(self, foot: FootState, rotation: np.ndarray) -> pin.SE3:
        """A measured foot placement as a contact holds it: where it is (x, y), flat, turned as it
        landed (``rotation``, the flat rotation of its yaw then), its sole's lowest corner where it
        was measured (a sole sunk a millimetre into soft ground stays there; the ground is flat).
        A foot that a push rolls on an edge, where it can pivot, is then held back flat and facing
        as it landed instead of where it rolled and turned to."""
        translation = foot.translation
        height = float(translation[2]) if self._sole_depth is None else foot.lowest + self._sole_depth
        return pin.SE3(rotation, np.array([translation[0], translation[1], height]))


def _descending(request: StepRequest, t: float) -> TrajectorySample:
    """Past its planned touch-down, the landing placement going on down at the request's speed."""
    end = cast(pin.SE3, request.trajectory.end)
    below = end.translation - np.array([0.0, 0.0, request.descent_speed * (t - request.t_land)])
    position = np.concatenate([below, end.rotation.ravel(order="F")])
    velocity = np.array([0.0, 0.0, -request.descent_speed, 0.0, 0.0, 0.0])
    return TrajectorySample(position, velocity, tangent_size=6)
