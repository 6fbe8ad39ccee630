"""Names that moved or were renamed: the old ones resolve for one more release, with a warning.

A module keeps a table of its old names, each with its new home written out
(``"Robot": "tsid_py.robot_specs.SpecRobot"``), and sets ``__getattr__ = moved_names(__name__,
table)``; a renamed module's old file calls :func:`warn_moved_module` and re-exports the new one.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping


def moved_names(module: str, moved: Mapping[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` that resolves each old name of ``moved`` to its new home (the
    dotted path of the object), with a DeprecationWarning naming it; AttributeError for others."""

    def resolve(name: str) -> object:
        home = moved.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(
            f"{module}.{name} is deprecated and will be removed: use {home}", DeprecationWarning, stacklevel=2
        )
        owner, _, attribute = home.rpartition(".")
        return getattr(importlib.import_module(owner), attribute)

    return resolve


def warn_moved_module(old: str, new: str) -> None:
    """Warn that the module ``old`` is deprecated and now is ``new`` (called by ``old``'s file)."""
    warnings.warn(
        f"the module {old} is deprecated and will be removed: use {new}", DeprecationWarning, stacklevel=3
    )
