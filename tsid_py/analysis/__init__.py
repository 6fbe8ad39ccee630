"""Inverse dynamics from observed motion, forward dynamics and the force-to-torque map.

Arrays of samples are shaped (T, n), one row per frame. Contact wrenches are 6-vectors
(force [N], moment [N m]) applied by the environment on the robot, expressed in the contact
frame (Pinocchio's LOCAL) about its origin, unless a name says otherwise.
"""

from tsid_py.analysis.contact_limits import ContactLimits
from tsid_py.analysis.contact_wrenches import (
    ContactInverseDynamicsResult,
    contact_inverse_dynamics,
    multi_contact_inverse_dynamics,
)
from tsid_py.analysis.finite_differences import velocities_and_accelerations
from tsid_py.analysis.force_torque_map import ForceTorqueMap, force_torque_map
from tsid_py.analysis.forward_dynamics import (
    ContactForwardDynamicsResult,
    contact_forward_dynamics,
    forward_dynamics,
)
from tsid_py.analysis.inverse_dynamics import InverseDynamicsResult, inverse_dynamics
from tsid_py.analysis.over_time import (
    MotionAnalysis,
    joint_torques_from_wrenches,
    multi_contact_inverse_dynamics_over_time,
)

__all__ = [
    "ContactForwardDynamicsResult",
    "ContactInverseDynamicsResult",
    "ContactLimits",
    "ForceTorqueMap",
    "InverseDynamicsResult",
    "MotionAnalysis",
    "contact_forward_dynamics",
    "contact_inverse_dynamics",
    "force_torque_map",
    "forward_dynamics",
    "inverse_dynamics",
    "joint_torques_from_wrenches",
    "multi_contact_inverse_dynamics",
    "multi_contact_inverse_dynamics_over_time",
    "velocities_and_accelerations",
]
