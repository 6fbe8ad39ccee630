"""Progress bars on long loops, shown only when stderr is a terminal (never in logs or pipes)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

Item = TypeVar("Item")


def progress_bar(iterable: Iterable[Item], enabled: bool, label: str, unit: str = "step") -> Iterator[Item]:
    """``iterable`` wrapped in a tqdm bar on stderr when ``enabled`` and stderr is a terminal."""
    if not enabled or not sys.stderr.isatty():
        return iter(iterable)
    from tqdm import tqdm

    return iter(tqdm(iterable, desc=label, unit=unit, leave=False, delay=1.0))  # only on runs longer than 1 s
