"""Deprecated: the module :mod:`tsid_py.sweep.job` (``Task`` is its :class:`JobRunner`)."""

from tsid_py.deprecation import warn_moved_module
from tsid_py.sweep.job import MACHINE_FIELDS, Job, JobRunner, Outcome, one_line, select

warn_moved_module(__name__, "tsid_py.sweep.job")

Task = JobRunner  # the old name of JobRunner

__all__ = ["MACHINE_FIELDS", "Job", "Outcome", "Task", "one_line", "select"]
