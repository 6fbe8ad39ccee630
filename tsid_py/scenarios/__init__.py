"""Ready-to-run scenarios, shared by the demos/ scripts and the ``tsid-py`` command."""

from tsid_py.scenarios import balance, com_sinusoid, quadruped, reach, step, walk
from tsid_py.scenarios.course import COURSE

SCENARIOS = {
    "balance": balance,
    "com-sinusoid": com_sinusoid,
    "step": step,
    "walk": walk,
    "reach": reach,
    "quadruped": quadruped,
    **COURSE,  # the TSID course's questions (docs/course.md)
}

__all__ = ["SCENARIOS", "balance", "com_sinusoid", "quadruped", "reach", "step", "walk"]
