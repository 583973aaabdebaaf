"""The runnable examples of docs/providers/*.md run as written, against the test server
(reached through the SDKs' own ``*_BASE_URL`` environment variables)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .script import Call, Reply
from .server import ProviderServer

DOCS = Path(__file__).resolve().parents[2] / "docs" / "providers"


def _first_example(name: str) -> str:
    text = (DOCS / name).read_text()
    match = re.search(r"```python\n(.*?)```", text, re.S)
    assert match is not None, f"{name} has no python example"
    return match.group(1)


def test_openai_example(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-docs")
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
    server.script(
        [
            Reply(calls=[Call("add", {"a": 1, "b": 2})]),
            Reply(calls=[Call("add", {"a": 3, "b": 4})]),
            Reply(text="1 + 2 = 3, and 3 + 4 = 7."),
        ]
    )
    exec(compile(_first_example("openai.md"), "openai.md", "exec"), {})
    out = capsys.readouterr().out
    assert out.startswith("1 + 2 = 3, and 3 + 4 = 7.\n") and "cached" in out
    assert len(server.requests) == 3


def test_anthropic_example(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-docs")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.script(
        [
            Reply(calls=[Call("ledger", {"month": 3}), Call("ledger", {"month": 4})]),
            Reply(text="49 went out."),
        ]
    )
    exec(compile(_first_example("anthropic.md"), "anthropic.md", "exec"), {})
    out = capsys.readouterr().out
    assert out.startswith("49 went out.\n") and "cache read" in out
    assert len(server.requests) == 2


def _examples(name: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / name).read_text(), re.S)


def test_openai_responses_examples(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-docs")
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
    server.script(
        [
            Reply(thinking="Add 1 and 2.", calls=[Call("add", {"a": 1, "b": 2})]),
            Reply(thinking="Then 3 and 4.", calls=[Call("add", {"a": 3, "b": 4})]),
            Reply(text="1 + 2 = 3, and 3 + 4 = 7."),
            Reply(thinking="Greet.", text="Hello."),
        ]
    )
    first, second = _examples("openai-responses.md")
    exec(compile(first, "openai-responses.md", "exec"), {})
    exec(compile(second, "openai-responses.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "1 + 2 = 3, and 3 + 4 = 7."
    assert out[1:4] == [
        "reasoning summary: Add 1 and 2.",
        "reasoning summary: Then 3 and 4.",
        "reasoning summary: -",
    ]
    assert "input tokens read from the cache" in out[4] and out[5] == "Hello."
    assert [r.body["model"] for r in server.requests] == ["gpt-5.4-mini"] * 4
    assert server.requests[3].body["reasoning"] == {"effort": "low", "summary": "auto"}


def test_gemini_example(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-docs")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
    server.script(
        [
            Reply(calls=[Call("add", {"a": 1, "b": 2}), Call("add", {"a": 3, "b": 4})]),
            Reply(text="3 and 7."),
        ]
    )
    exec(compile(_first_example("gemini.md"), "gemini.md", "exec"), {})
    out = capsys.readouterr().out
    assert out.startswith("3 and 7.\n") and "of them thinking" in out
    assert len(server.requests) == 2
