"""What the ``run`` and ``spec`` commands share: reading specs and tool modules from the CLI."""

from __future__ import annotations

import argparse
import functools
import importlib
import importlib.util
import sys
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .._safe_text import terminal_safe
from ..errors import ConfigurationError
from ..spec.agent_spec import AgentSpec, SpecError
from ..tools import ToolLibrary


class CommandError(Exception):
    """A problem to print as one line (or a few) before exiting with status 2."""


Handler = Callable[[argparse.Namespace], int]


def guarded(handler: Handler) -> Handler:
    """Print what could not be loaded or bound (or a store that cannot be reached) as
    ``error: ...`` and exit with status 2.

    The message may quote spec content (names, descriptions), so it is made terminal-safe.
    """

    @functools.wraps(handler)
    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except (CommandError, ConfigurationError, ConnectionError) as exc:
            print(terminal_safe(f"error: {exc}"), file=sys.stderr)
            return 2

    return run


def load_spec(path: str) -> AgentSpec:
    try:
        return AgentSpec.load(path)
    except FileNotFoundError as exc:
        raise CommandError(f"no such spec file: {path}") from exc
    except SpecError as exc:
        raise CommandError(str(exc)) from exc


def load_library(targets: Sequence[str]) -> ToolLibrary:
    """Every tool in the given modules (``package.module`` or ``path/to/file.py``)."""
    library = ToolLibrary(name=", ".join(targets))
    for target in targets:
        module = load_module(target)
        found = ToolLibrary.from_module(module)
        for name in found.names():
            item = found.get(name)
            assert item is not None
            library.register(item, name)
        for toolset in found.toolsets:  # MCPTools objects the module exports
            library.register(toolset)
    return library


def load_module(target: str) -> types.ModuleType:
    if target.endswith(".py") or "/" in target:
        path = Path(target)
        if not path.is_file():
            raise CommandError(f"no such tool module file: {target}")
        spec = importlib.util.spec_from_file_location(f"toolcycle_tools_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise CommandError(f"cannot import {target}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # `--tools examples.hello_tools` from a checkout
    try:
        return importlib.import_module(target)
    except ImportError as exc:
        raise CommandError(f"cannot import tool module {target!r}: {exc}") from exc


def resolve_model_argument(text: str | None) -> Any:
    """A model string for the resolver, or ``python:module:attribute`` naming a model object
    (or a function returning one) for models that have no string form, such as test models."""
    if text is None or not text.startswith("python:"):
        return text
    module_name, _, attribute = text.removeprefix("python:").partition(":")
    if not attribute:
        raise CommandError(f"expected python:module:attribute, got {text!r}")
    value = getattr(load_module(module_name), attribute, None)
    if value is None:
        raise CommandError(f"{module_name} has no attribute {attribute!r}")
    return value() if callable(value) and isinstance(value, types.FunctionType) else value
