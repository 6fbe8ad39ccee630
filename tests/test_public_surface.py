"""The package's public surface: what ``import tsid_py`` offers, sorted, the exceptions in
``tsid_py.errors`` and their old top-level names still resolving with a warning."""

from __future__ import annotations

import inspect
import warnings

import pytest

import tsid_py
from tsid_py import errors


def test_all_is_sorted_and_every_name_resolves():
    names = [name for name in tsid_py.__all__ if name != "__version__"]
    assert names == sorted(names)
    assert len(set(tsid_py.__all__)) == len(tsid_py.__all__)
    for name in tsid_py.__all__:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a name of __all__ is not deprecated
            getattr(tsid_py, name)


def test_exceptions_live_in_errors_with_their_root_at_the_top():
    exported = [name for name in tsid_py.__all__ if name.endswith("Error")]
    assert exported == ["TsidError"]
    assert tsid_py.TsidError is errors.TsidError
    subclasses = {
        name
        for name, value in vars(errors).items()
        if inspect.isclass(value) and issubclass(value, errors.TsidError) and value is not errors.TsidError
    }
    assert set(tsid_py._MOVED_TO_ERRORS) <= subclasses  # the old top-level names, all still there


@pytest.mark.parametrize("name", sorted(tsid_py._MOVED_TO_ERRORS))
def test_an_old_top_level_exception_name_warns_and_is_the_same_class(name):
    with pytest.warns(DeprecationWarning, match=f"tsid_py.errors.{name}"):
        value = getattr(tsid_py, name)
    assert value is getattr(errors, name)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        tsid_py.Nope  # noqa: B018
