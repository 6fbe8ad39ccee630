"""Pictures of a sweep table: a push-recovery map, or one metric over one or two parameters.

- **Push-recovery map** (the sweep varies a push, and the table keeps ``verdict``): each run a
  mark at (the other varied parameter, the push force), one per verdict of the run
  (:mod:`tsid_py.loop.verdict`): recovered (green circle), lost balance (orange diamond), fell
  (red cross), undecided (grey square: the run ended before the physics decided), the run failed
  (black triangle: it raised, or its controller or plant failed, its ``error`` column says how).
  With ``push_force`` and ``push_angle`` varied, a polar map: the direction of the push [deg]
  around, its force [N] outwards.
- **Metric map**: a heat map of one kept metric over two varied parameters (cells on a grid,
  coloured dots for random samples), or a line over one. The default metric is the CoM tracking
  error (``com_error_max_m``), else the end-effector error, else the first numeric field.

Figures use matplotlib's object API on the Agg canvas (no window) and are written atomically.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from pathlib import Path

import numpy as np

from tsid_py.errors import InvalidParameterError
from tsid_py.outputs import atomic_output
from tsid_py.sweep.space import PUSH_NAMES

FORCE_NAMES = ("push_force", "push_fy", "push_fx", "push_fz")  # the force axis of a push map
DEFAULT_METRICS = ("com_error_max_m", "ee_error_max_m")
NOT_METRICS = ("point", "seconds", "steps", "qp_failures")


def varying(rows: list[dict[str, object]], inputs: list[str]) -> list[str]:
    """The inputs that take more than one value in ``rows`` (points or table rows)."""
    return [name for name in inputs if len({row[name] for row in rows}) > 1]


def is_push_sweep(names: list[str]) -> bool:
    return any(name in PUSH_NAMES for name in names)


def check_plottable(points: list[dict[str, object]], inputs: list[str]) -> None:
    """A picture shows one or two varied parameters (checked before the runs)."""
    names = varying(points, inputs)
    if not names:
        raise InvalidParameterError("--plot: the sweep varies no parameter")
    if len(names) > 2:
        raise InvalidParameterError(
            f"--plot draws one or two varied parameters; this sweep varies {len(names)} ({', '.join(names)})"
        )
    if is_push_sweep(names) and not any(name in FORCE_NAMES for name in names):
        raise InvalidParameterError(
            f"--plot: a push map needs a push force among the varied parameters ({', '.join(FORCE_NAMES)})"
        )


def check_columns(columns: Collection[str], names: list[str], metric: str | None = None) -> None:
    """The columns a picture of the table needs: ``verdict`` for a push map (the varied ``names``
    include a push), else ``metric`` (when one is chosen). The command checks them before the runs
    from ``--keep``, or from the first run's row without it."""
    if is_push_sweep(names):
        if "verdict" not in columns:
            raise InvalidParameterError(
                "--plot: a push map needs the summary field 'verdict' (add it to --keep)"
            )
    elif metric is not None and metric not in columns:
        raise InvalidParameterError(f"--plot-metric {metric}: not a column of the table")


