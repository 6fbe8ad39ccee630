"""The ``tsid-py`` command: one subcommand per scenario.

tsid-py balance --robot talos --duration 2 --json
tsid-py com-sinusoid --robot romeo
tsid-py analyze MOTION.npz --robot talos --json
tsid-py bench --json
"""

from __future__ import annotations

import sys

from tsid_py import __version__, bench, new_spec, spec_check
from tsid_py.analysis import cli as analyze
from tsid_py.command import EXIT_BAD_INPUT
from tsid_py.scenarios import SCENARIOS
from tsid_py.sweep import batch as sweep_batch
from tsid_py.sweep import cli as sweep

COMMANDS = {
    **SCENARIOS,
    "analyze": analyze,
    "bench": bench,
    "sweep": sweep,
    "new-spec": new_spec,
    "check-spec": spec_check,
}


def usage() -> str:
    lines = [
        "usage: tsid-py SCENARIO [options]   (tsid-py SCENARIO --help for its options; tsid-py --version)",
        "",
        "scenarios:",
    ]
    for name, module in COMMANDS.items():
        lines.append(f"  {name:<14} {module.__doc__.splitlines()[0]}")  # type: ignore[union-attr]  # each has one
    return "\n".join(lines) + USAGE_FOOTER


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0
    if argv[0] in ("-V", "--version"):
        print(f"tsid-py {__version__}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(
            f"tsid-py: error: unknown scenario {name!r} (choose from {', '.join(COMMANDS)})", file=sys.stderr
        )
        return EXIT_BAD_INPUT
    if name == "analyze":  # its --batch runs on the sweep engine, a layer above the analysis
        return analyze.main(rest, batch_runner=sweep_batch.run_batch)
    return COMMANDS[name].main(rest)


USAGE_FOOTER = """

options of every scenario (tsid-py SCENARIO --help lists its own):
  --robot NAME|PATH     robot spec: robots/NAME.toml, or a path to your own .toml
  --duration S, --dt S  simulated time (not step and walk: their plan sets it) and control period [s];
                        a run needs duration >= dt
  --backend NAME        QP backend: quadprog (default) or daqp where installed
  --json                one JSON summary object on stdout (and no progress bar)
  --viewer meshcat      live 3-D view, served on 127.0.0.1 (default: none, headless)
  --viewer-rate HZ      viewer frames per simulated second (with --viewer meshcat)
  --viewer-url URL      with --viewer meshcat: the zmq_url (tcp://...) `meshcat-server` printed
                        (default: start a server on 127.0.0.1); refused if none answers in 3 s
  --html FILE           self-contained HTML replay of the run (opens offline)
  --plot DIR            PNG plots into the directory DIR: CoM, end effector, contact forces, torques,
                        top view
  --force               overwrite the --html file or the --plot files (refused otherwise); an
                        output's directory is made only inside one that exists
  --log-level LEVEL     debug, info, warning (default) or error
  --plant NAME, --push FX,FY,FZ@T+DURATION, --no-extend, --allow-fall   (the legged scenarios)
Verdicts (legged robots): recovered, fell, lost (balance) or undecided, from the plant's measured
state; a pushed run goes on until its verdict is decided (5 s after the last push at most).
Exit codes: 0 done, 2 bad input (one line on stderr, checked before the run), 3 the controller
failed (a QP did not solve; the line gives the cause) or the simulation diverged, 4 the robot fell
or lost balance (--allow-fall: 0), 1 an internal error, 128+N after signal N.

Your own robot: tsid-py new-spec URDF [--srdf SRDF] --out ROBOT.toml, then tsid-py check-spec
ROBOT.toml, then any scenario with --robot ROBOT.toml."""


if __name__ == "__main__":
    sys.exit(main())
