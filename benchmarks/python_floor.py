"""How fast can Python go? Flat and tuned control steps against tsid_py and the C++ TSID, in turns.

    python benchmarks/python_floor.py [--rounds 5] [--scenario ur5-reaching ...] [--out floor.json]

For a few scenarios of tests/oracle_problems.py this script writes the control step as flat as
Python allows: one function, no task objects, no layout, no input validation, only the Pinocchio
calls and the NumPy/LAPACK operations the step's math needs (the same range-space solve as
tsid_py's warm start, with no inequality held: a state where one is active is refused). For UR5
reaching and Talos balance a tuned step goes further, from a second attempt to beat the flat one:
it folds what is constant into matrices made once (the PD laws' affine parts as one product with a
stacked vector of measured terms, the contact forces eliminated through the force block's
constant inverse) and makes fewer calls for the same checks.

Both read their gains, weights, references and constant rows from a tsid_py build of the same
scenario; the references of these four scenarios are constant, so the steps read them once where
tsid_py and TSID sample them every step (about 3 us). At every recorded state each step must give
tsid_py's tau to 1e-9 or refuse the state, and the tuned step must refuse exactly the states the
flat one refuses; the refused states are left out of the timing for all. Then tsid_py, the flat
step, the tuned step and TSID are timed in turns, as in step_time.py.

What they measure is a floor, not a goal: the cost of the calls a Python step makes on this
machine, written once per problem (flat) or specialised by hand (tuned). A general library (tasks,
contacts, priority levels, validation, the ownership rule) sits above both; issue 22's goals are
read against them in docs/performance.md.

Covered: ur5-reaching (an end-effector point task and a posture, torque bounds), talos-balance and
romeo-balance (two 6-D foot contacts held as equalities, CoM, posture, angular momentum on Talos,
torque bounds on Talos), solo12-balance (four point contacts held as costs, CoM, posture, torque
bounds).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# first: it pins OpenMP and OpenBLAS to one thread before NumPy loads, and puts tests/ on the path
import step_time  # noqa: E402

# isort: split
import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402
import scipy.linalg  # noqa: E402
from oracle_problems import PROBLEMS, Controller, build_tsid_py, initial_state  # noqa: E402
from scipy.linalg import lapack  # noqa: E402

from tsid_py.solvers.dense_qp import HESSIAN_REGULARIZATION as EPS  # noqa: E402
from tsid_py.solvers.dense_qp import dense_qp  # noqa: E402

SCENARIOS = ("ur5-reaching", "solo12-balance", "talos-balance", "romeo-balance")
_dpotrf, _dpotrs, _dtrtrs, _dposv = lapack.dpotrf, lapack.dpotrs, lapack.dtrtrs, lapack.dposv
FlatStep = Callable[[float, np.ndarray, np.ndarray], np.ndarray]


MIN_KEPT = 0.5  # the share of the recorded states the steps must solve without an active set


class ActiveInequalityError(Exception):
    """The flat step holds no inequality: this state needs an active set."""


def _gains(task: Any, weights: dict[str, float]) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """A PD task's (kp, kd, reference position, weight)."""
    return task.kp, task.kd, task.reference.pos, weights[task.name]


def _constants(ours: Controller, state: step_time.State) -> dict[str, Any]:
    """What the flat step reads from tsid_py's build after one step: the tasks, the contacts, the
    cost weights, the torque bounds and the QP's constant force block (of H, inverted, and of g)."""
    form = ours.formulation
    ours.control(*state)  # sets the references
    hqp = form.compute_problem_data(*state)  # type: ignore[attr-defined]
    weights = {item.constraint.name: item.weight for item in hqp[1]}
    qp = dense_qp(hqp)
    nv = form.robot.nv  # type: ignore[attr-defined]
    contacts = list(form.contacts.values())  # type: ignore[attr-defined]
    bounds = form.tasks.get("task-actuation-bounds")  # type: ignore[attr-defined]
    return {
        "robot": form.robot,  # type: ignore[attr-defined]
        "nv": nv,
        "n": qp.n,
        "tasks": form.tasks,  # type: ignore[attr-defined]
        "weights": weights,
        "contacts": contacts,
        "Hf_inverse": np.linalg.inv(qp.H[nv:, nv:]) if qp.n > nv else None,
        "g_f": qp.g[nv:].copy(),
        "tau_bounds": None if bounds is None else (bounds.lower_bound, bounds.upper_bound),
    }


