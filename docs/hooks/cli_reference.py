"""mkdocs hook: pages made at build time, so that they cannot go stale.

- ``cli.md``: the marker ``<!-- cli-reference -->`` becomes the ``--help`` of ``tsid-py`` and of
  every one of its commands, read from the parsers themselves, and each scenario's table of
  parameters, read from its dataclass (:func:`cli_reference`).
- Docstrings write units in brackets ("a force outside [f_min, f_max] [N]"), which Markdown
  reads as a reference link to "N": such unit-named targets are not broken links
  (:class:`UnitsAreNotLinks`); every other unresolved reference still fails the strict build.
- Pages that other parts of the project bring when they are there (``OPTIONAL_PAGES``: the sweeps
  guide, the TSID course) join the nav; the API reference of an optional package
  (``OPTIONAL_REFERENCES``) is generated when the package exists.

tests/test_docs.py imports this module to check the reference covers every command.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
from pathlib import Path

MARKER = "<!-- cli-reference -->"
HELP_COLUMNS = "100"  # argparse wraps its help to the terminal's width: fix it for the page
DOCS = Path(__file__).resolve().parents[1]

# (nav section, title, page): added to the section when docs/PAGE exists
OPTIONAL_PAGES = (
    ("Tutorials", "The TSID course", "course.md"),
    ("Concepts", "The catalogue", "catalogue.md"),
    ("Guides", "Sweeps", "sweeps.md"),
)
# (title, page, module): reference/PAGE generated as ``::: MODULE`` when the package exists
OPTIONAL_REFERENCES = (("Sweeps", "reference/sweep.md", "tsid_py.sweep"),)


UNIT = re.compile(
    r"Could not find cross-reference target '(N|m|s|rad|kg|Hz|us|N m|m/s|rad/s|m/s\^2|1/s|1/s\^2)'"
)


class UnitsAreNotLinks(logging.Filter):
    """Drop autorefs' warning about a "reference" that is a unit in brackets."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not UNIT.search(record.getMessage())


for _name in ("mkdocs.plugins.mkdocs_autorefs._internal.plugin", "mkdocs.plugins.mkdocs_autorefs"):
    logging.getLogger(_name).addFilter(UnitsAreNotLinks())


def command_help(argv: list[str]) -> str:
    """What ``tsid-py ARGV`` prints (``--help`` of a command), and its exit status checked."""
    from tsid_py.cli import main

    out = io.StringIO()
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS
    try:
        with contextlib.redirect_stdout(out):
            try:
                status = main(argv)
            except SystemExit as stop:  # argparse's --help exits 0
                status = stop.code if isinstance(stop.code, int) else 0
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous
    if status:
        raise RuntimeError(f"tsid-py {' '.join(argv)} exited with {status}")
    return out.getvalue().rstrip()


def commands() -> list[str]:
    """The names of tsid-py's commands, in the order ``tsid-py --help`` lists them."""
    from tsid_py.cli import COMMANDS

    return list(COMMANDS)


def cli_reference() -> str:
    """Markdown: ``tsid-py --help``, then one section per command with its ``--help`` and, for a
    scenario, the table of its parameters (from its dataclass, as the options are)."""
    from tsid_py.scenarios import SCENARIOS

    parts = ["## tsid-py", "", "```text", command_help(["--help"]), "```", ""]
    for name in commands():
        parts += [f"## tsid-py {name}", "", "```text", command_help([name, "--help"]), "```", ""]
        if name in SCENARIOS:
            module = SCENARIOS[name].__name__
            parts += [
                f"Its parameters: the keywords of `{module}.run(...)`; those with an option are also "
                "what a sweep varies, with `plant`, `mode` and `check_every`:",
                "",
                SCENARIOS[name].SCENARIO.reference(),
                "",
            ]
    return "\n".join(parts)


def _section(nav: list, title: str) -> list | None:
    for entry in nav:
        if isinstance(entry, dict) and title in entry and isinstance(entry[title], list):
            return entry[title]
    return None


def _pages(nav: object) -> set[str]:
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, list):
        return set().union(*(_pages(entry) for entry in nav)) if nav else set()
    if isinstance(nav, dict):
        return set().union(*(_pages(value) for value in nav.values()))
    return set()


def _package_exists(module: str) -> bool:
    return (DOCS.parent / Path(*module.split("."))).joinpath("__init__.py").is_file()


def on_config(config):
    nav = config["nav"]
    present = _pages(nav)
    for section, title, page in OPTIONAL_PAGES:
        entries = _section(nav, section)
        if entries is not None and page not in present and (DOCS / page).is_file():
            entries.append({title: page})
    reference = _section(nav, "API reference")
    for title, page, module in OPTIONAL_REFERENCES:
        if reference is not None and page not in present and _package_exists(module):
            reference.append({title: page})
    return config


def on_files(files, config):
    from mkdocs.structure.files import File

    for _, page, module in OPTIONAL_REFERENCES:
        if _package_exists(module) and files.get_file_from_path(page) is None:
            files.append(File.generated(config, page, content=f"# {module}\n\n::: {module}\n"))
    return files


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri == "cli.md":
        if MARKER not in markdown:
            raise RuntimeError(f"docs/cli.md lost its marker {MARKER}")
        return markdown.replace(MARKER, cli_reference())
    return markdown
