"""Checks for people who write their own tasks: derivatives against finite differences.

A :class:`~tsid_py.tasks.TaskMotionTracking` gives an error e(q), its Jacobian J = de/dq and its
drift dJ/dt v. :func:`assert_task_derivatives` compares the last two with central differences
taken on the configuration manifold (q moves as q (+) dq, Pinocchio's ``integrate``):

    J[:, k]   ~  (e(q (+) eps u_k) - e(q (+) -eps u_k)) / (2 eps)           (u_k the k-th unit tangent)
    dJ/dt v   ~  (J(q (+) eps v) v - J(q (+) -eps v) v) / (2 eps)           (dv = 0, so the drift)

Run it at a few random states in a task's tests; a sign or frame mistake shows as an error of
the order of the values, rounding as one of about eps^2 + 1e-16 / eps relative.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from tsid_py.errors import DimensionError, InvalidParameterError
from tsid_py.tasks.task_motion_tracking import TaskMotionTracking
from tsid_py.validation import as_scalar


@dataclass(frozen=True)
class DerivativeCheck:
    """How far a task's Jacobian and drift are from their finite differences.

    Attributes:
        jacobian_error: max |J - J_fd| over the entries, relative to max(1, max |J_fd|).
        drift_error: max |drift - drift_fd|, relative to max(1, max |drift_fd|).
        worst_column: The column of J (a velocity index) where the Jacobian error is largest.
    """

    jacobian_error: float
    drift_error: float
    worst_column: int


def check_task_derivatives(
    task: TaskMotionTracking, q: object, v: object, t: float = 0.0, eps: float = 1e-6
) -> DerivativeCheck:
    """The errors of ``task``'s Jacobian and drift at (t, q, v) against finite differences (no verdict)."""
    if not isinstance(task, TaskMotionTracking):
        raise InvalidParameterError(
            f"{task!r} is not a TaskMotionTracking: only a task that gives its error, Jacobian and drift "
            "can be checked against finite differences"
        )
    robot = task.robot
    q, v = robot.check_state(q, v)
    t, eps = as_scalar("t", t), as_scalar("eps", eps, minimum=0.0, strict=True)
    data = robot.create_data()

    def at(configuration: np.ndarray) -> pin.Data:
        robot.compute_all_terms(data, configuration, v)
        return data

    J = _shaped(task, "compute_jacobian", task.compute_jacobian(t, q, v, at(q)), (None, robot.nv))
    rows = J.shape[0]

    def error(configuration: np.ndarray) -> np.ndarray:
        return _shaped(
            task, "compute_error", task.compute_error(t, configuration, v, at(configuration)), (rows,)
        )

    def jacobian(configuration: np.ndarray) -> np.ndarray:
        return _shaped(
            task, "compute_jacobian", task.compute_jacobian(t, configuration, v, at(configuration)), J.shape
        )

    drift = _shaped(task, "compute_drift", task.compute_drift(t, q, v, at(q)), (rows,))
    J_fd = np.empty_like(J)
    for k in range(robot.nv):
        step = np.zeros(robot.nv)
        step[k] = eps
        J_fd[:, k] = (
            error(pin.integrate(robot.model, q, step)) - error(pin.integrate(robot.model, q, -step))
        ) / (2 * eps)
    ahead, behind = pin.integrate(robot.model, q, eps * v), pin.integrate(robot.model, q, -eps * v)
    drift_fd = (jacobian(ahead).dot(v) - jacobian(behind).dot(v)) / (2 * eps)
    column_errors = np.abs(J - J_fd).max(axis=0, initial=0.0)
    return DerivativeCheck(
        jacobian_error=float(column_errors.max(initial=0.0) / max(1.0, float(np.abs(J_fd).max(initial=0.0)))),
        drift_error=float(
            np.abs(drift - drift_fd).max(initial=0.0) / max(1.0, float(np.abs(drift_fd).max(initial=0.0)))
        ),
        worst_column=int(np.argmax(column_errors)) if column_errors.size else 0,
    )


def _shaped(
    task: TaskMotionTracking, method: str, value: object, shape: tuple[int | None, ...]
) -> np.ndarray:
    """``value`` as a float array of ``shape`` (None: any size), else a DimensionError naming the task."""
    try:
        array = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise DimensionError(
            f"task {task.name!r}: {method} returned {type(value).__name__}, not an array of numbers"
        ) from None
    if array.ndim != len(shape) or any(
        n is not None and n != m for n, m in zip(shape, array.shape, strict=True)
    ):
        wanted = " x ".join("m" if n is None else str(n) for n in shape)
        raise DimensionError(
            f"task {task.name!r}: {method} returned shape {array.shape}, expected {wanted} "
            "(m: the size of the task's error)"
        )
    return array


def assert_task_derivatives(
    task: TaskMotionTracking, q: object, v: object, t: float = 0.0, eps: float = 1e-6, rtol: float = 1e-5
) -> DerivativeCheck:
    """Raise AssertionError when ``task``'s Jacobian or drift at (t, q, v) differs from its finite
    differences by more than ``rtol`` (relative, see :class:`DerivativeCheck`); return the check."""
    check = check_task_derivatives(task, q, v, t, eps)
    if check.jacobian_error > rtol:
        raise AssertionError(
            f"task {task.name!r}: its Jacobian differs from the finite differences of its error by "
            f"{check.jacobian_error:.3g} (relative; worst at velocity index {check.worst_column}), "
            f"more than {rtol:g}"
        )
    if check.drift_error > rtol:
        raise AssertionError(
            f"task {task.name!r}: its drift differs from the finite differences of J v by "
            f"{check.drift_error:.3g} (relative), more than {rtol:g}"
        )
    return check
