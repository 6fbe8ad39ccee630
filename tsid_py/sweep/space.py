"""The points of a sweep: parameter axes, a grid over them or seeded random samples.

An axis is written ``NAME=START:STOP:STEP`` (floats; the grid includes STOP when the steps reach it
exactly, counted in decimal so that ``0.1:0.5:0.1`` gives 0.1, 0.2, 0.3, 0.4, 0.5),
``NAME=V1,V2,...`` (listed values: numbers, or words such as QP backends) or ``NAME=VALUE`` (one
value). A grid is every combination, the last axis varying fastest. Random samples
(:func:`sample_points`) draw N points uniformly in each range (STEP is then ignored) and among
the listed values, from one seeded stream: the same seed gives the same points, the first N
points of a larger sample are those of the smaller one, and a fixed value draws no number (so
fixing another keyword leaves the points as they were).

Pushes: the names ``push_fx``, ``push_fy``, ``push_fz`` [N] (world axes), or ``push_force`` [N] and
``push_angle`` [deg] (horizontal, 0 along x, 90 along y), with ``push_t`` [s] and
``push_duration`` [s], combine into the scenario's one ``push`` keyword
(:func:`scenario_kwargs`): ``--param push_fy=100:600:50 --param push_t=0.5:1.5:0.25`` runs
``push=Push((0, fy, 0), t, 0.1)``. Unset components are 0 N, t 1 s and duration 0.1 s.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import numpy as np

from tsid_py.errors import InvalidParameterError
from tsid_py.loop.plant import Push

Value = float | int | str
MAX_POINTS = 1_000_000  # a typo in a step should not fill the memory

PUSH_DEFAULTS = {"push_t": 1.0, "push_duration": 0.1}  # [s]
PUSH_NAMES = ("push_fx", "push_fy", "push_fz", "push_force", "push_angle", "push_t", "push_duration")


@dataclass(frozen=True)
class Axis:
    """One swept parameter: listed ``values``, or a range ``low``..``high`` with a grid ``step``.

    Attributes:
        name: The scenario keyword (or a push name).
        values: The listed values (a list axis), else None.
        low: Lower end of a range (included).
        high: Upper end of a range (included when the steps reach it).
        step: Grid step of a range, as written (None: a range for random samples only).
        whole: The parameter takes whole numbers (its default is an int).
    """

    name: str
    values: tuple[Value, ...] | None = None
    low: Decimal | None = None
    high: Decimal | None = None
    step: Decimal | None = None
    whole: bool = False

    def grid(self) -> tuple[Value, ...]:
        """The axis's values in a grid."""
        if self.values is not None:
            return self.values
        if self.step is None:
            raise InvalidParameterError(
                f"--param {self.name}: a grid needs NAME=START:STOP:STEP (or use --samples N)"
            )
        count = int((self.high - self.low) / self.step) + 1
        if count > MAX_POINTS:
            raise InvalidParameterError(f"--param {self.name}: {count} values; use a coarser step")
        return tuple(self._number(self.low + k * self.step) for k in range(count))

    def sample(self, u: float) -> Value:
        """The value at u in [0, 1): uniform in the range (whole numbers: each equally likely), or
        one of the listed values."""
        if self.values is not None:
            return self.values[min(int(u * len(self.values)), len(self.values) - 1)]
        low, high = float(self.low), float(self.high)
        if self.whole:
            return int(math.floor(low + u * (high - low + 1)))
        return low + u * (high - low)

    def _number(self, value: Decimal) -> Value:
        return int(value) if self.whole else float(value)


def parse_param(text: str, whole: bool = False) -> Axis:
    """``NAME=START:STOP:STEP``, ``NAME=START:STOP`` (samples only), ``NAME=V1,V2,...`` or ``NAME=VALUE``.

    ``whole``: the parameter takes whole numbers (range ends and steps must be whole).
    """
    name, sep, spec = text.partition("=")
    name, spec = name.strip(), spec.strip()
    if not sep or not name.isidentifier() or not spec:
        raise InvalidParameterError(
            f"--param must be NAME=START:STOP:STEP, NAME=V1,V2,... or NAME=VALUE, got {text!r}"
        )
    if ":" in spec:
        parts = spec.split(":")
        if len(parts) not in (2, 3):
            raise InvalidParameterError(f"--param {name}: a range is START:STOP:STEP, got {spec!r}")
        low, high, *step = (_decimal(name, part, whole) for part in parts)
        if low > high:
            raise InvalidParameterError(f"--param {name}: START {low} is above STOP {high}")
        if step and step[0] <= 0:
            raise InvalidParameterError(f"--param {name}: STEP must be > 0, got {step[0]}")
        return Axis(name, None, low, high, step[0] if step else None, whole)
    items = [item.strip() for item in spec.split(",")]
    if not all(items):
        raise InvalidParameterError(f"--param {name}: an empty value in {spec!r}")
    values = tuple(_value(name, item, whole) for item in items)
    if len(set(values)) != len(values):
        raise InvalidParameterError(f"--param {name}: a value is listed twice in {spec!r}")
    return Axis(name, values, whole=whole)


