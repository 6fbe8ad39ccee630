"""Matplotlib figures of a run, written as PNG files.

Each figure comes from the run's log and its controller only, so it works for every scenario and
skips what does not apply: CoM vs reference (legged robots), end effector vs reference (arms),
contact normal forces and friction ratios, joint torques against their limits, a top view with
the support polygons, the CoM and the centre of pressure computed from the contact forces (plus
the planned ZMP when the log has ``zmp_ref``), and the height of the feet when one of them swings.
Figures are built on matplotlib's object API with the Agg canvas: no window, no global state.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tsid_py.geometry import center_of_pressure, convex_hull_indices
from tsid_py.outputs import atomic_output
from tsid_py.physics import normal_forces_and_friction_ratio
from tsid_py.viz.scene import SceneBuilder, contacts_of

AXES = ("x", "y", "z")
SWING_HEIGHT = 1e-3  # [m] a foot that rises more than this is plotted as swinging
TOP_VIEW_POLYGONS = 12  # support polygons drawn in the top view, evenly spread over the run


def _figure(rows: int, title: str, height: float = 2.4):
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8.0, 1.0 + height * rows), layout="constrained")
    axes = figure.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
    figure.suptitle(title)
    return figure, axes


def _title(result, what: str) -> str:
    return f"{result.summary['robot']}, {result.summary['scenario']}: {what}"


def _series(log, name: str) -> np.ndarray | None:
    """A per-step series of the log as an array, or None when the log lacks it or it is incomplete."""
    values = getattr(log, name, None)
    if values is None or len(values) == 0 or len(values) != len(log.t):
        return None
    return np.array(values, dtype=float)


def _tracking_figure(result, actual: str, reference: str, label: str):
    log = result.log
    position, target = _series(log, actual), _series(log, reference)
    if position is None or target is None:
        return None
    t = np.array(log.t)
    figure, axes = _figure(3, _title(result, f"{label} vs reference"))
    for k, ax in enumerate(axes):
        ax.plot(t, position[:, k], label=label)
        ax.plot(t, target[:, k], "--", label="reference")
        ax.set_ylabel(f"{label} {AXES[k]} [m]")
        ax.grid(True, alpha=0.3)
    axes[0].legend(loc="best")
    axes[-1].set_xlabel("time [s]")
    return figure


def com_figure(result):
    """CoM x, y, z [m] and their references against time [s]."""
    return _tracking_figure(result, "com", "com_ref", "CoM")


def end_effector_figure(result):
    """End-effector x, y, z [m] and their references against time [s]."""
    return _tracking_figure(result, "ee", "ee_ref", "end effector")


def contact_force_series(result) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per contact: total normal force [N] and max |f_t| / (mu f_n) per step (NaN out of contact)."""
    contacts = contacts_of(result.controller)
    steps = len(result.log.t)
    out = {}
    for name, values in result.log.forces.items():
        contact = contacts.get(name)
        if contact is None or len(values) != steps:
            continue
        normal, friction = np.full(steps, np.nan), np.full(steps, np.nan)
        for i, f in enumerate(values):
            if f is not None and np.size(f) == contact.n_force and np.all(np.isfinite(f)):
                f_n, ratio = normal_forces_and_friction_ratio(contact, f)
                normal[i], friction[i] = f_n.sum(), ratio
        out[name] = (normal, friction)
    return out


def contact_forces_figure(result):
    """Normal force [N] of each contact and its friction ratio |f_t| / (mu f_n) against time [s]."""
    series = contact_force_series(result)
    if not series:
        return None
    t = np.array(result.log.t)
    figure, axes = _figure(2, _title(result, "contact forces"))
    for name, (normal, friction) in series.items():
        axes[0].plot(t, normal, label=name)
        axes[1].plot(t, friction, label=name)
    axes[0].set_ylabel("normal force [N]")
    axes[1].set_ylabel("|f_t| / (mu f_n) [-]")
    axes[1].axhline(1.0, color="k", linestyle=":", linewidth=1)
    for ax in axes:
        ax.grid(True, alpha=0.3)
    axes[0].legend(loc="best", fontsize="small")
    axes[-1].set_xlabel("time [s]")
    return figure


def torques_figure(result, joints: int = 4):
    """The ``joints`` most loaded joint torques [N m] with their limits, and max |tau| / tau_max [-]."""
    log, controller = result.log, result.controller
    tau = _series(log, "tau")
    if tau is None:
        return None
    tau_max = np.asarray(getattr(controller, "tau_max", np.full(tau.shape[1], np.inf)), dtype=float)
    limited = np.isfinite(tau_max) & (tau_max > 0)
    ratio = np.where(limited, np.abs(tau) / np.where(limited, tau_max, 1.0), 0.0)
    model = controller.robot.model
    first = model.njoints - tau.shape[1]
    names = [model.names[first + j] for j in range(tau.shape[1])]
    t = np.array(log.t)
    figure, axes = _figure(2, _title(result, "joint torques vs limits"))
    for j in np.argsort(ratio.max(axis=0))[::-1][:joints]:
        (line,) = axes[0].plot(t, tau[:, j], label=names[j])
        if limited[j]:
            for sign in (1.0, -1.0):
                axes[0].axhline(sign * tau_max[j], color=line.get_color(), linestyle="--", linewidth=1)
    axes[0].set_ylabel("torque [N m]")
    axes[0].legend(loc="best", fontsize="small")
    axes[1].plot(t, ratio.max(axis=1), color="k")
    axes[1].axhline(1.0, color="r", linestyle="--", linewidth=1)
    axes[1].set_ylabel("max |tau| / tau_max [-]")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("time [s]")
    return figure


