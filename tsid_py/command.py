"""What every ``tsid-py`` subcommand shares: one-line errors, exit codes, signals.

Exit codes: 0 done; 2 bad input (an option, a file, a value: one line on stderr naming it);
3 the controller failed (a QP did not solve: the line gives the solver's cause) or the simulation
diverged; 4 the robot fell or lost balance (the run's verdict, from the plant's measured state;
``--allow-fall`` makes it 0 where a fall is an expected outcome); 1 an internal error (one line;
``--log-level debug`` shows the traceback); 128 + N after signal N (SIGINT, SIGTERM), once the
outputs in progress are discarded and child processes stopped.
"""

from __future__ import annotations

import argparse
import difflib
import logging
import signal
import sys
from collections.abc import Callable
from typing import NoReturn

from tsid_py.errors import TsidError

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2
EXIT_CONTROLLER_FAILED = 3
EXIT_FELL = 4

logger = logging.getLogger("tsid_py")


def number(what: str) -> Callable[[str], float]:
    """An argparse ``type``: a float, whose refusal says what was expected, e.g. ``number("a number of
    seconds")`` refuses ``2s`` with "argument --duration: expected a number of seconds, got '2s'"."""

    def parse(text: str) -> float:
        try:
            return float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None

    return parse


SECONDS = number("a number of seconds")
METRES = number("a length in metres")
HERTZ = number("a frequency in Hz")
NEWTONS = number("a force in newtons")


def add_hint(parser: argparse.ArgumentParser, option: str, hint: str) -> None:
    """What a :class:`Parser` says of ``option`` when it is given but is none of the parser's
    (e.g. ``--duration`` to a scenario whose plan sets its length); other parsers ignore it."""
    if isinstance(parser, Parser):
        parser.hints[option] = hint


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (``PROG: error: ...``), exit 2, and
    whose options take values that start with a minus sign and a digit (``--push -300,0,0@1+0.1``,
    which argparse alone reads as an unknown option). An unknown option's line adds a hint
    (:meth:`hint`): what to give instead, or the closest option ("did you mean --duration?").
    Every command takes ``--log-level`` (the verbosity of messages on stderr; ``debug`` shows an
    internal error's traceback), set when the arguments are parsed."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.hints: dict[str, str] = {}
        self.add_argument(
            "--log-level",
            choices=("debug", "info", "warning", "error"),
            default="warning",
            help="verbosity of messages on stderr (default: warning)",
        )

    def parse_args(self, args=None, namespace=None):
        args = sys.argv[1:] if args is None else list(args)
        parsed, extras = self.parse_known_args(self._attach_negative_values(args), namespace)
        if extras:
            hint = None
            first = next((k for k, extra in enumerate(extras) if extra.startswith("-")), None)
            if first is not None:  # the first unknown option, and its value (--name=VALUE or --name VALUE)
                option, _, value = extras[first].partition("=")
                following = extras[first + 1] if first + 1 < len(extras) else "-"
                hint = self.hint(option, value or (None if following.startswith("-") else following), parsed)
            self.error(f"unrecognized arguments: {' '.join(extras)}" + (f" ({hint})" if hint else ""))
        logging.basicConfig(level=parsed.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
        return parsed

    def hint(self, option: str, value: str | None, parsed: argparse.Namespace) -> str | None:
        """What to say of an ``option`` (with its ``value``, if any) that no argument of the parser
        takes: its hint (:func:`add_hint`), else the closest option's name, else None."""
        if option in self.hints:
            return self.hints[option]
        options = [name for action in self._actions for name in action.option_strings]
        close = difflib.get_close_matches(option, options, n=1)
        return f"did you mean {close[0]}?" if close else None

    def _attach_negative_values(self, args: list[str]) -> list[str]:
        """``--option -3...`` as ``--option=-3...`` for the options that take one value."""
        takes_value = {
            name for action in self._actions if action.nargs is None for name in action.option_strings
        }
        out: list[str] = []
        pending = iter(args)
        for token in pending:
            value = None
            if token in takes_value:
                value = next(pending, None)
                if value is not None and not (
                    len(value) > 1 and value[0] == "-" and value[1] in "0123456789."
                ):
                    out.extend((token, value))
                    continue
            out.append(token if value is None else f"{token}={value}")
        return out

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


class Interrupted(BaseException):
    """SIGTERM or SIGINT arrived: unwinds the command so that outputs and children are cleaned up."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def run_command(prog: str, body: Callable[[], int]) -> int:
    """Run a subcommand's ``body`` and turn whatever escapes it into one line and an exit code."""
    previous = {}
    for signum in (signal.SIGTERM, signal.SIGINT):
        try:
            previous[signum] = signal.signal(signum, _raise_interrupted)
        except ValueError:  # not the main thread: leave the signals alone
            break
    try:
        return body()
    except Interrupted as stop:
        print(f"{prog}: stopped by {signal.Signals(stop.signum).name}", file=sys.stderr)
        return 128 + stop.signum
    except TsidError as error:
        print(f"{prog}: error: {_one_line(error)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as error:  # a file that cannot be read or written
        print(f"{prog}: error: {_one_line(error)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as error:  # a bug: say so in one line, the traceback only when asked
        logger.debug("internal error", exc_info=True)
        print(
            f"{prog}: internal error: {type(error).__name__}: {_one_line(error)} "
            "(--log-level debug shows where; please report it)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _raise_interrupted(signum: int, frame: object) -> None:
    raise Interrupted(signum)


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return text or type(error).__name__


def add_package_dir_argument(parser: argparse.ArgumentParser) -> None:
    """``--package-dir DIR``, repeatable: where a URDF's ``package://`` meshes are (``new-spec``,
    ``check-spec``)."""
    parser.add_argument(
        "--package-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder holding the URDF's mesh packages (package://NAME/... is DIR/NAME/...); "
        "repeatable; ROS_PACKAGE_PATH is read too",
    )
