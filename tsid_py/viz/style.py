"""The look every figure of tsid_py shares: a constrained layout with a title, light grids, small
legends. Figures are built on matplotlib's object API with the Agg canvas: no window, no global
state."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal


def new_figure(
    rows: int, columns: int, title: str, width: float = 8.0, height: float = 3.0, sharex: bool = False
):
    """A figure ``width`` wide with ``height`` per row [in], and its axes as a (rows, columns) array."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, 1.0 + height * rows), layout="constrained")
    axes = figure.subplots(rows, columns, sharex=sharex, squeeze=False)
    figure.suptitle(title)
    return figure, axes


def finish(
    axes: Sequence, legend: Literal["all", "first", "none"] = "all", loc: str = "best", which: str = "major"
) -> None:
    """A light grid on each of ``axes`` (``which``: "major", or "both" for a log scale) and a small
    legend at ``loc`` on ``legend`` of them: "all", the "first" or "none"."""
    for k, ax in enumerate(axes):
        ax.grid(True, alpha=0.3, which=which)
        if legend == "all" or (legend == "first" and k == 0):
            ax.legend(loc=loc, fontsize="small")
