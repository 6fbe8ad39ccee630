"""CoM plans for walking: the linear inverted pendulum (LIPM) driven by ZMP preview control.

The CoM c moves at a constant height h above the ground; per horizontal axis the cart-table
model of Kajita et al. (2003, "Biped walking pattern generation by using preview control of
zero-moment point") has the state x = (c, dc, ddc), the jerk u as input, and the ZMP output

    p = c - (h / g) ddc.

With a period dt and u held constant over it, x_{k+1} = A x_k + B u_k (exact). The preview
controller minimizes sum_k q (p_k - p_ref,k)^2 + r u_k^2 over an infinite horizon knowing the
reference ``preview_time`` ahead: u_k = -K x_k + sum_{j=1..N} f_j p_ref,k+j, with P the solution
of the discrete algebraic Riccati equation, G = r + B^T P B, K = G^-1 B^T P A and
f_j = G^-1 B^T (A - B K)^T^(j-1) C^T q. Beyond the window the reference is taken to stay at its
last previewed value, which adds sum_{j>N} f_j = K_0 - sum_{j<=N} f_j to f_N (the gains of the
infinite horizon sum to K_0 since a CoM at rest above a constant ZMP costs nothing). Without this
tail a 1.6 s window leaves a steady offset of 1% of the ZMP's distance from the origin.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from tsid_py.errors import DimensionError, InvalidParameterError, NonFiniteError
from tsid_py.geometry import GRAVITY
from tsid_py.trajectories import Trajectory, TrajectorySample
from tsid_py.validation import Copied, as_matrix, as_scalar, as_vector


def solve_dare(A: np.ndarray, B: np.ndarray, Q: np.ndarray, R: np.ndarray, tol: float = 1e-12) -> np.ndarray:
    """P = Q + A^T P A - A^T P B (R + B^T P B)^-1 B^T P A, the stabilizing solution.

    The structure-preserving doubling algorithm (Chu et al. 2004): H_k converges quadratically
    to P from A_0 = A, G_0 = B R^-1 B^T, H_0 = Q, with W = (I + G_k H_k)^-1,
    A_k+1 = A_k W A_k, G_k+1 = G_k + A_k W G_k A_k^T, H_k+1 = H_k + A_k^T H_k W A_k.
    """
    A = as_matrix("A", A, (None, None))
    n = A.shape[0]
    A = as_matrix("A", A, (n, n))
    B = as_matrix("B", B, (n, None))
    Q, R = as_matrix("Q", Q, (n, n)), as_matrix("R", R, (B.shape[1], B.shape[1]))
    if np.any(np.linalg.eigvalsh((R + R.T) / 2) <= 0):
        raise InvalidParameterError("R must be positive definite")
    G, H = B @ np.linalg.solve(R, B.T), Q.copy()
    for _ in range(100):
        W = np.linalg.inv(np.eye(n) + G @ H)
        A, G, H_next = A @ W @ A, G + A @ W @ G @ A.T, H + A.T @ H @ W @ A
        if np.max(np.abs(H_next - H)) <= tol * max(1.0, np.max(np.abs(H_next))):
            return (H_next + H_next.T) / 2
        H = H_next
    raise InvalidParameterError("the Riccati iteration did not converge: is (A, B) stabilizable?")


def cart_table_model(
    com_height: float, dt: float, gravity: float = GRAVITY
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A, B, C) of one axis of the cart-table model: state (c, dc, ddc), jerk input, ZMP output.

    Args:
        com_height: h, CoM height above the ZMP plane [m], > 0.
        dt: Period over which the jerk is held [s], > 0.
        gravity: g [m/s^2], > 0.
    """
    com_height = as_scalar("com_height", com_height, minimum=0.0, strict=True)
    dt = as_scalar("dt", dt, minimum=0.0, strict=True)
    gravity = as_scalar("gravity", gravity, minimum=0.0, strict=True)
    A = np.array([[1.0, dt, dt**2 / 2], [0.0, 1.0, dt], [0.0, 0.0, 1.0]])
    B = np.array([dt**3 / 6, dt**2 / 2, dt])
    C = np.array([1.0, 0.0, -com_height / gravity])
    return A, B, C


