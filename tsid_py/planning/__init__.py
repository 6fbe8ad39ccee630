"""Walking plans made by tsid_py itself: footsteps, swing-foot trajectories, LIPM CoM/ZMP plans,
the capture point and the steps that stop it."""

from tsid_py.geometry import SupportPolygon, convex_hull, polygon_margin
from tsid_py.planning.capture import (
    DcmCommand,
    StepChoice,
    StepLimits,
    capture_point,
    capture_point_after,
    choose_step,
    dcm_feedback,
    pendulum_frequency,
    predicted_capture_point,
)
from tsid_py.planning.footsteps import Footstep, FootstepPlan, plan_straight_walk
from tsid_py.planning.lipm import LipmPlan, ZmpPreviewController, plan_com_from_zmp
from tsid_py.planning.support import sole_polygon
from tsid_py.planning.swing_foot import TrajectorySE3SwingFoot

__all__ = [
    "DcmCommand",
    "Footstep",
    "FootstepPlan",
    "LipmPlan",
    "StepChoice",
    "StepLimits",
    "SupportPolygon",
    "TrajectorySE3SwingFoot",
    "ZmpPreviewController",
    "capture_point",
    "capture_point_after",
    "choose_step",
    "convex_hull",
    "dcm_feedback",
    "pendulum_frequency",
    "plan_com_from_zmp",
    "plan_straight_walk",
    "polygon_margin",
    "predicted_capture_point",
    "sole_polygon",
]
