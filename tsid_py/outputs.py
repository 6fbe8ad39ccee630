"""Files the library writes: checked before the work starts, and then written whole or not at all.

A command checks its outputs first (:func:`check_output_file`, :func:`check_output_dir`): a file
that exists is not overwritten without ``force``, and a place that cannot be written is named
before minutes of work are spent. The directory an output goes into is made if its parent exists,
never a chain of missing directories (``/nonexistent/dir/x.html`` is a typo to refuse).
Each file is then written through :func:`atomic_output`: the bytes go to a file without a name
in the same directory (Linux ``O_TMPFILE``; elsewhere a hidden temporary file), which gets its
final name only once complete. After a failure, a signal or even ``SIGKILL``, an output is
complete or absent.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from tsid_py.errors import OutputError

FILE_SUFFIXES = (".png", ".svg", ".pdf", ".jpg", ".jpeg")  # a directory output named like a picture


def check_output_file(path: str | Path, force: bool = False, option: str = "output") -> Path:
    """``path`` as a Path, if a file can be written there: not a directory, not an existing file
    unless ``force``, in a writable directory that exists or can be made in one that exists."""
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"{option} {path}: is a directory")
    if path.exists() and not force:
        raise OutputError(f"{option} {path}: the file exists (--force overwrites it)")
    _check_writable(path.parent, option, path)
    return path


def check_output_dir(
    path: str | Path,
    names: Iterable[str],
    force: bool = False,
    option: str = "output",
    contents: str = "files",
) -> Path:
    """``path`` as a Path, if the files ``names`` (its ``contents``, e.g. "figures") can be written
    into it: a directory, or one to make in a directory that exists; not named like a picture
    (``plot.png``: a file name where a directory is asked for); see :func:`check_output_file`."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OutputError(f"{option} {path}: not a directory")
    if path.suffix.lower() in FILE_SUFFIXES and not path.is_dir():
        raise OutputError(
            f"{option} {path}: {option} is a directory for the {contents}, not a {path.suffix} file "
            f"(e.g. {option} {path.with_suffix('')})"
        )
    existing = sorted(name for name in names if (path / name).exists())
    if existing and not force:
        raise OutputError(f"{option} {path}: {', '.join(existing)} exist(s) (--force overwrites)")
    _check_writable(path, option, path)
    return path


def _check_writable(directory: Path, option: str, path: Path) -> None:
    """``directory`` is writable, or can be made in its parent, which exists and is writable (one
    missing level, as ``mkdir`` makes it, never a chain: that is a typo in a path)."""
    existing = directory if directory.exists() else directory.parent
    if not existing.exists():
        raise OutputError(
            f"{option} {path}: cannot make its directory {directory}: {existing} does not exist"
        )
    if not existing.is_dir():
        raise OutputError(f"{option} {path}: {existing} is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise OutputError(f"{option} {path}: cannot write into {existing}")


@contextlib.contextmanager
def atomic_output(path: str | Path, mode: str = "wb") -> Iterator[IO]:
    """A file object whose content appears at ``path`` only when the block ends without error.

    ``mode`` is "wb" or "w" (UTF-8 text). The parent directories are made. An existing file at
    ``path`` is replaced in one step (``os.replace``).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, named = _unnamed_file(path)
    try:
        with os.fdopen(fd, mode, encoding="utf-8" if "b" not in mode else None) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
            if named is None:  # give the unnamed file a hidden name, then the final one
                named = _hidden_name(path)
                _link_unnamed(handle.fileno(), Path(named))
        os.chmod(named, 0o644)
        os.replace(named, path)
        named = None
    finally:
        if named is not None:
            with contextlib.suppress(OSError):
                os.unlink(named)


class PendingOutput:
    """A file that another library writes by name (rerun's ``.rrd`` sink), complete or absent at
    ``path`` as with :func:`atomic_output`: the writer writes to :attr:`target` (the unnamed
    file's ``/proc/self/fd`` path, else a hidden temporary one), :meth:`commit` gives it its
    final name, :meth:`discard` drops it. The parent directories are made."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd: int | None
        self._fd, self._named = _unnamed_file(self.path)
        self.target = f"/proc/self/fd/{self._fd}" if self._named is None else self._named

    def commit(self) -> Path:
        """Give the written file its name (once the writer has closed it); the path."""
        if self._fd is None:
            raise OutputError(f"{self.path}: already committed or discarded")
        fd, self._fd = self._fd, None
        try:
            os.fsync(fd)
            if self._named is None:
                self._named = _hidden_name(self.path)
                _link_unnamed(fd, Path(self._named))
        finally:
            os.close(fd)
        os.chmod(self._named, 0o644)
        os.replace(self._named, self.path)
        self._named = None
        return self.path

    def discard(self) -> None:
        """Drop what was written (nothing appears at the path); a no-op once committed."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._named is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._named)
            self._named = None


def _unnamed_file(path: Path) -> tuple[int, str | None]:
    """An open file in ``path``'s directory: unnamed where the system allows (then None), else a
    hidden temporary one and its name."""
    flag = getattr(os, "O_TMPFILE", 0)
    if flag and os.path.isdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            return os.open(path.parent, flag | os.O_WRONLY, 0o600), None
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    return fd, name


def _link_unnamed(fd: int, name: Path) -> None:
    """Give the unnamed file open as ``fd`` the name ``name`` (``linkat`` following the
    ``/proc/self/fd`` link, which Python does only when given a directory descriptor)."""
    directory = os.open(name.parent, os.O_RDONLY)
    try:
        os.link(f"/proc/self/fd/{fd}", name.name, dst_dir_fd=directory, follow_symlinks=True)
    finally:
        os.close(directory)


def _hidden_name(path: Path) -> str:
    return str(path.with_name(f".{path.name}.{os.getpid()}.part"))
