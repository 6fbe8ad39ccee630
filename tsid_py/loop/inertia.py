"""Body inertias a simulator can integrate.

URDFs hold bodies that no forward dynamics can move: Romeo's fingers have no mass and no inertia
(its mass matrix is singular, and ``pinocchio.aba`` returns NaN), and a thin rod's inertia about
its axis is often written as zero. MuJoCo refuses a moving body without mass, and a principal
moment that breaks the triangle inequality of a rigid body (its compiler's checks); both plants
raise such bodies to the least physical inertia, the controller's model keeps the URDF's.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

MIN_MASS = 1e-9  # [kg] of a massless body
MIN_INERTIA = 1e-12  # [kg m^2] the smallest principal moment of inertia of a body


def physical_inertia(inertia: np.ndarray) -> np.ndarray:
    """A rotational inertia [kg m^2] about the CoM that a simulator accepts: principal moments of
    at least MIN_INERTIA, each at most the sum of the others, raised as little as that takes; a
    physical one is returned as it is."""
    moments, axes = np.linalg.eigh(inertia)
    fixed = np.maximum(moments, MIN_INERTIA)
    excess = fixed[2] - fixed[0] - fixed[1]
    if excess > 0:
        fixed[:2] += excess / 2 + MIN_INERTIA
    if np.array_equal(fixed, moments):  # exact: unchanged moments mean a physical inertia
        return inertia
    return (axes * fixed) @ axes.T


def simulable(inertia: pin.Inertia) -> pin.Inertia:
    """A body's spatial inertia with at least MIN_MASS and a :func:`physical_inertia`, its centre
    of mass where it was."""
    return pin.Inertia(max(inertia.mass, MIN_MASS), inertia.lever, physical_inertia(inertia.inertia))
