"""TSID's RobotWrapper (bindings/python/robots/robot-wrapper.hpp) over :class:`tsid_py.RobotWrapper`."""

from __future__ import annotations

from enum import IntEnum
from pathlib import Path

import pinocchio as pin

from tsid_py.compat._wrap import Wrapper
from tsid_py.errors import InvalidParameterError
from tsid_py.robot_wrapper import RobotWrapper as _Robot


class RootJointType(IntEnum):
    """TSID's ``RobotWrapper::RootJointType``."""

    FIXED_BASE_SYSTEM = 0
    FLOATING_BASE_SYSTEM = 1


FIXED_BASE_SYSTEM = RootJointType.FIXED_BASE_SYSTEM
FLOATING_BASE_SYSTEM = RootJointType.FLOATING_BASE_SYSTEM


class RobotWrapper(Wrapper):
    """TSID's constructors (robot-wrapper.hpp, src/robots/robot-wrapper.cpp):

    - ``RobotWrapper(urdf, package_dirs, verbose)``: fixed base;
    - ``RobotWrapper(urdf, package_dirs, pin.JointModelFreeFlyer(), verbose)``: floating base;
    - ``RobotWrapper(model, verbose)``: floating base (a free-flyer first joint);
    - ``RobotWrapper(model, FIXED_BASE_SYSTEM | FLOATING_BASE_SYSTEM, verbose)``.

    ``urdf`` is a str or a pathlib.Path, ``package_dirs`` any sequence of paths (a list, a
    ``pin.StdVec_StdString``); ``verbose`` is accepted and unused. As in TSID, ``model()`` and
    ``data()`` are methods returning a copy of the model and a new Data; ``position(data, i)``
    takes a JOINT index and ``framePosition(data, i)`` a FRAME index.
    """

    _names = {
        "nq": "nq",
        "nv": "nv",
        "na": "na",
        "nq_actuated": "nq_actuated",
        "is_fixed_base": "is_fixed_base",
        "rotor_inertias": "rotor_inertias",
        "gear_ratios": "gear_ratios",
        "computeAllTerms": "compute_all_terms",
        "com": "com",
        "com_vel": "com_vel",
        "com_acc": "com_acc",
        "Jcom": "com_jacobian",
        "mass": "mass",
        "nonLinearEffect": "nonlinear_effects",
        "position": "joint_placement",
        "framePosition": "frame_placement",
        "frameVelocity": "frame_velocity",
        "frameAcceleration": "frame_acceleration",
        "frameClassicAcceleration": "frame_classic_acceleration",
        "frameVelocityWorldOriented": "frame_velocity_world_oriented",
        "frameClassicAccelerationWorldOriented": "frame_classic_acceleration_world_oriented",
        "angularMomentumTimeVariation": "angular_momentum_time_variation",
        "setGravity": "set_gravity",
    }

    def __init__(self, source: object, *args: object) -> None:
        if isinstance(source, pin.Model):
            if args and not isinstance(args[0], bool):  # (model, root joint type, verbose)
                fixed = RootJointType(int(args[0])) == FIXED_BASE_SYSTEM  # type: ignore[call-overload]
            else:  # (model, verbose): TSID takes a floating base
                fixed = False
            self._inner = _Robot(source, fixed_base=fixed)
            return
        if not isinstance(source, (str, Path)):
            raise InvalidParameterError(
                f"RobotWrapper takes a URDF path or a pinocchio.Model, got {type(source).__name__}"
            )
        package_dirs = [str(d) for d in args[0]] if args else []  # type: ignore[attr-defined]
        root = args[1] if len(args) > 1 and not isinstance(args[1], bool) else None
        if root is not None and not isinstance(root, pin.JointModelFreeFlyer):
            raise InvalidParameterError(
                f"the root joint must be pin.JointModelFreeFlyer() (as TSID's), got {type(root).__name__}"
            )
        self._inner = _Robot.from_urdf(source, package_dirs, floating_base=root is not None)

    def model(self) -> pin.Model:
        """A copy of the Pinocchio model (tsid_py: ``robot.model``, the robot's own)."""
        return pin.Model(self._inner.model)

    def data(self) -> pin.Data:
        """A new Pinocchio Data for the model (tsid_py: ``robot.create_data()``)."""
        return self._inner.create_data()

    def set_rotor_inertias(self, values: object) -> bool:
        self._inner.set_rotor_inertias(values)
        return True

    def set_gear_ratios(self, values: object) -> bool:
        self._inner.set_gear_ratios(values)
        return True
