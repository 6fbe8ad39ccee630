"""PNG plots of a motion analysis: joint torques, contact forces and moments against time."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tsid_py.analysis.over_time import MotionAnalysis
from tsid_py.outputs import atomic_output

if TYPE_CHECKING:
    from matplotlib.figure import Figure

COMPONENTS = ("x", "y", "z")
PLOT_NAMES = ("joint_torques.png", "contact_forces.png", "contact_moments.png")  # what a run writes


def plot_motion_analysis(result: MotionAnalysis, joint_names: list[str], directory: str | Path) -> list[Path]:
    """Write joint_torques.png, contact_forces.png and contact_moments.png into ``directory``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []

    fig, ax = plt.subplots(figsize=(10, 5))
    order = np.argsort(-np.max(np.abs(result.joint_torques), axis=0))[:12]
    for j in order:
        ax.plot(result.t, result.joint_torques[:, j], label=joint_names[j])
    ax.set(xlabel="time [s]", ylabel="joint torque [N m]", title="Joint torques (12 largest)")
    ax.legend(fontsize="small", ncol=2)
    ax.grid(True)
    written.append(_save(fig, directory / PLOT_NAMES[0]))

    for part, unit, offset in (("forces", "N", 0), ("moments", "N m", 3)):
        n = len(result.contact_frames)
        fig, axes = plt.subplots(n, 1, figsize=(10, 3 * n), sharex=True, squeeze=False)
        for ax, frame, wrenches in zip(
            axes[:, 0], result.contact_frames, np.swapaxes(result.contact_wrenches, 0, 1), strict=True
        ):
            for i, axis in enumerate(COMPONENTS):
                ax.plot(result.t, wrenches[:, offset + i], label=axis)
            ax.set(ylabel=f"{part[:-1]} [{unit}]", title=f"{frame} (contact frame)")
            ax.legend(fontsize="small")
            ax.grid(True)
        axes[-1, 0].set_xlabel("time [s]")
        written.append(_save(fig, directory / f"contact_{part}.png"))
    return written


def _save(fig: Figure, path: Path) -> Path:
    """Write ``fig`` as a 100-dpi PNG and close it."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    with atomic_output(path) as handle:
        fig.savefig(handle, format="png", dpi=100)
    plt.close(fig)
    return path
