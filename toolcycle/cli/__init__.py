"""The ``toolcycle`` command line.

Each command group lives in its own module of this package and exposes
``register(subparsers)``; this module only assembles them, so groups can grow independently.

What every command shares is decided here: ``--version``, the logging switch (``--log-level``,
``-v``, or ``TOOLCYCLE_LOG``: :mod:`toolcycle.logs`), and how a command ends
(:mod:`._exits`): 0 done, 1 a run failed, 2 a user error in one line (bad flags included),
3 a run paused for approval, 130 interrupted with Ctrl-C after keeping what had finished.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from .. import __version__
from ..logs import configure, level_of, show_setup_progress
from ._exits import USAGE, USER_ERRORS, report_interrupt, report_user_error

#: Command-group modules, each with ``register(subparsers: argparse._SubParsersAction)``.
COMMAND_MODULES: tuple[str, ...] = ("trace", "playbook", "spec", "run", "resume", "batch", "demo",
                                    "mcp", "eval")


class _Parser(argparse.ArgumentParser):
    """argparse, with a bad flag reported in one line (and a pointer to ``--help``) instead
    of the usage block followed by the error. Subcommands' parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        print(f"error: {message} (see: {self.prog} --help)", file=sys.stderr)
        raise SystemExit(USAGE)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="toolcycle", description="Run, inspect and improve tool-calling agents.")
    parser.add_argument("--version", action="version", version=f"toolcycle {__version__}")
    _logging_flags(parser, None)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"toolcycle.cli.{name}").register(subparsers)
    for command in _commands(subparsers):  # `toolcycle run ... -v` works as well
        _logging_flags(command, argparse.SUPPRESS)
    return parser


def _logging_flags(parser: argparse.ArgumentParser, default: object) -> None:
    """``--log-level`` and ``-v``. On the commands their default is ``SUPPRESS``, so a command
    that is not given them leaves what the top level read."""
    parser.add_argument("--log-level", metavar="LEVEL", type=_level, default=default,
                        help="log each model request and tool call, with timings, to stderr: "
                        "debug (adds redacted tool arguments), info, warning, error "
                        "(default: $TOOLCYCLE_LOG, else off)")
    parser.add_argument("-v", "--verbose", action="store_const", const=logging.DEBUG,
                        dest="log_level", default=default, help="the same as --log-level debug")


def _commands(subparsers: argparse._SubParsersAction[Any]) -> list[argparse.ArgumentParser]:
    """Every command's parser, subcommands' included (``trace list``, ``mcp serve``)."""
    found: list[argparse.ArgumentParser] = []
    for command in dict.fromkeys(subparsers.choices.values()):
        nested = [a for a in command._actions if isinstance(a, argparse._SubParsersAction)]
        found.extend(_commands(nested[0]) if nested else [command])
    return found


def _level(text: str) -> int:
    try:
        return level_of(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit status (see the module docstring).

    User errors (:data:`._exits.USER_ERRORS`) print one line and return 2, from any command;
    anything else is a bug and keeps its traceback. Ctrl-C returns 130: a run interrupted
    has its trace stored as cancelled first (the engine's cancellation path).
    """
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.log_level is not None:
            configure(args.log_level)
        show_setup_progress()
        handler = getattr(args, "handler", None)
        if handler is None:
            parser.print_help(sys.stderr)
            return USAGE
        code: int = handler(args)
        return code
    except KeyboardInterrupt:
        return report_interrupt()
    except USER_ERRORS as exc:
        return report_user_error(exc)


if __name__ == "__main__":
    sys.exit(main())