class ZmpPreviewController:
    """Kajita's ZMP preview controller for one horizontal axis (see the module docstring).

    Args:
        com_height: h, the constant CoM height above the ground [m].
        dt: Planning period [s].
        preview_time: How far ahead the ZMP reference is used [s].
        q: Weight of the ZMP error [1/m^2].
        r: Weight of the jerk [s^6/m^2].
        gravity: g [m/s^2].
    """

    def __init__(
        self,
        com_height: float,
        dt: float = 0.01,
        preview_time: float = 1.6,
        q: float = 1.0,
        r: float = 1e-6,
        gravity: float = GRAVITY,
    ) -> None:
        self.com_height = as_scalar("com_height", com_height, minimum=0.0, strict=True)
        self.dt = as_scalar("dt", dt, minimum=0.0, strict=True)
        self.n_preview = max(1, int(round(as_scalar("preview_time", preview_time, minimum=0.0) / self.dt)))
        q = as_scalar("q", q, minimum=0.0, strict=True)
        r = as_scalar("r", r, minimum=0.0, strict=True)
        self.A, self.B, self.C = cart_table_model(self.com_height, self.dt, gravity)
        A, B, C = self.A, self.B[:, None], self.C[None, :]
        P = solve_dare(A, B, q * C.T @ C, np.array([[r]]))
        G = r + (B.T @ P @ B).item()
        self.K = (B.T @ P @ A).ravel() / G
        closed_loop_t = (A - B @ self.K[None, :]).T
        gains, column = np.empty(self.n_preview), q * C.T
        for j in range(self.n_preview):
            gains[j] = (B.T @ column).item() / G
            column = closed_loop_t @ column
        gains[-1] += self.K[0] - gains.sum()
        self.preview_gains = gains

    def run(
        self, zmp_reference: np.ndarray, state: Sequence[float] | np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """States x_0..x_n and jerks u_0..u_{n-1} for a reference sampled at the planning period.

        Args:
            zmp_reference: p_ref,k for k = 0..n-1 [m]; the last value is held beyond the end.
            state: x_0 = (c, dc, ddc) [m, m/s, m/s^2].
        """
        reference = as_vector("zmp_reference", zmp_reference)
        n = reference.shape[0]
        if n == 0:
            raise InvalidParameterError("zmp_reference is empty: it needs at least one sample")
        padded = np.concatenate([reference, np.full(self.n_preview + 1, reference[-1])])
        states = np.empty((n + 1, 3))
        states[0] = as_vector("state", state, 3)
        jerks = np.empty(n)
        for k in range(n):
            jerks[k] = -self.K @ states[k] + self.preview_gains @ padded[k + 1 : k + 1 + self.n_preview]
            states[k + 1] = self.A @ states[k] + self.B * jerks[k]
        return states, jerks


class LipmPlan(Trajectory):
    """A planned CoM motion: x-y from the cart-table model, z constant; sampled exactly at any t.

    Between planning instants the jerk is constant, so position, velocity and acceleration at
    any t follow from the last planned state by exact integration and stay consistent.

    Args:
        t0: Time of the first state [s].
        dt: Planning period [s].
        states: (n + 1, 3, 2): (c, dc, ddc) per axis x, y at t0 + k dt.
        jerks: (n, 2) jerk held over each period [m/s^3].
        height: The CoM z [m] (world), constant.
        com_height: h of the model (CoM height above the ZMP plane) [m].
        gravity: g of the model [m/s^2].
    """

    def __init__(
        self,
        t0: float,
        dt: float,
        states: np.ndarray,
        jerks: np.ndarray,
        height: float,
        com_height: float,
        gravity: float = GRAVITY,
    ) -> None:
        super().__init__("lipm-com")
        self.t0 = as_scalar("t0", t0)
        self.dt = as_scalar("dt", dt, minimum=0.0, strict=True)
        jerks = np.asarray(jerks, dtype=float)
        if jerks.ndim != 2 or jerks.shape[1] != 2 or np.asarray(states).shape != (jerks.shape[0] + 1, 3, 2):
            raise DimensionError(
                f"states must be (n + 1, 3, 2) and jerks (n, 2), got {np.shape(states)} and {jerks.shape}"
            )
        self._states, self._jerks = np.array(states, dtype=float), jerks.copy()
        if not (np.all(np.isfinite(self._states)) and np.all(np.isfinite(jerks))):
            raise NonFiniteError("states and jerks of a LIPM plan must be finite")
        self.height = as_scalar("height", height)
        self.com_height = as_scalar("com_height", com_height, minimum=0.0, strict=True)
        self.gravity = as_scalar("gravity", gravity, minimum=0.0, strict=True)

    states = Copied("The planned (c, dc, ddc) x (x, y) at each knot, (n + 1, 3, 2) [m, m/s, m/s^2].")
    jerks = Copied("The CoM jerk on each interval, (n, 2) [m/s^3].")

    @property
    def t_end(self) -> float:
        """Time of the last planned state [s]."""
        return self.t0 + self._jerks.shape[0] * self.dt

    def _state(self, t: float) -> np.ndarray:
        """(c, dc, ddc) x (x, y) at time t, held at the last state after the end."""
        t = as_scalar("t", t)
        n = self._jerks.shape[0]
        k = math.floor((t - self.t0) / self.dt)
        if k >= n:
            return self._states[n]
        k = max(k, 0)
        tau = min(max(t - self.t0 - k * self.dt, 0.0), self.dt)
        # the cubic from state k under its constant jerk u: (c, dc, ddc)(tau) = A(tau) s_k + b(tau) u
        tau2 = tau * tau
        taylor = np.array(((1.0, tau, tau2 / 2), (0.0, 1.0, tau), (0.0, 0.0, 1.0)))
        jerk_gain = np.array(((tau2 * tau / 6,), (tau2 / 2,), (tau,)))
        return taylor.dot(self._states[k]) + jerk_gain * self._jerks[k]

    def sample(self, t: float) -> TrajectorySample:
        state = np.zeros((3, 3))  # (c, dc, ddc) x (x, y, z): the height is constant
        state[:, :2] = self._state(t)
        state[0, 2] = self.height
        return TrajectorySample._owning(state[0], state[1], state[2])

    def zmp(self, t: float) -> np.ndarray:
        """The ZMP of the planned motion at time t, x-y [m]."""
        c, _, ddc = self._state(t)
        return c - self.com_height / self.gravity * ddc


def plan_com_from_zmp(
    zmp_reference: Callable[[np.ndarray], np.ndarray],
    duration: float,
    com: np.ndarray,
    ground_height: float = 0.0,
    dt: float = 0.01,
    preview_time: float = 1.6,
) -> LipmPlan:
    """Plan the CoM from t = 0 (at rest at ``com``) to ``duration`` for a ZMP reference.

    Args:
        zmp_reference: Maps times [s] (array) to ZMP x-y points (array (n, 2)) [m].
        duration: Length of the plan [s].
        com: The initial CoM (world) [m]; its height above ``ground_height`` [m] is the LIPM's h.
        dt: Planning period [s] (the plan is sampled exactly at any rate afterwards).
        preview_time: How far ahead the preview controller reads the reference [s].
    """
    if not callable(zmp_reference):
        raise InvalidParameterError(f"zmp_reference must be a function of time, got {zmp_reference!r}")
    com = as_vector("com", com, 3)
    duration = as_scalar("duration", duration, minimum=0.0, strict=True)
    height = com[2] - as_scalar("ground_height", ground_height)
    if height <= 0:
        raise InvalidParameterError(f"the CoM must be above the ground, got {height} m")
    controller = ZmpPreviewController(height, dt, preview_time)
    n = int(np.ceil(duration / controller.dt))
    reference = as_matrix("zmp_reference(t)", zmp_reference(np.arange(n) * controller.dt), (n, 2))
    states, jerks = np.empty((n + 1, 3, 2)), np.empty((n, 2))
    for axis in range(2):
        states[:, :, axis], jerks[:, axis] = controller.run(reference[:, axis], [com[axis], 0.0, 0.0])
    return LipmPlan(0.0, dt, states, jerks, com[2], controller.com_height)
