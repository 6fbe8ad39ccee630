"""Matplotlib figures of a run, written as PNG files.

Each figure comes from the run's log and its controller only, so it works for every scenario and
skips what does not apply: the CoM (legged robots) and the end effector (arms) against their
references, contact normal forces and friction ratios, joint torques against their limits, a top
view with the support polygons, the CoM and the centre of pressure computed from the contact
forces (plus the planned ZMP when the log has ``zmp_ref``, the measured capture point and the
steps of a push recovery), the height of the feet when one of them swings, and the capture
point's margin in the support polygon with the run's verdict (legged robots). Their look is
:mod:`tsid_py.viz.style`'s.

Planned and measured side by side: where the plant is not the controller's own integrator, what
the robot did differs from what the controller planned. The CoM and feet figures draw three
series on the same axes: the **reference** (what the scenario asked), the **planned** position
(where the controller's previous step put it: its dv integrated on the manifold, the log's
``q_plan``) and the **measured** one (the plant's q); the CoM figure adds their distances. The
contact-force figure draws the forces the QP **planned** and, where the plant measures them
(``PlantState.contacts``, the log's ``wrenches``), the **measured** ones. On the integrator plant
measured and planned coincide to rounding.

A long run is drawn from at most ``PLOT_STEPS`` steps evenly spread over it (every k-th step and
the last, read back from disk when the log streams): memory does not grow with run length.
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pinocchio as pin

from tsid_py.contacts.contact_base import contacts_of
from tsid_py.geometry import GRAVITY, center_of_pressure, convex_hull_indices
from tsid_py.outputs import atomic_output
from tsid_py.physics import FRICTION_RATIO_MIN_NORMAL_FORCE, normal_forces_and_friction_ratio
from tsid_py.viz.scene import SceneBuilder, run_terrain
from tsid_py.viz.style import finish, new_figure

AXES = ("x", "y", "z")
SWING_HEIGHT = 1e-3  # [m] a foot that rises more than this is plotted as swinging
TOP_VIEW_POLYGONS = 12  # support polygons drawn in the top view, evenly spread over the run
PLOT_STEPS = 4000  # control steps a figure draws at most, evenly spread over the run
LOADED_FRACTION = 0.01  # of the robot's weight: a contact carrying less has no friction ratio drawn
STYLES = {"measured": "-", "reference": "--", "planned": ":"}  # line style of each kind of series


def _figure(rows: int, title: str, height: float = 2.4):
    """A figure of ``rows`` axes one above the other, sharing time."""
    figure, axes = new_figure(rows, 1, title, height=height, sharex=True)
    return figure, axes[:, 0]


def _title(result, what: str) -> str:
    return f"{result.summary['robot']}, {result.summary['scenario']}: {what}"


def plotted(result):
    """``result`` with its log as the figures read it: in memory, at most ``PLOT_STEPS`` (+1) steps
    evenly spread over the run, the last one included (``result`` itself when its log is short
    and in memory already)."""
    log = result.log
    steps, streamed = getattr(log, "steps", None), getattr(log, "streamed", False)
    if steps is None or (steps <= PLOT_STEPS + 1 and not streamed):
        return result
    thinned = copy.copy(result)
    thinned.log = log.sampled(max(1, -(-steps // PLOT_STEPS)))
    return thinned


def _series(log, name: str) -> np.ndarray | None:
    """A per-step series of the log as an array, or None when the log lacks it or it is incomplete."""
    values = getattr(log, name, None)
    if values is None or len(values) == 0 or len(values) != len(log.t):
        return None
    return np.array(values, dtype=float)


def _planned_configurations(log) -> list | None:
    """The configurations the controller planned for each step (the log's ``q_plan``), or None."""
    planned = getattr(log, "q_plan", None)
    return None if planned is None or len(planned) == 0 or len(planned) != len(log.t) else list(planned)


def com_series(result) -> dict[str, np.ndarray] | None:
    """The CoM of every (plotted) step [m], (steps, 3) each: ``measured`` (the log's ``com``, at the
    plant's q), ``reference`` (``com_ref``) and ``planned`` (the CoM at the log's ``q_plan``, when
    the log has it); ``t`` [s]. None when the log has no CoM."""
    result = plotted(result)
    out = _tracked(result.log, "com", "com_ref")
    if out is None:
        return None
    planned = _planned_configurations(result.log)
    if planned is not None:
        model = result.controller.robot.model
        data = model.createData()
        out["planned"] = np.array([pin.centerOfMass(model, data, q) for q in planned])
    return out


def _tracking_figure(result, series: dict[str, np.ndarray] | None, label: str):
    """x, y, z of a point against time: measured (solid), reference (dashed) and planned (dotted)
    on the same axes; with a plan, a fourth row of the distances measured-reference and
    measured-planned [mm]."""
    if series is None:
        return None
    t, measured, reference = series["t"], series["measured"], series["reference"]
    planned = series.get("planned")
    rows = 3 if planned is None else 4
    what = "reference, planned and measured" if planned is not None else "vs reference"
    figure, axes = _figure(rows, _title(result, f"{label}: {what}"))
    for k, ax in enumerate(axes[:3]):
        ax.plot(t, measured[:, k], STYLES["measured"], label=f"{label} measured")
        ax.plot(t, reference[:, k], STYLES["reference"], label="reference")
        if planned is not None:
            ax.plot(t, planned[:, k], STYLES["planned"], label=f"{label} planned (previous step)")
        ax.set_ylabel(f"{label} {AXES[k]} [m]")
    if planned is not None:  # the two distances differ by orders of magnitude: one axis each
        ax = axes[3]
        (tracking,) = ax.plot(t, 1e3 * np.linalg.norm(measured - reference, axis=1), color="tab:blue")
        ax.set_ylabel("|measured - reference| [mm]", color=tracking.get_color())
        twin = ax.twinx()
        (model,) = twin.plot(t, 1e6 * np.linalg.norm(measured - planned, axis=1), color="tab:red")
        twin.set_ylabel("|measured - planned| [um]", color=model.get_color())
    finish(axes, legend="first")
    axes[-1].set_xlabel("time [s]")
    return figure


def com_figure(result):
    """CoM x, y, z [m] against time [s]: measured, reference and planned (:func:`com_series`) on the
    same axes, and their distances [mm]."""
    return _tracking_figure(result, com_series(result), "CoM")


def end_effector_figure(result):
    """End-effector x, y, z [m] and their references against time [s]."""
    result = plotted(result)
    return _tracking_figure(result, _tracked(result.log, "ee", "ee_ref"), "end effector")


def _tracked(log, measured: str, reference: str) -> dict[str, np.ndarray] | None:
    """t [s] and the log's series ``measured`` and ``reference`` (steps, 3), or None without them."""
    measured_series, reference_series = _series(log, measured), _series(log, reference)
    if measured_series is None or reference_series is None:
        return None
    return {"t": np.array(log.t, dtype=float), "measured": measured_series, "reference": reference_series}


def contact_force_series(result) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per contact, as the QP planned it: total normal force [N] and max |f_t| / (mu f_n) over its
    points, per step (NaN out of contact)."""
    result = plotted(result)
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


def _net_friction_ratio(contact, force: np.ndarray, loaded: float) -> float:
    """|f_t| / (mu f_n) of a net force in the contact's force axes (NaN when f_n < ``loaded`` [N]:
    the ratio of a contact that barely pushes is noise)."""
    normal = contact.contact_normal
    f_n = float(force @ normal)
    if f_n < loaded:
        return float("nan")
    return float(np.linalg.norm(force - f_n * normal) / (contact.mu * f_n))


def measured_contact_force_series(result) -> dict[str, dict[str, np.ndarray]]:
    """Per contact whose frame the plant measures (the log's ``wrenches``), planned against
    measured: ``normal`` and ``normal_planned`` [N] (the total force along the contact normal),
    ``friction`` and ``friction_planned`` (|f_t| / (mu f_n) of the contact's net force; NaN when
    it carries less than ``LOADED_FRACTION`` of the robot's weight), per step. The measured wrench
    of a step is the plant's report at its start, the outcome of the previous command: plot it at
    t - dt. Empty when nothing is measured."""
    result = plotted(result)
    log, controller = result.log, result.controller
    measured = getattr(log, "wrenches", None) or {}
    steps = len(log.t)
    by_frame = {c.frame_name: (name, c) for name, c in contacts_of(controller).items() if c.unilateral}
    series = {}
    for frame, wrenches in measured.items():
        if frame not in by_frame:
            continue
        name, contact = by_frame[frame]
        if len(wrenches) == steps and len(log.forces.get(name, ())) == steps:
            series[name, contact] = wrenches
    if not series:
        return {}
    robot = controller.robot
    data = robot.create_data()
    loaded = max(LOADED_FRACTION * robot.total_mass * GRAVITY, FRICTION_RATIO_MIN_NORMAL_FORCE)  # [N]
    keys = ("normal", "normal_planned", "friction", "friction_planned")
    out = {name: {key: np.full(steps, np.nan) for key in keys} for name, _ in series}
    for i, q in enumerate(log.q):
        robot.forward_kinematics(data, q)
        for (name, contact), wrenches in series.items():
            rotation = contact.force_rotation(data)  # force axes -> world
            force = rotation.T @ np.asarray(wrenches[i], dtype=float)[:3]
            planned = contact.point_forces(log.forces[name][i]).sum(axis=0)
            row = out[name]
            row["normal"][i] = force @ contact.contact_normal
            row["normal_planned"][i] = planned @ contact.contact_normal
            row["friction"][i] = _net_friction_ratio(contact, force, loaded)
            row["friction_planned"][i] = _net_friction_ratio(contact, planned, loaded)
    return out


def contact_forces_figure(result):
    """Normal force [N] of each contact and its friction ratio |f_t| / (mu f_n) against time [s]:
    as the QP planned them (solid) and, where the plant measures them, as measured (dashed, at the
    period they answer to), with a third row comparing the friction ratio of the net forces."""
    result = plotted(result)
    series = contact_force_series(result)
    if not series:
        return None
    measured = measured_contact_force_series(result)
    t = np.array(result.log.t)
    dt = float(result.summary.get("dt_s", 0.0) or 0.0)
    what = "contact forces, planned and measured" if measured else "contact forces"
    figure, axes = _figure(3 if measured else 2, _title(result, what))
    for name, (normal, friction) in series.items():
        (line,) = axes[0].plot(t, normal, STYLES["measured"], label=f"{name} planned")
        axes[1].plot(t, friction, color=line.get_color(), label=f"{name} planned")
        if name in measured:
            row = measured[name]
            style = {"color": line.get_color(), "linestyle": STYLES["reference"]}
            axes[0].plot(t - dt, row["normal"], label=f"{name} measured", **style)
            axes[2].plot(t, row["friction_planned"], color=line.get_color(), label=f"{name} planned")
            axes[2].plot(t - dt, row["friction"], label=f"{name} measured", **style)
    axes[0].set_ylabel("normal force [N]")
    axes[1].set_ylabel("|f_t| / (mu f_n), max over points [-]")
    if measured:
        axes[2].set_ylabel("|f_t| / (mu f_n), net force [-]")
        axes[2].legend(loc="best", fontsize="small")
    for ax in axes[1:]:
        ax.axhline(1.0, color="k", linestyle=":", linewidth=1)
    finish(axes, legend="first")
    axes[-1].set_xlabel("time [s]")
    return figure


def torques_figure(result, joints: int = 4):
    """The ``joints`` most loaded joint torques [N m] with their limits, and max |tau| / tau_max [-]."""
    result = plotted(result)
    log, controller = result.log, result.controller
    tau = _series(log, "tau")
    if tau is None:
        return None
    tau_max = np.asarray(getattr(controller, "tau_max", np.full(tau.shape[1], np.inf)), dtype=float)
    limited = np.isfinite(tau_max) & (tau_max > 0)
    ratio = np.where(limited, np.abs(tau) / np.where(limited, tau_max, 1.0), 0.0)
    names = controller.robot.actuated_joint_names()
    t = np.array(log.t)
    figure, axes = _figure(2, _title(result, "joint torques vs limits"))
    for j in np.argsort(ratio.max(axis=0))[::-1][:joints]:
        (line,) = axes[0].plot(t, tau[:, j], label=names[j])
        if limited[j]:
            for sign in (1.0, -1.0):
                axes[0].axhline(sign * tau_max[j], color=line.get_color(), linestyle="--", linewidth=1)
    axes[0].set_ylabel("torque [N m]")
    axes[1].plot(t, ratio.max(axis=1), color="k")
    axes[1].axhline(1.0, color="r", linestyle="--", linewidth=1)
    axes[1].set_ylabel("max |tau| / tau_max [-]")
    finish(axes, legend="first")
    axes[-1].set_xlabel("time [s]")
    return figure


def centre_of_pressure(result) -> np.ndarray:
    """The centre of pressure of all contact forces (the ZMP on flat ground) at every step, (steps, 2) [m]."""
    result = plotted(result)
    builder = SceneBuilder(result.controller.robot, contacts_of(result.controller))
    cop = np.full((len(result.log.t), 2), np.nan)
    for i in range(len(result.log.t)):
        arrows = list(builder.frame_at(result.log, i).forces.values())  # (CoP, resultant) per contact
        if arrows and sum(force[2] for _, force in arrows) > 0:
            cop[i] = center_of_pressure([p for p, _ in arrows], [f for _, f in arrows])[:2]
    return cop


def top_view_figure(result):
    """Seen from above: support polygons, CoM, centre of pressure, planned ZMP and footsteps, x-y [m]."""
    result = plotted(result)
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
    xi = _series(log, "capture_point")
    if xi is not None:
        ax.plot(xi[:, 0], xi[:, 1], color="tab:pink", linewidth=1, label="capture point (measured)")
    for k, step in enumerate(result.summary.get("steps_taken") or ()):
        x, y = step["landing_m"][:2]
        label = "foot frame where a step landed" if k == 0 else None
        ax.plot(x, y, "s", color="k", markersize=6, fillstyle="none", label=label)

    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    finish([ax])
    ax.set_title(_title(result, "CoM and centre of pressure seen from above"))
    return figure


def side_view_figure(result):
    """Seen from the side, for a walk on terrain (``summary["terrain"]``): the ground's profile
    under the feet, the feet and the CoM, the planned footholds, x-z [m]."""
    result = plotted(result)
    terrain = run_terrain(result.summary)
    com = _series(result.log, "com")
    if terrain is None or com is None:
        return None
    from matplotlib.figure import Figure

    log = result.log
    figure = Figure(figsize=(9.0, 3.6), layout="constrained")
    ax = figure.subplots()
    x = np.linspace(min(com[:, 0].min(), 0.0) - 0.3, max(com[:, 0].max(), terrain.end) + 0.3, 600)
    ground = terrain.heights(np.column_stack([x, np.full_like(x, com[:, 1].mean())]))  # under the walk
    ax.fill_between(x, ground, ground.min() - 0.05, color="0.85", step=None, label=f"ground ({terrain.name})")
    ax.plot(x, ground, color="0.4", linewidth=1)
    for side, color in (("right", "tab:orange"), ("left", "tab:green")):
        feet = (getattr(log, "feet", None) or {}).get(side)
        if feet is not None and len(feet) == len(log.t):
            feet = np.array(feet, dtype=float)
            ax.plot(feet[:, 0], feet[:, 2], color=color, linewidth=1, label=f"{side} foot frame")
    ax.plot(com[:, 0], com[:, 2], color="tab:red", linewidth=2, label="CoM")
    footsteps = getattr(log, "footsteps", None) or []
    if footsteps:
        planned = np.array([position for _, position in footsteps])
        ax.plot(planned[:, 0], planned[:, 2], "x", color="k", label="planned footholds")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("z [m]")
    finish([ax])
    ax.set_title(_title(result, "feet and CoM seen from the side"))
    return figure


def _frame_heights(result, configurations) -> dict[str, np.ndarray]:
    """World height [m] of each contact frame at each configuration."""
    robot = result.controller.robot
    contacts = contacts_of(result.controller)
    data = robot.create_data()
    heights = {name: np.empty(len(configurations)) for name in contacts}
    for i, q in enumerate(configurations):
        robot.forward_kinematics(data, q)
        for name, contact in contacts.items():
            heights[name][i] = robot.frame_placement(data, contact.frame_id).translation[2]
    return heights


def foot_heights(result) -> dict[str, np.ndarray]:
    """Measured height above its initial height [m] of each contact frame at every (plotted) step."""
    result = plotted(result)
    heights = _frame_heights(result, result.log.q)
    return {name: z - z[0] for name, z in heights.items() if len(z)}


def foot_height_series(result) -> dict[str, dict[str, np.ndarray]]:
    """Per contact frame, its height above its initial measured height [m] at every (plotted) step:
    ``measured`` (the plant's q), ``planned`` (the log's ``q_plan``, when it has it) and
    ``reference`` (where the foot was held, the log's ``feet_ref`` of a stepping run)."""
    result = plotted(result)
    log, controller = result.log, result.controller
    measured = _frame_heights(result, log.q)
    out = {name: {"measured": z - z[0]} for name, z in measured.items() if len(z)}
    planned = _planned_configurations(log)
    if planned is not None:
        for name, z in _frame_heights(result, planned).items():
            if name in out:
                out[name]["planned"] = z - measured[name][0]
    held = getattr(log, "feet_ref", None) or {}
    sides = {key: str(getattr(c, "name", "")) for key, c in getattr(controller, "contacts", {}).items()}
    for key, values in held.items():
        name = sides.get(key, "")
        if name in out and len(values) == len(log.t):
            out[name]["reference"] = np.array(values, dtype=float)[:, 2] - measured[name][0]
    return out


def foot_heights_figure(result):
    """Height of the feet [m] against time [s], when one of them rises more than 1 mm: measured
    (solid), reference (dashed) and planned (dotted), a colour per foot."""
    result = plotted(result)
    if not contacts_of(result.controller) or not len(result.log.t):
        return None
    series = foot_height_series(result)
    if max(float(np.max(np.abs(z["measured"]))) for z in series.values()) < SWING_HEIGHT:
        return None
    t = np.array(result.log.t)
    figure, axes = _figure(1, _title(result, "foot heights"))
    for name, heights in series.items():
        (line,) = axes[0].plot(t, heights["measured"], STYLES["measured"], label=name)
        for kind in ("reference", "planned"):
            if kind in heights:
                axes[0].plot(t, heights[kind], STYLES[kind], color=line.get_color(), label=f"{name} {kind}")
    axes[0].set_ylabel("height above start [m]")
    axes[0].set_xlabel("time [s]")
    finish(axes)
    return figure


def capture_point_figure(result):
    """How far the measured capture point is inside the support polygon of the feet that touch,
    over time [m], with the verdict's margin and times and the steps taken (legged robots)."""
    result = plotted(result)
    log = result.log
    margin, xi = _series(log, "capture_margin"), _series(log, "capture_point")
    if margin is None or xi is None:
        return None
    figure, axes = _figure(2, _title(result, "capture point"))
    t = np.asarray(log.t, dtype=float)
    axes[0].plot(
        t, np.where(np.isfinite(margin), margin, np.nan), color="tab:pink", label="inside the support"
    )
    axes[0].axhline(0.0, color="0.3", linewidth=1)
    axes[0].axhline(-0.02, color="tab:orange", linestyle="--", linewidth=1, label="lost beyond (2 cm)")
    axes[0].set_ylabel("capture point margin [m]")
    for k, axis in enumerate(("x", "y")):
        axes[1].plot(t, xi[:, k], label=f"capture point {axis}")
    axes[1].set_ylabel("capture point [m]")
    axes[1].set_xlabel("time [s]")
    summary = result.summary
    for key, color in (
        ("lost_balance_at_s", "tab:orange"),
        ("fell_at_s", "tab:red"),
        ("recovered_at_s", "tab:green"),
    ):
        when = summary.get(key)
        if isinstance(when, float):
            for ax in axes:
                ax.axvline(
                    when, color=color, linewidth=1.5, label=key.removesuffix("_at_s").replace("_", " ")
                )
    for step in summary.get("steps_taken") or ():
        for ax in axes:
            ax.axvspan(step["t_lift_s"], step["t_land_s"], color="0.85", zorder=0)
    finish(axes)
    return figure


def estimate_series(result) -> dict[str, np.ndarray] | None:
    """With robot sensing: the estimate's errors against the truth over time, the base's position
    (x, y, z) [m], orientation (angle) [rad] and linear velocity (x, y, z, world) [m/s]; None
    without an estimate in the log."""
    log = plotted(result).log
    q, v = _series(log, "q_estimate"), _series(log, "v_estimate")
    true_q, true_v = _series(log, "q"), _series(log, "v")
    if q is None or v is None or true_q is None or true_v is None:
        return None
    angles, velocity = np.empty(len(q)), np.empty((len(q), 3))
    for k in range(len(q)):
        rotation = pin.Quaternion(q[k, 6], *q[k, 3:6]).normalized().toRotationMatrix()
        true = pin.Quaternion(true_q[k, 6], *true_q[k, 3:6]).normalized().toRotationMatrix()
        angles[k] = np.linalg.norm(pin.log3(true.T @ rotation))
        velocity[k] = rotation @ v[k, :3] - true @ true_v[k, :3]
    return {"position": q[:, :3] - true_q[:, :3], "orientation": angles, "velocity": velocity}


def estimate_figure(result):
    """The estimator's errors against the truth over time (robot sensing): the base's position
    [mm], orientation [deg] and linear velocity [mm/s]."""
    errors = estimate_series(result)
    if errors is None:
        return None
    result = plotted(result)
    figure, axes = _figure(3, _title(result, "the estimate against the truth"))
    t = np.asarray(result.log.t, dtype=float)
    for k, axis in enumerate("xyz"):
        axes[0].plot(t, 1e3 * errors["position"][:, k], label=f"base {axis}")
        axes[2].plot(t, 1e3 * errors["velocity"][:, k], label=f"velocity {axis}")
    axes[0].set_ylabel("position error [mm]")
    axes[1].plot(t, np.degrees(errors["orientation"]), color="tab:purple", label="orientation")
    axes[1].set_ylabel("orientation error [deg]")
    axes[2].set_ylabel("velocity error [mm/s]")
    axes[2].set_xlabel("time [s]")
    finish(axes)
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
    "side_view": side_view_figure,
    "foot_heights": foot_heights_figure,
    "capture_point": capture_point_figure,
    "estimate": estimate_figure,
    "outcome": outcome_figure,
}


def write_plots(result, directory: str | Path, dpi: int = 100) -> list[Path]:
    """Write every figure that applies to ``result`` as ``DIRECTORY/<scenario>_<figure>.png``, each
    whole or not at all; a long or streamed log is read once, at most ``PLOT_STEPS`` steps of it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    result = plotted(result)
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
