"""The tools, spec and scripted model of the eval tests (named by ``--tools`` and ``--model``).

``work(item)`` answers ``done:<item>``; with ``$EVAL_TEST_MARK`` set it appends ``start
<item>`` and ``end <item>`` lines to that file, and items listed in ``$EVAL_TEST_HOLD``
(comma-separated) wait until the file ``$EVAL_TEST_RELEASE`` exists: a run that is held is
in flight when the test kills the process, deterministically, without sleeps to tune.
"""

from __future__ import annotations

import os
import time
from typing import Any

from toolcycle.messages import Message, TextPart, ToolCall, ToolResult, Usage
from toolcycle.testing import ScriptedModel, call

SPEC = {
    "name": "worker_agent",
    "instructions": "Do the work item, then answer with what the tool said.",
    "tools": [{"name": "work", "description": "Does one work item.",
               "parameters": {"type": "object", "properties": {"item": {"type": "string"}},
                              "required": ["item"]}}],
}


def _mark(line: str) -> None:
    if os.environ.get("EVAL_TEST_MARK"):
        with open(os.environ["EVAL_TEST_MARK"], "a", encoding="utf-8") as mark:
            mark.write(line + "\n")


def work(item: str) -> str:
    """Does one work item."""
    _mark(f"start {item}")
    held = os.environ.get("EVAL_TEST_HOLD", "").split(",")
    release = os.environ.get("EVAL_TEST_RELEASE", "")
    while item in held and not os.path.exists(release):
        time.sleep(0.02)
    _mark(f"end {item}")
    return f"done:{item}"


def _reply(messages: list[Message], settings: Any) -> Message:
    """Call ``work`` with the user's last word, then answer with the tool's result; ``wrong``
    items get a wrong answer, so evaluators have failures to find."""
    last = messages[-1]
    if last.role == "user":
        words = last.text.split()
        part: TextPart | ToolCall = call("work", {"item": words[-1] if words else ""})
    else:
        result = " ".join(p.content for p in last.parts if isinstance(p, ToolResult))
        part = TextPart("no idea" if "wrong" in result else f"The result is {result}.")
    usage = Usage(input_tokens=sum(len(m.text) for m in messages) // 4 + 1, output_tokens=6)
    return Message("assistant", [part], usage=usage)


def model() -> ScriptedModel:
    return ScriptedModel(_reply)


class _Unpriced(ScriptedModel):
    """A model whose price nobody knows (an OpenAI-compatible server's, say)."""

    def pricing(self, answered_by: str | None = None) -> None:
        return None


def unpriced_model() -> ScriptedModel:
    return _Unpriced(_reply)