def centre_of_pressure(result) -> np.ndarray:
    """The centre of pressure of all contact forces (the ZMP on flat ground) at every step, (steps, 2) [m]."""
    builder = SceneBuilder(result.controller.robot, contacts_of(result.controller))
    cop = np.full((len(result.log.t), 2), np.nan)
    for i in range(len(result.log.t)):
        arrows = list(builder.frame_at(result.log, i).forces.values())  # (CoP, resultant) per contact
        if arrows and sum(force[2] for _, force in arrows) > 0:
            cop[i] = center_of_pressure([p for p, _ in arrows], [f for _, f in arrows])[:2]
    return cop


def top_view_figure(result):
    """Seen from above: support polygons, CoM, centre of pressure, planned ZMP and footsteps, x-y [m]."""
    log = result.log
    com = _series(log, "com")
    if com is None or not log.forces:
        return None
    from matplotlib.figure import Figure

    builder = SceneBuilder(result.controller.robot, contacts_of(result.controller))
    figure = Figure(figsize=(7.0, 6.0), layout="constrained")
    ax = figure.subplots()
    stride = max(1, len(log.t) // TOP_VIEW_POLYGONS)
    for k, frame in enumerate(builder.frames_from_log(log, stride)):
        for footprint in frame.footprints.values():
            if len(footprint) == 1:
                ax.plot(footprint[0, 0], footprint[0, 1], "o", color="0.5", alpha=0.5)
            elif len(footprint) >= 3:
                outline = footprint[convex_hull_indices(footprint[:, :2])]
                outline = np.vstack([outline, outline[:1]])
                ax.plot(outline[:, 0], outline[:, 1], color="0.5", linewidth=1, alpha=0.5)
        polygon = frame.support_polygon
        if len(polygon) >= 2:
            closed = np.vstack([polygon, polygon[:1]])
            label = "support polygon" if k == 0 else None
            ax.plot(closed[:, 0], closed[:, 1], color="tab:blue", alpha=0.35, label=label)
    cop = centre_of_pressure(result)
    ax.plot(cop[:, 0], cop[:, 1], color="tab:green", label="CoP from contact forces")
    ax.plot(com[:, 0], com[:, 1], color="tab:red", linewidth=2, label="CoM")
    footsteps = getattr(log, "footsteps", None) or []  # (side, planned touch-down position) per swing
    if footsteps:
        planned = np.array([position[:2] for _, position in footsteps])
        ax.plot(planned[:, 0], planned[:, 1], "x", color="k", label="planned footsteps")
    for name, style in (("zmp_ref", "--"), ("zmp", ":")):
        zmp = _series(log, name)
        if zmp is not None:
            ax.plot(zmp[:, 0], zmp[:, 1], style, color="tab:purple", label=f"{name} (log)")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    ax.set_title(_title(result, "CoM and centre of pressure seen from above"))
    return figure


def foot_heights(result) -> dict[str, np.ndarray]:
    """Height above its initial height [m] of each contact frame at every step."""
    robot, log = result.controller.robot, result.log
    contacts = contacts_of(result.controller)
    data = robot.create_data()
    heights = {name: np.empty(len(log.t)) for name in contacts}
    for i, q in enumerate(log.q):
        robot.forward_kinematics(data, q)
        for name, contact in contacts.items():
            heights[name][i] = robot.frame_placement(data, contact.frame_id).translation[2]
    return {name: z - z[0] for name, z in heights.items() if len(z)}


def foot_heights_figure(result):
    """Height of the feet [m] against time [s], when one of them rises more than 1 mm."""
    if not contacts_of(result.controller) or not result.log.t:
        return None
    heights = foot_heights(result)
    if max(float(np.max(np.abs(z))) for z in heights.values()) < SWING_HEIGHT:
        return None
    t = np.array(result.log.t)
    figure, axes = _figure(1, _title(result, "foot heights"))
    for name, z in heights.items():
        axes[0].plot(t, z, label=name)
    axes[0].set_ylabel("height above start [m]")
    axes[0].set_xlabel("time [s]")
    axes[0].grid(True, alpha=0.3)
    axes[0].legend(loc="best", fontsize="small")
    return figure


def outcome_figure(result):
    """The scenario's own picture of its outcome (a sweep's error against its parameter, a heat map,
    a top view with the target), when its result draws one (``result.outcome_figure()``)."""
    build = getattr(result, "outcome_figure", None)
    return build() if callable(build) else None


FIGURES = {
    "com": com_figure,
    "end_effector": end_effector_figure,
    "contact_forces": contact_forces_figure,
    "torques": torques_figure,
    "top_view": top_view_figure,
    "foot_heights": foot_heights_figure,
    "outcome": outcome_figure,
}


def write_plots(result, directory: str | Path, dpi: int = 100) -> list[Path]:
    """Write every figure that applies to ``result`` as ``DIRECTORY/<scenario>_<figure>.png``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, build in FIGURES.items():
        figure = build(result)
        if figure is None:
            continue
        FigureCanvasAgg(figure)
        path = directory / f"{result.summary['scenario']}_{name}.png"
        with atomic_output(path) as handle:
            figure.savefig(handle, format="png", dpi=dpi)
        written.append(path)
    return written
