"""Robot specifications (``robots/NAME.toml``) and :func:`load_robot`.

A spec says which URDF/SRDF of ``example-robot-data`` to load, whether the root floats, the
reference posture, the end-effector or foot frames, the sole rectangle and default gains. The
example-robot-data wheel installs its files under ``<site-packages>/cmeel.prefix/share/
example-robot-data/robots``; we locate that folder from the installed distribution metadata.
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import math
import re
import tomllib
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from pathlib import Path
from typing import TypeVar

import numpy as np
import pinocchio as pin

from tsid_py.deprecation import moved_names
from tsid_py.errors import RobotSpecError, UnknownNameError
from tsid_py.geometry import GRAVITY
from tsid_py.robot_wrapper import RobotWrapper, build_model_from_urdf, load_collision_geometry, load_geometry
from tsid_py.validation import unknown_name_message

_ERD_ROBOTS = "cmeel.prefix/share/example-robot-data/robots"


P = TypeVar("P")  # a dataclass of controller parameters


FOOT_LOAD = 2.0  # a foot's default normal-force cap, in the robot's weights (the legged controllers)
FOOT_MIN_LOAD = 0.01  # a foot's default least normal force in contact, in the robot's weights


NOT_A_FOOT = 3  # the name rank of a frame that is no foot's (a world frame)


def foot_name_rank(name: str) -> int:
    """How a frame's name is preferred for a foot: "sole" (0), "foot" (1), any other (2), one
    that says "world" or "universe" never (NOT_A_FOOT: iCub fixes ``codyco_balancing_world`` to
    its left foot)."""
    lowered = name.lower()
    if "world" in lowered or "universe" in lowered:
        return NOT_A_FOOT
    return 0 if "sole" in lowered else 1 if "foot" in lowered else 2


def min_normal_force(mass: float) -> float:
    """The default least normal force [N] of a foot in contact, for a robot of ``mass`` [kg]:
    FOOT_MIN_LOAD times its weight m g (a 90 kg Talos: 8.8 N, a 2.5 kg Solo12: 0.25 N; TSID's 5 N
    and 1 N, which talos.toml, romeo.toml and solo12.toml keep, would hold a 1 kg biped's two
    feet to more than its weight). The legged controllers' f_min unless a spec gives one."""
    return FOOT_MIN_LOAD * mass * GRAVITY


def max_normal_force(mass: float) -> float:
    """The default cap on a foot's normal force [N] of a robot of ``mass`` [kg]: FOOT_LOAD times
    its weight m g, so that one foot can carry the whole robot with room for a step's impact,
    whatever its size (a 52 kg ANYmal C: 1023 N, where TSID's 100 N, made for a 2.5 kg Solo, let
    it fall in 0.5 s). The legged controllers' f_max unless a spec gives one; new-spec writes it,
    check-spec checks the standing forces against it."""
    return FOOT_LOAD * mass * GRAVITY


def example_robot_data_dir() -> Path:
    """The ``robots/`` folder installed by the ``example-robot-data`` wheel."""
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        raise RobotSpecError("example-robot-data is not installed: pip install example-robot-data") from None
    root = Path(str(dist.locate_file(_ERD_ROBOTS)))
    if not root.is_dir():
        raise RobotSpecError(f"example-robot-data is installed but its robots folder is missing: {root}")
    return root


def specs_dir() -> Path:
    """Where the robot specs live: inside the installed package, or ``robots/`` of a source checkout."""
    packaged = Path(str(importlib.resources.files("tsid_py"))) / "robots"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "robots"


def available_robots() -> list[str]:
    """Names of the robots with a spec."""
    return sorted(path.stem for path in specs_dir().glob("*.toml"))


