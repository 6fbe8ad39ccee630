"""Walking plans made by tsid_py itself: footsteps, swing-foot trajectories, LIPM CoM/ZMP plans."""

from tsid_py.geometry import convex_hull, polygon_margin
from tsid_py.planning.footsteps import Footstep, FootstepPlan, plan_straight_walk
from tsid_py.planning.lipm import LipmPlan, ZmpPreviewController, plan_com_from_zmp
from tsid_py.planning.support import sole_polygon
from tsid_py.planning.swing_foot import TrajectorySE3SwingFoot

__all__ = [
    "Footstep",
    "FootstepPlan",
    "LipmPlan",
    "TrajectorySE3SwingFoot",
    "ZmpPreviewController",
    "convex_hull",
    "plan_com_from_zmp",
    "plan_straight_walk",
    "polygon_margin",
    "sole_polygon",
]
