"""Ready-to-run scenarios, shared by the demos/ scripts and the ``tsid-py`` command."""

from tsid_py.scenarios import balance, com_sinusoid, quadruped, reach

SCENARIOS = {"balance": balance, "com-sinusoid": com_sinusoid, "reach": reach, "quadruped": quadruped}

__all__ = ["SCENARIOS", "balance", "com_sinusoid", "quadruped", "reach"]