@dataclass(frozen=True)
class SoleGeometry:
    """A rectangular foot sole in the foot frame [m]: extents along +x, -x, +y, -y and the sole depth lz.

    The four contact corners sit at z = -lz in the foot frame (TSID's ``contact_Point`` convention).
    """

    lxp: float
    lxn: float
    lyp: float
    lyn: float
    lz: float = 0.0

    def corners(self) -> np.ndarray:
        """The 3x4 matrix of corner positions in the foot frame, ordered (-x-y, -x+y, +x-y, +x+y)
        (a new array)."""
        return self.local_corners.copy()

    @cached_property
    def local_corners(self) -> np.ndarray:
        """:meth:`corners`, made once and read-only (for the sole-to-world map at every step)."""
        corners = np.array(
            [
                [-self.lxn, -self.lxn, self.lxp, self.lxp],
                [-self.lyn, self.lyp, -self.lyn, self.lyp],
                [-self.lz, -self.lz, -self.lz, -self.lz],
            ]
        )
        corners.flags.writeable = False
        return corners


# The keys a spec file may have, by table ("" the top level); [feet] names its feet freely, and
# [biped] / [quadruped] are checked against the controllers' parameters when one is made.
SPEC_KEYS: dict[str, tuple[str, ...]] = {
    "": (
        "name",
        "description",
        "urdf",
        "srdf",
        "floating_base",
        "reference_configuration",
        "initial_configuration",
        "feet",
        "sole",
        "point_foot_radius",
        "end_effector",
        "gains",
        "biped",
        "quadruped",
        "servo",
        "effort_scaling",
        "motors",
        "self_collision",
        "walk",
        "sensors",
        "package_dirs",
    ),
    "sole": ("lxp", "lxn", "lyp", "lyn", "lz"),
    "walk": ("step_length", "swing_height"),
    "gains": ("posture",),
    "servo": ("kp", "kd"),
    "motors": ("tau_max", "v_max"),
    "self_collision": ("pairs",),
}


def check_spec_keys(raw: dict, where: str) -> None:
    """Refuse, in one line with the closest known keys, a key a spec table does not have."""
    for table, known in SPEC_KEYS.items():
        entries = raw if not table else raw.get(table)
        if not isinstance(entries, dict):
            if table and table in raw:
                raise RobotSpecError(f"{where}: [{table}] must be a table of {', '.join(known)}")
            continue
        for key in entries:
            if key not in known:
                kind = "top-level key" if not table else f"key of [{table}]"
                raise RobotSpecError(f"{where}: {unknown_name_message(kind, key, known)}")


Configuration = np.ndarray | dict[str, float | list[float]]  # size nq, or joint name -> value(s)


