"""The table of a sweep: one row per run, in point order, as Parquet (with pyarrow) or CSV.

Columns: ``point`` (the index of the point in the sweep), the inputs (the swept parameters, in
the order given), the kept summary fields (in the order they first appear), ``error`` (the
one-line error of a run that raised, else empty) and ``seconds`` (the run's wall time, the one
column that differs between two runs of the same sweep).

A column's type follows its values: booleans, whole numbers (int64), numbers (float64) or text;
a missing value is null (empty in CSV). Floats are written exactly: Parquet keeps the 64 bits and
CSV writes the shortest decimal that reads back to the same float, so two tables of the same
sweep compare bitwise. A Parquet table records its input columns in its metadata
(``tsid_py.sweep.inputs``); a CSV table's inputs are its first columns after ``point``, which a
resumed sweep checks (:func:`~tsid_py.sweep.engine.prepare_table`).

Every write is atomic (:func:`~tsid_py.outputs.atomic_output`): after a crash the table on disk
is the last complete one.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable
from pathlib import Path

from tsid_py.errors import InvalidParameterError
from tsid_py.outputs import atomic_output

RESERVED = ("point", "error", "seconds")
SUFFIXES = (".parquet", ".csv")
METADATA_KEY = b"tsid_py.sweep.inputs"
_WHOLE = re.compile(r"-?\d+")


def has_pyarrow() -> bool:
    """Whether pyarrow (the ``[cluster]`` extra) is importable: Parquet tables need it."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def check_table_path(path: Path, option: str = "--out") -> None:
    """A table is a .parquet file (pyarrow needed) or a .csv file."""
    if path.suffix not in SUFFIXES:
        raise InvalidParameterError(f"{option} must end with .parquet or .csv, got {path.name}")
    if path.suffix == ".parquet" and not has_pyarrow():
        raise InvalidParameterError(
            f"{option} {path.name}: Parquet needs pyarrow (pip install tsid_py[cluster]); or write a .csv"
        )


def columns_of(rows: Iterable[dict[str, object]], inputs: list[str]) -> list[str]:
    """``point``, the inputs, every other field in order of first appearance, ``error``, ``seconds``."""
    names = ["point", *inputs]
    seen = set(names) | {"error", "seconds"}
    for row in rows:
        for name in row:
            if name not in seen:
                seen.add(name)
                names.append(name)
    return [*names, "error", "seconds"]


def _kind(values: list[object]) -> str:
    """ "bool", "int", "float" or "str": the type of a column from its non-null values."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return "bool"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "int" if present else "str"
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return "float"
    return "str"


def _as_text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return repr(value)
    return json.dumps(value)


def write_table(path: Path, rows: list[dict[str, object]], inputs: list[str]) -> None:
    """Write ``rows`` (sorted by point) atomically as Parquet or CSV, by ``path``'s suffix."""
    rows = sorted(rows, key=lambda row: row["point"])
    names = columns_of(rows, inputs)
    columns = {name: [row.get(name) for row in rows] for name in names}
    columns["error"] = [value or "" for value in columns["error"]]
    if path.suffix == ".parquet":
        _write_parquet(path, columns, inputs)
    else:
        _write_csv(path, columns)


def _write_parquet(path: Path, columns: dict[str, list[object]], inputs: list[str]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"bool": pa.bool_(), "int": pa.int64(), "float": pa.float64(), "str": pa.string()}
    arrays = {}
    for name, values in columns.items():
        kind = _kind(values)
        if kind == "float":
            values = [None if v is None else float(v) for v in values]
        elif kind == "str":
            values = [None if v is None else _as_text(v) for v in values]
        arrays[name] = pa.array(values, type=types[kind])
    table = pa.table(arrays).replace_schema_metadata({METADATA_KEY: json.dumps(inputs).encode()})
    with atomic_output(path) as handle:
        pq.write_table(table, handle)


def _write_csv(path: Path, columns: dict[str, list[object]]) -> None:
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(columns)
    kinds = {name: _kind(values) for name, values in columns.items()}
    cells = {name: [_csv_cell(value, kinds[name]) for value in values] for name, values in columns.items()}
    writer.writerows(zip(*cells.values(), strict=True))
    with atomic_output(path, "w") as handle:
        handle.write(text.getvalue())


def _csv_cell(value: object, kind: str) -> str:
    if value is None:
        return ""
    if kind == "bool":
        return "true" if value else "false"
    if kind == "float":
        return repr(float(value))
    return _as_text(value) if kind == "str" else str(value)


def read_table(path: Path) -> tuple[list[dict[str, object]], list[str] | None]:
    """The rows of a table (dicts, in file order) and its recorded input columns (None for CSV)."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
        except Exception as exc:  # pyarrow raises its own types for a file that is not Parquet
            raise InvalidParameterError(f"{path} is not a readable Parquet table: {exc}") from None
        recorded = (table.schema.metadata or {}).get(METADATA_KEY)
        return table.to_pylist(), json.loads(recorded) if recorded else None
    with open(path, newline="", encoding="utf-8") as handle:
        lines = list(csv.reader(handle))
    if not lines:
        raise InvalidParameterError(f"{path} is empty: not a sweep table")
    header, body = lines[0], lines[1:]
    if any(len(line) != len(header) for line in body):
        raise InvalidParameterError(f"{path}: rows of unequal length: not a sweep table")
    columns = {name: _parse_column([line[i] for line in body]) for i, name in enumerate(header)}
    if "error" in columns:
        columns["error"] = [value or "" for value in columns["error"]]
    return [dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)], None


def _parse_column(cells: list[str]) -> list[object]:
    present = [cell for cell in cells if cell != ""]
    if present and all(cell in ("true", "false") for cell in present):
        return [None if cell == "" else cell == "true" for cell in cells]
    if present and all(_WHOLE.fullmatch(cell) for cell in present):
        return [None if cell == "" else int(cell) for cell in cells]
    try:
        numbers = [None if cell == "" else float(cell) for cell in cells]
    except ValueError:
        return [cell if cell != "" else None for cell in cells]
    return numbers if present else [None] * len(cells)
