"""Sweeps: a scenario run over a grid or seeded random samples of its parameters, on many cores.

A sweep is a job (a scenario, or any picklable function of keyword values), its points
(:func:`grid_points`, :func:`sample_points` of :class:`Axis` parsed from ``NAME=START:STOP:STEP``)
and the summary fields to keep. :func:`run_sweep` runs the points not yet in the table, on worker
processes of this machine, on a Ray cluster, or serially (one worker), and streams one row per
run into a Parquet or CSV table; :func:`plot_sweep` draws a push-recovery map or a metric map.
The same engine runs ``tsid-py analyze --batch`` (one motion analysis per recording).

    from tsid_py.sweep import ScenarioJob, grid_points, parse_param, run_sweep

    points = grid_points([parse_param("amplitude=0.01:0.05:0.01"), parse_param("frequency=0.5,1")])
    report = run_sweep(ScenarioJob("com-sinusoid"), points, "sway.parquet", workers=2)
"""

from tsid_py.deprecation import moved_names
from tsid_py.sweep.engine import SweepReport, run_sweep
from tsid_py.sweep.job import MACHINE_FIELDS, JobRunner
from tsid_py.sweep.plots import plot_sweep
from tsid_py.sweep.scenario_jobs import ScenarioJob
from tsid_py.sweep.space import Axis, grid_points, parse_param, sample_points, scenario_kwargs
from tsid_py.sweep.table import read_table, write_table

__all__ = [
    "MACHINE_FIELDS",
    "Axis",
    "JobRunner",
    "ScenarioJob",
    "SweepReport",
    "grid_points",
    "parse_param",
    "plot_sweep",
    "read_table",
    "run_sweep",
    "sample_points",
    "scenario_kwargs",
    "write_table",
]

__getattr__ = moved_names(__name__, {"Task": "tsid_py.sweep.job.JobRunner"})  # renamed after 0.2.0