@dataclass(frozen=True)
class RobotSpec:
    """The parsed content of ``robots/NAME.toml``.

    ``initial_configuration`` is q0 (size nq), or a table from joint names to their values (a
    list for a joint of several numbers, e.g. the free flyer's x, y, z, qx, qy, qz, qw; the
    joints not named stay at the reference or neutral configuration). ``point_foot_radius`` [m]
    is the radius of a point foot's sphere when its frame is at the sphere's centre: the frame
    then stands that high above the ground.
    """

    name: str
    description: str
    urdf: str
    srdf: str | None
    floating_base: bool
    reference_configuration: str | None
    feet: dict[str, str] = field(default_factory=dict)
    sole: SoleGeometry | None = None
    end_effector: str | None = None
    posture_gains: np.ndarray | float = 10.0
    initial_configuration: Configuration | None = None
    point_foot_radius: float = 0.0
    biped: dict[str, object] = field(default_factory=dict)
    quadruped: dict[str, object] = field(default_factory=dict)
    servo: dict[str, object] = field(default_factory=dict)  # joint servo kp, kd (position mode)
    effort_scaling: float = 1.0  # the actuators' torque limits = this x the URDF's effort limits
    motors: dict[str, object] = field(default_factory=dict)  # tau_max [N m], v_max [rad/s]: na or scalar
    self_collision: dict[str, object] = field(default_factory=dict)  # pairs: [[link or geometry, ...]]
    sensors: dict[str, object] = field(default_factory=dict)  # tsid_py.loop.sensing.SensorParams' keys
    walk: dict[str, float] = field(default_factory=dict)  # the walk scenario's step_length, swing_height [m]
    package_dirs: tuple[str, ...] = ()  # folders holding the URDF's mesh packages (relative: to the spec's)
    directory: Path | None = None  # where the spec file was, when given by path (else robots/)

    def __post_init__(self) -> None:
        frames = list(self.feet.values())
        for frame in frames:
            if frames.count(frame) > 1:
                keys = [key for key, other in self.feet.items() if other == frame]
                raise RobotSpecError(
                    f"{self.name}: [feet] gives the frame {frame!r} to {' and '.join(keys)}: each foot "
                    "is a frame of its own"
                )

    @classmethod
    def from_file(cls, path: Path) -> RobotSpec:
        """Parse and check a spec file."""
        try:
            raw = tomllib.loads(path.read_text())
        except tomllib.TOMLDecodeError as exc:
            raise RobotSpecError(f"{path}: invalid TOML: {exc}") from exc
        for key in ("urdf", "floating_base"):
            if key not in raw:
                raise RobotSpecError(f"{path}: missing key {key!r}")
        check_spec_keys(raw, str(path))
        sole = raw.get("sole")
        gains = raw.get("gains", {}).get("posture", 10.0)
        q0 = raw.get("initial_configuration")
        if isinstance(q0, dict):
            q0 = {
                name: list(value) if isinstance(value, list) else float(value) for name, value in q0.items()
            }
        elif q0 is not None:
            q0 = _read_only(q0)
        try:
            return cls(
                name=raw.get("name", path.stem),
                description=raw.get("description", ""),
                urdf=raw["urdf"],
                effort_scaling=_positive(str(path), "effort_scaling", raw.get("effort_scaling", 1.0)),
                srdf=raw.get("srdf"),
                floating_base=bool(raw["floating_base"]),
                reference_configuration=raw.get("reference_configuration"),
                feet=dict(raw.get("feet", {})),
                sole=SoleGeometry(**sole) if sole is not None else None,
                end_effector=raw.get("end_effector"),
                posture_gains=_read_only(gains) if isinstance(gains, list) else float(gains),
                initial_configuration=q0,
                point_foot_radius=float(raw.get("point_foot_radius", 0.0)),
                biped=dict(raw.get("biped", {})),
                quadruped=dict(raw.get("quadruped", {})),
                sensors=dict(raw.get("sensors", {})),
                servo=dict(raw.get("servo", {})),
                motors={
                    k: _read_only(v) if isinstance(v, list) else v for k, v in raw.get("motors", {}).items()
                },
                self_collision=dict(raw.get("self_collision", {})),
                walk={key: float(value) for key, value in raw.get("walk", {}).items()},
                package_dirs=tuple(str(folder) for folder in raw.get("package_dirs", [])),
            )
        except (TypeError, ValueError) as exc:
            raise RobotSpecError(f"{path}: {exc}") from exc


def load_spec(name: str | Path) -> RobotSpec:
    """The spec of a robot by name (``talos``, ``romeo``, ``ur5``, ``solo12``, ...: a file of
    ``robots/``), or by an explicit path to a ``.toml`` spec file (its URDF is looked up beside
    it first, then in example-robot-data). A name is never a path: ``../x`` is refused."""
    text = str(name)
    if text.endswith(".toml"):
        path = Path(text)
        if not path.is_file():
            raise RobotSpecError(f"robot spec file not found: {path}")
        return replace(RobotSpec.from_file(path), directory=path.resolve().parent)
    if not _SPEC_NAME.fullmatch(text) or not (specs_dir() / f"{text}.toml").is_file():
        raise UnknownNameError(
            unknown_name_message("robot", text, available_robots()) + " (or give a path to a .toml spec)"
        )
    return RobotSpec.from_file(specs_dir() / f"{text}.toml")


_SPEC_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")  # a file name of robots/, nothing that climbs out


