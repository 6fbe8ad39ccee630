"""The exceptions tsid_py raises: one root, :class:`TsidError`, and a subclass per kind of mistake.

Each subclass also derives from the closest built-in exception, so code that already
catches ``ValueError`` or ``LookupError`` keeps working.
"""

from __future__ import annotations


class TsidError(Exception):
    """Root of every error raised by tsid_py."""


class DimensionError(TsidError, ValueError):
    """An array has the wrong shape (e.g. a q of the wrong size)."""


class NonFiniteError(TsidError, ValueError):
    """An input contains NaN or infinity where a finite number is required."""


class InvalidParameterError(TsidError, ValueError):
    """A scalar parameter is out of its valid range (negative weight, mu <= 0, f_min > f_max, ...)."""


class UnknownFrameError(TsidError, LookupError):
    """A frame (or joint) name is not in the robot model."""


class UnknownNameError(TsidError, LookupError):
    """A task, contact or reference-configuration name is not known."""


class DuplicateNameError(TsidError, ValueError):
    """A task or contact with this name is already in the formulation."""


class RobotSpecError(TsidError, ValueError):
    """A robot specification (robots/NAME.toml) is missing or malformed."""


class UnsupportedProblemError(TsidError, ValueError):
    """The problem has a structure the solver cannot handle (e.g. too many priority levels)."""


class SolverFailedError(TsidError, RuntimeError):
    """A solution was read from a QP that did not solve; the output keeps the problem for inspection."""


class StaleProblemError(TsidError, RuntimeError):
    """A problem was read after its formulation computed another one (its arrays hold the new one)."""


class UnknownAttributeError(TsidError, AttributeError):
    """An attribute the object does not have was set (e.g. TSID's ``task.Kp = 100`` for ``task.kp``)."""


class UnsetReferenceError(TsidError, RuntimeError):
    """A reference was read before one was set (a ``TrajectorySE3Constant`` built without one)."""


class OutputError(TsidError, OSError):
    """An output file cannot be written where asked (exists, not writable, a directory)."""


class MissingFileError(TsidError, FileNotFoundError):
    """A file the library needs (a URDF, an SRDF, a mesh) is not where it was told to look."""


class SimulationDivergedError(TsidError, RuntimeError):
    """A plant's simulation diverged: its state is no longer finite, or MuJoCo reset it (an absurd
    push, gains beyond what the time step can integrate). A run ends on it as on a failed QP."""
