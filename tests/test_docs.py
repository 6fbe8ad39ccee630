"""The documentation says what the code does: its runnable examples run, its commands work.

- Every code block marked runnable (an HTML comment ``<!-- runnable -->`` on the line before a
  fenced python block) in README.md and docs/ runs; a page's blocks run in order, in one
  namespace, as a reader would paste them (a block that imports mujoco, and the page's blocks
  after it, only where the [sim] extra is installed).
- README.md is at most 12 kB, its links to files resolve, and each command in its ``sh`` blocks is
  either run here (the ``tsid-py`` ones) or by CI (.ci/run or .ci/check_wheel, where it is written
  as in the README).
- The CLI reference page is generated from the parsers at build time (docs/hooks): it covers every
  command, and every command's --help works.
- Every page of docs/ is in the site's navigation; the version is written in one place.

``mkdocs build --strict`` itself runs in CI (.ci/run): it needs the [docs] extra and 30 s.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import tsid_py
from tsid_py.threads import limit_blas_threads

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
CI_SCRIPTS = (ROOT / ".ci" / "run", ROOT / ".ci" / "check_wheel")
MARKER = "<!-- runnable -->"
README_LIMIT = 12 * 1000  # [bytes]
SLOW_COMMANDS = ("tsid-py walk",)  # seconds of closed loop each

BLOCK = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)


def pages() -> list[Path]:
    """README.md and every Markdown page of the site."""
    return [README, *sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.parts)]


def runnable_blocks(path: Path) -> list[str]:
    """The fenced python blocks of ``path`` right after the runnable marker, in order."""
    text = path.read_text()
    blocks = []
    for match in BLOCK.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        if before == MARKER:
            if match.group(1) != "python":
                raise AssertionError(f"{path.name}: a runnable block must be python, got {match.group(1)!r}")
            blocks.append(match.group(2))
    return blocks


def marked_pages() -> list[Path]:
    return [path for path in pages() if runnable_blocks(path)]


def name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_markers_mark_blocks():
    """A marker not followed by a python block would silently test nothing."""
    for path in pages():
        text = path.read_text()
        assert text.count(MARKER) == len(runnable_blocks(path)), f"{name(path)}: a marker without its block"
    assert README in marked_pages()
    assert len(marked_pages()) >= 10


@pytest.mark.slow
@pytest.mark.parametrize("path", marked_pages(), ids=name)
def test_runnable_blocks_run(path, tmp_path, monkeypatch):
    limit_blas_threads()
    monkeypatch.chdir(tmp_path)  # a block that writes files writes them here
    namespace: dict[str, object] = {"__name__": f"docs_{path.stem}"}
    for k, code in enumerate(runnable_blocks(path)):
        if re.search(r"^import mujoco$", code, re.M):
            pytest.importorskip("mujoco", reason=f"{name(path)} block {k + 1} needs the [sim] extra (mujoco)")
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, f"{name(path)} (runnable block {k + 1})", "exec"), namespace)


def test_the_readme_is_short():
    size = len(README.read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes: at most {README_LIMIT}"


def test_the_readme_links_resolve():
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README.read_text()):
        if "://" not in target:
            assert (ROOT / target).exists(), f"README.md links to {target}, which does not exist"


def readme_commands() -> list[str]:
    """Each command of the README's sh blocks, without its comment."""
    commands = []
    for match in BLOCK.finditer(README.read_text()):
        if match.group(1) in ("sh", "bash", "shell"):
            for line in match.group(2).splitlines():
                command = re.sub(r"\s+#.*$", "", line).strip()
                if command and not command.startswith("#"):
                    commands.append(command)
    return commands


def test_every_readme_command_is_run_here_or_by_ci():
    ci = "\n".join(" ".join(line.split()) for path in CI_SCRIPTS for line in path.read_text().splitlines())
    commands = readme_commands()
    assert any(c.startswith("make demo") for c in commands) and any(
        c.startswith("pip install") for c in commands
    )
    for command in commands:
        if command.startswith("tsid-py "):
            continue  # test_readme_cli_commands runs it
        assert " ".join(command.split()) in ci, (
            f"README command {command!r} is run neither by a test nor by CI"
        )


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        pytest.param(c, marks=pytest.mark.slow) if c.startswith(SLOW_COMMANDS) else c
        for c in readme_commands()
        if c.startswith("tsid-py ")
    ],
)
def test_readme_cli_commands(command, tmp_path):
    args = command.split()[1:]
    done = subprocess.run(
        [sys.executable, "-m", "tsid_py.cli", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{command}: exit {done.returncode}\n{done.stderr}"
    if "--version" in args:
        assert done.stdout.strip() == f"tsid-py {tsid_py.__version__}"
    if "--plot" in args:  # the README shows plots/walk_top_view.png as its picture
        plots = tmp_path / args[args.index("--plot") + 1]
        assert sorted(plots.glob("*.png")), f"{command} wrote no plot"


def cli_hook():
    spec = importlib.util.spec_from_file_location("cli_reference_hook", DOCS / "hooks" / "cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cli_reference_covers_every_command():
    from tsid_py.cli import COMMANDS

    hook = cli_hook()
    reference = hook.cli_reference()
    assert "usage: tsid-py" in reference
    for command in COMMANDS:
        assert f"## tsid-py {command}\n" in reference, f"the CLI reference misses {command}"
    assert hook.MARKER in (DOCS / "cli.md").read_text()


def test_every_page_is_in_the_navigation():
    yaml = pytest.importorskip("yaml")  # PyYAML comes with mkdocs (the [docs] extra)

    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)
    hook = cli_hook()
    in_nav = hook._pages(config["nav"]) | {page for _, _, page in hook.OPTIONAL_PAGES}
    for path in DOCS.rglob("*.md"):
        if "hooks" in path.parts:
            continue
        page = str(path.relative_to(DOCS))
        assert page in in_nav, f"docs/{page} is not in mkdocs.yml's nav"
    for page in hook._pages(config["nav"]):
        assert (DOCS / page).is_file(), f"mkdocs.yml's nav names docs/{page}, which does not exist"


def test_one_version():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["hatch"]["version"]["path"] == "tsid_py/__init__.py"
    assert re.fullmatch(r"\d+\.\d+\.\d+", tsid_py.__version__)
    assert f"## [{tsid_py.__version__}]" in (ROOT / "CHANGELOG.md").read_text()
    assert (ROOT / "tsid_py" / "py.typed").is_file()
