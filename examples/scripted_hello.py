"""An offline stand-in model for ``examples/hello_world.gram``: try ``toolcycle batch`` (or a
spec) without a provider key, ``--model python:examples.scripted_hello:model``.

It calls ``sayHello`` with the last word of the user's message, then answers with what the
tool returned. It states each reply's usage from that run's own conversation, so one instance
can serve many runs at once (as a batch shares its model).
"""

from __future__ import annotations

from typing import Any

from toolcycle.messages import Message, TextPart, ToolCall, ToolResult, Usage
from toolcycle.testing import ScriptedModel, call


def _reply(messages: list[Message], settings: Any) -> Message:
    last = messages[-1]
    if last.role == "user":
        words = last.text.replace(",", " ").replace("'", " ").split()
        part: TextPart | ToolCall = call("sayHello", {"personName": words[-1] if words else ""})
    else:
        results = [p.content for p in last.parts if isinstance(p, ToolResult)]
        part = TextPart(" ".join(results))
    usage = Usage(input_tokens=sum(len(m.text) for m in messages) // 4 + 1, output_tokens=8)
    return Message("assistant", [part], usage=usage)


def model() -> ScriptedModel:
    return ScriptedModel(_reply)
