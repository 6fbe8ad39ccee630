"""What a robot measures: joint encoders, a base IMU and force/torque sensors at the feet.

A real robot never knows its floating base: it reads its joints through encoders, its base's
angular velocity and specific force through an IMU, the ground's wrench on each foot through a
6-axis force/torque sensor, and its commands reach the motors a control period or more later.
:class:`RobotSensors` turns a plant's true state into such a :class:`Reading`; an estimator
(:mod:`tsid_py.loop.estimation`) turns readings into the state the controller gets. The truth
stays with the judge, the physics check and the plots (docs/concepts/sensing.md).

Each sensor's numbers are in :class:`SensorParams` (a spec's ``[sensors]`` table overrides them),
white noise given as a density [unit/sqrt(Hz)] and sampled at the control rate
(std = density sqrt(1 / dt)), a bias as a random walk of the same kind.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from tsid_py.errors import InvalidParameterError
from tsid_py.geometry import GRAVITY
from tsid_py.loop.measured import MeasuredState
from tsid_py.loop.plant import ImuMeasurement
from tsid_py.robot_wrapper import RobotWrapper
from tsid_py.validation import as_scalar, as_vector

SENSINGS = ("truth", "robot")


@dataclass(frozen=True)
class SensorParams:
    """The sensors of a robot and the delay of its commands (a spec's ``[sensors]`` table sets any
    of them).

    Attributes:
        encoder_bits: Joint encoder resolution: a joint position is read to 2 pi / 2^bits [rad].
            19 bits is an assumption: TALOS has "high resolution encoders" on motor and joint
            sides (Stasse et al. 2017), their resolution is not in what we could read.
        encoder_noise: [rad] white noise on each joint position read, on top of the quantization.
        velocity_cutoff: [Hz] the joint velocities are the encoders' differences through a
            first-order low-pass filter at this cut-off.
        gyro_noise: [rad/s/sqrt(Hz)] the gyroscope's noise density: 0.005 deg/s/sqrt(Hz), the
            MicroStrain 3DM-GX5-25's typical figure (as quoted; a robot-grade MEMS IMU).
        gyro_bias_walk: [rad/s^2/sqrt(Hz)] the gyroscope bias's random walk (an assumption, of
            the order of the 3DM-GX5-25's 8 deg/h in-run stability over a run's minutes).
        accel_noise: [m/s^2/sqrt(Hz)] the accelerometer's noise density: 80 ug/sqrt(Hz), the
            3DM-GX5-25's typical figure (as quoted).
        accel_bias_walk: [m/s^3/sqrt(Hz)] the accelerometer bias's random walk (an assumption).
        force_noise: [N] white noise on each force axis of a foot's force/torque sensor: 0.25 N,
            the resolution of an ATI Mini45 (SI-580-20 calibration, as quoted; TALOS has ATI
            sensors at its ankles, talos_robot's configuration).
        torque_noise: [N m] white noise on each moment axis: 0.005 N m, the same sensor's.
        contact_threshold: A foot touches when its sensor's normal force is above this fraction
            of the robot's weight.
        contact_release: A foot that touches stops touching when its normal force falls below this
            fraction of the weight (below ``contact_threshold``: a hysteresis, so that a foot
            lightly loaded, as when the weight goes over to the other one, is not taken as lifted).
        latency: Control periods between a command's computation and the motors taking it (one:
            the command of a step reaches the motors at the next, as in a 1 kHz ros_control loop;
            an assumption, no measured figure found).
        torque_bandwidth: [Hz] the motors' torque loop as a first-order lag of this cut-off,
            updated once a control period (0: none, the default: a torque is applied as
            commanded, within the spec's limits, which the plants clip to; see
            :class:`~tsid_py.loop.motors.Motors`).
        seed: Of the noise (the same seed, the same readings).
    """

    encoder_bits: int = 19
    encoder_noise: float = 0.0
    velocity_cutoff: float = 100.0
    gyro_noise: float = math.radians(0.005)
    gyro_bias_walk: float = 1e-5
    accel_noise: float = 80e-6 * GRAVITY
    accel_bias_walk: float = 1e-4
    force_noise: float = 0.25
    torque_noise: float = 0.005
    contact_threshold: float = 0.05
    contact_release: float = 0.01
    latency: int = 1
    torque_bandwidth: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("encoder_bits", "latency", "seed"):
                if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                    raise InvalidParameterError(
                        f"SensorParams.{f.name} must be a whole number >= 0, got {value!r}"
                    )
            else:
                as_scalar(f"SensorParams.{f.name}", value, minimum=0.0)
        if self.contact_release > self.contact_threshold:
            raise InvalidParameterError(
                f"SensorParams.contact_release ({self.contact_release!r}) must not exceed contact_threshold "
                f"({self.contact_threshold!r})"
            )
        if not self.velocity_cutoff > 0.0 or self.encoder_bits < 1:
            raise InvalidParameterError(
                "SensorParams needs velocity_cutoff > 0 and encoder_bits >= 1, got "
                f"{self.velocity_cutoff!r}, {self.encoder_bits!r}"
            )

    @classmethod
    def for_robot(cls, robot: RobotWrapper) -> SensorParams:
        """The defaults, overridden by the spec's ``[sensors]`` table (a robot without a spec: the
        defaults)."""
        if getattr(robot, "spec", None) is None:
            return cls()
        return robot.controller_params(cls(), "sensors")  # type: ignore[attr-defined]


class Reading(NamedTuple):
    """What the robot's sensors read at one control step.

    Attributes:
        t: Time [s].
        joints: The actuated joints' positions as the encoders read them (size nq - 7 for a free
            flyer) [rad, m].
        gyro: The base's angular velocity, base frame [rad/s].
        accelerometer: The base's specific force (its acceleration less gravity), base frame [m/s^2].
        wrenches: Each foot's force/torque sensor by frame: the ground's wrench on the foot in
            the foot frame at its origin (force, moment) [N, N m]; a foot the plant measures no
            contact for reads zero.
    """

    t: float
    joints: np.ndarray
    gyro: np.ndarray
    accelerometer: np.ndarray
    wrenches: dict[str, np.ndarray]


class RobotSensors:
    """The sensors of a floating-base robot on its feet, read from a plant's true state.

    Args:
        robot: The robot (its spec's ``[feet]`` name the force/torque sensors' frames).
        dt: The control period [s]: the sensors are read once a period.
        params: Their numbers (:meth:`SensorParams.for_robot` by default).
    """

    def __init__(self, robot: RobotWrapper, dt: float, params: SensorParams | None = None) -> None:
        if robot.is_fixed_base:
            raise InvalidParameterError(f"{robot.name}: robot sensing is for a floating base (an IMU on it)")
        self.robot, self.dt = robot, as_scalar("dt", dt, minimum=0.0, strict=True)
        self.params = params or SensorParams.for_robot(robot)
        self._rng = np.random.default_rng(self.params.seed)
        rate = math.sqrt(1.0 / self.dt)  # white noise of density d sampled every dt: std d sqrt(1 / dt)
        p = self.params
        self._gyro_std, self._accel_std = p.gyro_noise * rate, p.accel_noise * rate
        self._gyro_walk, self._accel_walk = (
            p.gyro_bias_walk * math.sqrt(self.dt),
            p.accel_bias_walk * math.sqrt(self.dt),
        )
        self._step = 2.0 * math.pi / 2**p.encoder_bits
        self._gyro_bias, self._accel_bias = np.zeros(3), np.zeros(3)
        self._velocity: np.ndarray | None = None  # the base's last true world velocity [m/s]

    def read(self, state: MeasuredState, imu: ImuMeasurement | None = None) -> Reading:
        """The sensors' reading of the true state, as the loop measured it (a
        :class:`~tsid_py.loop.measured.MeasuredState` of the plant's state: its feet's frames give
        the force/torque sensors' axes, with no kinematics pass of their own), and of what the
        plant's own IMU measured (``PlantState.imu``: MuJoCo's gyroscope and accelerometer); without
        one, the base's angular velocity and its velocity's differences over a period."""
        if not isinstance(state, MeasuredState):
            raise InvalidParameterError(
                "the sensors read a MeasuredState (Measurer.measure of the plant's state), got "
                f"{type(state).__name__}"
            )
        if imu is not None:
            if not isinstance(imu, ImuMeasurement):
                raise InvalidParameterError(f"imu must be an ImuMeasurement, got {type(imu).__name__}")
            imu = ImuMeasurement(
                as_vector("imu.gyro", imu.gyro, 3), as_vector("imu.accelerometer", imu.accelerometer, 3)
            )
        rng, p = self._rng, self.params
        q, v = state.q, state.v
        joints = q[7:]
        joints = np.round(joints / self._step) * self._step + p.encoder_noise * rng.standard_normal(
            joints.shape[0]
        )
        if imu is None:
            rotation = pin.Quaternion(q[6], q[3], q[4], q[5]).normalized().toRotationMatrix()
            velocity = rotation @ v[:3]  # the base's linear velocity, world [m/s]
            acceleration = np.zeros(3) if self._velocity is None else (velocity - self._velocity) / self.dt
            self._velocity = velocity
            specific, angular = rotation.T @ (acceleration + np.array([0.0, 0.0, GRAVITY])), v[3:6]
        else:
            specific, angular = imu.accelerometer, imu.gyro
        self._gyro_bias += self._gyro_walk * rng.standard_normal(3)
        self._accel_bias += self._accel_walk * rng.standard_normal(3)
        gyro = angular + self._gyro_bias + self._gyro_std * rng.standard_normal(3)
        accelerometer = specific + self._accel_bias + self._accel_std * rng.standard_normal(3)
        wrenches = {}
        for foot in state.feet.values():
            wrench = np.zeros(6)
            if foot.measurement is not None:
                to_foot, measured = foot.rotation.T, foot.measurement.wrench
                wrench[:3] = to_foot @ measured[:3] + p.force_noise * rng.standard_normal(3)
                wrench[3:] = to_foot @ measured[3:] + p.torque_noise * rng.standard_normal(3)
            wrenches[foot.frame] = wrench
        return Reading(float(state.t), joints, gyro, accelerometer, wrenches)
