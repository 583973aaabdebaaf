"""Tools and the scripted model of the batch tests (named by ``--tools`` and ``--model``)."""

from __future__ import annotations

import os
from typing import Any

from toolcycle.messages import Message, ToolResult
from toolcycle.testing import ScriptedModel, call

SPEC = {
    "name": "echo_agent",
    "instructions": "Look the word up, then answer with what the tool said.",
    "tools": [{"name": "lookup", "description": "Looks a word up.",
               "parameters": {"type": "object", "properties": {"word": {"type": "string"}},
                              "required": ["word"]}}],
}


def lookup(word: str) -> str:
    """Looks a word up (``boom`` raises; with $BATCH_TEST_SLOW set, waits on a sleep)."""
    if os.environ.get("BATCH_TEST_SLOW"):
        import time

        time.sleep(float(os.environ["BATCH_TEST_SLOW"]))
    if word == "boom":
        raise RuntimeError("the lookup exploded")
    return f"{word}:{len(word)}"


def _reply(messages: list[Message], settings: Any) -> Any:
    """One lookup of the user's text, then an answer quoting the tool's result."""
    last = messages[-1]
    if last.role == "user":
        return call("lookup", {"word": last.text})
    results = [p for p in last.parts if isinstance(p, ToolResult)]
    return f"answer {results[0].content}"


def model() -> ScriptedModel:
    return ScriptedModel(_reply)
