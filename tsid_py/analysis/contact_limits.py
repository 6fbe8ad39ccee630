"""Physical limits on a contact wrench: unilateral normal force, friction pyramid, CoP in the sole.

Written as linear inequalities C w >= d on the 6-D wrench w = (f, m) in the contact frame
(LOCAL), whose z axis is the surface normal pointing into the robot:

- unilateral: f_z >= f_min;
- friction (4-sided pyramid, as TSID's contacts): |f_x| <= mu f_z and |f_y| <= mu f_z;
- centre of pressure inside the sole rectangle (``SoleGeometry``, sole plane at z = -lz):
  with the moment about the sole point m' = m - (0, 0, -lz) x f, the CoP is
  (-m'_y / f_z, m'_x / f_z) and -lxn <= cop_x <= lxp, -lyn <= cop_y <= lyp.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tsid_py.robot_specs import SoleGeometry
from tsid_py.validation import as_scalar


@dataclass(frozen=True)
class ContactLimits:
    """Which physical limits a contact wrench must satisfy.

    Attributes:
        mu: Friction coefficient of the pyramid, or ``None`` for no friction limit.
        sole: Rectangle the CoP must stay in, or ``None`` for no CoP limit.
        min_normal_force: Lower bound on f_z [N] (0 for a plain unilateral contact).
    """

    mu: float | None = None
    sole: SoleGeometry | None = None
    min_normal_force: float = 0.0

    def __post_init__(self) -> None:
        if self.mu is not None:
            as_scalar("mu", self.mu, minimum=0.0, strict=True)
        as_scalar("min_normal_force", self.min_normal_force, minimum=0.0)

    def inequalities(self) -> tuple[np.ndarray, np.ndarray]:
        """(C, d) with C w >= d, C of shape (rows, 6)."""
        rows = [np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])]
        bounds = [self.min_normal_force]
        if self.mu is not None:
            mu = self.mu
            for sign in (1.0, -1.0):
                rows.append(np.array([-sign, 0.0, mu, 0.0, 0.0, 0.0]))
                rows.append(np.array([0.0, -sign, mu, 0.0, 0.0, 0.0]))
                bounds += [0.0, 0.0]
        if self.sole is not None:
            s = self.sole
            # m'_x = m_x - lz f_y, m'_y = m_y + lz f_x (moment about the sole point).
            moment_x = np.array([0.0, -s.lz, 0.0, 1.0, 0.0, 0.0])
            moment_y = np.array([s.lz, 0.0, 0.0, 0.0, 1.0, 0.0])
            normal = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
            rows += [
                s.lxp * normal + moment_y,  # cop_x <= lxp
                s.lxn * normal - moment_y,  # cop_x >= -lxn
                s.lyp * normal - moment_x,  # cop_y <= lyp
                s.lyn * normal + moment_x,  # cop_y >= -lyn
            ]
            bounds += [0.0] * 4
        return np.array(rows), np.array(bounds)
