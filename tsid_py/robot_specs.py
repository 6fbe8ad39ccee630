"""Robot specifications (``robots/NAME.toml``) and :func:`load_robot`.

A spec says which URDF/SRDF of ``example-robot-data`` to load, whether the root floats, the
reference posture, the end-effector or foot frames, the sole rectangle and default gains. The
example-robot-data wheel installs its files under ``<site-packages>/cmeel.prefix/share/
example-robot-data/robots``; we locate that folder from the installed distribution metadata.
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import re
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TypeVar

import numpy as np
import pinocchio as pin

from tsid_py.errors import RobotSpecError, UnknownNameError
from tsid_py.robot_wrapper import RobotWrapper, build_model_from_urdf
from tsid_py.validation import unknown_name_message

_ERD_ROBOTS = "cmeel.prefix/share/example-robot-data/robots"


P = TypeVar("P")  # a dataclass of controller parameters


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
        """The 3x4 matrix of corner positions in the foot frame, ordered (-x-y, -x+y, +x-y, +x+y)."""
        return np.array(
            [
                [-self.lxn, -self.lxn, self.lxp, self.lxp],
                [-self.lyn, self.lyp, -self.lyn, self.lyp],
                [-self.lz, -self.lz, -self.lz, -self.lz],
            ]
        )


@dataclass(frozen=True)
class RobotSpec:
    """The parsed content of ``robots/NAME.toml``."""

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
    initial_configuration: np.ndarray | None = None
    biped: dict[str, object] = field(default_factory=dict)
    quadruped: dict[str, object] = field(default_factory=dict)
    servo: dict[str, object] = field(default_factory=dict)  # joint servo kp, kd (position mode)
    effort_scaling: float = 1.0  # the actuators' torque limits = this x the URDF's effort limits
    motors: dict[str, object] = field(default_factory=dict)  # tau_max [N m], v_max [rad/s]: na or scalar
    self_collision: dict[str, object] = field(default_factory=dict)  # pairs: [[link or geometry, ...]]
    directory: Path | None = None  # where the spec file was, when given by path (else robots/)

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
        sole = raw.get("sole")
        gains = raw.get("gains", {}).get("posture", 10.0)
        q0 = raw.get("initial_configuration")
        try:
            return cls(
                name=raw.get("name", path.stem),
                description=raw.get("description", ""),
                urdf=raw["urdf"],
                effort_scaling=float(raw.get("effort_scaling", 1.0)),
                srdf=raw.get("srdf"),
                floating_base=bool(raw["floating_base"]),
                reference_configuration=raw.get("reference_configuration"),
                feet=dict(raw.get("feet", {})),
                sole=SoleGeometry(**sole) if sole is not None else None,
                end_effector=raw.get("end_effector"),
                posture_gains=_read_only(gains) if isinstance(gains, list) else float(gains),
                initial_configuration=_read_only(q0) if q0 is not None else None,
                biped=dict(raw.get("biped", {})),
                quadruped=dict(raw.get("quadruped", {})),
                servo=dict(raw.get("servo", {})),
                motors={
                    k: _read_only(v) if isinstance(v, list) else v for k, v in raw.get("motors", {}).items()
                },
                self_collision=dict(raw.get("self_collision", {})),
            )
        except TypeError as exc:
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


class Robot(RobotWrapper):
    """A :class:`RobotWrapper` loaded from a spec; it keeps the spec for controllers and demos."""

    def __init__(self, spec: RobotSpec, *, load_visuals: bool = False) -> None:
        # A URDF shipped next to the specs (e.g. planar_chain.urdf) wins over example-robot-data.
        local = spec.directory or specs_dir()
        root = local if (local / spec.urdf).is_file() else example_robot_data_dir()
        srdf = root / spec.srdf if spec.srdf else None
        model, visual_model = build_model_from_urdf(
            root / spec.urdf, _package_dirs(root), spec.floating_base, srdf, load_visuals
        )
        super().__init__(model, fixed_base=not spec.floating_base, name=spec.name, visual_model=visual_model)
        self.spec = spec
        if spec.initial_configuration is not None and spec.initial_configuration.shape != (self.nq,):
            raise RobotSpecError(f"{spec.name}: initial_configuration must have size nq = {self.nq}")
        for frame in [*spec.feet.values(), *([spec.end_effector] if spec.end_effector else [])]:
            self.frame_id(frame)

    def load_visual_model(self) -> pin.GeometryModel:
        """The visual meshes of the robot (loaded on first use, then kept in ``visual_model``)."""
        if self.visual_model is None:
            root = example_robot_data_dir()
            self.visual_model = pin.buildGeomFromUrdf(
                self.model,
                str(root / self.spec.urdf),
                pin.GeometryType.VISUAL,
                package_dirs=_package_dirs(root),
            )
        return self.visual_model

    def load_collision_model(self) -> pin.GeometryModel:
        """The collision geometries of the URDF (a new ``GeometryModel``, the caller's)."""
        local = self.spec.directory or specs_dir()
        root = local if (local / self.spec.urdf).is_file() else example_robot_data_dir()
        return pin.buildGeomFromUrdf(
            self.model,
            str(root / self.spec.urdf),
            pin.GeometryType.COLLISION,
            package_dirs=_package_dirs(root),
        )

    def srdf_path(self) -> Path | None:
        """The SRDF file of the spec (its ``disable_collisions`` pairs, reference postures), or None."""
        if not self.spec.srdf:
            return None
        local = self.spec.directory or specs_dir()
        root = local if (local / self.spec.urdf).is_file() else example_robot_data_dir()
        return root / self.spec.srdf

    def effort_limit(self) -> np.ndarray:
        """Torque limits of the actuated joints [N m]: the URDF's, times the spec's ``effort_scaling``
        (1 unless the URDF's limits understate the robot's motors, as Romeo's). The one entry the
        controllers' torque bounds and the simulated plants' motors both read."""
        return self.spec.effort_scaling * super().effort_limit()

    def default_configuration(self) -> np.ndarray:
        """The spec's starting posture: its named reference configuration or explicit q0."""
        if self.spec.initial_configuration is not None:
            return self.spec.initial_configuration.copy()
        if self.spec.reference_configuration is not None:
            return self.reference_configuration(self.spec.reference_configuration)
        return self.neutral_configuration()

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


def _package_dirs(root: Path) -> list[str]:
    """Where ``package://`` mesh URIs resolve: URDFs of example-robot-data name their meshes
    ``package://<robot>_description/...`` or ``package://example-robot-data/robots/...``."""
    return [str(root.parent), str(root.parent.parent)]


def load_robot(name: str, *, load_visuals: bool = False) -> Robot:
    """Load a robot from its spec in ``robots/NAME.toml`` and the example-robot-data files."""
    return Robot(load_spec(name), load_visuals=load_visuals)


def _read_only(values: list) -> np.ndarray:
    """A spec's array, which cannot change: the spec is a frozen value, handed out as it is."""
    array = np.array(values, dtype=float)
    array.flags.writeable = False
    return array
