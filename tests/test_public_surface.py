"""The package's public surface: what ``import tsid_py`` offers (at most 40 names, sorted), the
names it exported up to 0.2.0 and the renamed ones still resolving with a warning, and no two
public classes of one name in the package (but ``tsid_py.compat``'s, see below)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
import warnings
from collections import defaultdict

import pytest

import tsid_py
from tsid_py import errors

# Old name -> its new home, in the modules that keep a table of moved or renamed names.
RENAMED = {
    "tsid_py.robot_specs": {"Robot": "tsid_py.robot_specs.SpecRobot"},
    "tsid_py.sweep": {"Task": "tsid_py.sweep.job.JobRunner"},
}
DEPRECATED = sorted(
    [(f"tsid_py.{name}", home) for name, home in tsid_py._MOVED.items()]
    + [(f"{module}.{name}", home) for module, table in RENAMED.items() for name, home in table.items()]
)
# tsid_py.compat mirrors the C++ TSID's class names by contract (the drop-in for ``import tsid``):
# its classes share their names with the native ones they translate onto, and only its.
SAME_NAMES_ALLOWED = "tsid_py.compat"


def resolve(path: str) -> object:
    """The object at a dotted path (a module, then attributes)."""
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_all_is_short_sorted_and_every_name_resolves():
    assert len(tsid_py.__all__) <= 40  # __version__ counted
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
    moved = {name for name, home in tsid_py._MOVED.items() if home.startswith("tsid_py.errors.")}
    assert moved <= subclasses  # the old top-level names, all still there


def test_a_moved_name_is_no_longer_exported_and_its_home_is_not_deprecated():
    for name, home in tsid_py._MOVED.items():
        assert name not in tsid_py.__all__ and name not in vars(tsid_py)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            resolve(home)


@pytest.mark.parametrize(("old", "home"), DEPRECATED, ids=[old for old, _ in DEPRECATED])
def test_a_deprecated_name_warns_naming_its_home_and_is_the_same_object(old, home):
    with pytest.warns(DeprecationWarning, match=f"{old} is deprecated.*use {home}$"):
        value = resolve(old)
    assert value is resolve(home)


def test_from_import_of_a_deprecated_name_warns():
    with pytest.warns(DeprecationWarning, match="tsid_py.threads.limit_blas_threads"):
        from tsid_py import limit_blas_threads  # noqa: F401


@pytest.mark.parametrize(
    ("old", "new", "names"),
    [
        ("tsid_py.sweep.scenario", "tsid_py.sweep.scenario_jobs", ["ScenarioJob", "check_keywords"]),
        ("tsid_py.sweep.task", "tsid_py.sweep.job", ["Outcome", "select"]),
    ],
)
def test_a_renamed_module_warns_on_import_and_gives_the_new_ones_objects(old, new, names, monkeypatch):
    monkeypatch.delitem(sys.modules, old, raising=False)  # imported afresh: it warns when it runs
    with pytest.warns(DeprecationWarning, match=f"the module {old} is deprecated.*use {new}$"):
        module = importlib.import_module(old)
    for name in names:
        assert getattr(module, name) is getattr(importlib.import_module(new), name)
    if old == "tsid_py.sweep.task":
        assert module.Task is resolve("tsid_py.sweep.job.JobRunner")


@pytest.mark.parametrize("module", ["tsid_py", "tsid_py.robot_specs", "tsid_py.sweep"])
def test_an_unknown_name_is_an_attribute_error(module):
    with pytest.raises(AttributeError, match=f"module '{module}' has no attribute 'Nope'"):
        importlib.import_module(module).Nope  # noqa: B018


def public_classes() -> dict[str, list[str]]:
    """Each public class name -> the modules of tsid_py that define a class of that name (those of
    an optional extra that is not installed left out, and the deprecated module paths)."""
    defined: dict[str, list[str]] = defaultdict(list)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the renamed modules' old paths
        for info in pkgutil.walk_packages(tsid_py.__path__, "tsid_py."):
            try:
                module = importlib.import_module(info.name)
            except ImportError:  # an optional extra (ray, mujoco, meshcat, ...) not installed
                continue
            for name, value in vars(module).items():
                own = inspect.isclass(value) and value.__module__ == module.__name__
                if own and not name.startswith("_"):
                    defined[name].append(module.__name__)
    return defined


def test_no_two_public_classes_share_a_name_but_compat_mirroring_tsid():
    defined = public_classes()
    assert len(defined) > 100  # the walk found the package
    shared = {
        name: modules
        for name, modules in defined.items()
        if len([m for m in modules if not m.startswith(SAME_NAMES_ALLOWED)]) > 1
    }
    assert shared == {}
    assert set(defined["TaskComEquality"]) == {  # compat's class, named as TSID's
        "tsid_py.compat.tasks",
        "tsid_py.tasks.task_com_equality",
    }
