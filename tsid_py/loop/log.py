"""What a closed loop records, step by step: all of it in memory, the last steps only, or streamed
to disk as the run goes.

A :class:`RunLog` is a set of per-step series (lists with one entry per control step). The loop
records the measured state a step started from (t, q, v), the solution (dv, tau), the state the
controller's previous step planned for this one (``q_plan``) and the contact wrenches the plant
measured (``wrenches``); a scenario appends its own series after each step (the CoM and its
reference, each contact's planned forces, ...). Memory is chosen at construction:

- everything in memory (the default: a short run, a notebook);
- ``window=N``: the last N steps only, each series a bounded deque (the summaries then come from
  statistics the scenario keeps as the run goes);
- ``stream_dir=DIR``: every ``CHUNK_STEPS`` steps the rows in memory are appended to a file in
  DIR, then dropped. The file has no name (Linux ``O_TMPFILE``, elsewhere unlinked at once): it
  never shows in DIR, and disappears when the log is closed, the process ends or is killed. The
  whole run is read back with :meth:`RunLog.sampled` (every k-th step, for plots and replays),
  :meth:`RunLog.series` or :meth:`RunLog.arrays`.

Memory stays flat with run length in the last two: about ``CHUNK_STEPS`` rows (~3.4 MB for Talos).
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections import deque
from collections.abc import Iterator, Mapping, MutableSequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, ClassVar, Protocol

import numpy as np

from tsid_py.errors import InvalidParameterError, OutputError
from tsid_py.loop.controller import ControlOutput
from tsid_py.validation import as_count

CHUNK_STEPS = 1000  # control steps a streamed log keeps in memory before appending them to its file


class _Measurement(Protocol):  # a ContactMeasurement (tsid_py.loop.plant)
    wrench: np.ndarray


@dataclass
class RunLog:
    """Per-step records of a run; :meth:`arrays` shapes them (steps, n).

    Attributes:
        t: Time of each step [s].
        q, v: The measured state a step started from (as the plant reported it).
        dv, tau: The step's solution [m/s^2, rad/s^2], [N m].
        q_plan: The configuration the controller's previous step planned for this step: its dv
            integrated from its state, q (+) (v + dv dt / 2) dt on the manifold (the first step's
            is its measured q: nothing was planned before it). On the integrator plant it is q
            itself; on a plant with physics, q - q_plan is what the plant did not do as planned.
        com, com_ref: Measured CoM and its reference [m] (scenarios of legged robots).
        capture_point, capture_margin: The measured capture point (x-y) [m] and how far it is
            inside the support polygon of the feet that touch [m] (negative: outside), as the
            run's verdict judged them (legged robots: :mod:`tsid_py.loop.verdict`).
        q_estimate, v_estimate: With robot sensing, the state the controller was given (the
            estimator's), beside the true q and v (:mod:`tsid_py.loop.sensing`).
        forces: Each contact's force variables as the QP planned them [N], by contact name.
        wrenches: The ground wrench each contact frame measured, as the plant reported it at the
            start of the step (the outcome of the previous command): world axes, at the frame's
            origin, force then moment [N, N m], by contact frame name (empty when the plant
            measures none, such as the integrator).
        window: Keep only the last ``window`` steps (None: all).
        stream_dir: Stream the series into an unnamed file in this directory (None: keep them in
            memory); see the module docstring.

    A series gets one entry per step, from the first step on, or none at all. A subclass adds
    series as list (or dict-of-list) fields; fields that are not per-step are named in
    ``PER_RUN``.
    """

    t: MutableSequence[float] = field(default_factory=list)
    q: MutableSequence[np.ndarray] = field(default_factory=list)
    v: MutableSequence[np.ndarray] = field(default_factory=list)
    dv: MutableSequence[np.ndarray] = field(default_factory=list)
    tau: MutableSequence[np.ndarray] = field(default_factory=list)
    q_plan: MutableSequence[np.ndarray] = field(default_factory=list)
    com: MutableSequence[np.ndarray] = field(default_factory=list)
    com_ref: MutableSequence[np.ndarray] = field(default_factory=list)
    capture_point: MutableSequence[np.ndarray] = field(default_factory=list)
    capture_margin: MutableSequence[float] = field(default_factory=list)
    q_estimate: MutableSequence[np.ndarray] = field(default_factory=list)
    v_estimate: MutableSequence[np.ndarray] = field(default_factory=list)

    forces: dict[str, MutableSequence[np.ndarray]] = field(default_factory=dict)
    wrenches: dict[str, MutableSequence[np.ndarray]] = field(default_factory=dict)
    window: int | None = None
    stream_dir: str | Path | None = None

    PER_RUN: ClassVar[tuple[str, ...]] = ()  # list fields that are not per-step series
    _OPTIONS: ClassVar[tuple[str, ...]] = ("window", "stream_dir")

    def __post_init__(self) -> None:
        self._file: IO[bytes] | None = None
        self._chunks: list[tuple[int, dict[str, int]]] = []  # (rows, offset of each series)
        self._layout: dict[str, tuple[tuple[int, ...], np.dtype]] = {}  # row shape and dtype
        self._spilled = 0  # steps in the file
        self._planned: np.ndarray | None = None  # q_plan of the next step
        if self.window is not None and self.stream_dir is not None:
            raise InvalidParameterError("a log keeps a window of steps or streams them to disk, not both")
        if self.window is not None:
            self.window = as_count("a log window (steps)", self.window, minimum=1)
            for name, value in vars(self).items():
                if name in self.PER_RUN or name.startswith("_"):
                    continue
                if isinstance(value, list):
                    setattr(self, name, deque(value, maxlen=self.window))
                elif isinstance(value, dict):
                    setattr(self, name, {key: deque(s, maxlen=self.window) for key, s in value.items()})
        if self.stream_dir is not None:
            directory = Path(self.stream_dir)
            try:
                self._file = tempfile.TemporaryFile(dir=directory)  # noqa: SIM115 (closed by close())
            except OSError as error:
                raise OutputError(f"cannot stream the run's log into {directory}: {error}") from None

    # ------------------------------------------------------------------ recording
    def record_step(
        self,
        t: float,
        q: np.ndarray,
        v: np.ndarray,
        out: ControlOutput,
        contacts: Mapping[str, _Measurement] | None = None,
        q_next: np.ndarray | None = None,
    ) -> None:
        """The state (t [s], q, v) a control step started from, its dv and tau, the contact
        wrenches the plant measured (``PlantState.contacts``) and ``q_next``, the configuration
        the step plans for the next one (given at every step, or never)."""
        if self._file is not None and len(self.t) >= CHUNK_STEPS:
            self._spill()
        self.t.append(float(t))
        self.q.append(q)
        self.v.append(v)
        self.dv.append(out.dv)
        self.tau.append(out.tau)
        if q_next is not None:
            self.q_plan.append(q if self._planned is None else self._planned)
            self._planned = np.array(q_next, dtype=float)  # the log's own: the command may share it
        if contacts is not None and (contacts or self.wrenches):
            if not self.wrenches:
                self.wrenches.update({name: self._new_series() for name in contacts})
            elif contacts.keys() != self.wrenches.keys():
                raise InvalidParameterError(
                    f"the plant measured the contacts {sorted(contacts)} at t = {t:g} s and "
                    f"{sorted(self.wrenches)} before: a plant reports the same contact frames at every step"
                )
            for name, measurement in contacts.items():
                self.wrenches[name].append(np.array(measurement.wrench, dtype=float))

    def record_forces(self, forces: Mapping[str, np.ndarray], sizes: Mapping[str, int]) -> None:
        """Each contact's planned force variables at this step, into the ``forces`` series the log
        was made with (one per contact of the problem at the start): a contact out of the problem
        at this step has zero force (``sizes`` gives its number of variables). A contact the log
        has no series for is refused (its earlier steps would be missing)."""
        unknown = forces.keys() - self.forces.keys()
        if unknown:
            raise InvalidParameterError(
                f"the log has no force series for the contacts {sorted(unknown)}: a log records the "
                "contacts given when it is made (add them there, even if they join the problem later)"
            )
        for name, series in self.forces.items():
            f = forces.get(name)
            series.append(np.zeros(sizes[name]) if f is None else f)

    def _new_series(self) -> MutableSequence[Any]:
        return [] if self.window is None else deque(maxlen=self.window)

    # ------------------------------------------------------------------ reading
    @property
    def steps(self) -> int:
        """The steps the log can give back: all of a run, or the last ``window`` of them."""
        return self._spilled + len(self.t)

    @property
    def streamed(self) -> bool:
        """Whether the log streams to disk (then its series hold only the steps not yet written)."""
        return self._file is not None or bool(self._chunks)

    def sampled(self, stride: int = 1) -> RunLog:
        """Every ``stride``-th step and the last one, as a new log of the same class in memory (read
        back from disk for a streamed log). Its rows are those of this log for the steps still in
        memory (arrays nobody writes to: the loop records new arrays at every step); the fields
        that are not per-step are shared."""
        if not isinstance(stride, int | np.integer) or stride < 1:
            raise InvalidParameterError(f"stride must be an integer >= 1, got {stride!r}")
        total = self.steps
        indices = np.arange(0, total, stride)
        if total and indices[-1] != total - 1:
            indices = np.append(indices, total - 1)
        picked: dict[str, list[Any]] = {name: [] for name, _ in self._series()}
        picked.update({name: [] for name in self._layout})
        for start, rows, name, array in self._read_chunks():
            local = indices[(indices >= start) & (indices < start + rows)] - start
            picked[name].extend(_rows(array[local]))
        for name, series in self._series():
            local = indices[indices >= self._spilled] - self._spilled
            if len(series) == len(self.t):
                picked[name].extend(series[i] for i in local)
            elif name not in self._layout:  # not per-step (or not recorded): as it is
                picked[name] = list(series)
        return self._with_series(picked)

    def series(self, name: str) -> np.ndarray:
        """One series of the whole run as an array (steps, ...): ``"com"``, ``"forces/<contact>"``."""
        parts = [array for _, _, series, array in self._read_chunks(name) if series == name]
        tail = dict(self._series()).get(name)
        if tail is None and name not in self._layout:
            raise InvalidParameterError(
                f"the log has no series {name!r}; it has {', '.join(n for n, _ in self._series())}"
            )
        if tail is not None and len(tail):
            parts.append(np.asarray(list(tail)))
        return np.concatenate(parts) if parts else np.zeros(0)

    def distances(self, actual: str, reference: str) -> np.ndarray:
        """|actual - reference| at every step for two recorded series (e.g. "com", "com_ref") [m];
        one zero when nothing was recorded."""
        a, b = self.series(actual), self.series(reference)
        return np.linalg.norm(a - b, axis=1) if len(a) else np.zeros(1)

    def arrays(self) -> dict[str, np.ndarray]:
        """Every series of the whole run as a NumPy array (a dict's as ``<name>/<key>``, e.g.
        ``forces/<contact>``); read back from disk for a streamed log."""
        log = self.sampled() if self.streamed else self
        return {name: np.array(series) for name, series in log._series()}

    def close(self) -> None:
        """Close a streamed log's file: the steps it held are gone (reading them raises
        :class:`~tsid_py.errors.OutputError`); the steps in memory stay in the series."""
        if self._file is not None:
            self._file.close()
            self._file = None

    # ------------------------------------------------------------------ internals
    def _series(self) -> Iterator[tuple[str, MutableSequence[Any]]]:
        """(name, series) of every per-step series field, dicts' as ``<field>/<key>``."""
        for item in dataclasses.fields(self):
            if item.name in self._OPTIONS or item.name in self.PER_RUN:
                continue
            value = getattr(self, item.name)
            if isinstance(value, dict):
                for key, series in value.items():
                    yield f"{item.name}/{key}", series
            else:
                yield item.name, value

    def _with_series(self, series: dict[str, list[Any]]) -> RunLog:
        values: dict[str, Any] = {}
        for item in dataclasses.fields(self):
            if not item.init or item.name in self._OPTIONS:
                continue
            value = getattr(self, item.name)
            if item.name in self.PER_RUN:
                values[item.name] = value
            elif isinstance(value, dict):
                prefix = f"{item.name}/"
                values[item.name] = {n[len(prefix) :]: s for n, s in series.items() if n.startswith(prefix)}
            else:
                values[item.name] = series.get(item.name, [])
        return dataclasses.replace(self, window=None, stream_dir=None, **values)

    def _spill(self) -> None:
        """Append the steps in memory to the file as one chunk, then drop them."""
        if self._file is None:
            return
        rows, offsets = len(self.t), {}
        for name, series in self._series():
            if not series and name not in self._layout:
                continue  # a series nothing records
            if len(series) != rows:
                raise InvalidParameterError(
                    f"the log's series {name!r} has {len(series)} entries for {rows} steps: a streamed "
                    "log needs one entry per step in every series, from the first step on"
                )
            array = np.asarray(list(series))
            if array.dtype.kind not in "biuf":
                raise InvalidParameterError(
                    f"the log's series {name!r} holds {array.dtype} entries: a streamed log stores "
                    "numbers or booleans of one shape per step"
                )
            layout = (array.shape[1:], array.dtype)
            if self._layout.setdefault(name, layout) != layout and self._chunks:
                raise InvalidParameterError(
                    f"the log's series {name!r} changed from {self._layout[name]} to {layout} entries"
                )
            if not self._chunks:
                self._layout[name] = layout
            offsets[name] = self._file.tell()
            np.save(self._file, array, allow_pickle=False)
        missing = set(self._layout) - set(offsets)
        if missing:
            raise InvalidParameterError(f"the log's series {sorted(missing)} stopped being recorded")
        for _, series in self._series():
            series.clear()
        self._chunks.append((rows, offsets))
        self._spilled += rows

    def _read_chunks(self, only: str | None = None) -> Iterator[tuple[int, int, str, np.ndarray]]:
        """(first step, rows, series name, array) of every chunk in the file, chunk by chunk."""
        if not self._chunks:
            return
        if self._file is None:
            raise OutputError(f"the streamed log was closed: its {self._spilled} steps on disk are gone")
        handle, start, end = self._file, 0, self._file.tell()
        try:
            for rows, offsets in self._chunks:
                for name, offset in offsets.items():
                    if only is None or name == only:
                        handle.seek(offset)
                        yield start, rows, name, np.load(handle, allow_pickle=False)
                start += rows
        finally:
            handle.seek(end)  # appending goes on where it was


def _rows(array: np.ndarray) -> list[Any]:
    """A chunk's picked rows as a series' entries: Python scalars, or one array per step."""
    return array.tolist() if array.ndim == 1 else list(array)
