"""Terrain: the ground a robot walks on, as blocks on the floor, read by the plant and the planner.

The floor is the plane z = 0; a terrain adds blocks, each a box with a centre [m], a size [m] and
a pitch [rad] (a turn about the world's y axis: a block pitched by -a rises at the angle a as x
grows, a slope). The ground under (x, y) is the highest point of the blocks over it (a top face,
or the end of a pitched block that leans out), or the floor: its height :meth:`Terrain.height`
[m] and its upward normal :meth:`Terrain.normal`. The footstep planner keeps the feet off the
edges between surfaces (a step's edge).

One ground model for the MuJoCo plant (a box geom per block: :mod:`tsid_py.loop.mujoco_model`),
the footstep planner (footholds, swing clearance: :mod:`tsid_py.planning.terrain_walk`) and the
scenarios. Terrains are written as TOML (:meth:`Terrain.toml`, :func:`load_terrain`)::

    [[block]]
    center = [0.75, 0.0, 0.05]   # [m]
    size = [0.3, 1.0, 0.1]       # [m]
    pitch = 0.0                  # [deg], optional

and three come built in (:data:`TERRAINS`): ``stairs`` (4 steps of 10 cm up, a landing, 4 down),
``slope`` (10 deg up, a landing, 10 deg down) and ``stones`` (five blocks 10 cm high, 10 cm apart).
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tsid_py.errors import InvalidParameterError, MissingFileError, TsidError
from tsid_py.validation import as_scalar, as_vector

WIDTH = 1.2  # [m] the built-in terrains' width across y, centred on y = 0
UP = np.array((0.0, 0.0, 1.0))


@dataclass(frozen=True)
class Block:
    """A box of the terrain: ``center`` and ``size`` [m] (along its own axes), ``pitch`` [rad]
    about the world's y axis."""

    center: tuple[float, float, float]
    size: tuple[float, float, float]
    pitch: float = 0.0
    _rotation: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        center = tuple(float(c) for c in as_vector("a block's center", self.center, 3))
        size = as_vector("a block's size", self.size, 3)
        if np.any(size <= 0):
            raise InvalidParameterError(f"a block's size must be positive [m], got {size.tolist()}")
        pitch = as_scalar("a block's pitch", self.pitch)
        if abs(pitch) >= math.pi / 3:
            raise InvalidParameterError(
                f"a block's pitch must be within 60 deg, got {math.degrees(pitch):.1f} deg"
            )
        object.__setattr__(self, "center", center)
        object.__setattr__(self, "size", tuple(float(s) for s in size))
        object.__setattr__(self, "pitch", pitch)
        c, s = math.cos(pitch), math.sin(pitch)
        rotation = np.array(((c, 0.0, s), (0.0, 1.0, 0.0), (-s, 0.0, c)))
        rotation.flags.writeable = False
        object.__setattr__(self, "_rotation", rotation)

    @property
    def rotation(self) -> np.ndarray:
        """The block's axes in the world (a copy)."""
        return self._rotation.copy()

    def upper(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The block's highest point over each (x, y) [m] (-inf where it is not over it) and the
        index of the face that is it: 0 the top face, 1 and 2 the ends. A block pitched about y is
        a rectangle in the x-z plane, its upper boundary the edges that face up: the top and, for a
        pitched block, the end that leans out (both ends of a level block are vertical)."""
        cx, _, cz = self.center
        half_x, half_z = 0.5 * self.size[0], 0.5 * self.size[2]
        axis_x, axis_z = self._rotation[[0, 2], 0], self._rotation[[0, 2], 2]  # x-z of its x and z axes
        corners = {  # the rectangle's corners in x-z
            (sx, sz): np.array((cx, cz)) + sx * half_x * axis_x + sz * half_z * axis_z
            for sx in (-1, 1)
            for sz in (-1, 1)
        }
        edges = [
            (corners[(-1, 1)], corners[(1, 1)]),
            (corners[(1, -1)], corners[(1, 1)]),
            (corners[(-1, -1)], corners[(-1, 1)]),
        ]
        best, which = np.full(x.shape, -np.inf), np.full(x.shape, -1)
        for k, (a, b) in enumerate(edges):
            if abs(b[0] - a[0]) < 1e-12:
                continue  # a vertical end: a wall, never the ground under a point
            t = (x - a[0]) / (b[0] - a[0])
            z = a[1] + t * (b[1] - a[1])
            higher = (t >= 0.0) & (t <= 1.0) & (z > best)
            best, which = np.where(higher, z, best), np.where(higher, k, which)
        outside = np.abs(y - self.center[1]) > 0.5 * self.size[1]
        return np.where(outside, -np.inf, best), which

    def face_normal(self, face: int) -> np.ndarray:
        """The upward unit normal of face ``face`` of :meth:`upper` (world)."""
        if face == 0:
            return self._rotation[:, 2].copy()
        sign = 1.0 if face == 1 else -1.0
        normal = sign * self._rotation[:, 0]  # an end's outward normal, upward for the end that leans out
        return normal if normal[2] > 0 else -normal

    @property
    def normal(self) -> np.ndarray:
        """Its top face's upward normal (world)."""
        return self._rotation[:, 2].copy()


@dataclass(frozen=True)
class Terrain:
    """The floor (z = 0) and ``blocks`` on it; ``name`` says which."""

    name: str
    blocks: tuple[Block, ...] = ()

    def __post_init__(self) -> None:
        blocks = tuple(self.blocks)  # its own: a list the caller keeps does not change it
        if any(not isinstance(block, Block) for block in blocks):
            raise InvalidParameterError(f"terrain {self.name}: blocks must be Block objects")
        object.__setattr__(self, "blocks", blocks)

    def _tops(self, points: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int]]]:
        """The ground's height under each point's x, y [m], and which (block, face) it is ((-1, 0):
        the floor): the highest of the floor and the blocks' upper boundaries (:meth:`Block.upper`)."""
        points = np.atleast_2d(np.asarray(points, dtype=float))
        x, y = points[:, 0], points[:, 1]
        best, block, face = np.zeros(x.shape), np.full(x.shape, -1), np.zeros(x.shape, dtype=int)
        for k, candidate in enumerate(self.blocks):
            z, faces = candidate.upper(x, y)
            higher = z > best
            best, block, face = (
                np.where(higher, z, best),
                np.where(higher, k, block),
                np.where(higher, faces, face),
            )
        return best, list(zip(block.tolist(), face.tolist(), strict=True))

    def height(self, x: float, y: float) -> float:
        """The ground's height under (x, y) [m]: the highest top face there, or the floor."""
        return float(self._tops(np.array((x, y)))[0][0])

    def heights(self, points: np.ndarray) -> np.ndarray:
        """:meth:`height` under each of the points' x, y (k x 2 or k x 3) [m], at once."""
        return self._tops(points)[0]

    def normal(self, x: float, y: float) -> np.ndarray:
        """The ground's upward unit normal under (x, y) (a new array)."""
        block, face = self._tops(np.array((x, y)))[1][0]
        return UP.copy() if block < 0 else self.blocks[block].face_normal(face)

    @property
    def flat(self) -> bool:
        """Whether it is the floor alone."""
        return not self.blocks

    @property
    def end(self) -> float:
        """The x [m] past which it is the floor again (0 for the floor alone)."""
        return max(
            (
                b.center[0] + 0.5 * (b.size[0] * abs(b.rotation[0, 0]) + b.size[2] * abs(b.rotation[0, 2]))
                for b in self.blocks
            ),
            default=0.0,
        )

    def toml(self) -> str:
        """The terrain as a TOML file :func:`load_terrain` reads."""
        lines = [f"# terrain {self.name}: blocks on the floor (z = 0); center and size [m], pitch [deg]"]
        for block in self.blocks:
            lines += [
                "",
                "[[block]]",
                f"center = [{', '.join(f'{c:.4f}' for c in block.center)}]",
                f"size = [{', '.join(f'{s:.4f}' for s in block.size)}]",
            ]
            if block.pitch:
                lines.append(f"pitch = {math.degrees(block.pitch):.4f}")
        return "\n".join(lines) + "\n"