class SpecRobot(RobotWrapper):
    """A :class:`RobotWrapper` loaded from a spec (:class:`RobotSpec`), which it keeps in ``spec``
    for controllers and demos: what :func:`load_robot` returns."""

    def __init__(self, spec: RobotSpec, *, load_visuals: bool = False) -> None:
        root = files_root(spec)
        srdf = root / spec.srdf if spec.srdf else None
        model, visual_model = build_model_from_urdf(
            root / spec.urdf, package_dirs(spec), spec.floating_base, srdf, load_visuals
        )
        super().__init__(model, fixed_base=not spec.floating_base, name=spec.name, visual_model=visual_model)
        self.spec = spec
        self.default_configuration()  # a bad initial_configuration is refused here, at load
        for frame in [*spec.feet.values(), *([spec.end_effector] if spec.end_effector else [])]:
            self.frame_id(frame)

    def load_visual_model(self) -> pin.GeometryModel:
        """The visual meshes of the robot (loaded on first use, then kept in ``visual_model``)."""
        if self.visual_model is None:
            root = files_root(self.spec)
            self.visual_model = load_geometry(
                self.model, root / self.spec.urdf, pin.GeometryType.VISUAL, package_dirs(self.spec)
            )
        return self.visual_model

    def load_collision_model(self) -> pin.GeometryModel:
        """The collision geometries of the URDF, or its visual ones where it has none
        (:func:`~tsid_py.robot_wrapper.load_collision_geometry`; a new ``GeometryModel``, the
        caller's)."""
        root = files_root(self.spec)
        return load_collision_geometry(self.model, root / self.spec.urdf, package_dirs(self.spec))[0]

    def srdf_path(self) -> Path | None:
        """The SRDF file of the spec (its ``disable_collisions`` pairs, reference postures), or None."""
        return files_root(self.spec) / self.spec.srdf if self.spec.srdf else None

    def effort_limit(self) -> np.ndarray:
        """Torque limits of the actuated joints [N m]: the URDF's, times the spec's ``effort_scaling``
        (1 unless the URDF's limits understate the robot's motors, as Romeo's). The one entry the
        controllers' torque bounds and the simulated plants' motors both read."""
        return self.spec.effort_scaling * super().effort_limit()

    def default_configuration(self) -> np.ndarray:
        """The spec's starting posture: its explicit q0 (a vector, or joint values over the
        reference configuration), else its named reference configuration, else the neutral one."""
        spec = self.spec
        base = (
            self.reference_configuration(spec.reference_configuration)
            if spec.reference_configuration is not None
            else self.neutral_configuration()
        )
        q0 = spec.initial_configuration
        if q0 is None:
            return base
        if isinstance(q0, dict):
            return self.configuration(q0, base)
        if q0.shape != (self.nq,):
            raise RobotSpecError(
                f"{spec.name}: initial_configuration has {q0.size} numbers, nq = {self.nq} (or give a table "
                "of joint names, e.g. [initial_configuration] knee = 0.3)"
            )
        return q0.copy()

    def configuration(
        self, values: dict[str, float | list[float]], base: np.ndarray | None = None
    ) -> np.ndarray:
        """A configuration (size nq) from joint values by joint name, the joints not named as in
        ``base`` (the neutral configuration by default): a one-dof joint takes a number [rad, m],
        the free flyer (``root_joint``) its seven numbers x, y, z, qx, qy, qz, qw."""
        model = self.model
        q = self.neutral_configuration() if base is None else np.array(base, dtype=float)
        names = list(model.names)[1:]
        for name, value in values.items():
            if name not in names:
                raise RobotSpecError(f"{self.name}: {unknown_name_message('joint', name, names)}")
            joint = model.joints[model.getJointId(name)]
            numbers = np.atleast_1d(np.asarray(value, dtype=float))
            if numbers.shape != (joint.nq,) or not np.all(np.isfinite(numbers)):
                raise RobotSpecError(
                    f"{self.name}: joint {name!r} takes {joint.nq} finite number(s), got {value!r}"
                )
            q[joint.idx_q : joint.idx_q + joint.nq] = numbers
        return q

    def standing_configuration(self, q: np.ndarray | None = None) -> np.ndarray:
        """A posture (the spec's starting one by default) with the floating base lowered so that the
        lowest foot frame stands at its height above the ground: the sole's depth ``lz``, or
        ``point_foot_radius`` (the posture itself for a robot without feet; a new array)."""
        q = self.default_configuration() if q is None else np.array(q, dtype=float)
        if self.is_fixed_base or not self.spec.feet:
            return q
        data = self.create_data()
        pin.framesForwardKinematics(self.model, data, q)
        lowest = min(data.oMf[self.frame_id(frame)].translation[2] for frame in self.spec.feet.values())
        q[2] -= lowest - self.foot_height()
        return q

    def leg_length(self) -> float:
        """How high the legs hold the hips above the ground in the standing configuration [m]: the
        height of the first joint of the chain from the base to the first foot (0 without feet)."""
        if self.is_fixed_base or not self.spec.feet:
            return 0.0
        model = self.model
        joint = model.frames[self.frame_id(next(iter(self.spec.feet.values())))].parentJoint
        while model.parents[joint] > 1:  # up to the joint whose parent is the free flyer
            joint = model.parents[joint]
        data = self.create_data()
        pin.forwardKinematics(model, data, self.standing_configuration())
        return float(data.oMi[joint].translation[2])

    def foot_height(self) -> float:
        """How high a foot frame stands above the ground [m]: the sole's depth below it (``lz``),
        or a point foot's radius."""
        return self.spec.sole.lz if self.spec.sole is not None else self.spec.point_foot_radius

    def controller_params(self, defaults: P, table: str) -> P:
        """``defaults`` (a dataclass of controller parameters) with the values of the spec's
        ``[table]`` (e.g. ``"biped"``); a key that names no field raises RobotSpecError, and TOML
        arrays become tuples."""
        overrides = dict(getattr(self.spec, table))
        known = {f.name for f in fields(defaults)}  # type: ignore[arg-type]  # P: a dataclass
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise RobotSpecError(f"{self.name}: unknown [{table}] keys {unknown}; known: {sorted(known)}")
        return replace(defaults, **{k: tuple(v) if isinstance(v, list) else v for k, v in overrides.items()})  # type: ignore[type-var]

    def posture_gains(self) -> np.ndarray:
        """Per-joint posture gains kp from the spec, size na [1/s^2]."""
        return np.broadcast_to(self.spec.posture_gains, (self.na,)).astype(float)


