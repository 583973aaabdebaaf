"""Every ```python sample in README.md and docs/**/*.md runs as a user runs it: pasted into a
fresh script file and run with the venv's Python, in a subprocess, from an empty folder.

So a sample must be a whole script: its own imports, no bare top-level ``await`` (it wraps its
async code in ``asyncio.run``), nothing from an earlier sample unless it says so. A sample that
builds on the one before it starts with ``# continues the sample above`` (the reader pastes both
into the file; the test runs them as one script, the chain run once up to its last sample). A
sample that cannot run says so in its first line, visibly: ``# not runnable: <reason>``. A
sample that names a paid provider (``openai:``...) needs no key here: the SDKs' own
``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL`` / ``GOOGLE_GEMINI_BASE_URL`` point it at the
loopback test server, with a dummy key; one that names a ``local:`` model runs in the
real-model tier. A page whose samples read ``DATABASE_URL`` gets a fresh database of the
session's throwaway PostgreSQL server there (tests/postgres_cluster.py). The folder the samples
run in holds only a link to the repository's ``examples/`` (the docs run them from a checkout);
the test prints what it ran (``pytest -s``), and pages are found from the files, so samples
added by anyone are covered.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from doc_scripts import reader_env, run_script

from .script import Call, Entry, Reply
from .server import ProviderServer

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)
_NOT_RUNNABLE = re.compile(r"#\s*not runnable:\s*(\S.*)", re.I)
_CONTINUES = re.compile(r"#\s*continues the sample above", re.I)
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

    @property
    def continues(self) -> bool:
        """Whether the sample says it goes after the page's previous sample in one script."""
        return _CONTINUES.match(self.code.lstrip()) is not None


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


def scripts_of(samples: list[Sample]) -> list[list[Sample]]:
    """The scripts a reader would write: each sample with the ones it continues, a chain once,
    up to its last sample (whose script contains every earlier one of the chain)."""
    scripts: list[list[Sample]] = []
    for sample in samples:
        if sample.continues and scripts:
            scripts[-1].append(sample)
        else:
            assert not sample.continues, f"{sample.page}:{sample.line} continues nothing"
            scripts.append([sample])
    return scripts


def run_page(samples: list[Sample], where: Path, env: dict[str, str]) -> list[str]:
    """Run a page's scripts in order, each as a file with the venv's Python; return what ran
    and what did not, and why."""
    report = []
    for number, script in enumerate(scripts_of(samples), 1):
        label = f"{script[0].page}:{', '.join(str(s.line) for s in script)}"
        skipped = next((s.not_runnable for s in script if s.not_runnable), None)
        if skipped:
            report.append(f"{label}: not runnable ({skipped})")
            continue
        run_script("\n".join(s.code for s in script), where, f"sample_{number}.py", env)
        report.append(f"{label}: ran")
    return report


def _scratch_directory(tmp_path: Path, **extra: str) -> dict[str, str]:
    """An empty folder but for ``examples/`` (the docs run from a checkout), and the
    environment of a shell with the venv activated."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    return reader_env(**extra)


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
    "docs/media.md": lambda: [  # the prompt's picture, then a tool that returns one
        Reply(text="A dot."), Reply(calls=[Call("screenshot", {"page": "home"})]),
        Reply(text="Black."),
    ],
}


@pytest.mark.parametrize("page", PAID)
def test_page_samples_run_against_the_test_server(
    page: str, server: ProviderServer, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
) -> None:
    extra = {"OPENAI_API_KEY": "sk-docs", "OPENAI_BASE_URL": server.openai_url,
             "ANTHROPIC_API_KEY": "sk-ant-docs", "ANTHROPIC_BASE_URL": server.url,
             "GEMINI_API_KEY": "gemini-docs", "GOOGLE_GEMINI_BASE_URL": server.url}
    if any("DATABASE_URL" in sample.code for sample in ALL[page]):
        extra["DATABASE_URL"] = request.getfixturevalue("postgres_url")
    env = _scratch_directory(tmp_path, **extra)
    env.pop("GOOGLE_API_KEY", None)
    scripted = SCRIPTS.get(page)
    server.script(scripted() if scripted else [_default] * 50)
    report = run_page(ALL[page], tmp_path, env)
    with capsys.disabled():
        print("\n" + "\n".join(report))
    if scripted:
        assert server.remaining == 0, f"{page}: the samples made fewer requests than scripted"


def test_a_sample_is_a_whole_script() -> None:
    """No sample relies on an await outside a function (a script cannot run it), not even one
    that cannot run here, and each continuation follows a sample."""
    bare = []
    for samples in ALL.values():
        for script in scripts_of(samples):
            try:
                compile("\n".join(s.code for s in script), script[-1].page, "exec")
            except SyntaxError as error:
                bare.append(f"{script[-1].page}:{script[-1].line}: {error.msg}")
    assert not bare, bare


def test_every_page_with_samples_is_covered() -> None:
    """Pages are found from the files: a page added to docs/ is run without editing this test."""
    with_samples = {n for n, s in ALL.items() if s}
    assert with_samples == set(PAID) | set(ON_LOCAL)
    assert "README.md" in with_samples
    json.dumps(sorted(with_samples))  # the list is printed by the tests above


_PAID_MODEL = re.compile(r"[\"'](openai|openai-responses|anthropic|google):"
                         r"|\b(OpenAI\w*Model|AnthropicModel|GeminiModel)\(")


def test_a_sample_on_a_paid_model_says_which_key_it_needs() -> None:
    """A reader pasting a sample that names ``openai:...`` learns, in the sample, that it needs
    a key (the test reaches the loopback server instead, which a reader cannot)."""
    silent = []
    for samples in ALL.values():
        for script in scripts_of(samples):
            code = "\n".join(s.code for s in script)
            if _PAID_MODEL.search(re.sub(r"(?m)(^|\s)#.*$", "", code)) and "_API_KEY" not in code:
                silent.append(f"{script[0].page}:{script[0].line}")
    assert not silent, f"samples on a paid model that do not name the key they need: {silent}"


def test_a_page_that_needs_postgresql_says_how_to_run_it_here() -> None:
    """A page whose samples read DATABASE_URL has a "Run PostgreSQL here" section (make
    postgres-start, or Debian's initdb/pg_ctl by hand), so a reader without a server is not
    stuck."""
    missing = [page for page, samples in ALL.items()
               if any("DATABASE_URL" in s.code for s in samples)
               and "## Run PostgreSQL here" not in (ROOT / page).read_text(encoding="utf-8")]
    assert not missing, missing


def test_the_readme_starts_with_the_two_set_up_commands() -> None:
    """The first thing a newcomer reads: exactly `make demo` and `make test`, nothing before."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = re.search(r"```bash\n(.*?)```", text, re.S)
    assert first_block is not None
    assert text[:first_block.start()].strip() == "# toolcycle"
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    assert commands == ["make demo", "make test"]
