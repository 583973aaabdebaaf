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

from ..models.base import Model
from ..spec.agent_spec import AgentSpec, SpecError
from ..tools import ToolLibrary
from ._exits import USER_ERRORS, CommandError, report_user_error

__all__ = ["CommandError", "guarded", "load_library", "load_model", "load_module", "load_spec",
           "resolve_model_argument"]


Handler = Callable[[argparse.Namespace], int]


def guarded(handler: Handler) -> Handler:
    """A command handler whose user errors end it with one line and status 2.

    :func:`toolcycle.cli.main` maps errors the same way for every command
    (:mod:`toolcycle.cli._exits` decides which errors are the user's); this keeps the mapping
    for a handler called on its own.
    """

    @functools.wraps(handler)
    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except USER_ERRORS as exc:
            return report_user_error(exc)

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


def load_model(model: Model) -> None:
    """Load the model's weights now (a local model: its pack assembled on first use, then read
    into memory, each step shown on stderr), so the first request does not silently pay for
    them; a remote model has nothing to load. A missing extra is a user error."""
    try:
        model.load()
    except ImportError as exc:
        raise CommandError(str(exc)) from exc