def _positive(spec: str, key: str, value: object) -> float:
    """A spec's number that must be finite and above 0 (a scaling: 0 or inf would turn a missing
    limit, inf, into NaN), else a RobotSpecError naming it."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        number = math.nan
    if not (math.isfinite(number) and number > 0):
        raise RobotSpecError(f"{spec}: {key} must be a number above 0, got {value!r}")
    return number


def files_root(spec: RobotSpec) -> Path:
    """Where a spec's URDF and SRDF paths start: beside the spec file when its URDF is there (e.g.
    planar_chain.urdf, or your robot's), else example-robot-data's robots folder."""
    local = spec.directory or specs_dir()
    return local if (local / spec.urdf).is_file() else example_robot_data_dir()


def package_dirs(spec: RobotSpec) -> list[str]:
    """Where ``package://`` mesh URIs resolve: the spec's ``package_dirs`` (relative ones from the
    spec file's folder), then the two folders above its files' root (URDFs of example-robot-data
    name their meshes ``package://<robot>_description/...`` or
    ``package://example-robot-data/robots/...``); ``ROS_PACKAGE_PATH`` after them."""
    root, here = files_root(spec), spec.directory or specs_dir()
    return [*(str(here / folder) for folder in spec.package_dirs), str(root.parent), str(root.parent.parent)]


def load_robot(name: str, *, load_visuals: bool = False) -> SpecRobot:
    """Load a robot from its spec in ``robots/NAME.toml`` and the example-robot-data files."""
    return SpecRobot(load_spec(name), load_visuals=load_visuals)


def _read_only(values: list) -> np.ndarray:
    """A spec's array, which cannot change: the spec is a frozen value, handed out as it is."""
    array = np.array(values, dtype=float)
    array.flags.writeable = False
    return array


__getattr__ = moved_names(__name__, {"Robot": "tsid_py.robot_specs.SpecRobot"})  # renamed after 0.2.0
