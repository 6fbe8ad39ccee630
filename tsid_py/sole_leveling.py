"""Level the soles: the ankle angles that turn each foot frame's z axis to the vertical.

A standing posture (often an SRDF's) may tilt the soles a few degrees: the legs' other joints
bend, the ankles do not make up for it. For each foot, the joints nearest the foot along its
chain (its ankle: the first one-dof joints up from the foot whose axes turn the z axis both
ways) are solved by Gauss-Newton so that z_foot = e_z in the world, the rest of the posture as
it is. The residual is e_z - z_foot (zero at level only: an upside-down foot has z_foot = -e_z);
a joint of axis w (world) turns z_foot by w x z_foot (Pinocchio's frame Jacobian, angular rows,
LOCAL_WORLD_ALIGNED). The angles it changes by less than LEVEL_TOLERANCE are left out.
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin

from tsid_py.errors import RobotSpecError

LEVEL_TOLERANCE = 1e-10  # |x, y of the foot's z axis| at which a sole is level
MAX_ITERATIONS = 50


def sole_tilt(model: pin.Model, data: pin.Data, frame: int) -> float:
    """The angle between a frame's z axis and the vertical [rad], after forward kinematics."""
    return math.acos(min(1.0, max(-1.0, float(data.oMf[frame].rotation[2, 2]))))


def level_soles(model: pin.Model, q: np.ndarray, frames: list[int]) -> dict[str, float]:
    """The ankle angles [rad] that level every foot frame of ``frames`` at posture ``q`` (a
    configuration of ``model``), by joint name: those that change; the others keep their value.

    Raises:
        RobotSpecError: A foot's chain cannot level it (no two joints that turn its z axis both
            ways), or the angles that do are outside the joints' limits.
    """
    q = np.array(q, dtype=float)
    start = q.copy()
    data = model.createData()
    solved: dict[str, float] = {}
    for frame in frames:
        ankle = _ankle(model, data, q, frame)
        columns = [model.joints[j].idx_v for j in ankle]
        rows = [model.joints[j].idx_q for j in ankle]
        for _ in range(MAX_ITERATIONS):
            pin.computeJointJacobians(model, data, q)
            pin.updateFramePlacements(model, data)
            z = data.oMf[frame].rotation[:, 2]
            residual = np.array((0.0, 0.0, 1.0)) - z
            if np.linalg.norm(residual) < LEVEL_TOLERANCE:
                break
            turn = np.cross(_axes(model, data, frame)[:, columns].T, z).T
            q[rows] += np.linalg.lstsq(turn, residual, rcond=None)[0]
        else:
            raise RobotSpecError(f"the sole of {model.frames[frame].name} could not be levelled by its ankle")
        for j, k in zip(ankle, rows, strict=True):
            low, high = model.lowerPositionLimit[k], model.upperPositionLimit[k]
            if low < high and not low - 1e-9 <= q[k] <= high + 1e-9:
                raise RobotSpecError(
                    f"levelling {model.frames[frame].name} needs joint {model.names[j]} at {q[k]:.4f} rad, "
                    f"outside its limits [{low:.4f}, {high:.4f}]"
                )
            if abs(q[k] - start[k]) > LEVEL_TOLERANCE:
                solved[model.names[j]] = float(q[k])
    return solved


def _axes(model: pin.Model, data: pin.Data, frame: int) -> np.ndarray:
    """The angular rows of the frame's Jacobian in world axes (3 x nv)."""
    return pin.getFrameJacobian(model, data, frame, pin.LOCAL_WORLD_ALIGNED)[3:]


ANKLE_JOINTS = 3  # the most joints up from a foot its ankle may count (two, and a yaw between)


def _ankle(model: pin.Model, data: pin.Data, q: np.ndarray, frame: int) -> list[int]:
    """The one-dof joints nearest the foot up its chain, as few as turn its z axis both ways, at
    most ANKLE_JOINTS of them (a leg without an ankle roll is refused, not levelled with its knee
    and hip)."""
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    z = data.oMf[frame].rotation[:, 2]
    axes = _axes(model, data, frame)
    chosen: list[int] = []
    joint = model.frames[frame].parentJoint
    while (
        joint > 0
        and model.joints[joint].nv == 1
        and model.joints[joint].nq == 1
        and len(chosen) < ANKLE_JOINTS
    ):
        chosen.append(joint)
        turn = np.cross(axes[:, [model.joints[j].idx_v for j in chosen]].T, z).T[:2]
        if np.linalg.matrix_rank(turn, tol=1e-6) == 2:
            return chosen
        joint = model.parents[joint]
    raise RobotSpecError(
        f"the sole of {model.frames[frame].name} has no ankle to level it with (two joints up its chain "
        "that turn it about two horizontal axes)"
    )
