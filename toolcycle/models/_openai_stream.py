"""Building the neutral assistant message from an OpenAI Chat Completions response.

Private to :mod:`toolcycle.models.openai`: a whole completion or its stream of deltas goes in
(text, ``reasoning_content``, tool calls in pieces by index, legacy ``function_call``), and one
neutral :class:`~toolcycle.messages.Message` comes out, with stream items for the caller
while it streams. Apart from the adapter so that the wire conversion and the response
assembly can each be read alone.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from ..messages import Message, Part, TextPart, ThinkingPart, ToolCall, Usage
from .base import StreamItem, TextDelta, ThinkingDelta, ToolCallDelta

#: The parse error of a call cut off by ``finish_reason: "length"`` while its arguments were
#: being written (even when what arrived happens to parse, or is empty).
TRUNCATED = (
    "the response hit the output token limit (finish_reason length) while the model was "
    "writing this call's arguments, so they are incomplete; call the tool again with complete "
    "arguments"
)


def wire_usage(usage: Any) -> Usage:
    """A response's ``usage`` block (absent on some compatible servers) as neutral usage."""
    if usage is None:
        return Usage(requests=1)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or 0
    return Usage(
        input_tokens=usage.prompt_tokens or 0,
        output_tokens=usage.completion_tokens or 0,
        cache_read_tokens=cached,
        requests=1,
    )


@dataclass(slots=True)
class PendingCall:
    id: str
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ResponseAssembly:
    """Collects a response (whole or in deltas) and builds the neutral assistant message.

    Thinking comes from the ``reasoning_content`` field that compatible servers (llama.cpp,
    vLLM, DeepSeek) add; it is kept on the message but not sent back, as those servers expect.
    """

    def __init__(self, synthesize_ids: bool) -> None:
        self.synthesize_ids = synthesize_ids
        self.reset()

    def reset(self) -> None:
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.calls: dict[int, PendingCall] = {}

    def add_message(self, message: Any) -> None:
        self.thinking.append(reasoning_of(message))
        self.text.append(message.content or "")
        for index, call in enumerate(message.tool_calls or ()):
            function = getattr(call, "function", None)  # "custom" tools carry no function
            if function is not None:
                self.calls[index] = PendingCall(call.id, function.name, [function.arguments or ""])
        function_call = getattr(message, "function_call", None)
        if function_call is not None:
            self.calls[0] = PendingCall(
                new_call_id(), function_call.name, [function_call.arguments]
            )

    def add_delta(self, delta: Any) -> list[StreamItem]:
        items: list[StreamItem] = []
        reasoning = reasoning_of(delta)
        if reasoning:
            self.thinking.append(reasoning)
            items.append(ThinkingDelta(reasoning))
        if delta.content:
            self.text.append(delta.content)
            items.append(TextDelta(delta.content))
        for piece in delta.tool_calls or ():
            function = piece.function
            items.append(
                self._call_delta(
                    piece.index,
                    piece.id,
                    function.name if function else None,
                    (function.arguments if function else None) or "",
                )
            )
        function_call = getattr(delta, "function_call", None)
        if function_call is not None:
            items.append(
                self._call_delta(0, None, function_call.name, function_call.arguments or "")
            )
        return items

    def _call_delta(self, index: int, id: str | None, name: str | None, args: str) -> StreamItem:
        pending = self.calls.get(index)
        if pending is None:
            new_id = id or (new_call_id() if self.synthesize_ids else "")
            pending = self.calls[index] = PendingCall(new_id)
            id = new_id
        elif id:
            pending.id = id
        if name:
            pending.name += name
        pending.arguments.append(args)
        return ToolCallDelta(index, id or None, name, args)

    def finish(self, finish_reason: str | None, usage: Usage, model_name: str) -> Message:
        parts: list[Part] = []
        thinking = "".join(self.thinking)
        if thinking:
            parts.append(ThinkingPart(thinking))
        text = "".join(self.text)
        if text:
            parts.append(TextPart(text))
        indices = sorted(self.calls)
        for index in indices:
            pending = self.calls[index]
            call_id = pending.id or new_call_id()
            call = ToolCall.from_raw(call_id, pending.name, "".join(pending.arguments))
            if finish_reason == "length" and index == indices[-1]:
                call.arguments, call.parse_error = None, TRUNCATED
            parts.append(call)
        return Message(
            "assistant", parts, usage=usage, finish_reason=finish_reason, model_name=model_name
        )


def reasoning_of(message: Any) -> str:
    extra = getattr(message, "model_extra", None) or {}
    value = extra.get("reasoning_content") or extra.get("reasoning")
    return value if isinstance(value, str) else ""


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"
