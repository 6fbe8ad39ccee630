"""How a compat object translates TSID's names onto its tsid_py object.

Each compat class wraps one main-API object (``self._inner``) and lists in ``_names`` the TSID
names it answers that do not need code of their own, each mapped onto the tsid_py name:

- ``"kp"``: forward. A TSID property reads a tsid_py property; a TSID method is the tsid_py
  method itself (``getAcceleration(dv)`` is ``get_acceleration(dv)``).
- ``Set("kp")``: TSID's setter method assigns a tsid_py attribute (``setKp(k)``: ``task.kp = k``).
- ``Call("is_equality")``: TSID's property is a tsid_py method without arguments.
- ``Getter("reference")``: TSID's getter method reads a tsid_py property (``getReference()``).

Everything else is an explicit method of the compat class. No compat object has a public
attribute that can be assigned (TSID's bindings have none): ``task.Kp = 100`` raises
:class:`~tsid_py.errors.UnknownAttributeError`, naming the setter.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, ClassVar

from tsid_py.errors import UnknownAttributeError
from tsid_py.sealed import Sealed
from tsid_py.validation import unknown_name_message


class TsidDeprecationWarning(DeprecationWarning, UserWarning):
    """A TSID name TSID itself deprecates (``sample.pos()``, ...): a DeprecationWarning, and a
    UserWarning as TSID's tests/python/test_Deprecations.py expects."""


def deprecated(old: str, new: str) -> None:
    """Warn that the TSID spelling ``old`` is deprecated in favour of ``new`` (in the caller's caller)."""
    warnings.warn(f"{old} is deprecated in TSID: use {new}", TsidDeprecationWarning, stacklevel=3)


class Set:
    """TSID's ``setX(value)`` assigns the tsid_py attribute ``attribute``."""

    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    def resolve(self, inner: object) -> Any:
        return lambda value: setattr(inner, self.attribute, value)

    def __repr__(self) -> str:
        return f"{self.attribute} = value"


class Call:
    """TSID's property is the tsid_py method ``method()``, called without arguments."""

    def __init__(self, method: str) -> None:
        self.method = method

    def resolve(self, inner: object) -> Any:
        return getattr(inner, self.method)()

    def __repr__(self) -> str:
        return f"{self.method}()"


class Getter:
    """TSID's getter method ``getX()`` reads the tsid_py property ``attribute``."""

    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    def resolve(self, inner: object) -> Any:
        return lambda: getattr(inner, self.attribute)

    def __repr__(self) -> str:
        return self.attribute


class Wrapper(Sealed):
    """A TSID object over a tsid_py one (``_inner``); see the module docstring."""

    _names: ClassVar[Mapping[str, Any]] = {}  # TSID name -> a tsid_py name (str), Set, Call or Getter
    _inner: Any

    @classmethod
    def _wrap(cls, inner: object) -> Any:
        """A compat object over an existing tsid_py object."""
        wrapper = cls.__new__(cls)
        wrapper._inner = inner
        return wrapper

    @classmethod
    def tsid_names(cls) -> set[str]:
        """The TSID names this class answers."""
        own = {n for n in dir(cls) if not n.startswith("_") and n != "tsid_names"}
        return own | set(cls._names)

    def __getattr__(self, name: str) -> Any:  # only for names the class does not define
        if name.startswith("_"):
            raise AttributeError(name)
        target = type(self)._names.get(name)
        if target is None:
            raise UnknownAttributeError(
                unknown_name_message(f"TSID attribute of {type(self).__name__}", name, self.tsid_names())
            )
        inner = self._inner
        return getattr(inner, target) if isinstance(target, str) else target.resolve(inner)

    def __setattr__(self, name: str, value: object) -> None:
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        cls, names = type(self).__name__, self.tsid_names()
        setter = f"set{name[:1].upper()}{name[1:]}"
        if name in names and setter in names:
            main = type(self)._names.get(setter)
            hint = f" (tsid_py: {main})" if isinstance(main, Set) else ""
            raise UnknownAttributeError(
                f"{cls}.{name} cannot be assigned: TSID's {name} is read-only, set it with "
                f"{setter}(value){hint}"
            )
        if name in names:
            raise UnknownAttributeError(f"{cls}.{name} cannot be assigned: it is read-only in TSID")
        raise UnknownAttributeError(unknown_name_message(f"TSID attribute of {cls}", name, names))

    def __repr__(self) -> str:
        return f"<tsid_py.compat.{type(self).__name__} over {self._inner!r}>"


def inner(obj: object) -> Any:
    """The tsid_py object of a compat object (or ``obj`` itself, already a tsid_py one)."""
    return obj._inner if isinstance(obj, Wrapper) else obj
