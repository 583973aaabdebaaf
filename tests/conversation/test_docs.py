"""The conversation and typed-input samples of docs/conversations.md run as written, each as a
script in a subprocess from an empty folder (tests/doc_scripts.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from doc_scripts import run_script

DOC = Path(__file__).resolve().parents[2] / "docs" / "conversations.md"


def samples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_conversation_sample(tmp_path: Path) -> None:
    assert run_script(samples()[0], tmp_path).splitlines() == [
        "Hello Ada!", "Your name is Ada.", "['user', 'assistant', 'user', 'assistant']"]
    assert (tmp_path / "chat.db").exists()


def test_typed_input_sample(tmp_path: Path) -> None:
    out = run_script(samples()[1], tmp_path)
    first, rest = out.split("\n", 1)
    assert first == "Triage ticket Printer on fire from Ada."
    ticket, problems = rest.rsplit("\n", 2)[0], rest.rsplit("\n", 2)[1]
    assert json.loads(ticket)["customer"] == {"name": "Ada"}
    assert problems == ("['title: Input should be a valid string', 'priority: Field required', "
                        "'customer: Field required']")
