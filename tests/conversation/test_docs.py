"""The conversation and typed-input samples of docs/conversations.md run as written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "conversations.md"


def samples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_conversation_sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(samples()[0], "conversations.md", "exec", dont_inherit=True), {})
    assert capsys.readouterr().out.splitlines() == [
        "Hello Ada!", "Your name is Ada.", "['user', 'assistant', 'user', 'assistant']"]
    assert (tmp_path / "chat.db").exists()


def test_typed_input_sample(capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(samples()[1], "conversations.md", "exec", dont_inherit=True), {})
    out = capsys.readouterr().out
    first, rest = out.split("\n", 1)
    assert first == "Triage ticket Printer on fire from Ada."
    ticket, problems = rest.rsplit("\n", 2)[0], rest.rsplit("\n", 2)[1]
    assert json.loads(ticket)["customer"] == {"name": "Ada"}
    assert problems == ("['title: Input should be a valid string', 'priority: Field required', "
                        "'customer: Field required']")
