"""A contact whose wrench is given, not decided: a hand pushing a wall with 30 N.

The user sets or schedules the wrench w the environment applies on the frame. So w is not a
variable of the QP: it enters the equation of motion as a measured wrench does
(:mod:`tsid_py.contacts.measured_force`; TSID's src/contacts/measured-6Dwrench.cpp). The QP then
picks the torques that balance w while the other tasks run.

The frame must also be held where it touches. Otherwise the controller would let the hand slide
or leave the wall, while assuming the wall still pushes. So the contact owns a hold task,
``motion_task``: a :class:`~tsid_py.tasks.TaskSE3Equality` on the frame, toward
``set_reference``. Add it to the formulation at priority 0, as hard as a rigid contact's motion
constraint, or as a weighted cost at priority 1. Give it the mask of the directions the surface
blocks::

    hand = PrescribedWrench("hand", robot, "gripper_left_joint")
    hand.use_local_frame(False)                      # w in world axes
    hand.set_reference(robot.frame_placement(data, "gripper_left_joint"))
    hand.motion_task.kp = 100.0
    form.add_measured_force(hand)                    # w enters the dynamics
    form.add_motion_task(hand.motion_task, priority=0)   # the hand stays on the wall
    hand.set_schedule(linear_ramp([0, 0, 0, 0, 0, 0], [30, 0, 0, 0, 0, 0], t0=0.5, duration=0.5))

With a :class:`~tsid_py.contacts.Contact6d` on the hand instead, the force is a variable: the
solver may pick any force in the cone, steered by a force task. Choose that when the controller
is to regulate the force. Choose a prescribed wrench when the force is set from outside: a force
plan, a haptic device, a simulation of a known load.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pinocchio as pin

from tsid_py.contacts.measured_force import MeasuredForceBase
from tsid_py.errors import InvalidParameterError
from tsid_py.robot_wrapper import Frame, RobotWrapper
from tsid_py.tasks.task_se3_equality import TaskSE3Equality
from tsid_py.validation import as_scalar, as_vector

Schedule = Callable[[float], object]  # t [s] -> the wrench (6-vector [N, N m]) at t


def linear_ramp(start: object, end: object, t0: float, duration: float) -> Schedule:
    """A schedule that ramps the wrench linearly.

    Args:
        start: The wrench until t0, a 6-vector [N, N m].
        end: The wrench from t0 + duration on.
        t0: When the ramp starts [s].
        duration: The ramp's duration [s], >= 0.

    Returns:
        A function of t [s] giving the wrench at t (a new array).
    """
    start, end = as_vector("ramp start", start, 6), as_vector("ramp end", end, 6)
    t0, duration = as_scalar("t0", t0), as_scalar("duration", duration, minimum=0.0)

    def schedule(t: float) -> np.ndarray:
        s = 1.0 if duration == 0.0 else min(max((t - t0) / duration, 0.0), 1.0)
        return start + s * (end - start) if t >= t0 else start.copy()

    return schedule


class PrescribedWrench(MeasuredForceBase):
    """A known wrench w = (force [N], torque [N m]) applied on a frame, set or scheduled by the user.

    ``set_wrench(w)`` holds w until changed. ``clear()`` sets it to zero: the contact pushes no
    more. ``set_schedule(f)`` makes it f(t), evaluated at every ``compute_problem_data(t, ...)``.
    w is in the frame's axes at its origin (default), or in world-aligned axes after
    ``use_local_frame(False)``. Add it with ``formulation.add_measured_force``. Hold the frame with
    :attr:`motion_task` (module docstring).

    For the physics checks (:func:`tsid_py.physics.check_solution`), it can stand beside the
    contacts as ``{name: (prescribed, empty)}``. :meth:`wrench` gives the wrench it applied in the
    last computed problem, in the frame's axes. It is not ``unilateral``: no friction checks.

    Args:
        name: Its name (unique among the formulation's measured forces).
        robot: The robot.
        frame: The frame the wrench acts on.
    """

    size = 6
    kind = "wrench"
    unilateral = False  # no normal, no friction pyramid: nothing for the contact checks to check

    def __init__(self, name: str, robot: RobotWrapper, frame: Frame) -> None:
        super().__init__(name, robot, frame)
        self.motion_task = TaskSE3Equality(f"{name}-hold", robot, frame)
        self._schedule: Schedule | None = None
        self._applied = np.zeros(6)  # the wrench of the last computed problem, in the frame's axes

    # ------------------------------------------------------------------ the wrench
    def set_wrench(self, wrench: object) -> None:
        """Hold w [N, N m] from now on (a schedule set before is dropped)."""
        self._force = as_vector(f"wrench of {self.name!r}", wrench, 6)
        self._schedule = None

    def set_measured_contact_force(self, force: object) -> None:
        """TSID's name for :meth:`set_wrench`."""
        self.set_wrench(force)

    def clear(self) -> None:
        """No wrench from now on (w = 0; the schedule is dropped)."""
        self.set_wrench(np.zeros(6))

    def set_schedule(self, schedule: Schedule) -> None:
        """Make w = schedule(t) at every computed problem, t the problem's time [s].

        Raises:
            InvalidParameterError: ``schedule`` is not callable.
        """
        if not callable(schedule):
            raise InvalidParameterError(
                f"the schedule of {self.name!r} must be a function of t, got {schedule!r}"
            )
        self._schedule = schedule

    @property
    def scheduled(self) -> bool:
        """Whether w follows a schedule."""
        return self._schedule is not None

    @property
    def prescribed_wrench(self) -> np.ndarray:
        """w as last set or evaluated, in the axes of ``use_local_frame`` [N, N m] (a copy)."""
        return self._force.copy()

    def wrench_at(self, t: float) -> np.ndarray:
        """w at time t [s]: the schedule's value, or the wrench set (a new array)."""
        if self._schedule is None:
            return self._force.copy()
        return as_vector(f"wrench of {self.name!r} at t = {t:g} s", self._schedule(float(t)), 6)

    def advance(self, t: float) -> None:
        """Take the schedule's wrench at time t [s] (the formulation calls it at every problem)."""
        if self._schedule is not None:
            self._force = self.wrench_at(t)

    # -------------------------------------------------------------- the dynamics
    def compute_joint_torques(self, data: pin.Data) -> np.ndarray:
        """J^T w, size nv [N, N m] (and the wrench in the frame's axes is kept for :meth:`wrench`)."""
        if self.local_frame:
            self._applied = self._force.copy()
        else:
            rotation_t = self.robot.frame_placement(data, self.frame_id).rotation.T
            self._applied = np.concatenate([rotation_t.dot(self._force[:3]), rotation_t.dot(self._force[3:])])
        return super().compute_joint_torques(data)

    def wrench(self, forces: object = None) -> np.ndarray:
        """The wrench applied in the last computed problem, at the frame origin in the frame's axes
        [N, N m] (a copy; ``forces`` is ignored: the wrench is not a variable)."""
        return self._applied.copy()

    # ----------------------------------------------------------------- the hold
    def set_reference(self, placement: pin.SE3) -> None:
        """Where :attr:`motion_task` holds the frame (world frame)."""
        self.motion_task.set_reference(placement)
