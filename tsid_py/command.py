"""What every ``tsid-py`` subcommand shares: one-line errors, exit codes, signals.

Exit codes: 0 done; 2 bad input (an option, a file, a value: one line on stderr naming it);
3 the controller failed (a QP did not solve: the line gives the solver's cause); 1 an internal
error (one line; ``--log-level debug`` shows the traceback); 128 + N after signal N (SIGINT,
SIGTERM), once the outputs in progress are discarded and child processes stopped.
"""

from __future__ import annotations

import argparse
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

logger = logging.getLogger("tsid_py")


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (``PROG: error: ...``), exit 2."""

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