FLAT = Terrain("flat")


def stairs(
    steps: int = 4, rise: float = 0.1, tread: float = 0.35, start: float = 0.5, landing: float = 0.6
) -> Terrain:
    """``steps`` steps of ``rise`` up from x = ``start``, each ``tread`` deep, a ``landing`` [m],
    and as many down: each step a block from the floor to its tread."""
    blocks = []
    top = steps * rise
    for k in range(1, steps + 1):
        height = k * rise
        x0 = start + (k - 1) * tread
        blocks.append(Block((x0 + tread / 2, 0.0, height / 2), (tread, WIDTH, height)))
    x = start + steps * tread
    blocks.append(Block((x + landing / 2, 0.0, top / 2), (landing, WIDTH, top)))
    x += landing
    for k in range(steps - 1, 0, -1):
        height = k * rise
        blocks.append(Block((x + tread / 2, 0.0, height / 2), (tread, WIDTH, height)))
        x += tread
    return Terrain(f"stairs ({steps} x {rise * 100:.0f} cm)", tuple(blocks))


def slope(angle: float = 10.0, length: float = 1.0, start: float = 0.5, landing: float = 0.6) -> Terrain:
    """A ramp ``angle`` [deg] up over ``length`` [m] along x from x = ``start``, a ``landing`` [m],
    and a ramp down: each ramp a pitched block, thick enough that its lower end sinks into the
    floor."""
    a = math.radians(as_scalar("angle", angle, minimum=0.0))
    rise = length * math.tan(a)
    thickness = 0.2 + rise
    blocks = []
    for sign, x0 in ((-1.0, start), (1.0, start + length + landing)):
        centre_top = np.array((x0 + length / 2, 0.0, rise / 2))
        normal = np.array((sign * math.sin(a), 0.0, math.cos(a)))  # R_y(sign a) e_z
        centre = centre_top - normal * thickness / 2
        blocks.append(Block(tuple(centre), (length / math.cos(a), WIDTH, thickness), sign * a))
    blocks.insert(1, Block((start + length + landing / 2, 0.0, rise / 2), (landing, WIDTH, rise)))
    return Terrain(f"slope ({angle:g} deg)", tuple(blocks))


