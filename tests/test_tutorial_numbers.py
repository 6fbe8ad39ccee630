"""The numbers the documentation quotes from a run are that run's: each is checked against it.

A page names the run its numbers come from with ``<!-- numbers: ARGS -->`` (the arguments of
``tsid-py``; ``--json`` is added), and follows each number it quotes with what it is, as an
expression over the run's JSON summary, in an HTML comment a reader does not see:

- ``6.5<!-- = com_error_max_m * 1e6 -->``: the value, to one unit of the last digit written;
- ``1e-14<!-- > dynamics_residual_max -->``: a bound the value is below (``<``: above);
- ``no QP failure<!-- check: qp_failures == 0 -->``: a fact about the run.

A paragraph's run holds until the next ``numbers`` comment or the end of the paragraph. The
annotations are parsed on every test run; the runs themselves are slow (a minute in all).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RUN = re.compile(r"<!-- numbers: (.+?) -->")
QUOTED = re.compile(r"(\d+(?:\.\d+)?(?:e[-+]?\d+)?)<!-- ([=<>]) (.+?) -->")
CHECK = re.compile(r"<!-- check: (.+?) -->")
MARK = re.compile("|".join(f"(?:{p.pattern})" for p in (RUN, QUOTED, CHECK)))


@dataclass(frozen=True)
class Quote:
    """One number (or fact) a page quotes from a run."""

    page: str
    args: str  # the run: tsid-py's arguments
    text: str  # as written, e.g. "6.5"
    op: str  # "=", "<", ">" or "check"
    expression: str

    def holds(self, summary: dict[str, object]) -> tuple[bool, object]:
        """Whether the run's summary says what the page says, and the value it gives."""
        value = eval(self.expression, {"__builtins__": {}}, dict(summary))  # noqa: S307  # the docs' own
        if self.op == "check":
            return bool(value), value
        quoted = float(self.text)
        if self.op == ">":
            return float(value) < quoted, value
        if self.op == "<":
            return float(value) > quoted, value
        return abs(float(value) - quoted) <= _last_digit(self.text) * (1 + 1e-9), value


def _last_digit(text: str) -> float:
    """One unit of the last digit written: 0.1 for "6.5", 1 for "435", 1e-14 for "1e-14"."""
    mantissa, _, exponent = text.partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)


def quotes() -> list[Quote]:
    """Every annotated number of the documentation, in page order."""
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        for paragraph in page.read_text().split("\n\n"):
            args = None
            for mark in MARK.finditer(paragraph):
                run, quoted, check = RUN.fullmatch(mark.group()), QUOTED.fullmatch(mark.group()), None
                if run:
                    args = run.group(1)
                    continue
                check = CHECK.fullmatch(mark.group())
                where = f"{page.relative_to(ROOT)}: {mark.group()!r}"
                assert args is not None, f"{where} follows no <!-- numbers: ... --> in its paragraph"
                if quoted:
                    found.append(Quote(str(page.relative_to(ROOT)), args, *quoted.groups()))
                elif check:
                    found.append(Quote(str(page.relative_to(ROOT)), args, "", "check", check.group(1)))
    return found


def test_the_annotations_parse_and_every_measured_paragraph_of_a_tutorial_has_them():
    every = quotes()
    assert len(every) >= 30
    for quote in every:
        compile(quote.expression, quote.page, "eval")
    for page in sorted((DOCS / "tutorials").glob("*.md")):
        for paragraph in page.read_text().split("\n\n"):
            if paragraph.startswith("Measured (`tsid-py"):
                assert RUN.search(paragraph), (
                    f"{page.name}: a measured paragraph names no run: {paragraph[:60]}"
                )


def test_the_last_digit_is_one_unit_of_what_is_written():
    assert _last_digit("6.5") == pytest.approx(0.1)
    assert _last_digit("435") == 1.0  # exact: 10 ** 0
    assert _last_digit("0.09999") == pytest.approx(1e-5)
    assert _last_digit("1e-14") == pytest.approx(1e-14)


def test_a_wrong_number_does_not_hold():
    """The check can fail: 24 % against a ratio of 0.17, a bound the value exceeds, a false fact."""
    summary = {"max_torque_ratio": 0.17, "dynamics_residual_max": 2e-13, "qp_failures": 1}
    assert not Quote("p", "balance", "24", "=", "max_torque_ratio * 100").holds(summary)[0]
    assert Quote("p", "balance", "17", "=", "max_torque_ratio * 100").holds(summary)[0]
    assert not Quote("p", "balance", "1e-14", ">", "dynamics_residual_max").holds(summary)[0]
    assert not Quote("p", "balance", "", "check", "qp_failures == 0").holds(summary)[0]


@cache
def summary_of(args: str) -> dict[str, object]:
    """The JSON summary of ``tsid-py ARGS --json``."""
    command = [sys.executable, "-m", "tsid_py.cli", *args.split(), "--json"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"tsid-py {args}: {done.stderr[-2000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("args", sorted({q.args for q in quotes()}))
def test_the_numbers_a_page_quotes_are_the_runs(args):
    summary = summary_of(args)
    wrong = []
    for quote in (q for q in quotes() if q.args == args):
        holds, value = quote.holds(summary)
        if not holds:
            said = f"{quote.text or quote.expression} ({quote.op} {quote.expression})"
            wrong.append(f"{quote.page}: {said}, the run gives {value!r}")
    assert not wrong, "\n".join(wrong)
