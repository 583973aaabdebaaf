"""The ``toolcycle`` command line.

Each command group lives in its own module of this package and exposes
``register(subparsers)``; this module only assembles them, so groups can grow independently.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: Command-group modules, each with ``register(subparsers: argparse._SubParsersAction)``.
COMMAND_MODULES: tuple[str, ...] = ("trace", "playbook", "spec", "run", "batch", "demo", "mcp",
                                    "eval")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolcycle", description="Run, inspect and improve tool-calling agents."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"toolcycle.cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    code: int = handler(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