def _decimal(name: str, text: str, whole: bool) -> Decimal:
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise InvalidParameterError(f"--param {name}: {text!r} is not a number") from None
    if not value.is_finite():
        raise InvalidParameterError(f"--param {name}: {text!r} is not finite")
    if whole and value != value.to_integral_value():
        raise InvalidParameterError(f"--param {name} takes whole numbers, got {text!r}")
    return value


def _value(name: str, text: str, whole: bool) -> Value:
    """A listed value: a number when it reads as one, else the word itself."""
    try:
        number = float(text)
    except ValueError:
        if whole:
            raise InvalidParameterError(f"--param {name} takes whole numbers, got {text!r}") from None
        return text
    if not math.isfinite(number):
        raise InvalidParameterError(f"--param {name}: {text!r} is not finite")
    if whole:
        if not number.is_integer():
            raise InvalidParameterError(f"--param {name} takes whole numbers, got {text!r}")
        return int(number)
    return number


def check_axes(axes: list[Axis]) -> None:
    """At least one axis, each named once, pushes given one way (components or force and angle)."""
    if not axes:
        raise InvalidParameterError("a sweep needs at least one --param NAME=...")
    names = [axis.name for axis in axes]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise InvalidParameterError(f"--param {twice[0]} is given twice")
    polar = {"push_force", "push_angle"} & set(names)
    cartesian = {"push_fx", "push_fy"} & set(names)
    if polar and cartesian:
        raise InvalidParameterError(
            f"--param {sorted(polar)[0]} and {sorted(cartesian)[0]}: give a push as push_fx/push_fy "
            "or as push_force/push_angle, not both"
        )


def grid_points(axes: list[Axis]) -> list[dict[str, Value]]:
    """Every combination of the axes' values, the last axis varying fastest."""
    check_axes(axes)
    values = [axis.grid() for axis in axes]
    count = math.prod(len(v) for v in values)
    if count > MAX_POINTS:
        raise InvalidParameterError(f"the grid has {count} points (at most {MAX_POINTS}); use coarser steps")
    names = [axis.name for axis in axes]
    return [dict(zip(names, combination, strict=True)) for combination in itertools.product(*values)]


def sample_points(axes: list[Axis], samples: int, seed: int) -> list[dict[str, Value]]:
    """``samples`` points drawn uniformly in each axis (seeded: the same seed, the same points)."""
    check_axes(axes)
    if isinstance(samples, bool) or not isinstance(samples, int) or not 0 < samples <= MAX_POINTS:
        raise InvalidParameterError(f"--samples must be a whole number in 1..{MAX_POINTS}, got {samples!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidParameterError(f"--seed must be a whole number >= 0, got {seed!r}")
    drawn = [axis for axis in axes if axis.values is None or len(axis.values) > 1]  # a fixed value draws none
    u = np.random.default_rng(seed).random((samples, len(drawn)))
    points = []
    for row in u:
        chosen = {axis.name: axis.sample(float(x)) for axis, x in zip(drawn, row, strict=True)}
        points.append({axis.name: chosen[axis.name] if axis in drawn else axis.values[0] for axis in axes})
    return points


def scenario_kwargs(values: dict[str, object]) -> dict[str, object]:
    """A point's values as the scenario's keywords: the push names become one ``push`` (a
    :class:`~tsid_py.loop.plant.Push`), the other names pass as they are."""
    kwargs = {name: value for name, value in values.items() if name not in PUSH_NAMES}
    pushes = {name: float(value) for name, value in values.items() if name in PUSH_NAMES}
    if pushes:
        kwargs["push"] = make_push(pushes)
    return kwargs


def make_push(values: dict[str, float]) -> Push:
    """The :class:`~tsid_py.loop.plant.Push` of the push names in ``values`` (see the module docstring)."""
    if "push_force" in values or "push_angle" in values:
        force, angle = values.get("push_force", 0.0), math.radians(values.get("push_angle", 0.0))
        fx, fy = force * math.cos(angle), force * math.sin(angle)
    else:
        fx, fy = values.get("push_fx", 0.0), values.get("push_fy", 0.0)
    timing = {**PUSH_DEFAULTS, **values}
    if timing["push_duration"] <= 0 or timing["push_t"] < 0:
        raise InvalidParameterError(
            f"a push needs push_t >= 0 and push_duration > 0, got {timing['push_t']}, "
            f"{timing['push_duration']}"
        )
    return Push((fx, fy, values.get("push_fz", 0.0)), timing["push_t"], timing["push_duration"])
