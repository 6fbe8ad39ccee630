"""Ready-to-run scenarios, shared by the demos/ scripts and the ``tsid-py`` command."""

from tsid_py.scenarios import balance, com_sinusoid, quadruped, reach, step, walk

SCENARIOS = {
    "balance": balance,
    "com-sinusoid": com_sinusoid,
    "step": step,
    "walk": walk,
    "reach": reach,
    "quadruped": quadruped,
}

__all__ = ["SCENARIOS", "balance", "com_sinusoid", "quadruped", "reach", "step", "walk"]
