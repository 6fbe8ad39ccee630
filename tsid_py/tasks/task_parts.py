"""The parts a task is built from: PD gains, a mask of rows, a gain attribute, the last errors
(mixins of the library's tasks; :class:`~tsid_py.tasks.task_motion_tracking.TaskMotionTracking`
combines them for a task of one's own)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np

from tsid_py.validation import as_gain, as_mask, as_scalar, mask_rows, read_only

if TYPE_CHECKING:
    from tsid_py.robot_wrapper import RobotWrapper


class PdGains:
    """Proportional-derivative gains ``kp``, ``kd`` of a fixed size.

    ``kd`` defaults to critical damping, 2 sqrt(kp), until it is set.
    """

    def __init__(self, size: int, kp: float = 0.0) -> None:
        self._gain_size = size
        self._kp = np.full(size, kp)
        self._kd_set = False
        self._kd = 2.0 * np.sqrt(self._kp)

    @property
    def kp(self) -> np.ndarray:
        """Proportional gains [1/s^2] (a read-only copy: set them with ``task.kp = ...``)."""
        return read_only(self._kp.copy())

    @kp.setter
    def kp(self, value: object) -> None:
        self._kp = as_gain("kp", value, self._gain_size)
        if not self._kd_set:
            self._kd = 2.0 * np.sqrt(self._kp)

    @property
    def kd(self) -> np.ndarray:
        """Derivative gains [1/s] (a read-only copy); 2 sqrt(kp) when never set."""
        return read_only(self._kd.copy())

    @kd.setter
    def kd(self, value: object) -> None:
        self._kd = as_gain("kd", value, self._gain_size)
        self._kd_set = True


class Masked:
    """A 0/1 ``mask`` over a task's rows or joints, read as floats and stored as booleans.

    ``_mask_size`` says how many entries the mask has, and what they mean. Setting the mask
    validates it and keeps the selected entries as ``_rows``: a slice when they are contiguous.
    ``_all_rows`` says whether every entry is kept. It then calls ``_apply_mask``, so the task can
    rebuild what depends on the mask. ``dim`` is the number of entries kept.
    """

    _last: SimpleNamespace  # the task's
    _mask: np.ndarray
    _rows: slice | np.ndarray
    _all_rows: bool
    _dim: int

    @property
    def mask(self) -> np.ndarray:
        """The mask, one 0/1 float per entry (see the task's ``_mask_size``; read-only: set it
        with ``task.mask = ...``)."""
        return read_only(self._mask.astype(float))

    @mask.setter
    def mask(self, value: object) -> None:
        self._mask = as_mask("mask", value, self._mask_size())
        self._rows = mask_rows(self._mask)
        self._all_rows = bool(self._mask.all())
        self._dim = int(self._mask.sum())
        self._last.out = None  # what the task filled with the old mask is not its constraint any more
        self._last.filled = False
        self._apply_mask()

    @property
    def dim(self) -> int:
        """Number of rows: the entries the mask keeps."""
        return self._dim

    def _mask_size(self) -> int:
        raise NotImplementedError

    def _apply_mask(self) -> None:
        """Rebuild what depends on the mask (nothing by default)."""


class MaskedActuatedJoints(Masked):
    """A mask over the actuated joints (0/1 per joint), for a task on tau with one row per joint kept.

    ``_selection`` is S_mask (kept joints x na). ``selected_joints`` tells the formulation to take
    those rows of its torque map.
    """

    robot: RobotWrapper  # the task's
    selected_joints: slice | np.ndarray | None
    _selection: np.ndarray

    def _mask_size(self) -> int:
        """mask: which actuated joints are bounded (0/1 per joint)."""
        return self.robot.na

    def _apply_mask(self) -> None:
        axes = np.flatnonzero(self._mask)
        self._selection = np.zeros((axes.size, self.robot.na))
        self._selection[np.arange(axes.size), axes] = 1.0
        self.selected_joints = self._rows


class GainVector:
    """A gain attribute (e.g. ``kp``), validated on assignment.

    It takes a scalar or a vector of the owner's ``gain_size``, every entry >= 0. It is stored as a
    vector and read as a read-only copy. The docstring given states its unit.
    """

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self._name, self._attribute = name, f"_{name}"

    def __get__(self, task: object, owner: type | None = None) -> np.ndarray:
        if task is None:
            return self  # type: ignore[return-value]
        return read_only(getattr(task, self._attribute).copy())

    def __set__(self, task: object, value: object) -> None:
        setattr(task, self._attribute, as_gain(self._name, value, task.gain_size))  # type: ignore[attr-defined]


class Scalar:
    """A scalar attribute (e.g. ``dt``), validated on assignment: a finite number >= ``minimum``
    (> with ``strict``). Stored in ``_name``, which a task's ``fill`` reads at no extra cost. The
    docstring given states its unit."""

    def __init__(self, doc: str, *, minimum: float, strict: bool = False) -> None:
        self.__doc__ = doc
        self._minimum, self._strict = minimum, strict

    def __set_name__(self, owner: type, name: str) -> None:
        self._name, self._attribute = name, f"_{name}"

    def __get__(self, task: object, owner: type | None = None) -> float:
        if task is None:
            return self  # type: ignore[return-value]
        return getattr(task, self._attribute)

    def __set__(self, task: object, value: object) -> None:
        name = f"{self._name} of task {getattr(task, 'name', '?')!r}"
        setattr(task, self._attribute, as_scalar(name, value, minimum=self._minimum, strict=self._strict))


class TrackingErrors:
    """The last ``position_error``, ``velocity_error`` and ``desired_acceleration`` of a PD task,
    every component, read as copies (the task keeps them in ``self._last``)."""

    _last: SimpleNamespace

    @property
    def position_error(self) -> np.ndarray:
        """e at the last computation, every component (a copy)."""
        return self._last.position_error.copy()

    @property
    def velocity_error(self) -> np.ndarray:
        """de at the last computation, every component (a copy)."""
        return self._last.velocity_error.copy()

    @property
    def desired_acceleration(self) -> np.ndarray:
        """a* at the last computation, every component (a copy)."""
        return self._last.desired_acceleration.copy()
