"""The package graph flows one way: no import cycle between modules or subpackages, and every import
goes down the layers of docs/architecture.md (robot and math, tasks, contacts, problem, formulation,
loop, controllers, scenarios). Each subpackage imports in a fresh interpreter."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "tsid_py"

# The layers, lowest first: a unit (a top-level module or a subpackage) imports only from layers
# below its own, or from its own layer without a cycle.
LAYERS = [
    {"errors"},
    {"validation", "threads", "progress", "outputs", "command", "deprecation"},
    {"sealed"},
    {"constraints", "geometry", "robot_wrapper", "trajectories", "transitions"},
    {"hqp", "robot_specs", "integration", "collision_points", "sole_leveling"},
    {"solvers", "tasks"},
    {"contacts", "planning", "testing"},
    {"problem", "physics", "analysis", "ros_bag"},
    {"formulation"},
    {"loop"},
    {"controllers", "viz", "compat", "spec_check"},
    {"scenarios"},
    {"bench", "sweep", "new_spec", "zoo"},
    {"cli", "__init__"},
]
RANK = {unit: rank for rank, layer in enumerate(LAYERS) for unit in layer}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports() -> dict[str, set[str]]:
    """Module -> the tsid_py modules it imports (anywhere in the file, type-only imports included)."""
    modules = {module_name(p) for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = defaultdict(set)
    for path in PACKAGE.rglob("*.py"):
        source = module_name(path)
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tsid_py"):
                submodules = [f"{node.module}.{a.name}" for a in node.names]
                targets = [m for m in submodules if m in modules] or [node.module]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.startswith("tsid_py")]
            graph[source].update(t for t in targets if t != source)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` as a list of nodes, or None (depth-first search)."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def unit_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for source, targets in imports().items():
        graph[unit(source)].update(
            unit(t) for t in targets if unit(t) != unit(source) and unit(t) != "__init__"
        )
    return graph


@pytest.mark.slow
def test_no_import_cycle_between_modules():
    assert find_cycle(imports()) is None


@pytest.mark.slow
def test_no_import_cycle_between_subpackages():
    assert find_cycle(unit_graph()) is None


@pytest.mark.slow
def test_every_import_goes_down_the_layers():
    graph = unit_graph()
    assert set(graph) | {t for ts in graph.values() for t in ts} <= set(RANK), "a new unit: give it a layer"
    upward = sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets if RANK[b] > RANK[a])
    assert upward == []


def test_the_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()))
def test_each_subpackage_imports_in_a_fresh_interpreter(name):
    result = subprocess.run([sys.executable, "-c", f"import tsid_py.{name}"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
