"""Every ```python sample in README.md and docs/**/*.md runs as written.

The samples of one page run in order in one namespace (a page's later samples build on its
earlier ones, as a reader's session would), with top-level ``await`` allowed, in a scratch
directory. A sample that names a paid provider reaches the local test server through the SDKs'
own ``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL`` / ``GOOGLE_GEMINI_BASE_URL``; one that names
a ``local:`` model runs in the real-model tier. A sample that cannot run says so in its first
line, visibly: ``# not runnable: <reason>``. The test prints what it ran (``pytest -s``), and a
page's samples are collected anew from the files, so samples added by anyone are covered. A
page whose samples read ``DATABASE_URL`` gets a fresh database of the session's throwaway
PostgreSQL server there (tests/postgres_cluster.py).
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .script import Call, Entry, Reply
from .server import ProviderServer

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)
_NOT_RUNNABLE = re.compile(r"#\s*not runnable:\s*(\S.*)", re.I)
LOCAL = re.compile(r"[\"']local:")


@dataclass(frozen=True)
class Sample:
    page: str
    line: int
    code: str

    @property
    def not_runnable(self) -> str | None:
        match = _NOT_RUNNABLE.match(self.code.lstrip())
        return match.group(1) if match else None


def samples_of(page: Path) -> list[Sample]:
    text = page.read_text(encoding="utf-8")
    name = str(page.relative_to(ROOT))
    return [Sample(name, text.count("\n", 0, m.start()) + 1, m.group(1))
            for m in _BLOCK.finditer(text)]


def names_local_model(sample: Sample) -> bool:
    """Whether the code (comments left out) names a ``local:`` model."""
    code = re.sub(r"(?m)(^|\s)#.*$", "", sample.code)
    return LOCAL.search(code) is not None


ALL = {str(p.relative_to(ROOT)): samples_of(p) for p in PAGES}
ON_LOCAL = sorted(n for n, s in ALL.items() if any(names_local_model(x) for x in s))
PAID = sorted(n for n, s in ALL.items() if s and n not in ON_LOCAL)


def run_page(samples: list[Sample], namespace: dict[str, Any]) -> list[str]:
    """Run a page's samples in order; return what was run and what was not, and why."""
    report = []
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    for sample in samples:
        where = f"{sample.page}:{sample.line}"
        if sample.not_runnable:
            report.append(f"{where}: not runnable ({sample.not_runnable})")
            continue
        code = compile(sample.code, where, "exec", flags=flags)
        outcome = eval(code, namespace)
        if asyncio.iscoroutine(outcome):  # a sample with a top-level await
            asyncio.run(outcome)
        report.append(f"{where}: ran")
    return report


def _scratch_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Samples run where files they create go away; `examples/` is there as in the repo."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    # as in an activated virtualenv: a sample that starts `python -m ...` gets this one
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))


def _namespace(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A module's namespace, registered in sys.modules (dataclasses and pydantic look there)."""
    module = types.ModuleType("__doc_sample__")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    return module.__dict__


# -- what the test server answers, per page -------------------------------------------------------


def _default(body: dict[str, Any]) -> Reply:
    """For pages without a script: the output tool when one is offered, else a short answer."""
    tools = {t.get("function", t).get("name"): t for t in body.get("tools", [])}
    if "final_result" in tools:
        schema = tools["final_result"].get("function", tools["final_result"])
        schema = schema.get("parameters") or schema.get("input_schema") or {}
        return Reply(calls=[Call("final_result", _example(schema))])
    return Reply(text="Done [refunds#0].")


def _example(schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "object":
        return {k: _example(v) for k, v in schema.get("properties", {}).items()}
    return {"string": "Acme", "integer": 1200, "number": 1.0, "boolean": True,
            "array": []}.get(str(kind), "Acme")


SCRIPTS: dict[str, Callable[[], list[Entry]]] = {
    "README.md": lambda: [
        Reply(calls=[Call("get_weather", {"city": "Paris"})]),
        Reply(calls=[Call("final_result", {"city": "Paris",
                                           "summary": "It is 21 °C in Paris."})]),
    ],
    "docs/providers/openai.md": lambda: [
        Reply(calls=[Call("add", {"a": 1, "b": 2})]), Reply(calls=[Call("add", {"a": 3,
                                                                              "b": 4})]),
        Reply(text="1 + 2 = 3, and 3 + 4 = 7."),
    ],
    "docs/providers/gemini.md": lambda: [
        Reply(calls=[Call("add", {"a": 1, "b": 2}), Call("add", {"a": 3, "b": 4})]),
        Reply(text="1 + 2 = 3, and 3 + 4 = 7."),
    ],
    "docs/providers/anthropic.md": lambda: [
        Reply(calls=[Call("ledger", {"month": 3}), Call("ledger", {"month": 4})]),
        Reply(text="49 went out."),
    ],
}


@pytest.mark.parametrize("page", PAID)
def test_page_samples_run_against_the_test_server(
    page: str, server: ProviderServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest,
) -> None:
    if any("DATABASE_URL" in sample.code for sample in ALL[page]):
        monkeypatch.setenv("DATABASE_URL", request.getfixturevalue("postgres_url"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-docs")
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-docs")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-docs")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
    _scratch_directory(monkeypatch, tmp_path)
    scripted = SCRIPTS.get(page)
    server.script(scripted() if scripted else [_default] * 50)
    report = run_page(ALL[page], _namespace(monkeypatch))
    with capsys.disabled():
        print("\n" + "\n".join(report))
    if scripted:
        assert server.remaining == 0, f"{page}: the samples made fewer requests than scripted"


@pytest.mark.real_model
@pytest.mark.parametrize("page", ON_LOCAL)
def test_page_samples_run_on_the_local_model(
    page: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _scratch_directory(monkeypatch, tmp_path)
    report = run_page(ALL[page], _namespace(monkeypatch))
    with capsys.disabled():
        print("\n" + "\n".join(report))


@pytest.mark.real_model
def test_readme_quickstart_answers_on_the_local_model(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README says to swap the model string for local:qwen2.5-coder-1.5b "without touching
    the rest": the quickstart, so changed, returns a valid Answer (new-01)."""
    [quickstart] = ALL["README.md"]
    code = quickstart.code.replace('"openai:gpt-4o-mini"', '"local:qwen2.5-coder-1.5b"')
    assert code != quickstart.code
    namespace = _namespace(monkeypatch)
    exec(compile(code, "README.md (local)", "exec"), namespace)
    result = namespace["result"]
    assert isinstance(result.output, namespace["Answer"]), result.trace.render()
    assert result.output.city == "Paris"
    assert "paris" in result.output.summary.lower()
    capsys.readouterr()


def test_every_page_with_samples_is_covered() -> None:
    """Pages are found from the files: a page added to docs/ is run without editing this test."""
    with_samples = {n for n, s in ALL.items() if s}
    assert with_samples == set(PAID) | set(ON_LOCAL)
    assert "README.md" in with_samples
    json.dumps(sorted(with_samples))  # the list is printed by the tests above
