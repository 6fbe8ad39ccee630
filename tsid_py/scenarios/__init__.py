"""Ready-to-run scenarios, shared by the demos/ scripts and the ``tsid-py`` command."""

from tsid_py.scenarios import balance, com_sinusoid

SCENARIOS = {"balance": balance, "com-sinusoid": com_sinusoid}

__all__ = ["SCENARIOS", "balance", "com_sinusoid"]
