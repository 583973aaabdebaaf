"""The runnable examples of docs/providers/*.md run as written, each as a script in a
subprocess (tests/doc_scripts.py), against the test server (reached through the SDKs' own
``*_BASE_URL`` environment variables), and print what the pages say they print."""

from __future__ import annotations

import re
from pathlib import Path

from doc_scripts import reader_env, run_script

from .script import Call, Reply
from .server import ProviderServer

DOCS = Path(__file__).resolve().parents[2] / "docs" / "providers"


def _first_example(name: str) -> str:
    text = (DOCS / name).read_text()
    match = re.search(r"```python\n(.*?)```", text, re.S)
    assert match is not None, f"{name} has no python example"
    return match.group(1)


def test_openai_example(server: ProviderServer, tmp_path: Path) -> None:
    env = reader_env(OPENAI_API_KEY="sk-docs", OPENAI_BASE_URL=server.openai_url)
    server.script(
        [
            Reply(calls=[Call("add", {"a": 1, "b": 2})]),
            Reply(calls=[Call("add", {"a": 3, "b": 4})]),
            Reply(text="1 + 2 = 3, and 3 + 4 = 7."),
        ]
    )
    out = run_script(_first_example("openai.md"), tmp_path, "openai_sample.py", env)
    assert out.startswith("1 + 2 = 3, and 3 + 4 = 7.\n") and "cached" in out
    assert len(server.requests) == 3


def test_anthropic_example(server: ProviderServer, tmp_path: Path) -> None:
    env = reader_env(ANTHROPIC_API_KEY="sk-ant-docs", ANTHROPIC_BASE_URL=server.url)
    server.script(
        [
            Reply(calls=[Call("ledger", {"month": 3}), Call("ledger", {"month": 4})]),
            Reply(text="49 went out."),
        ]
    )
    out = run_script(_first_example("anthropic.md"), tmp_path, "anthropic_sample.py", env)
    assert out.startswith("49 went out.\n") and "cache read" in out
    assert len(server.requests) == 2


def _examples(name: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / name).read_text(), re.S)


def test_openai_responses_examples(server: ProviderServer, tmp_path: Path) -> None:
    env = reader_env(OPENAI_API_KEY="sk-docs", OPENAI_BASE_URL=server.openai_url)
    server.script(
        [
            Reply(thinking="Add 1 and 2.", calls=[Call("add", {"a": 1, "b": 2})]),
            Reply(thinking="Then 3 and 4.", calls=[Call("add", {"a": 3, "b": 4})]),
            Reply(text="1 + 2 = 3, and 3 + 4 = 7."),
            Reply(thinking="Greet.", text="Hello."),
        ]
    )
    first, second = _examples("openai-responses.md")
    out = (run_script(first, tmp_path, "first.py", env)
           + run_script(second, tmp_path, "second.py", env)).splitlines()
    assert out[0] == "1 + 2 = 3, and 3 + 4 = 7."
    assert out[1:4] == [
        "reasoning summary: Add 1 and 2.",
        "reasoning summary: Then 3 and 4.",
        "reasoning summary: -",
    ]
    assert "input tokens read from the cache" in out[4] and out[5] == "Hello."
    assert [r.body["model"] for r in server.requests] == ["gpt-5.4-mini"] * 4
    assert server.requests[3].body["reasoning"] == {"effort": "low", "summary": "auto"}


def test_gemini_example(server: ProviderServer, tmp_path: Path) -> None:
    env = reader_env(GEMINI_API_KEY="gemini-docs", GOOGLE_GEMINI_BASE_URL=server.url)
    env.pop("GOOGLE_API_KEY", None)
    server.script(
        [
            Reply(calls=[Call("add", {"a": 1, "b": 2}), Call("add", {"a": 3, "b": 4})]),
            Reply(text="3 and 7."),
        ]
    )
    out = run_script(_first_example("gemini.md"), tmp_path, "gemini_sample.py", env)
    assert out.startswith("3 and 7.\n") and "of them thinking" in out
    assert len(server.requests) == 2
