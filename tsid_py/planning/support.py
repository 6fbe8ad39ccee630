"""Soles on the ground: a sole's corners and centre in the world (hulls, margins: tsid_py.geometry)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tsid_py.errors import InvalidParameterError
from tsid_py.robot_specs import SoleGeometry
from tsid_py.validation import as_vector


def as_placement(name: str, placement: object) -> pin.SE3:
    """``placement`` if it is a ``pinocchio.SE3``, else an :class:`InvalidParameterError`."""
    if not isinstance(placement, pin.SE3):
        raise InvalidParameterError(f"{name} must be a pinocchio.SE3, got {type(placement).__name__}")
    return placement


def as_sole(sole: object) -> SoleGeometry:
    """``sole`` if it is a :class:`SoleGeometry`, else an :class:`InvalidParameterError`."""
    if not isinstance(sole, SoleGeometry):
        raise InvalidParameterError(f"sole must be a SoleGeometry, got {type(sole).__name__}")
    return sole


def ground_point(name: str, point: object) -> np.ndarray:
    """The x-y of a point given as x-y or x-y-z [m]."""
    point = as_vector(name, point)
    if point.shape[0] not in (2, 3):
        raise InvalidParameterError(f"{name} must be x-y or x-y-z [m], got size {point.shape[0]}")
    return point[:2]


def sole_corners(sole: SoleGeometry, placement: pin.SE3) -> np.ndarray:
    """The sole's four corners in the world (4 x 3) [m], in :meth:`SoleGeometry.corners`' order:
    the one map from a sole to the world (the measured state, the polygons, the footsteps)."""
    sole, placement = as_sole(sole), as_placement("foot placement", placement)
    return (placement.rotation @ sole.local_corners + placement.translation[:, None]).T


def sole_polygon(sole: SoleGeometry, placement: pin.SE3) -> np.ndarray:
    """The sole's four corners in the world, projected on the ground plane (4 x 2) [m]."""
    return sole_corners(sole, placement)[:, :2]


def sole_center_local(sole: SoleGeometry) -> np.ndarray:
    """The centre of the sole rectangle in the foot frame (3-vector) [m]."""
    sole = as_sole(sole)
    return np.array([(sole.lxp - sole.lxn) / 2, (sole.lyp - sole.lyn) / 2, -sole.lz])


def sole_center(sole: SoleGeometry, placement: pin.SE3) -> np.ndarray:
    """The centre of the sole rectangle in the world (3-vector) [m]."""
    return as_placement("foot placement", placement).act(sole_center_local(sole))
