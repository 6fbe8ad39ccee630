"""No exact comparison of computed floats in the tests, unless a comment says why (issue 33).

A computed float depends on the CPU's rounding (FMA, vector widths, BLAS kernels): a test that
compares one with ``==`` passes on one machine and fails on another. Tests compare computed floats
with a tolerance (``np.testing.assert_allclose``, ``pytest.approx``); exactness is checked only
where it is the property (a copy, a value assigned and read back, zeros written by the code, the
same computation run twice), and such a line carries ``# exact: <why>``.

This test parses every ``tests/*.py`` and flags, on lines without that comment:

- ``array_equal``, ``array_equiv`` and ``assert_array_equal`` (however NumPy is imported), and
  ``np.testing.assert_equal``;
- ``==`` and ``!=`` with a side that is a float literal (``x == 0.0``, ``x != -1.5``, also within
  arithmetic: ``t == 1.0 + k * dt``), a list or tuple holding one (``v == [0.0, 1.0]``), or a
  NumPy call that makes an array (``a == np.zeros(3)``).

It cannot see types, so ``a == b`` of two computed arrays goes unflagged: the audit of issue 33
covered those; this check keeps the literal forms from coming back.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
MARKER = "# exact:"
ARRAY_EQUALITY = {"array_equal", "array_equiv", "assert_array_equal", "assert_equal"}
# NumPy calls whose results are shapes, indices or booleans: comparing them exactly is fine
NOT_FLOATS = {
    "shape",
    "ndim",
    "size",
    "flatnonzero",
    "nonzero",
    "argmax",
    "argmin",
    "argsort",
    "count_nonzero",
    "isnan",
    "isinf",
    "isfinite",
    "result_type",
}


def _numpy_name(node: ast.expr) -> str | None:
    """``zeros`` for ``np.zeros`` (or ``numpy.testing.assert_equal`` ...): the last name of an
    attribute chain rooted at ``np`` or ``numpy``; None otherwise."""
    if not isinstance(node, ast.Attribute):
        return None
    root = node.value
    while isinstance(root, ast.Attribute):
        root = root.value
    return node.attr if isinstance(root, ast.Name) and root.id in ("np", "numpy") else None


def _float_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd | ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, float)


def _float_side(node: ast.expr) -> bool:
    """A float literal, arithmetic with one, a list or tuple holding one, or a NumPy array call."""
    if _float_literal(node):
        return True
    if isinstance(node, ast.BinOp):
        return _float_side(node.left) or _float_side(node.right)
    if isinstance(node, ast.List | ast.Tuple):
        return any(_float_literal(element) for element in node.elts)
    if isinstance(node, ast.Call):
        name = _numpy_name(node.func)
        return name is not None and name not in NOT_FLOATS
    return False


def _approx(node: ast.expr) -> bool:
    """``pytest.approx(...)`` or ``approx(...)``."""
    func = node.func if isinstance(node, ast.Call) else None
    return (isinstance(func, ast.Attribute) and func.attr == "approx") or (
        isinstance(func, ast.Name) and func.id == "approx"
    )


def _exact_comparisons(tree: ast.AST) -> list[ast.expr]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in ARRAY_EQUALITY and (name != "assert_equal" or _numpy_name(func)):
                found.append(node)
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_approx(side) for side in sides):
                continue  # a tolerance
            for op, left, right in zip(node.ops, sides[:-1], sides[1:], strict=True):
                if isinstance(op, ast.Eq | ast.NotEq) and (_float_side(left) or _float_side(right)):
                    found.append(node)
                    break
    return found


def _reasons(source: str) -> set[int]:
    """The lines with a ``# exact: <why>`` comment (a reason given)."""
    lines = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            text = token.string
            start = text.find(MARKER)
            if start >= 0 and text[start + len(MARKER) :].strip():
                lines.add(token.start[0])
    return lines


def offending(source: str) -> list[tuple[int, str]]:
    """(line, code) of each exact comparison of floats with no ``# exact:`` reason on its lines."""
    reasons = _reasons(source)
    lines = source.splitlines()
    out = set()
    for node in _exact_comparisons(ast.parse(source)):
        end = node.end_lineno or node.lineno
        if not reasons.intersection(range(node.lineno, end + 1)):
            out.add((node.lineno, lines[node.lineno - 1].strip()))
    return sorted(out)


@pytest.mark.slow
def test_no_unexplained_exact_float_comparison_in_the_tests():
    problems = [
        f"tests/{path.name}:{line}: {code}"
        for path in sorted(TESTS.glob("*.py"))
        for line, code in offending(path.read_text(encoding="utf-8"))
    ]
    if problems:
        pytest.fail(
            "exact comparisons of floats: compare computed values with a tolerance "
            "(np.testing.assert_allclose, pytest.approx), or, where exactness is the property, "
            "end the line with '# exact: <why>':\n" + "\n".join(problems),
            pytrace=False,
        )


def test_the_check_flags_literal_forms_and_accepts_a_reason():
    source = """
assert np.all(w[3:] == 0.0)
assert x != -1.5
np.testing.assert_array_equal(a, b)
assert npt.assert_array_equal(a, b) or array_equal(a, b)
assert a == np.zeros(3)
assert v == [0.0, 1.0]
assert t == 1.0 + k * dt
assert n == 3 and name == "x" and a.shape == np.shape(b) and flags == [True, False]
assert np.array_equal(a, b)  # exact: a copy
assert t == (
    1.0 + k * dt  # exact: the plant's own formula
)
assert a == pytest.approx(0.1) and b != 2 and np.linalg.norm(a) == pytest.approx(1.0)
np.testing.assert_allclose(a, b, atol=1e-12)
assert x == 0.0  # exact:
self.assert_equal(a, b)
"""
    assert [line for line, _ in offending(source)] == [2, 3, 4, 5, 6, 7, 8, 16]
