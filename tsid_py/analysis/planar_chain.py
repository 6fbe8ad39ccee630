"""A planar n-link chain in the vertical x-z plane, with its dynamics in closed form.

Link k (k = 1..n) has length l_k, mass m_k, its centre of mass G_k on the link at distance c_k
from joint k, and inertia I_k about G_k (about the axis normal to the plane). Joint k turns about
-y, so with phi_k = q_1 + ... + q_k the link points along (cos phi_k, sin phi_k) in the (x, z)
plane, written (x, y) below, gravity along -y. With P_{k-1} the position of joint k
(P_0 = origin), the mass matrix is the classic

    M_ij = sum_{k >= max(i,j)} m_k [(x_Gk - x_{i-1})(x_Gk - x_{j-1}) + (y_Gk - y_{i-1})(y_Gk - y_{j-1})] + I_k

and the bias h = C(q, v) v + g(q) follows from Newton-Euler about each joint:

    h_i = sum_{k >= i} m_k (G_k - P_{i-1}) x (a_vp(G_k) + g e_y),

where a_vp(G_k) = -sum_{j < k} l_j w_j^2 e(phi_j) - c_k w_k^2 e(phi_k) is the velocity-product
acceleration of G_k (w_k = v_1 + ... + v_k) and x the planar cross product.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tsid_py.errors import InvalidParameterError
from tsid_py.validation import as_scalar, as_vector

URDF_TEMPLATE_JOINT = """  <joint name="joint_{k}" type="revolute">
    <parent link="{parent}"/>
    <child link="link_{k}"/>
    <origin xyz="{offset:.6g} 0 0" rpy="0 0 0"/>
    <axis xyz="0 -1 0"/>
    <limit lower="-3.14159" upper="3.14159" effort="200" velocity="10"/>
  </joint>
  <link name="link_{k}">
    <inertial>
      <origin xyz="{com:.6g} 0 0" rpy="0 0 0"/>
      <mass value="{mass:.6g}"/>
      <inertia ixx="{minor:.6g}" ixy="0" ixz="0" iyy="{inertia:.6g}" iyz="0" izz="{minor:.6g}"/>
    </inertial>
  </link>
"""


@dataclass(frozen=True)
class PlanarChain:
    """Geometry [m] and inertia [kg, kg m^2] of a planar chain; all arrays have one entry per link."""

    lengths: np.ndarray
    masses: np.ndarray
    com_distances: np.ndarray
    inertias: np.ndarray
    gravity: float = 9.81  # [m/s^2]

    def __post_init__(self) -> None:
        n = as_vector("lengths", self.lengths).shape[0]
        for name in ("lengths", "masses", "com_distances", "inertias"):
            if np.any(as_vector(name, getattr(self, name), n) <= 0.0):
                raise InvalidParameterError(f"{name} must be > 0, got {getattr(self, name)}")
        as_scalar("gravity", self.gravity, minimum=0.0)

    @property
    def n(self) -> int:
        """Number of links (and joints)."""
        return len(self.lengths)

    def urdf(self) -> str:
        """The URDF of the chain (fixed base link, joints joint_1..joint_n, a ``tip`` frame at the end)."""
        parts = [
            '<?xml version="1.0"?>',
            f'<robot name="planar_chain_{self.n}">',
            '  <link name="base_link"/>',
        ]
        for k in range(self.n):
            parts.append(
                URDF_TEMPLATE_JOINT.format(
                    k=k + 1,
                    parent="base_link" if k == 0 else f"link_{k}",
                    offset=0.0 if k == 0 else self.lengths[k - 1],
                    com=self.com_distances[k],
                    mass=self.masses[k],
                    inertia=self.inertias[k],
                    minor=1e-4 * self.inertias[k],
                ).rstrip("\n")
            )
        parts += [
            '  <joint name="tip_joint" type="fixed">',
            f'    <parent link="link_{self.n}"/>',
            '    <child link="tip"/>',
            f'    <origin xyz="{self.lengths[-1]:.6g} 0 0" rpy="0 0 0"/>',
            "  </joint>",
            '  <link name="tip"/>',
            "</robot>",
        ]
        return "\n".join(parts) + "\n"

    def _kinematics(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Absolute angles phi (n), joint positions P (n, 2) (P[k] is joint k+1) and CoMs G (n, 2)."""
        phi = np.cumsum(q)
        directions = np.column_stack([np.cos(phi), np.sin(phi)])
        ends = np.cumsum(self.lengths[:, None] * directions, axis=0)
        joints = np.vstack([np.zeros(2), ends[:-1]])
        return phi, joints, joints + self.com_distances[:, None] * directions

    def mass_matrix(self, q: object) -> np.ndarray:
        """M(q), n x n [kg m^2], by the closed-form sum over the links beyond both joints."""
        q = as_vector("q", q, self.n)
        _, joints, coms = self._kinematics(q)
        M = np.zeros((self.n, self.n))
        for i in range(self.n):
            for j in range(self.n):
                k = np.arange(max(i, j), self.n)
                arm_i, arm_j = coms[k] - joints[i], coms[k] - joints[j]
                M[i, j] = np.sum(self.masses[k] * np.sum(arm_i * arm_j, axis=1) + self.inertias[k])
        return M

    def bias(self, q: object, v: object) -> np.ndarray:
        """h(q, v) = C(q, v) v + g(q), size n [N m]."""
        q, v = as_vector("q", q, self.n), as_vector("v", v, self.n)
        phi, joints, coms = self._kinematics(q)
        directions = np.column_stack([np.cos(phi), np.sin(phi)])
        omega_squared = np.cumsum(v) ** 2
        centripetal = np.cumsum(self.lengths[:, None] * omega_squared[:, None] * directions, axis=0)
        link_start = np.vstack([np.zeros(2), centripetal[:-1]])  # -acceleration of joint k from spinning
        acceleration = -link_start - self.com_distances[:, None] * omega_squared[:, None] * directions
        acceleration[:, 1] += self.gravity  # the support's upward acceleration stands for gravity
        h = np.zeros(self.n)
        for i in range(self.n):
            arm = coms[i:] - joints[i]
            force = self.masses[i:, None] * acceleration[i:]
            h[i] = np.sum(arm[:, 0] * force[:, 1] - arm[:, 1] * force[:, 0])
        return h


def default_planar_chain() -> PlanarChain:
    """The 4-link chain of ``robots/planar_chain.urdf``."""
    return PlanarChain(
        lengths=np.array([0.5, 0.4, 0.3, 0.2]),
        masses=np.array([4.0, 3.0, 2.0, 1.0]),
        com_distances=np.array([0.25, 0.2, 0.15, 0.1]),
        inertias=np.array([0.08, 0.04, 0.015, 0.004]),
    )


if __name__ == "__main__":
    print(default_planar_chain().urdf(), end="")
