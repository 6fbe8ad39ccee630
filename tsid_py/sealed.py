"""Objects whose public attributes are fixed once built: a misspelt name is an error, not a new attribute.

A TSID user writes ``task.Kp = 100``; on a plain Python object that creates an attribute nobody
reads, and the gain stays what it was. A :class:`Sealed` object refuses it, naming the closest
attribute it has (``did you mean 'kp'?``). Names starting with ``_`` are the object's own; the
values a task keeps from one control step to the next live in a slotted dataclass
(``self._state``), so the step itself pays nothing for the check.

The library seals its own classes only. A user's subclass (a class defined outside ``tsid_py``)
may add attributes of its own at any time (``self.target = ...`` in a ``set_target`` method);
it is refused only a name that differs from one of the class's public names by case or
underscores alone (``Kp`` for ``kp``), the typo sealing is there to catch.

The same hook tells who keeps something made from an object that the object changed. A
formulation's problem is made from its tasks and contacts, a physics checker keeps matrices made
from contacts: they :func:`watch` them, and a change calls their ``revise()``. What is a change
is the watched class's :meth:`Sealed._set_watched`: by default a public attribute set (but a
property's, whose setter sets what it changes); for a task, its number of rows (``TaskBase``);
for a contact, any attribute set on it, its own too (``ContactBase``). So a parameter of one's
own needs nothing more than to be an attribute.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any

from tsid_py.errors import UnknownAttributeError
from tsid_py.validation import unknown_name_message


class Sealed:
    """Public attributes: those the class defines and those set while the object is built.

    The instance dictionary is never touched (CPython keeps the attributes of such objects inline,
    and reads them faster): the names set while building are kept in ``_public``.
    """

    _building = 0
    _public: frozenset[str] | set[str] = frozenset()
    _open = False  # a user's subclass: new attributes allowed (see the module docstring)
    _watchers: tuple[weakref.ref[Any], ...] = ()  # who keeps something made from this object (see watch)

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls._open = cls._open or not (cls.__module__ == "tsid_py" or cls.__module__.startswith("tsid_py."))
        init = cls.__dict__.get("__init__")
        if init is None:
            return

        @functools.wraps(init)
        def building(self: Sealed, *args: object, **kw: object) -> None:
            if not self._building and not self._public:
                object.__setattr__(self, "_public", set())
            object.__setattr__(self, "_building", self._building + 1)
            try:
                init(self, *args, **kw)
            finally:
                object.__setattr__(self, "_building", self._building - 1)

        cls.__init__ = building  # type: ignore[method-assign,assignment]

    def __setattr__(self, name: str, value: object) -> None:
        if name[0] != "_":
            if name not in self._public:
                if self._building:
                    self._public.add(name)  # type: ignore[union-attr]
                elif not hasattr(type(self), name):
                    if not self._open or self._lookalike(name):
                        raise UnknownAttributeError(self._unknown(name))
                    if isinstance(self._public, frozenset):
                        object.__setattr__(self, "_public", set())
                    self._public.add(name)  # type: ignore[union-attr]  # a user's own: checked once
            if self._watchers:
                self._set_watched(name, value)
                return
        object.__setattr__(self, name, value)

    def _set_watched(self, name: str, value: object) -> None:
        """Set public attribute ``name`` of a watched object, and tell its watchers, unless it is a
        property or another data descriptor (a ``Gain``): its setter's own sets tell, if they change
        what the watchers made (a contact's ``kp`` sets its motion task's gains, which a problem
        reads at every step)."""
        object.__setattr__(self, name, value)
        if not hasattr(type(getattr(type(self), name, None)), "__set__"):
            self._tell()

    def _tell(self) -> None:
        """Tell the watchers that this object changed (their ``revise()``)."""
        for ref in self._watchers:
            watcher = ref()
            if watcher is not None:
                watcher.revise()

    def _public_names(self) -> set[str]:
        return {n for n in dir(type(self)) if not n.startswith("_")} | set(self._public)

    def _lookalike(self, name: str) -> bool:
        """Whether ``name`` is one of the public names but for case and underscores."""
        key = name.lower().replace("_", "")
        return any(key == n.lower().replace("_", "") for n in self._public_names())

    def _unknown(self, name: str) -> str:
        return unknown_name_message(f"attribute of {type(self).__name__}", name, sorted(self._public_names()))


def watch(watched: Sealed, watcher: Any) -> None:
    """Call ``watcher.revise()`` whenever ``watched`` changes, while both live (it is held weakly)."""
    unwatch(watched, watcher)
    object.__setattr__(watched, "_watchers", (*watched._watchers, weakref.ref(watcher)))


def unwatch(watched: Sealed, watcher: Any) -> None:
    """Stop telling ``watcher`` of the changes of ``watched`` (the watchers gone go too)."""
    kept = tuple(ref for ref in watched._watchers if ref() not in (None, watcher))
    object.__setattr__(watched, "_watchers", kept)