def plot_sweep(
    rows: list[dict[str, object]],
    inputs: list[str],
    path: str | Path,
    metric: str | None = None,
    title: str = "",
    dpi: int = 100,
) -> Path:
    """Write the picture of a sweep table (a push map, or ``metric`` over the varied inputs) to ``path``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    names = varying(rows, inputs)
    check_plottable(rows, inputs)
    if is_push_sweep(names):
        figure = push_map(rows, names, title)
    else:
        figure = metric_map(rows, names, metric or default_metric(rows, inputs), title)
    FigureCanvasAgg(figure)
    path = Path(path)
    with atomic_output(path) as handle:
        figure.savefig(handle, format="png", dpi=dpi)
    return path


def default_metric(rows: list[dict[str, object]], inputs: list[str]) -> str:
    """The CoM error, else the end-effector error, else the first numeric field of the table."""
    columns = [name for name in rows[0] if name not in inputs and name not in NOT_METRICS] if rows else []
    for name in DEFAULT_METRICS:
        if name in columns:
            return name
    for name in columns:
        if any(_is_number(row.get(name)) for row in rows):
            return name
    raise InvalidParameterError("--plot: the table keeps no numeric field to draw (see --keep)")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _positions(values: list[object]) -> tuple[np.ndarray, list[str] | None]:
    """Numbers as they are; words as 0, 1, 2, ... in order of first appearance, with their labels."""
    if all(_is_number(v) for v in values):
        return np.asarray(values, dtype=float), None
    labels = list(dict.fromkeys(str(v) for v in values))
    return np.array([labels.index(str(v)) for v in values], dtype=float), labels


def _label(name: str) -> str:
    units = {
        "push_fx": "push force x [N]",
        "push_fy": "push force y [N]",
        "push_fz": "push force z [N]",
        "push_force": "push force [N]",
        "push_angle": "push direction [deg]",
        "push_t": "push time [s]",
        "push_duration": "push duration [s]",
        "amplitude": "amplitude [m]",
        "frequency": "frequency [Hz]",
        "duration": "duration [s]",
        "dt": "dt [s]",
    }
    return units.get(name, name)


VERDICT_STYLES = (  # verdict: marker, colour, label
    ("recovered", "o", "tab:green", "recovered"),
    ("lost", "D", "tab:orange", "lost balance"),
    ("fell", "x", "tab:red", "fell"),
    ("undecided", "s", "0.6", "undecided"),
)


def push_map(rows: list[dict[str, object]], names: list[str], title: str = ""):
    """The verdict of every run (or that it failed), at (the other varied parameter, the push force)."""
    from matplotlib.figure import Figure

    if rows:
        check_columns(rows[0], names)
    force = next(name for name in FORCE_NAMES if name in names)
    other = next((name for name in names if name != force), None)
    polar = {force, other} == {"push_force", "push_angle"}
    figure = Figure(figsize=(7.0, 6.0 if polar else 5.0), layout="constrained")
    ax = figure.add_subplot(projection="polar" if polar else None)
    y = np.asarray([float(row[force]) for row in rows])
    if other is None:
        x, labels = np.zeros(len(rows)), None
    else:
        x, labels = _positions([row[other] for row in rows])
        if polar:
            x = np.radians(x)
    error = np.array([bool(row.get("error")) for row in rows])
    verdicts = np.array([str(row.get("verdict")) for row in rows])
    styles = [
        (~error & (verdicts == verdict), marker, color, label)
        for verdict, marker, color, label in VERDICT_STYLES
    ]
    styles.append((error, "^", "black", "run failed"))
    for mask, marker, color, label in styles:
        if mask.any():
            ax.scatter(x[mask], y[mask], marker=marker, color=color, s=36, label=f"{label} ({mask.sum()})")
    if polar:
        ax.set_xlabel(_label(force))
    else:
        ax.set_ylabel(_label(force))
        if other is None:
            ax.set_xticks([])
        else:
            ax.set_xlabel(_label(other))
            if labels:
                ax.set_xticks(range(len(labels)), labels)
        ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0) if not polar else (1.05, 1.05), fontsize="small")
    ax.set_title(title or "push recovery")
    return figure


def metric_map(rows: list[dict[str, object]], names: list[str], metric: str, title: str = ""):
    """``metric`` over one varied parameter (a line) or two (a heat map, or coloured dots)."""
    from matplotlib.figure import Figure

    if rows:
        check_columns(rows[0], names, metric)
    values = np.array(
        [
            float(row[metric]) if _is_number(row.get(metric)) and not row.get("error") else math.nan
            for row in rows
        ]
    )
    figure = Figure(figsize=(7.0, 5.0), layout="constrained")
    ax = figure.subplots()
    failed = int(np.isnan(values).sum())
    note = f" ({failed} runs without a value)" if failed else ""
    x, xlabels = _positions([row[names[0]] for row in rows])
    if len(names) == 1:
        order = np.argsort(x, kind="stable")
        ax.plot(x[order], values[order], "o-")
        ax.set(xlabel=_label(names[0]), ylabel=metric)
        ax.grid(True, alpha=0.3)
    else:
        y, ylabels = _positions([row[names[1]] for row in rows])
        xs, ys = np.unique(x), np.unique(y)
        if len(xs) * len(ys) == len(rows) and len({(a, b) for a, b in zip(x, y, strict=True)}) == len(rows):
            grid = np.full((len(ys), len(xs)), math.nan)
            grid[np.searchsorted(ys, y), np.searchsorted(xs, x)] = values
            mesh = ax.pcolormesh(xs, ys, np.ma.masked_invalid(grid), shading="nearest", cmap="viridis")
        else:
            mesh = ax.scatter(x, y, c=values, cmap="viridis", s=30, plotnonfinite=True)
        figure.colorbar(mesh, ax=ax, label=metric)
        ax.set(xlabel=_label(names[0]), ylabel=_label(names[1]))
        if ylabels:
            ax.set_yticks(range(len(ylabels)), ylabels)
    if xlabels:
        ax.set_xticks(range(len(xlabels)), xlabels)
    ax.set_title((title or metric) + note)
    return figure
