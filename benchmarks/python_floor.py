"""How fast can Python go? A flat control step against tsid_py and the C++ TSID, interleaved.

    python benchmarks/python_floor.py [--rounds 5] [--scenario ur5-reaching ...] [--out floor.json]

For a few scenarios of tests/oracle_problems.py this script writes the control step as flat as
Python allows: one function, no task objects, no layout, no checks, only the Pinocchio calls and
the NumPy/LAPACK operations the step's math needs (the same range-space solve as tsid_py's warm
start, with no inequality held). It reads its gains, weights, references and constant rows from a
tsid_py build of the same scenario and checks that it gives tsid_py's tau to 1e-9 at every
recorded state where no inequality is active (it refuses the others, and those states are left
out of the timing for all three). Then the flat step, tsid_py and TSID are timed in turns, as in
step_time.py.

For UR5 reaching and Talos balance a tuned step goes further, from a second attempt to beat the
flat one: it folds what is constant into matrices made once (the PD laws' affine parts as one
product with a stacked vector of measured terms, the contact forces eliminated through the force
block's constant inverse) and counts violated bounds with ``np.count_nonzero`` (a quarter of
``ndarray.any``'s cost on these sizes). It is checked against tsid_py's tau the same way.

What they measure is a floor, not a goal: the cost of the calls a Python step must make on this
machine, one for a step written once per problem (flat), one for a step specialised by hand
(tuned). A general library (tasks, contacts, priority levels, validation, the ownership rule)
sits above both; issue 22's goals are read against them in docs/performance.md.

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
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402
import scipy.linalg  # noqa: E402
from machine import cpu_name  # noqa: E402
from oracle_problems import PROBLEMS, Controller, build_tsid_py, initial_state  # noqa: E402
from scipy.linalg import lapack  # noqa: E402

from tsid_py.solvers.dense_qp import HESSIAN_REGULARIZATION as EPS  # noqa: E402
from tsid_py.solvers.dense_qp import dense_qp  # noqa: E402

SCENARIOS = ("ur5-reaching", "solo12-balance", "talos-balance", "romeo-balance")
_dpotrf, _dpotrs, _dtrtrs, _dposv = lapack.dpotrf, lapack.dpotrs, lapack.dtrtrs, lapack.dposv
FlatStep = Callable[[float, np.ndarray, np.ndarray], np.ndarray]


class ActiveInequalityError(Exception):
    """The flat step holds no inequality: this state needs an active set."""


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
    H: np.ndarray, Hf_inverse: np.ndarray, g: np.ndarray, E: np.ndarray, e: np.ndarray, nv: int
) -> np.ndarray:
    """min 1/2 x^T H x + g^T x s.t. E x = e, H block diagonal ([H_dv, 0; 0, Hf]), Hf^-1 given."""
    m = e.size
    L, _ = _dpotrf(H, lower=1, clean=0)
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
    frame, target = ee.frame_id, ee.reference_placement.translation.copy()
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
    kp_c, kd_c, c_ref, w_c = com.kp, com.kd, com.reference.pos, weights["task-com"]
    kp_p, kd_p, q_ref, w_p = posture.kp, posture.kd, posture.reference.pos, weights["task-posture"]
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
            error = placement.actInv(reference)
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
    kp_c, kd_c, c_ref, w_c = com.kp, com.kd, com.reference.pos, weights["task-com"]
    kp_p, kd_p, q_ref, w_p = posture.kp, posture.kd, posture.reference.pos, weights["task-posture"]
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
    (``np.count_nonzero`` costs a quarter of ``ndarray.any`` at this size)."""
    k = _constants(ours, state)
    robot, tasks, weights = k["robot"], k["tasks"], k["weights"]
    model, data = robot.model, robot.model.createData()
    nq, nv = model.nq, model.nv
    if nq != nv or k["tau_bounds"] is None:
        raise SystemExit("tuned_arm: a fixed base of revolute joints with torque bounds")
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
    - with g_f = 0 the forces are f = Hf^-1 (-T)^T J_f,base^T l_base: the force block of the
      Schur complement is J_f,base^T P J_f,base with P = T Hf^-1 T^T, and the friction rows are one
      product of a constant matrix with J_f,base l_base;
    - one count each for the friction rows and the torque bounds.
    """
    k = _constants(ours, state)
    robot, tasks, weights, nv, n = k["robot"], k["tasks"], k["weights"], k["nv"], k["n"]
    contacts, model = k["contacts"], robot.model
    am = tasks.get("task-am")
    if len(contacts) != 2 or n != nv + 24 or am is None or k["g_f"].any() or k["tau_bounds"] is None:
        raise SystemExit("tuned_biped: two 6-D feet, an angular-momentum task, torque bounds, g_f = 0")
    data, nq, mass = model.createData(), model.nq, robot.total_mass
    com, posture = tasks["task-com"], tasks["task-posture"]
    kp_c, kd_c, c_ref, w_c = com.kp, com.kd, com.reference.pos, weights["task-com"]
    kp_p, kd_p, q_ref, w_p = posture.kp, posture.kd, posture.reference.pos, weights["task-posture"]
    kp_am, w_am = am.kp, weights["task-am"]
    minus_T = -scipy.linalg.block_diag(*(c.force_generator for c in contacts))
    R = k["Hf_inverse"].dot(minus_T.T)  # f = R J_f,base^T l_base
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
    ny = 16 + nq + nv  # Y = [h_g (6), dh_g (6), c (3), 1, q, v]
    C_momentum = np.zeros((6, ny))  # -g = C_momentum Y . A_g + ...
    C_momentum[:, 0:6] = np.diag(np.concatenate([-w_c * kd_c / mass**2, -w_am * kp_am]))
    C_momentum[:, 6:12] = np.diag(np.concatenate([np.full(3, -w_c / mass**2), np.full(3, -w_am)]))
    C_momentum[:3, 12:15], C_momentum[:3, 15] = np.diag(-w_c * kp_c / mass), w_c * kp_c * c_ref / mass
    C_posture = np.zeros((nv - 6, ny))
    C_posture[:, 15], C_posture[:, 23 : 16 + nq] = w_p * kp_p * q_ref, -np.diag(w_p * kp_p)
    C_posture[:, 16 + nq + 6 :] = -np.diag(w_p * kd_p)
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
        J_base = J_f_base.copy()
        L, _ = _dpotrf(H.T, lower=1, clean=0, overwrite_a=1)
        Z, _ = _dtrtrs(L, B.T, lower=1)
        np.dot(Z[:, :18].T, Z, K)
        K[:6, :6] += J_base.T.dot(P.dot(J_base))
        _, multipliers, _ = _dposv(K[:, :18], e - K[:, 18], lower=1, overwrite_b=1)
        dv, _ = _dtrtrs(L, Z[:, :18].dot(multipliers) + Z[:, 18], lower=1, trans=1)
        z = G.dot(J_base.dot(multipliers[:6]))  # friction rows, then P J_f,base l_base
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
TUNED = {"ur5-reaching": tuned_arm, "talos-balance": tuned_biped}  # a helper's: see the module docstring


def inactive_states(
    flat: FlatStep, ours: Controller, states: list[step_time.State]
) -> tuple[list[step_time.State], list[np.ndarray], float]:
    """The states where no inequality is active, tsid_py's tau there, and the largest
    |tau_flat - tau_tsid_py| there."""
    kept, taus, worst = [], [], 0.0
    for t, q, v in states:
        try:
            tau = flat(t, q, v)
        except ActiveInequalityError:
            ours.control(t, q, v)  # tsid_py's warm start follows the same states
            continue
        taus.append(ours.control(t, q, v))
        worst = max(worst, float(np.abs(tau - taus[-1]).max()))
        kept.append((t, q, v))
    return kept, taus, worst


def measure(name: str, rounds: int) -> dict[str, Any]:
    """The flat (and tuned) step checked against tsid_py, then all timed in turns with tsid_py and TSID."""
    problem = PROBLEMS[name]
    q0, _ = initial_state(problem)
    states = step_time.recorded_states(problem, build_tsid_py(problem, q0))
    check = build_tsid_py(problem, q0)
    kept, taus, worst = inactive_states(FLAT[name](build_tsid_py(problem, q0), states[0]), check, states)
    if worst > 1e-9:
        raise SystemExit(f"{name}: the flat step differs from tsid_py by {worst:.3g} N m")
    steps = {
        "tsid_py": lambda: build_tsid_py(problem, q0),
        "flat": _flat_builder(FLAT[name], problem, q0, states),
    }
    entry: dict[str, Any] = {"states": len(states), "timed_states": len(kept), "max_tau_difference": worst}
    if name in TUNED:
        tuned = TUNED[name](build_tsid_py(problem, q0), states[0])
        try:
            difference = max(float(np.abs(tuned(*s) - tau).max()) for s, tau in zip(kept, taus, strict=True))
        except ActiveInequalityError:
            raise SystemExit(
                f"{name}: the tuned step holds an inequality active where the flat one does not"
            ) from None
        if difference > 1e-9:
            raise SystemExit(f"{name}: the tuned step differs from tsid_py by {difference:.3g} N m")
        entry["tuned_max_tau_difference"] = difference
        steps["tuned"] = _flat_builder(TUNED[name], problem, q0, states)
    if step_time.tsid is not None:
        steps["tsid"] = lambda: step_time.build_oracle(problem, q0, step_time.tsid)
    times = step_time.interleaved(list(steps.values()), kept, rounds)
    for who, seconds in zip(steps, times, strict=True):
        entry[who] = step_time.summary(seconds)
    if "tsid" in entry:
        for who in steps.keys() - {"tsid"}:
            entry[f"{who}_over_tsid"] = round(entry[who]["median_us"] / entry["tsid"]["median_us"], 3)
    for who in steps.keys() - {"tsid", "flat"}:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="timed passes over the states (default 5)")
    parser.add_argument("--scenario", nargs="*", choices=SCENARIOS, default=list(SCENARIOS))
    parser.add_argument("--out", help="write the JSON there (the table then goes to stdout)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    load_start = os.getloadavg()[0]
    results = {name: measure(name, args.rounds) for name in args.scenario}
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "goals": {name: step_time.GOALS.get(PROBLEMS[name].robot) for name in args.scenario},
        "machine": {"cpu": cpu_name(), "load_average": [round(load_start, 2), round(os.getloadavg()[0], 2)]},
        "rounds": args.rounds,
        "scenarios": results,
    }
    table = sys.stdout if args.out else sys.stderr
    load_end = os.getloadavg()[0]
    print(f"median step [us], {args.rounds} round(s), load {load_start:.2f} -> {load_end:.2f}", file=table)
    columns = (
        "states",
        "tsid_py",
        "flat",
        "tuned",
        "TSID",
        "tsid_py/TSID",
        "flat/TSID",
        "tuned/TSID",
        "goal",
    )
    print(f"{'scenario':16s}" + "".join(f"{c:>13s}" for c in columns), file=table)
    nan = float("nan")
    for name, r in results.items():
        row = (
            r["timed_states"],
            *(r[who]["median_us"] if who in r else nan for who in ("tsid_py", "flat", "tuned", "tsid")),
            *(r.get(f"{who}_over_tsid", nan) for who in ("tsid_py", "flat", "tuned")),
            step_time.GOALS.get(PROBLEMS[name].robot, nan),
        )
        print(f"{name:16s}" + "".join(f"{value:13.5g}" for value in row), file=table)
    text = json.dumps(report, indent=2)
    if args.out:
        with open(args.out, "w") as file:
            file.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
