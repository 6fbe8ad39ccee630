"""A floating base's state from what a robot measures: a kinematic-inertial estimator.

:class:`KinematicInertialEstimator` is the simple estimator of humanoid robots (Flayols et al.
2017, "Experimental evaluation of simple estimators for humanoid robots"; the filter of the
orientation is Mahony et al. 2008's), chosen for being exact where its assumptions hold (feet that
stand still do not slip) and having two gains a user can reason about:

- **joints**: the encoders' positions; their velocities the encoders' differences through a
  first-order low-pass filter (``SensorParams.velocity_cutoff``);
- **orientation**: the gyroscope integrated on SO(3), R <- R exp(omega dt), its tilt pulled
  toward the accelerometer's gravity direction at ``tilt_gain`` [1/s] (a complementary filter:
  the gyroscope above ~tilt_gain / (2 pi) Hz, the accelerometer below); yaw is the gyroscope's
  alone, and drifts with its bias;
- **contacts**: a foot touches when its force/torque sensor's normal force is above
  ``contact_threshold`` of the robot's weight, and stops touching when it falls below
  ``contact_release`` (a hysteresis: a foot lightly loaded while the weight goes over to the
  other one is not lifted);
- **base velocity**: leg odometry, the point each touching foot presses on (its centre of
  pressure, below) held still: its velocity J_base v_base + J_joints q_dot = 0 solved for the
  base's linear velocity (the gyroscope gives the angular one), averaged over the touching feet,
  fused with the accelerometer's integral at ``velocity_gain`` [1/s] (the accelerometer above,
  the legs below);
- **base position**: each touching foot anchored where it was when it touched (on known ground,
  ``EstimatorParams.flat_ground``, at the height of the ground the robot started on, raised by a
  terrain's surface under the point it presses on when the estimator is given the terrain: the
  legs' odometry then does not drift up or down step after step, a foot's soft contact sinking a
  millimetre or two under load each time); the base is where the anchored feet put it through the
  kinematics (their mean); with no foot down, the velocity integrated. A sole that tilts while
  it touches turns about its centre of pressure (from its force/torque sensor, on the sole): the
  point it presses on stays, its frame moves, p <- c + R_new R_old^T (p - c). Anchoring the frame
  itself took a foot rolled onto its toe as still, and put the base up to 5 cm too low after a
  hard push.

The estimate is a :class:`~tsid_py.loop.plant.PlantState` (q, v in Pinocchio's conventions, and
the feet's contacts as the sensors say), what a controller takes. It needs the configuration the
robot starts from (a robot knows where it is put down).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from tsid_py.errors import InvalidParameterError
from tsid_py.geometry import GRAVITY
from tsid_py.loop.measured import MeasuredState
from tsid_py.loop.plant import ContactMeasurement, PlantState
from tsid_py.loop.sensing import Reading, SensorParams
from tsid_py.planning.terrain import Terrain
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.validation import as_scalar, as_vector

ESTIMATORS = ("kinematic-inertial",)  # the estimators ControlLoop(estimator=...) and --estimator name


@dataclass(frozen=True)
class EstimatorParams:
    """The estimator's gains [1/s] (:mod:`tsid_py.loop.estimation`), and whether the ground is
    known (``flat_ground``: a foot that touches down presses on the ground the robot started on,
    or, for an estimator given a terrain, on the terrain's surface there)."""

    tilt_gain: float = 0.05
    velocity_gain: float = 20.0
    flat_ground: bool = True

    def __post_init__(self) -> None:
        for name in ("tilt_gain", "velocity_gain"):
            as_scalar(f"EstimatorParams.{name}", getattr(self, name), minimum=0.0)
        if not isinstance(self.flat_ground, bool):
            raise InvalidParameterError(
                f"EstimatorParams.flat_ground must be True or False, got {self.flat_ground!r}"
            )


class KinematicInertialEstimator:
    """The base's state from joint encoders, a base IMU and the feet's force/torque sensors (see
    the module docstring).

    Args:
        robot: The robot (its spec's ``[feet]`` are the feet it stands on).
        q0: The configuration it starts from, at rest.
        dt: The control period [s].
        sensors: The sensors' numbers (the velocity filter's cut-off, the contact threshold).
        params: The gains.
        terrain: The blocks on the floor the robot walks on (:class:`~tsid_py.planning.terrain.Terrain`;
            None: the floor): a foot touching down presses on their surface (``flat_ground``).
    """

    name = "kinematic-inertial"

    def __init__(
        self,
        robot: RobotWrapper,
        q0: np.ndarray,
        dt: float,
        sensors: SensorParams | None = None,
        params: EstimatorParams | None = None,
        terrain: Terrain | None = None,
    ) -> None:
        if robot.is_fixed_base:
            raise InvalidParameterError(f"{robot.name}: a base-state estimator needs a floating base")
        spec = getattr(robot, "spec", None)
        feet = dict(getattr(spec, "feet", None) or {})
        if not feet:
            raise InvalidParameterError(
                f"{robot.name}: the kinematic-inertial estimator needs the spec's [feet]"
            )
        self.robot, self.dt = robot, as_scalar("dt", dt, minimum=0.0, strict=True)
        self.sensors = sensors or SensorParams.for_robot(robot)
        self.params = params or EstimatorParams()
        self._terrain = None if terrain is None or terrain.flat else terrain
        self._data = robot.create_data()
        self._feet = [(frame, robot.frame_id(frame)) for frame in feet.values()]
        weight = robot.total_mass * GRAVITY
        self._threshold = self.sensors.contact_threshold * weight  # [N] to touch down
        self._release = self.sensors.contact_release * weight  # [N] to lift off, once touching
        cutoff = 2.0 * np.pi * self.sensors.velocity_cutoff
        self._alpha = self.dt * cutoff / (1.0 + self.dt * cutoff)  # the low-pass filter's weight
        q0 = as_vector("q0", q0, robot.nq)
        self._rotation = pin.Quaternion(q0[6], q0[3], q0[4], q0[5]).normalized().toRotationMatrix()
        self._position = q0[:3].copy()
        self._velocity = np.zeros(3)  # the base's, world [m/s]
        self._joints, self._joint_velocities = q0[7:].copy(), np.zeros(robot.nv - 6)
        self._anchors: dict[str, pin.SE3] = {}  # touching feet: each one's placement, as anchored
        self._ground: float | None = None  # [m] the height the first touching foot pressed at
        self._sole = getattr(spec, "sole", None)  # where a foot presses (its centre of pressure)
        self._first = True

    def update(self, reading: Reading) -> PlantState:
        """The estimated state at a reading (its t, q, v, and the feet's contacts)."""
        if not isinstance(reading, Reading):
            raise InvalidParameterError(f"the estimator takes a Reading, got {type(reading).__name__}")
        robot, dt, p = self.robot, self.dt, self.params
        joints = as_vector("joint positions", reading.joints, robot.nq - 7)
        if not self._first:
            raw = (joints - self._joints) / dt
            self._joint_velocities += self._alpha * (raw - self._joint_velocities)
        self._joints = joints.copy()

        # orientation: the gyroscope, its tilt pulled toward the accelerometer's gravity
        gyro, specific = reading.gyro, reading.accelerometer
        norm = float(np.linalg.norm(specific))
        up = self._rotation[2]  # the world's up in the base frame, as estimated
        correction = np.zeros(3)
        if norm > 0.0:
            correction = p.tilt_gain * np.cross(specific / norm, up)
        self._rotation = self._rotation @ pin.exp3((gyro + correction) * dt)

        # the feet: which touch, and the kinematics at the estimated orientation, base at the origin
        q = np.concatenate([np.zeros(3), pin.Quaternion(self._rotation).coeffs(), joints])
        v = np.concatenate([np.zeros(3), gyro, self._joint_velocities])
        model, data = robot.model, self._data
        pin.computeJointJacobians(model, data, q)
        touching, contacts, velocities, positions = [], {}, [], []
        for frame, frame_id in self._feet:
            wrench = reading.wrenches.get(frame, np.zeros(6))
            foot = pin.updateFramePlacement(model, data, frame_id)
            world = np.concatenate([foot.rotation @ wrench[:3], foot.rotation @ wrench[3:]])
            touches = float(world[2]) > (self._release if frame in self._anchors else self._threshold)
            contacts[frame] = ContactMeasurement(world, touches)
            if not touches:
                self._anchors.pop(frame, None)
                continue
            touching.append(frame)
            pressed = self._pressure_point(wrench)
            jacobian = pin.getFrameJacobian(model, data, frame_id, pin.LOCAL_WORLD_ALIGNED)
            # the point it presses on still (at r = R p from the frame's origin, world axes): its
            # Jacobian J_lin - [r]x J_ang, and J[:, :3] v_lin + J[:, 3:] (omega, q_dot) = 0 solved
            # for v_lin, the base's linear velocity in the base frame
            jacobian = jacobian[:3] - pin.skew(foot.rotation @ pressed) @ jacobian[3:]
            velocities.append(-np.linalg.solve(jacobian[:, :3], jacobian[:, 3:] @ v[3:]))
            positions.append((frame, foot.copy(), pressed))

        # the base's velocity: the accelerometer's integral, pulled toward the legs' odometry
        acceleration = self._rotation @ specific - np.array([0.0, 0.0, GRAVITY])
        predicted = self._velocity + dt * acceleration
        if velocities:
            odometry = self._rotation @ np.mean(velocities, axis=0)
            predicted += min(1.0, p.velocity_gain * dt) * (odometry - predicted)
        self._velocity = predicted

        # the base's position: where the anchored feet put it, else the velocity integrated
        if positions:
            feet = []
            for frame, relative, pressed in positions:
                anchor = self._anchors.get(frame)
                if anchor is None:  # touched now: where the estimate puts it
                    anchor = pin.SE3(relative.rotation, self._position + relative.translation)
                    pressing = anchor.act(pressed)[2]  # the height of the point it presses on
                    if self._ground is None:  # the first touch: the ground the robot stands on
                        self._ground = pressing
                    elif self.params.flat_ground:  # on that ground, whatever the estimate drifted
                        ground = self._ground
                        if self._terrain is not None:  # (a block's top, where it presses)
                            point = anchor.act(pressed)
                            ground += self._terrain.height(float(point[0]), float(point[1]))
                        anchor.translation = anchor.translation - np.array([0.0, 0.0, pressing - ground])
                else:  # turned about the point it presses on: that point stays
                    pivot = anchor.act(pressed)
                    anchor = pin.SE3(relative.rotation, pivot - relative.rotation @ pressed)
                self._anchors[frame] = anchor
                feet.append(anchor.translation - relative.translation)
            self._position = np.mean(feet, axis=0)
        else:
            self._position = self._position + dt * self._velocity
        self._first = False

        q[:3] = self._position
        v[:3] = self._rotation.T @ self._velocity
        return PlantState(reading.t, q, v, contacts)

    def _pressure_point(self, wrench: np.ndarray) -> np.ndarray:
        """Where a foot presses on the ground, in its frame [m]: the centre of pressure of its
        sensor's wrench (force f, moment m at the frame's origin) on the sole plane z = -lz,
        x = -(m_y + lz f_x) / f_z, y = (m_x - lz f_y) / f_z, kept within the sole; a point foot's
        frame origin."""
        sole = self._sole
        if sole is None:
            return np.zeros(3)
        (fx, fy, fz), (mx, my, _) = wrench[:3], wrench[3:]
        fz = max(fz, 1e-9)  # (touching: its normal force is well above 0; never a division by 0)
        x = min(max(-(my + sole.lz * fx) / fz, -sole.lxn), sole.lxp)
        y = min(max((mx - sole.lz * fy) / fz, -sole.lyn), sole.lyp)
        return np.array([x, y, -sole.lz])


class EstimateErrors:
    """An estimate's errors against the truth over a run: the base's position (largest) [m], its
    orientation (largest angle) [deg] and its linear velocity (world, root mean square) [m/s]."""

    def __init__(self) -> None:
        self.position, self.orientation, self.squares, self.steps = 0.0, 0.0, 0.0, 0

    def add(self, truth: MeasuredState, estimate: MeasuredState) -> None:
        true_rotation, rotation = _rotation(truth.q), _rotation(estimate.q)
        self.position = max(self.position, float(np.linalg.norm(estimate.q[:3] - truth.q[:3])))
        angle = float(np.linalg.norm(pin.log3(true_rotation.T @ rotation)))
        self.orientation = max(self.orientation, np.degrees(angle))
        error = rotation @ estimate.v[:3] - true_rotation @ truth.v[:3]
        self.squares += float(error @ error)
        self.steps += 1

    def summary(self, estimator: str) -> dict[str, object]:
        return {
            "estimator": estimator,
            "estimate_position_error_max_m": self.position,
            "estimate_orientation_error_max_deg": self.orientation,
            "estimate_velocity_rms_m_s": float(np.sqrt(self.squares / max(self.steps, 1))),
        }


def _rotation(q: np.ndarray) -> np.ndarray:
    return pin.Quaternion(q[6], q[3], q[4], q[5]).normalized().toRotationMatrix()
