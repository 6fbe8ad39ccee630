"""Deprecated: the module :mod:`tsid_py.sweep.scenario_jobs`."""

from tsid_py.deprecation import warn_moved_module
from tsid_py.sweep.scenario_jobs import (
    NOT_SWEPT,
    ScenarioJob,
    check_keywords,
    parameter_space,
    scenario_function,
    takes_push,
)

warn_moved_module(__name__, "tsid_py.sweep.scenario_jobs")

__all__ = ["NOT_SWEPT", "ScenarioJob", "check_keywords", "parameter_space", "scenario_function", "takes_push"]
