"""The public API stays put (issue 64): the names ``toolcycle`` exports, the modules the docs
teach, and every path the layout move (9310a4f) took away, still importable with a warning.

``moved_names.json`` lists each moved module's public names as the module had them before the
move (read from git history, ``git show 9310a4f^:toolcycle/<path>.py``): every one that still
exists must come through the old path as the very same object.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import toolcycle
from toolcycle._public_api import MOVED_MODULES, MOVED_NAMES, PUBLIC_MODULES

ROOT = Path(__file__).resolve().parents[2]
OLD_NAMES: dict[str, list[str]] = json.loads(
    (Path(__file__).parent / "moved_names.json").read_text(encoding="utf-8"))

# Removed with the engine v2 rewrite, before the move; internal, never documented, no successor.
GONE = {"toolcycle.execution": {"CallOutcome", "execute_calls"},
        "toolcycle.loop": {"AttemptOutcome", "run_loop"},
        "toolcycle.run_state": {"LimitHit", "PendingResults"}}

# `from toolcycle import *` as of this release; a name leaves only through a deprecation.
EXPORTED = [
    "Agent", "AgentError", "AgentSpec", "AgentStream", "ApprovalRequest", "Approve",
    "CallbackError", "CancelToken", "Cancelled", "ConfigurationError", "Conversation",
    "ConversationBusy", "ConversationConflict", "Defer", "Deny", "FallbackModel", "InputError",
    "InvalidResponse", "Limits", "MaxAttemptsExceeded", "MaxIterationsExceeded", "Message",
    "Model", "ModelError", "ModelSettings", "Output", "RateLimited", "RetryPolicy", "RunContext",
    "RunResult", "RunStatus", "RunTimeout", "SnapshotError", "SpecError", "Step",
    "SubmitBeforeOutput", "Termination", "TextPart", "ThinkingPart", "Tool", "ToolCall",
    "ToolCallRecord",
    "ToolLibrary", "ToolPolicy", "ToolResult", "ToolSelection", "ToolSpec", "ToolcycleError",
    "ToolsUnavailable", "Trace", "Usage", "UsageLimitExceeded", "ValidationFailed",
    "__version__", "tool",
]


def test_the_top_level_exports_every_name_it_promised() -> None:
    missing = sorted(set(EXPORTED) - set(toolcycle.__all__))
    assert not missing, f"names dropped from toolcycle.__all__ without a deprecation: {missing}"
    for name in toolcycle.__all__:
        assert getattr(toolcycle, name) is not None, name


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_every_public_module_imports_without_a_warning(module: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        importlib.import_module(module)


def _import_afresh(path: str) -> object:
    """Import ``path`` as a first import would: a shim warns once, when its file runs."""
    for name in [m for m in sys.modules if m == path or m.startswith(path + ".")]:
        del sys.modules[name]
    return importlib.import_module(path)


@pytest.mark.parametrize("old", sorted(MOVED_MODULES))
def test_a_moved_module_keeps_its_old_path_with_a_deprecation_warning(old: str) -> None:
    new = importlib.import_module(MOVED_MODULES[old])
    with pytest.warns(DeprecationWarning) as caught:
        shim = _import_afresh(old)
    messages = [str(w.message) for w in caught]
    assert any(m.startswith(f"{old} is deprecated: it moved to {new.__name__};")
               for m in messages), messages
    # the warning points at the importing code, not at the shim or importlib
    assert all("toolcycle" not in Path(w.filename).parts[-2:-1] for w in caught), \
        [w.filename for w in caught]
    kept = [name for name in OLD_NAMES[old] if name not in GONE.get(old, set())]
    assert kept or set(OLD_NAMES[old]) == GONE[old], old
    for name in kept:
        assert getattr(shim, name) is getattr(new, name), f"{old}.{name}"


def test_moved_names_and_shims_agree_with_the_files() -> None:
    """Every shim file is in the table, every table entry has its file, no target is itself a
    shim, and no public module is a shim."""
    shims = set()
    for path in (ROOT / "toolcycle").rglob("*.py"):
        if "warn_moved(__name__)" in path.read_text(encoding="utf-8"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            shims.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    assert shims == set(MOVED_MODULES)
    assert not set(MOVED_MODULES.values()) & set(MOVED_MODULES)
    assert not set(PUBLIC_MODULES) & set(MOVED_MODULES)
    assert set(OLD_NAMES) == set(MOVED_MODULES)


@pytest.mark.parametrize("package", sorted(MOVED_NAMES))
def test_a_module_that_became_a_package_still_has_its_old_names(package: str) -> None:
    home_name, names = MOVED_NAMES[package]
    home = importlib.import_module(home_name)
    module = importlib.import_module(package)
    for name in sorted(names):
        with pytest.warns(DeprecationWarning, match=rf"{package}\.{name} is deprecated"):
            assert getattr(module, name) is getattr(home, name)
    with pytest.raises(AttributeError, match="has no attribute 'not_a_name'"):
        module.not_a_name  # noqa: B018


def test_the_old_documented_local_model_import_works() -> None:
    """docs/local-model.md taught ``toolcycle.models.local.local_model(...)`` before the move."""
    with pytest.warns(DeprecationWarning, match="toolcycle.models.local.llama.local_model"):
        from toolcycle.models.local import local_model
    from toolcycle.models.local.llama import local_model as moved

    assert local_model is moved


def _run_module(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)


def test_python_dash_m_on_the_old_packs_path_runs_the_new_one_with_a_warning() -> None:
    """``python -m toolcycle.models.packs requirements NAME`` (docs/local-model.md before the
    move, and scripts people wrote from it) prints the same pins and exits the same way."""
    old = _run_module("toolcycle.models.packs", "requirements", "smollm2-135m")
    new = _run_module("toolcycle.models.local.packs", "requirements", "smollm2-135m")
    assert old.returncode == new.returncode == 0, old.stderr
    assert old.stdout == new.stdout and new.stdout.strip()
    assert "DeprecationWarning: toolcycle.models.packs is deprecated" in old.stderr
    assert "toolcycle.models.local.packs" in old.stderr
    bad = _run_module("toolcycle.models.packs", "no-such-command")
    assert bad.returncode == _run_module("toolcycle.models.local.packs", "x").returncode != 0


# -- the docs teach only public, current paths -------------------------------------------------

# docs/newcomer-trial.md records the old paths being tried: a record, not teaching.
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md")
                                     if p.name != "newcomer-trial.md")]
_FROM_IMPORT = re.compile(r"^\s*from (toolcycle[\w.]*) import \(?([\w, \n]+?)\)?$", re.M)
_IMPORTED = re.compile(r"(?:^\s*import|^\s*from|python -m) (toolcycle[\w.]*)", re.M)
_DOTTED = re.compile(r"(?<![\w.])(toolcycle(?:\.\w+)+)(?!\w|[:-]|\.\w)")  # not `toolcycle.run:name`


# OpenTelemetry span attributes (docs/tracing.md, docs/status.md), not module paths
_ATTRIBUTE_NAMES = {"toolcycle.run.status", "toolcycle.termination.reason"}


def _taught() -> dict[str, set[str]]:
    """Module path -> pages that teach it: imported, run with ``python -m``, or named with
    something in it (``toolcycle.tracing.html.render_html``). A bare module name in prose
    is not counted: logger names (``toolcycle.run``) read the same."""
    found: dict[str, set[str]] = {}
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        modules = set(_IMPORTED.findall(text))
        for dotted in set(_DOTTED.findall(text)) - _ATTRIBUTE_NAMES:
            module = _longest_module(dotted)
            if module and module != dotted:
                modules.add(module)
        for module in modules:
            found.setdefault(module, set()).add(page.name)
    return found


def _longest_module(dotted: str) -> str | None:
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        try:
            if importlib.util.find_spec(candidate) is not None:
                return candidate
        except (ImportError, ValueError):
            continue
    return None


def test_every_module_the_docs_mention_is_public_and_current() -> None:
    mentions = _taught()
    moved = {m: pages for m, pages in mentions.items() if m in MOVED_MODULES}
    assert not moved, f"docs teach deprecated paths: {moved}"
    private = {m: pages for m, pages in mentions.items() if m not in PUBLIC_MODULES}
    assert not private, ("docs teach modules missing from toolcycle._public_api.PUBLIC_MODULES "
                         f"(add them there, they are public once taught): {private}")


def test_every_import_in_the_docs_resolves() -> None:
    problems = []
    for page in PAGES:
        for module, names in _FROM_IMPORT.findall(page.read_text(encoding="utf-8")):
            imported = importlib.import_module(module)
            for name in re.split(r"[,\s]+", names.strip()):
                if name and not hasattr(imported, name):
                    problems.append(f"{page.name}: from {module} import {name}")
    assert not problems, problems
