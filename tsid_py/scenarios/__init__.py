"""Ready-to-run scenarios, shared by the demos/ scripts and the ``tsid-py`` command."""

from tsid_py.scenarios import balance, com_sinusoid, step, walk

SCENARIOS = {"balance": balance, "com-sinusoid": com_sinusoid, "step": step, "walk": walk}

__all__ = ["SCENARIOS", "balance", "com_sinusoid", "step", "walk"]