def stones(
    count: int = 5, gap: float = 0.1, length: float = 0.3, height: float = 0.1, start: float = 0.5
) -> Terrain:
    """``count`` stones ``height`` [m] high and ``length`` [m] long from x = ``start``, ``gap`` [m]
    apart: a foot that missed one would drop ``height`` to the floor."""
    blocks = []
    x = start
    for _ in range(count):
        blocks.append(Block((x + length / 2, 0.0, height / 2), (length, WIDTH, height)))
        x += length + gap
    return Terrain(f"stones ({gap * 100:.0f} cm gaps)", tuple(blocks))


TERRAINS: dict[str, Callable[[], Terrain]] = {
    "flat": lambda: FLAT,
    "stairs": stairs,
    "slope": slope,
    "stones": stones,
}


def load_terrain(name: str | Path) -> Terrain:
    """A built-in terrain by name (:data:`TERRAINS`), or a TOML file's (the module docstring);
    a file that is not one is refused in one line naming it and the block."""
    if str(name) in TERRAINS:
        return TERRAINS[str(name)]()
    path = Path(name)
    if not path.is_file():
        raise MissingFileError(f"terrain {name}: neither a built-in one ({', '.join(TERRAINS)}) nor a file")
    try:
        raw = tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise InvalidParameterError(f"{path}: not TOML ({error})") from None
    unknown = sorted(set(raw) - {"block"})
    if unknown:
        raise InvalidParameterError(f"{path}: unknown key {unknown[0]!r} (a terrain has [[block]] tables)")
    tables = raw.get("block", [])
    if not isinstance(tables, list) or not all(isinstance(table, dict) for table in tables):
        raise InvalidParameterError(f"{path}: block must be [[block]] tables, each with center and size")
    return Terrain(path.stem, tuple(_block(path, k + 1, table) for k, table in enumerate(tables)))


def _block(path: Path, number: int, table: dict) -> Block:
    """Block ``number`` of a terrain file, or one line naming the file, the block and the fault."""
    where = f"{path}: block {number}"
    extra = sorted(set(table) - {"center", "size", "pitch"})
    if extra or "center" not in table or "size" not in table:
        raise InvalidParameterError(
            f"{where} needs center and size, may have pitch [m, deg]; got {sorted(table)}"
        )
    center, size, pitch = table["center"], table["size"], table.get("pitch", 0.0)
    if not (_three_numbers(center) and _three_numbers(size) and _number(pitch)):
        raise InvalidParameterError(
            f"{where}: center and size are lists of 3 numbers [m], pitch a number [deg]"
        )
    try:
        return Block(tuple(center), tuple(size), math.radians(pitch))
    except TsidError as error:
        raise InvalidParameterError(f"{where}: {error}") from None


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _three_numbers(value: object) -> bool:
    return isinstance(value, list) and len(value) == 3 and all(_number(v) for v in value)