def _check_bounds(tau: np.ndarray, bounds: tuple[np.ndarray, np.ndarray] | None) -> None:
    if bounds is not None and ((tau < bounds[0]).any() or (tau > bounds[1]).any()):
        raise ActiveInequalityError


def _range_space(
    H_dv: np.ndarray, Hf_inverse: np.ndarray, g: np.ndarray, E: np.ndarray, e: np.ndarray, nv: int
) -> np.ndarray:
    """min 1/2 x^T H x + g^T x s.t. E x = e, with H = [H_dv, 0; 0, Hf] and Hf^-1 given."""
    m = e.size
    L, _ = _dpotrf(H_dv, lower=1, clean=0)
    Eg = np.vstack([E, g[None]])
    Z, _ = _dtrtrs(L, Eg[:, :nv].T, lower=1)
    F = Eg[:, nv:]
    K = Z.T.dot(Z) + F.dot(Hf_inverse).dot(F.T)
    _, multipliers, _ = _dposv(K[:m, :m], K[:m, m] + e, lower=1, overwrite_a=1, overwrite_b=1)
    x = np.empty(g.size)
    x[:nv], _ = _dtrtrs(L, Z[:, :m].dot(multipliers) - Z[:, m], lower=1, trans=1)
    x[nv:] = Hf_inverse.dot(F[:m].T.dot(multipliers) - F[m])
    return x


def _joint_torques(
    data: pin.Data,
    x: np.ndarray,
    JT_T: np.ndarray,
    friction: list[Any],
    bounds: tuple[np.ndarray, np.ndarray] | None,
) -> np.ndarray:
    """tau = (M dv + h - J_c^T T f) on the actuated joints of a floating base, x = [dv; f], after
    checking each contact's friction rows on its forces (in order in f) and then the torque bounds."""
    nv = JT_T.shape[0]
    first = nv
    for c in friction:
        rows = c.matrix.dot(x[first : first + c.matrix.shape[1]])
        first += c.matrix.shape[1]
        if (rows < c.lower_bound - 1e-9).any() or (rows > c.upper_bound + 1e-9).any():
            raise ActiveInequalityError
    tau = data.M[6:].dot(x[:nv]) + JT_T[6:].dot(x[nv:]) + data.nle[6:]
    _check_bounds(tau, bounds)
    return tau


