"""Tools and the scripted model of the batch tests (named by ``--tools`` and ``--model``)."""

from __future__ import annotations

import os
from typing import Any

from toolcycle.messages import Message, TextPart, ToolCall, ToolResult, Usage
from toolcycle.testing import ScriptedModel, call

SPEC = {
    "name": "echo_agent",
    "instructions": "Look the word up, then answer with what the tool said.",
    "tools": [{"name": "lookup", "description": "Looks a word up.",
               "parameters": {"type": "object", "properties": {"word": {"type": "string"}},
                              "required": ["word"]}}],
}


def lookup(word: str) -> str:
    """Looks a word up (``boom`` raises; with $BATCH_TEST_SLOW set, waits on a sleep; with
    $BATCH_TEST_MARK set, appends this process's id to that file first)."""
    if os.environ.get("BATCH_TEST_MARK"):
        with open(os.environ["BATCH_TEST_MARK"], "a") as mark:
            mark.write(f"{os.getpid()}\n")
    if os.environ.get("BATCH_TEST_SLOW"):
        import time

        time.sleep(float(os.environ["BATCH_TEST_SLOW"]))
    if word == "boom":
        raise RuntimeError("the lookup exploded")
    return f"{word}:{len(word)}"


def _reply(messages: list[Message], settings: Any) -> Message:
    """One lookup of the user's text, then an answer quoting the tool's result.

    The usage is stated here, from this conversation alone: ScriptedModel's own estimate counts
    everything one model instance was asked, and a batch shares the model between its runs.
    """
    last = messages[-1]
    if last.role == "user":
        part: TextPart | ToolCall = call("lookup", {"word": last.text})
    else:
        results = [p for p in last.parts if isinstance(p, ToolResult)]
        part = TextPart(f"answer {results[0].content}")
    usage = Usage(input_tokens=sum(len(m.text) for m in messages) // 4 + 1, output_tokens=5)
    return Message("assistant", [part], usage=usage)


def model() -> ScriptedModel:
    return ScriptedModel(_reply)
