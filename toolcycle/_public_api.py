"""The public API in one place: what a user may import, and where moved paths now live.

Public means the names in ``toolcycle.__all__`` and the modules in :data:`PUBLIC_MODULES`, the
ones README.md and docs/ teach. Everything else (underscore modules, the engine in
``toolcycle.run``) may change without notice. A public path never just disappears: when a
module moves, its old path stays importable for one release as a shim listed in
:data:`MOVED_MODULES`, which re-exports the new module's names and warns with a
``DeprecationWarning`` naming the new path; ``python -m OLD`` keeps running the new module.
tests/test_public_api.py pins both lists, and checks every module path the docs mention.

This module imports nothing from the package, so any shim may import it without a cycle.
"""

from __future__ import annotations

import runpy
import warnings
from pathlib import Path

#: Modules a user is taught to import (or run with ``python -m``), besides ``toolcycle`` itself.
PUBLIC_MODULES: tuple[str, ...] = (
    "toolcycle",
    "toolcycle.batch",
    "toolcycle.cli",
    "toolcycle.conversation",
    "toolcycle.durable",
    "toolcycle.errors",
    "toolcycle.evals",
    "toolcycle.events",
    "toolcycle.limits",
    "toolcycle.mcp",
    "toolcycle.media",
    "toolcycle.messages",
    "toolcycle.models.anthropic",
    "toolcycle.models.base",
    "toolcycle.models.google",
    "toolcycle.models.local.control",
    "toolcycle.models.local.llama",
    "toolcycle.models.local.packs",
    "toolcycle.models.openai",
    "toolcycle.models.openai_responses",
    "toolcycle.models.retry",
    "toolcycle.models.scripted",
    "toolcycle.models.text.calls",
    "toolcycle.models.text.constrained",
    "toolcycle.models.text.hermes",
    "toolcycle.models.text.protocol",
    "toolcycle.playbook",
    "toolcycle.playbook.legacy",
    "toolcycle.playbook.probe",
    "toolcycle.playbook.routine_result",
    "toolcycle.pricing",
    "toolcycle.rag",
    "toolcycle.spec",
    "toolcycle.spec.formats",
    "toolcycle.spec.formats.names",
    "toolcycle.spec.gram_syntax",
    "toolcycle.status",
    "toolcycle.stores",
    "toolcycle.testing",
    "toolcycle.tracing",
    "toolcycle.tracing.html",
    "toolcycle.tracing.otel",
    "toolcycle.tracing.redaction",
    "toolcycle.tracing.store",
    "toolcycle.usage",
)

#: The release that deprecates the moved paths, and the one that may remove them.
DEPRECATED_IN = "0.2.0"
REMOVED_IN = "0.3.0"

#: Old module path -> where it lives now. The layout move (9310a4f) renamed these modules; each
#: old path is a shim file that imports the new module's names and calls :func:`warn_moved`.
MOVED_MODULES: dict[str, str] = {
    "toolcycle.binding": "toolcycle.spec.binding",
    "toolcycle.execution": "toolcycle.run.calls",
    "toolcycle.foreign": "toolcycle.spec.formats",
    "toolcycle.foreign.anthropic": "toolcycle.spec.formats.anthropic",
    "toolcycle.foreign.bfcl": "toolcycle.spec.formats.bfcl",
    "toolcycle.foreign.mcp": "toolcycle.spec.formats.mcp",
    "toolcycle.foreign.names": "toolcycle.spec.formats.names",
    "toolcycle.foreign.openai": "toolcycle.spec.formats.openai",
    "toolcycle.gram": "toolcycle.spec.gram_syntax",
    "toolcycle.html_view": "toolcycle.tracing.html",
    "toolcycle.loop": "toolcycle.run.loop",
    "toolcycle.models.constrained": "toolcycle.models.text.constrained",
    "toolcycle.models.packs": "toolcycle.models.local.packs",
    "toolcycle.models.react": "toolcycle.models.text.react",
    "toolcycle.models.textcalls": "toolcycle.models.text.calls",
    "toolcycle.models.textprotocol": "toolcycle.models.text.protocol",
    "toolcycle.otel": "toolcycle.tracing.otel",
    "toolcycle.redaction": "toolcycle.tracing.redaction",
    "toolcycle.run_state": "toolcycle.run.state",
    "toolcycle.signatures": "toolcycle.spec.signatures",
    "toolcycle.spec_gram": "toolcycle.spec.gram_format",
    "toolcycle.tool_schema": "toolcycle._tool_schema",
    "toolcycle.tool_threads": "toolcycle.run.threads",
    "toolcycle.trace": "toolcycle.tracing.trace",
    "toolcycle.trace_recorder": "toolcycle.tracing.recorder",
    "toolcycle.trace_store": "toolcycle.tracing.store",
    # the agent package (issue 66): the agent's stream and typed task input joined it
    "toolcycle.agent_stream": "toolcycle.agent.stream",
    "toolcycle.task_input": "toolcycle.agent.task_input",
}

#: Names that a module taught as ``OLD.name`` no longer defines, because the module became a
#: package of the same name: (package, name) -> the module that now holds the name.
MOVED_NAMES: dict[str, tuple[str, frozenset[str]]] = {
    # toolcycle/models/local.py became the package models/local/ (llama.py and packs.py)
    "toolcycle.models.local": ("toolcycle.models.local.llama", frozenset({
        "DEFAULT_CONTEXT", "DEFAULT_MAX_TOKENS", "DEFAULT_SEED", "LlamaChatModel", "Protocol",
        "default_threads", "load_llama", "local_model", "model_from_string",
        "resolve_weights", "unload_all",
    })),
    # toolcycle/spec.py became the package spec/ (its data and JSON form in agent_spec.py)
    "toolcycle.spec": ("toolcycle.spec.agent_spec", frozenset({
        "SPEC_VERSION", "LibraryLike", "Locator", "as_library", "limits_from_dict",
        "limits_to_dict", "output_type",
    })),
}

_PACKAGE = str(Path(__file__).resolve().parent)
# Frames skipped when a warning is attributed: the shims, this module and the import machinery,
# so the warning points at the user's own import statement (and shows by default in __main__).
_NOT_THE_CALLER = (_PACKAGE, "<frozen importlib")


def moved_message(old: str, new: str, use: str = "import") -> str:
    return (f"{old} is deprecated: it moved to {new}; {use} it from there "
            f"({old} works until toolcycle {REMOVED_IN}; see CHANGELOG.md)")


def warn_moved(old: str) -> None:
    """Warn that the module ``old`` (a shim in :data:`MOVED_MODULES`) was imported."""
    warnings.warn(moved_message(old, MOVED_MODULES[old]), DeprecationWarning,
                  skip_file_prefixes=_NOT_THE_CALLER)


def run_moved_module(old: str) -> None:
    """``python -m OLD``: warn on stderr and run the new module as ``__main__``, arguments and
    exit status unchanged (a Makefile or script that calls the old path keeps working)."""
    new = MOVED_MODULES[old]
    warnings.warn(moved_message(old, new, use="run"), DeprecationWarning,
                  stacklevel=2)
    runpy.run_module(new, run_name="__main__", alter_sys=True)


def moved_name(package: str, name: str) -> object:
    """``package.name`` for a name the package's old module defined (a module ``__getattr__``
    hands over here); AttributeError for any other name, as a module would raise."""
    home, names = MOVED_NAMES[package]
    if name not in names:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    import importlib

    warnings.warn(moved_message(f"{package}.{name}", f"{home}.{name}"), DeprecationWarning,
                  skip_file_prefixes=_NOT_THE_CALLER)
    return getattr(importlib.import_module(home), name)