def flat_arm(ours: Controller, state: step_time.State) -> FlatStep:
    """UR5 reaching: an end-effector position task (world axes) and a posture, torque bounds."""
    k = _constants(ours, state)
    robot, tasks, weights = k["robot"], k["tasks"], k["weights"]
    model, data = robot.model, robot.model.createData()
    ee, posture = tasks["task-ee"], tasks["task-posture"]
    frame, target = ee.frame_id, ee.reference_placement.translation
    kp_e, kd_e, kp_p, kd_p = ee.kp[:3], ee.kd[:3], posture.kp, posture.kd
    q_ref, w_e, w_p = posture.reference.pos, weights["task-ee"], weights["task-posture"]
    axes, bounds, diagonal = pin.LOCAL_WORLD_ALIGNED, k["tau_bounds"], w_p + EPS

    def step(t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        pin.computeAllTerms(model, data, q, v)
        position = pin.updateFramePlacement(model, data, frame).translation
        J = pin.getFrameJacobian(model, data, frame, axes)[:3]
        drift = pin.getFrameClassicalAcceleration(model, data, frame, axes).linear
        desired = kp_e * (target - position) - kd_e * J.dot(v) - drift
        H = w_e * J.T.dot(J)
        H.flat[:: H.shape[0] + 1] += diagonal
        minus_g = w_e * J.T.dot(desired) - w_p * (kp_p * (q - q_ref) + kd_p * v)
        L, _ = _dpotrf(H, lower=1, clean=0)
        dv, _ = _dpotrs(L, minus_g, lower=1)
        tau = data.M.dot(dv) + data.nle
        _check_bounds(tau, bounds)
        return tau

    return step


def flat_biped(ours: Controller, state: step_time.State) -> FlatStep:
    """Two 6-D foot contacts held as equalities, CoM, posture, angular momentum (if any), torque
    bounds (if any): x = [dv; f], equalities [base dynamics; feet motion], friction rows checked."""
    k = _constants(ours, state)
    robot, tasks, weights, nv, n = k["robot"], k["tasks"], k["weights"], k["nv"], k["n"]
    model, data = robot.model, robot.model.createData()
    feet = [(c.frame_id, c.reference, c.kp, c.kd) for c in k["contacts"]]
    minus_T = -scipy.linalg.block_diag(*(c.force_generator for c in k["contacts"]))
    friction = [c.force_constraint for c in k["contacts"]]
    com, posture, am = tasks["task-com"], tasks["task-posture"], tasks.get("task-am")
    (kp_c, kd_c, c_ref, w_c), (kp_p, kd_p, q_ref, w_p) = _gains(com, weights), _gains(posture, weights)
    kp_am, w_am = (am.kp, weights["task-am"]) if am is not None else (None, 0.0)
    Hf_inverse, g_f, bounds, mass = k["Hf_inverse"], k["g_f"], k["tau_bounds"], robot.total_mass
    E, e, g = np.zeros((18, n)), np.zeros(18), np.empty(n)
    g[nv:] = g_f

    def step(t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        pin.computeAllTerms(model, data, q, v)
        pin.computeCentroidalMomentumTimeVariation(model, data)
        for row, (frame, reference, kp, kd) in zip((6, 12), feet, strict=True):
            placement = pin.updateFramePlacement(model, data, frame)
            J = pin.getFrameJacobian(model, data, frame, pin.LOCAL)
            drift = pin.getFrameClassicalAcceleration(model, data, frame, pin.LOCAL).vector
            error = placement.actInv(reference)  # TSID's SE3 error: its translation, log3 of its rotation
            log = pin.log6(error).vector
            log[:3] = error.translation
            E[row : row + 6, :nv] = J
            e[row : row + 6] = kp * log - kd * J.dot(v) - drift
        JT_T = E[6:, :nv].T.dot(minus_T)  # -J_c^T T
        E[:6, :nv], E[:6, nv:], e[:6] = data.M[:6], JT_T[:6], -data.nle[:6]
        Jc = data.Jcom
        desired_c = -kp_c * (data.com[0] - c_ref) - kd_c * Jc.dot(v) - data.dhg.linear / mass
        H = w_c * Jc.T.dot(Jc)
        g[:nv] = -w_c * desired_c.dot(Jc)
        if kp_am is not None:
            A = data.Ag[3:]
            H += w_am * A.T.dot(A)
            g[:nv] -= w_am * (-kp_am * A.dot(v) - data.dhg.angular).dot(A)
        H.flat[6 * (nv + 1) :: nv + 1] += w_p
        H.flat[:: nv + 1] += EPS
        g[6:nv] += w_p * (kp_p * (q[7:] - q_ref) + kd_p * v[6:])
        x = _range_space(H, Hf_inverse, g, E, e, nv)
        return _joint_torques(data, x, JT_T, friction, bounds)

    return step


def flat_quadruped(ours: Controller, state: step_time.State) -> FlatStep:
    """Four point contacts whose motion is a cost (world axes), CoM, posture, torque bounds:
    x = [dv; f], the base dynamics the only equality, friction rows checked."""
    k = _constants(ours, state)
    robot, tasks, weights, nv, n = k["robot"], k["tasks"], k["weights"], k["nv"], k["n"]
    model, data = robot.model, robot.model.createData()
    feet = [
        (c.frame_id, c.reference.translation, c.kp, c.kd, weights[f"{c.name}_motion_task"])
        for c in k["contacts"]
    ]
    minus_T = -scipy.linalg.block_diag(*(c.force_generator for c in k["contacts"]))
    friction = [c.force_constraint for c in k["contacts"]]
    com, posture = tasks["task-com"], tasks["task-posture"]
    (kp_c, kd_c, c_ref, w_c), (kp_p, kd_p, q_ref, w_p) = _gains(com, weights), _gains(posture, weights)
    Hf_inverse, g_f, bounds, mass = k["Hf_inverse"], k["g_f"], k["tau_bounds"], robot.total_mass
    axes, Jc_feet, E, g = (
        pin.LOCAL_WORLD_ALIGNED,
        np.zeros((3 * len(feet), nv)),
        np.zeros((6, n)),
        np.empty(n),
    )
    g[nv:] = g_f

    def step(t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        pin.computeAllTerms(model, data, q, v)
        pin.computeCentroidalMomentumTimeVariation(model, data)
        Jc = data.Jcom
        desired_c = -kp_c * (data.com[0] - c_ref) - kd_c * Jc.dot(v) - data.dhg.linear / mass
        H = w_c * Jc.T.dot(Jc)
        g[:nv] = -w_c * desired_c.dot(Jc)
        for row, (frame, target, kp, kd, w) in zip(range(0, 3 * len(feet), 3), feet, strict=True):
            position = pin.updateFramePlacement(model, data, frame).translation
            J = pin.getFrameJacobian(model, data, frame, axes)[:3]
            drift = pin.getFrameClassicalAcceleration(model, data, frame, axes).linear
            Jc_feet[row : row + 3] = J
            H += w * J.T.dot(J)
            g[:nv] -= w * (kp * (target - position) - kd * J.dot(v) - drift).dot(J)
        H.flat[6 * (nv + 1) :: nv + 1] += w_p
        H.flat[:: nv + 1] += EPS
        g[6:nv] += w_p * (kp_p * (q[7:] - q_ref) + kd_p * v[6:])
        JT_T = Jc_feet.T.dot(minus_T)  # -J_c^T T
        E[:, :nv], E[:, nv:] = data.M[:6], JT_T[:6]
        x = _range_space(H, Hf_inverse, g, E, -data.nle[:6], nv)
        return _joint_torques(data, x, JT_T, friction, bounds)

    return step


def tuned_arm(ours: Controller, state: step_time.State) -> FlatStep:
    """:func:`flat_arm` with fewer calls: every affine term of the PD laws and of the posture's
    gradient is one product of a constant matrix with Y = [p, a_drift, q, v, 1]; H = Ja^T Ja with
    Ja = [sqrt(w_e) J; sqrt(w_p + eps) I] in one product; one ``dposv``; one count for the bounds
    (``np.count_nonzero`` of the violations, cheaper than ``ndarray.any`` at this size)."""
    k = _constants(ours, state)
    robot, tasks, weights = k["robot"], k["tasks"], k["weights"]
    model, data = robot.model, robot.model.createData()
    nq, nv = model.nq, model.nv
    if nq != nv or k["tau_bounds"] is None or not np.isfinite(k["tau_bounds"]).all():
        raise SystemExit("tuned_arm: a fixed base of revolute joints with finite torque bounds")
    ee, posture = tasks["task-ee"], tasks["task-posture"]
    frame, target = ee.frame_id, ee.reference_placement.translation
    kp_e, kd_e, kp_p, kd_p = ee.kp[:3], ee.kd[:3], posture.kp, posture.kd
    q_ref, w_e, w_p = posture.reference.pos, weights["task-ee"], weights["task-posture"]
    lower, upper = k["tau_bounds"]
    middle, half_width = 0.5 * (lower + upper), 0.5 * (upper - lower)
    ny = 6 + nq + nv + 1  # Y = [p, a_drift, q, v, 1]
    C_task = np.zeros((3, ny))  # w_e (kp (p_ref - p) - a_drift), less w_e kd J v
    C_task[:, 0:3], C_task[:, 3:6], C_task[:, -1] = (
        -np.diag(w_e * kp_e),
        -w_e * np.eye(3),
        w_e * kp_e * target,
    )
    C_posture = np.zeros((nv, ny))  # -g's posture part: w_p (-kp (q - q_ref) - kd v)
    C_posture[:, 6 : 6 + nq], C_posture[:, 6 + nq : -1] = -np.diag(w_p * kp_p), -np.diag(w_p * kd_p)
    C_posture[:, -1] = w_p * kp_p * q_ref
    damping, root_w = w_e * kd_e, np.sqrt(w_e)
    Ja = np.zeros((3 + nv, nv))
    Ja[3:] = np.sqrt(w_p + EPS) * np.eye(nv)
    J_rows, H, one = Ja[:3], np.empty((nv, nv)), np.ones(1)
    axes = pin.LOCAL_WORLD_ALIGNED

    def step(t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        pin.computeAllTerms(model, data, q, v)
        J = pin.getFrameJacobian(model, data, frame, axes)[:3]
        Y = np.concatenate(
            (
                pin.updateFramePlacement(model, data, frame).translation,
                pin.getFrameClassicalAcceleration(model, data, frame, axes).linear,
                q,
                v,
                one,
            )
        )
        weighted_desired = C_task.dot(Y) - damping * J.dot(v)
        np.multiply(J, root_w, J_rows)
        np.dot(Ja.T, Ja, H)
        _, dv, _ = _dposv(
            H.T, weighted_desired.dot(J) + C_posture.dot(Y), lower=1, overwrite_a=1, overwrite_b=1
        )
        tau = data.M.dot(dv) + data.nle
        if np.count_nonzero(np.abs(tau - middle) > half_width):
            raise ActiveInequalityError
        return tau

    return step


def tuned_biped(ours: Controller, state: step_time.State) -> FlatStep:
    """:func:`flat_biped` with fewer calls, for Talos balance (two 6-D feet, CoM, angular momentum,
    posture, torque bounds, no force reference):

    - the CoM and angular-momentum rows come from A_g (J_com = A_g,lin / m), so H's task part is
      (S A_g)^T (S A_g) with S diagonal, and the affine parts of their PD laws and of the posture's
      gradient are one product with Y = [h_g, dh_g, c, 1, q, v];
    - the feet's PD laws are one product with [log6 errors, drifts, J_f v];
    - with g_f = 0 the forces are f = R J_f,base l_base with R = Hf^-1 (-T)^T (J_f,base: the feet
      Jacobians' base columns, 12 x 6; l_base: the base-dynamics multipliers), so the force block
      of the Schur complement is J_f,base^T P J_f,base with P = T Hf^-1 T^T, and the friction rows
      are one product of a constant matrix with J_f,base l_base;
    - one count each for the friction rows and the torque bounds.
    """
    k = _constants(ours, state)
    robot, tasks, weights, nv, n = k["robot"], k["tasks"], k["weights"], k["nv"], k["n"]
    contacts, model = k["contacts"], robot.model
    am = tasks.get("task-am")
    bounded = k["tau_bounds"] is not None and np.isfinite(k["tau_bounds"]).all()
    if len(contacts) != 2 or n != nv + 24 or am is None or k["g_f"].any() or not bounded:
        raise SystemExit("tuned_biped: two 6-D feet, angular momentum, finite torque bounds, g_f = 0")
    data, nq, mass = model.createData(), model.nq, robot.total_mass
    com, posture = tasks["task-com"], tasks["task-posture"]
    (kp_c, kd_c, c_ref, w_c), (kp_p, kd_p, q_ref, w_p) = _gains(com, weights), _gains(posture, weights)
    kp_am, w_am = am.kp, weights["task-am"]
    minus_T = -scipy.linalg.block_diag(*(c.force_generator for c in contacts))
    R = k["Hf_inverse"].dot(minus_T.T)  # f = R J_f,base l_base
    P = minus_T.dot(R)
    friction = [c.force_constraint for c in contacts]
    C = scipy.linalg.block_diag(*(f.matrix for f in friction)).dot(R)
    lower = np.concatenate([f.lower_bound for f in friction]) - 1e-9
    upper = np.concatenate([f.upper_bound for f in friction]) + 1e-9
    finite_upper, finite_lower = np.isfinite(upper), np.isfinite(lower)
    rows_checked = int(finite_upper.sum() + finite_lower.sum())
    G = np.vstack([C[finite_upper], -C[finite_lower], P])  # friction rows, then P
    limits = np.concatenate([upper[finite_upper], -lower[finite_lower], np.full(12, np.inf)])
    tau_lower, tau_upper = k["tau_bounds"]
    middle, half_width = 0.5 * (tau_lower + tau_upper), 0.5 * (tau_upper - tau_lower)
    S = np.diag(np.concatenate([np.full(3, np.sqrt(w_c) / mass), np.full(3, np.sqrt(w_am))]))
    diagonal = np.full(nv, EPS)
    diagonal[6:] += w_p
    # Y = [h_g (6), dh_g (6), c (3), 1, q (nq), v (nv)]: where each part starts
    Y_HG, Y_DHG, Y_COM, Y_ONE, Y_Q = 0, 6, 12, 15, 16
    Y_V = Y_Q + nq
    C_momentum = np.zeros((6, Y_V + nv))  # -g_dv = (C_momentum Y) A_g + [0; C_posture Y]
    C_momentum[:, Y_HG:Y_DHG] = np.diag(np.concatenate([-w_c * kd_c / mass**2, -w_am * kp_am]))
    C_momentum[:, Y_DHG:Y_COM] = np.diag(np.concatenate([np.full(3, -w_c / mass**2), np.full(3, -w_am)]))
    C_momentum[:3, Y_COM:Y_ONE] = np.diag(-w_c * kp_c / mass)
    C_momentum[:3, Y_ONE] = w_c * kp_c * c_ref / mass
    C_posture = np.zeros((nv - 6, Y_V + nv))  # the joints' posture PD law, weighted
    C_posture[:, Y_ONE] = w_p * kp_p * q_ref
    C_posture[:, Y_Q + 7 : Y_V] = -np.diag(w_p * kp_p)  # q's joint part (after the base's 7)
    C_posture[:, Y_V + 6 :] = -np.diag(w_p * kd_p)  # v's joint part (after the base's 6)
    kp_f = np.concatenate([c.kp for c in contacts])
    kd_f = np.concatenate([c.kd for c in contacts])
    C_feet = np.hstack([np.diag(kp_f), -np.eye(12), -np.diag(kd_f)])  # over [errors, drifts, J_f v]
    B = np.zeros((19, nv))  # [base rows of M; J_f; -g_dv]
    J_f, J_f_base, minus_g, minus_g_joints = B[6:18], B[6:18, :6], B[18], B[18, 6:]
    e, K, H, W = np.zeros(18), np.empty((18, 19)), np.empty((nv, nv)), np.empty((6, nv))
    H_diagonal = H.reshape(-1)[:: nv + 1]
    feet_terms, one = np.empty(36), np.ones(1)
    feet = [
        (
            c.frame_id,
            c.reference,
            slice(r, r + 3),
            slice(r + 3, r + 6),
            slice(12 + r, 18 + r),
            B[6 + r : 12 + r],
        )
        for c, r in zip(contacts, (0, 6), strict=True)
    ]

    def step(t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        pin.computeAllTerms(model, data, q, v)
        pin.computeCentroidalMomentumTimeVariation(model, data)
        for frame, reference, linear, angular, drift, J_rows in feet:
            error = pin.updateFramePlacement(model, data, frame).actInv(reference)
            J_rows[:] = pin.getFrameJacobian(model, data, frame, pin.LOCAL)
            feet_terms[drift] = pin.getFrameClassicalAcceleration(model, data, frame, pin.LOCAL).vector
            feet_terms[linear] = error.translation
            feet_terms[angular] = pin.log3(error.rotation)
        np.dot(J_f, v, feet_terms[24:])
        np.dot(C_feet, feet_terms, e[6:])
        M, Ag = data.M, data.Ag
        B[:6] = M[:6]
        np.negative(data.nle[:6], e[:6])
        np.dot(S, Ag, W)
        np.dot(W.T, W, H)
        np.add(H_diagonal, diagonal, H_diagonal)
        Y = np.concatenate((data.hg.vector, data.dhg.vector, data.com[0], one, q, v))
        np.dot(C_momentum.dot(Y), Ag, minus_g)
        np.add(minus_g_joints, C_posture.dot(Y), minus_g_joints)
        L, _ = _dpotrf(H.T, lower=1, clean=0, overwrite_a=1)
        Z, _ = _dtrtrs(L, B.T, lower=1)
        np.dot(Z[:, :18].T, Z, K)
        K[:6, :6] += J_f_base.T.dot(P.dot(J_f_base))
        _, multipliers, _ = _dposv(K[:, :18], e - K[:, 18], lower=1, overwrite_b=1)
        dv, _ = _dtrtrs(L, Z[:, :18].dot(multipliers) + Z[:, 18], lower=1, trans=1)
        z = G.dot(J_f_base.dot(multipliers[:6]))  # friction rows, then P J_f,base l_base
        if np.count_nonzero(z > limits):
            raise ActiveInequalityError
        tau = (M.dot(dv) + data.nle + z[rows_checked:].dot(J_f))[6:]
        if np.count_nonzero(np.abs(tau - middle) > half_width):
            raise ActiveInequalityError
        return tau

    return step


FLAT = {
    "ur5-reaching": flat_arm,
    "solo12-balance": flat_quadruped,
    "talos-balance": flat_biped,
    "romeo-balance": flat_biped,
}
TUNED = {"ur5-reaching": tuned_arm, "talos-balance": tuned_biped}


def check_steps(
    name: str, steps: dict[str, FlatStep], ours: Controller, states: list[step_time.State]
) -> tuple[list[step_time.State], dict[str, float]]:
    """Run every step and tsid_py at every state in order: the states no step refused, and each
    step's largest |tau - tau_tsid_py| there [N m]. Exits with a message when a step differs from
    tsid_py by more than 1e-9 N m, when the steps refuse different states, or when fewer than
    MIN_KEPT of the states are left to time."""
    kept, worst = [], dict.fromkeys(steps, 0.0)
    for state in states:
        reference = ours.control(*state)  # tsid_py's warm start follows every state
        taus: dict[str, np.ndarray | None] = {}
        for who, step in steps.items():
            try:
                taus[who] = step(*state)
            except ActiveInequalityError:
                taus[who] = None
        refused = [who for who, tau in taus.items() if tau is None]
        if refused and len(refused) < len(steps):
            raise SystemExit(
                f"{name}: at t = {state[0]:.3f} s only the {', '.join(refused)} step refused the state"
            )
        if refused:
            continue
        for who, tau in taus.items():
            worst[who] = max(worst[who], float(np.abs(tau - reference).max()))  # type: ignore[operator]
        kept.append(state)
    for who, difference in worst.items():
        if difference > 1e-9:
            raise SystemExit(f"{name}: the {who} step differs from tsid_py by {difference:.3g} N m")
    if len(kept) < MIN_KEPT * len(states):
        raise SystemExit(
            f"{name}: an inequality is active at {len(states) - len(kept)} of {len(states)} states"
        )
    return kept, worst


def measure(name: str, rounds: int) -> dict[str, Any]:
    """The steps checked against tsid_py, then timed in turns with tsid_py and TSID."""
    problem = PROBLEMS[name]
    q0, _ = initial_state(problem)
    states = step_time.recorded_states(problem, build_tsid_py(problem, q0))
    makers = {"flat": FLAT[name], **({"tuned": TUNED[name]} if name in TUNED else {})}
    checked = {who: make(build_tsid_py(problem, q0), states[0]) for who, make in makers.items()}
    kept, worst = check_steps(name, checked, build_tsid_py(problem, q0), states)
    builders: dict[str, Callable[[], step_time.Stepper]] = {"tsid_py": lambda: build_tsid_py(problem, q0)}
    builders.update({who: _flat_builder(make, problem, q0, states) for who, make in makers.items()})
    if step_time.tsid is not None:
        builders["tsid"] = lambda: step_time.build_oracle(problem, q0, step_time.tsid)
    times = step_time.interleaved(list(builders.values()), kept, rounds)
    entry: dict[str, Any] = {"states": len(states), "timed_states": len(kept)}
    entry.update({f"{who}_max_tau_difference_nm": difference for who, difference in worst.items()})
    entry.update({who: step_time.summary(seconds) for who, seconds in zip(builders, times, strict=True)})
    for who in [w for w in builders if w != "tsid"]:
        if "tsid" in builders:
            entry[f"{who}_over_tsid"] = round(entry[who]["median_us"] / entry["tsid"]["median_us"], 3)
        if who not in ("flat", "tsid"):
            entry[f"{who}_over_flat"] = round(entry[who]["median_us"] / entry["flat"]["median_us"], 3)
    return entry


def _flat_builder(
    make: Callable[[Controller, step_time.State], FlatStep],
    problem: Any,
    q0: np.ndarray,
    states: list[step_time.State],
) -> Callable[[], step_time.Stepper]:
    return lambda: _FlatStepper(make(build_tsid_py(problem, q0), states[0]))


class _FlatStepper:
    def __init__(self, step: FlatStep) -> None:
        self.control = step


def print_table(report: dict[str, Any], stream: Any) -> None:
    """Medians [us] and ratios to TSID per scenario, with issue 22's goal."""
    load = report["machine"]["load_average"]
    print(f"median step [us], {report['rounds']} round(s), load {load[0]:.2f} -> {load[1]:.2f}", file=stream)
    columns = (
        "timed states",
        "tsid_py",
        "flat",
        "tuned",
        "TSID",
        "tsid_py/TSID",
        "flat/TSID",
        "tuned/TSID",
        "goal",
    )
    print(f"{'scenario':16s}" + "".join(f"{c:>13s}" for c in columns), file=stream)
    nan = float("nan")
    for name, r in report["scenarios"].items():
        row = (
            r["timed_states"],
            *(r[who]["median_us"] if who in r else nan for who in ("tsid_py", "flat", "tuned", "tsid")),
            *(r.get(f"{who}_over_tsid", nan) for who in ("tsid_py", "flat", "tuned")),
            report["goals"][name] or nan,
        )
        print(f"{name:16s}" + "".join(f"{value:13.5g}" for value in row), file=stream)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="timed passes over the states (default 5)")
    parser.add_argument("--scenario", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    parser.add_argument("--out", type=Path, help="write the JSON there (the table then goes to stdout)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.out is not None and not (args.out.parent.is_dir() and os.access(args.out.parent, os.W_OK)):
        parser.error(f"--out {args.out}: its directory does not exist or is not writable")
    load_start = os.getloadavg()[0]
    results = {name: measure(name, args.rounds) for name in args.scenario}
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "goals": {name: step_time.GOALS.get(PROBLEMS[name].robot) for name in args.scenario},
        "machine": {
            **step_time.machine(),
            "load_average": [round(load_start, 2), round(os.getloadavg()[0], 2)],
        },
        "rounds": args.rounds,
        "scenarios": results,
    }
    print_table(report, sys.stdout if args.out else sys.stderr)
    text = json.dumps(report, indent=2)
    if args.out is not None:
        args.out.write_text(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
