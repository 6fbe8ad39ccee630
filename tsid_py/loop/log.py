"""What a closed loop records, step by step."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from tsid_py.errors import InvalidParameterError
from tsid_py.loop.controller import ControlOutput


@dataclass
class RunLog:
    """Per-step records of a run; :meth:`arrays` shapes them (steps, n).

    The loop records t, q, v (the measured state a step started from), dv and tau; a scenario adds
    its own series (the CoM and its reference, each contact's forces, ...). With ``window`` = N
    only the last N steps are kept (every series is a bounded deque): memory stays flat however
    long the run, and the summaries come from statistics kept as the run goes.
    """

    t: list[float] = field(default_factory=list)
    q: list[np.ndarray] = field(default_factory=list)
    v: list[np.ndarray] = field(default_factory=list)
    dv: list[np.ndarray] = field(default_factory=list)
    tau: list[np.ndarray] = field(default_factory=list)
    com: list[np.ndarray] = field(default_factory=list)
    com_ref: list[np.ndarray] = field(default_factory=list)
    forces: dict[str, list[np.ndarray]] = field(default_factory=dict)
    window: int | None = None

    def __post_init__(self) -> None:
        if self.window is None:
            return
        if self.window < 1:
            raise InvalidParameterError(f"a log window is a number of steps >= 1, got {self.window}")
        for name, value in vars(self).items():
            if isinstance(value, list):
                setattr(self, name, deque(value, maxlen=self.window))
            elif isinstance(value, dict):
                setattr(self, name, {key: deque(series, maxlen=self.window) for key, series in value.items()})

    def record_step(self, t: float, q: np.ndarray, v: np.ndarray, out: ControlOutput) -> None:
        """The state (t [s], q, v) a control step started from and its dv and tau."""
        self.t.append(t)
        self.q.append(q)
        self.v.append(v)
        self.dv.append(out.dv)
        self.tau.append(out.tau)

    def distances(self, actual: str, reference: str) -> np.ndarray:
        """|actual - reference| at every step for two recorded series (e.g. "com", "com_ref") [m];
        one zero when nothing was recorded."""
        a, b = getattr(self, actual), getattr(self, reference)
        return np.linalg.norm(np.array(a) - np.array(b), axis=1) if a else np.zeros(1)

    def arrays(self) -> dict[str, np.ndarray]:
        """Every series as a NumPy array (forces as ``forces/<contact>``)."""
        out = {name: np.array(getattr(self, name)) for name in ("t", "q", "v", "dv", "tau", "com", "com_ref")}
        out.update({f"forces/{name}": np.array(values) for name, values in self.forces.items()})
        return out
