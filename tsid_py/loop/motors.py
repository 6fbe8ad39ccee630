"""What the motors do with a command: they take it late, and follow its torque with a lag.

A robot's command reaches its motors a control period or more after it was computed (the bus, the
drivers), and a motor's current loop follows a torque with a bandwidth of its own. Robot sensing
(:mod:`tsid_py.loop.sensing`, its :class:`~tsid_py.loop.sensing.SensorParams` ``latency`` and
``torque_bandwidth``) puts :class:`Motors` between the controller and the plant; with truth sensing
they take each command as it is, at once. Torque limits are the plants' (they clip to the spec's).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import replace

import numpy as np

from tsid_py.loop.plant import Command
from tsid_py.validation import as_count, as_scalar


class Motors:
    """The robot's side of a command.

    Args:
        latency: Control periods between a command's computation and the motors taking it.
        bandwidth: [Hz] of the torque loop, a first-order lag updated once a period,
            tau <- tau + a (tau_commanded - tau), a = dt w / (1 + dt w), w = 2 pi bandwidth (0:
            none). The position targets of position mode are taken as they are (the servo is the
            plant's).
        dt: The control period [s].
    """

    def __init__(self, latency: int, bandwidth: float, dt: float) -> None:
        self.latency = as_count("latency", latency, minimum=0)
        cutoff = 2.0 * math.pi * as_scalar("bandwidth", bandwidth, minimum=0.0)
        dt = as_scalar("dt", dt, minimum=0.0, strict=True)
        self._lag = dt * cutoff / (1.0 + dt * cutoff) if cutoff > 0.0 else None
        self._waiting: deque[Command] = deque()
        self._tau: np.ndarray | None = None

    def take(self, command: Command) -> Command:
        """The command the motors act on now, given the one computed now."""
        waiting = self._waiting
        waiting.append(command)
        while len(waiting) > self.latency + 1:
            waiting.popleft()
        taken = waiting[0]
        if self._lag is None:
            return taken
        if self._tau is None:  # the first command: taken as it is
            self._tau = taken.tau.copy()
        else:
            self._tau += self._lag * (taken.tau - self._tau)
        return replace(taken, tau=self._tau.copy())
