"""``ScriptedModel``: a test model that replays scripted replies and enforces the protocol.

Users test their agents with it, and so do we. Every request is checked by
:class:`~toolcycle.models.protocol.HistoryChecker` (a history the real APIs would reject raises
:class:`~toolcycle.models.protocol.ProtocolViolation`) and the settings are checked too (a forced
``tool_choice`` must name an offered tool).

Script items:
- ``"text"``: a final text answer;
- ``call("name", {...})``: one tool call; a list of calls: several in one turn;
- a :class:`~toolcycle.messages.Message`: sent as is;
- a function ``(messages, settings) -> item``: decides from the conversation.
A function passed instead of a list is called for every request.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import ToolcycleError
from ..messages import Message, TextPart, ToolCall, ToolResult, Usage
from ..pricing import FREE, Price
from .base import (
    Model,
    ModelResponse,
    ModelSettings,
    OutputMode,
    StreamItem,
    TextDelta,
    ToolCallDelta,
)
from .protocol import HistoryChecker, ProtocolViolation, Wire

ScriptItem = str | ToolCall | list[ToolCall] | Message | Callable[..., Any]


class ScriptExhausted(ToolcycleError, RuntimeError):
    """The model was asked for more replies than the script has."""


def call(name: str, arguments: dict[str, Any] | None = None, *, id: str | None = None,
         raw: str | None = None) -> ToolCall:
    """A scripted tool call. ``raw`` sends a raw argument string (e.g. malformed JSON)."""
    if raw is not None:
        return ToolCall.from_raw(id or "", name, raw)
    return ToolCall.from_args(id or "", name, arguments or {})


@dataclass(slots=True)
class RecordedRequest:
    """What the model was asked: the number of messages and the settings (kept cheap)."""

    message_count: int
    settings: ModelSettings
    last_message: Message


@dataclass
class ScriptedModel(Model):
    script: Sequence[ScriptItem] | Callable[..., Any]
    wire: Wire = "both"
    name: str = "scripted"
    chunk_size: int = 8
    requests: list[RecordedRequest] = field(default_factory=list)
    system: str = "test"
    #: The window a request must fit (≈ 4 characters a token), refused beyond like a real API.
    context_window: int | None = None
    #: The structured-output modes this model takes, best first (its profile). The output
    #: tool alone by default, so that a scripted text reply in a structured run is retried as
    #: before; give ``("tool", "native", "prompted")`` to test the fallback between modes.
    modes: tuple[OutputMode, ...] = ("tool",)
    #: What its replies cost, to test a budget (``Limits(max_cost=...)``): nothing unless
    #: given. Its replies' token counts are estimated (≈ 4 characters a token) or scripted.
    price: Price | None = None

    def output_modes(self) -> tuple[OutputMode, ...]:
        return self.modes

    def pricing(self, answered_by: str | None = None) -> Price | None:
        return self.price or FREE

    def __post_init__(self) -> None:
        self._checker = HistoryChecker(self.wire)
        self._position = 0
        self._ids = 0
        self._input_chars = 0
        self._counted = 0
        self._last_counted: Message | None = None

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        self._check(messages, settings)
        item = self._next_item(messages, settings)
        message = self._to_message(item)
        estimated = self._usage(messages, message)  # (keeps the running count either way)
        if message.usage is None:  # a scripted Message may state its own usage
            message.usage = estimated
        message.model_name = self.name
        return message

    async def stream(
        self, messages: Sequence[Message], settings: ModelSettings
    ) -> AsyncIterator[StreamItem]:
        message = await self.request(messages, settings)
        text = message.text
        for start in range(0, len(text), self.chunk_size):
            yield TextDelta(text[start : start + self.chunk_size])
        for index, tool_call in enumerate(message.tool_calls):
            raw = tool_call.raw_arguments
            yield ToolCallDelta(index, tool_call.id, tool_call.name, raw[: len(raw) // 2])
            yield ToolCallDelta(index, None, None, raw[len(raw) // 2 :])
        yield ModelResponse(message)

    @property
    def remaining(self) -> int:
        """Script items not yet used (0 for a function script)."""
        return 0 if callable(self.script) else len(self.script) - self._position

    # -- internals ---------------------------------------------------------------------------

    def _check(self, messages: Sequence[Message], settings: ModelSettings) -> None:
        self._checker.check(messages)
        if self.context_window is not None:
            size = sum(_chars(m) for m in messages) // 4
            if size > self.context_window:
                raise ProtocolViolation(
                    f"context_length_exceeded: the request holds ~{size} tokens, the model's "
                    f"window is {self.context_window}")
        choice = settings.tool_choice
        if choice not in ("auto", "required", "none") and choice not in {
            t.name for t in settings.tools
        }:
            raise ProtocolViolation(f"tool_choice names {choice!r}, which is not offered")
        if choice == "required" and not settings.tools:
            raise ProtocolViolation("tool_choice='required' needs at least one tool")
        self.requests.append(RecordedRequest(len(messages), settings, messages[-1]))

    def _next_item(self, messages: Sequence[Message], settings: ModelSettings) -> Any:
        if callable(self.script):
            item: Any = self.script(messages, settings)
        else:
            if self._position >= len(self.script):
                raise ScriptExhausted(
                    f"the script has {len(self.script)} replies; request "
                    f"{self._position + 1} has none"
                )
            item = self.script[self._position]
            self._position += 1
        while callable(item) and not isinstance(item, Message | ToolCall | str | list):
            item = item(messages, settings)
        return item

    def _to_message(self, item: Any) -> Message:
        if isinstance(item, str):
            return Message("assistant", [TextPart(item)] if item else [], finish_reason="stop")
        if isinstance(item, ToolCall):  # the usual item, without the general case's scans
            call = self._with_id(item, {item.id} if item.id else set())
            return Message("assistant", [call], finish_reason="tool_calls")
        parts: list[Any] = list(item.parts) if isinstance(item, Message) else list(item)
        # Ids given in the script are kept; the ones made here avoid them and every id of the
        # history (which may come from another model, or from an earlier ScriptedModel).
        taken = {p.id for p in parts if isinstance(p, ToolCall) and p.id}
        parts = [self._with_id(p, taken) for p in parts]
        if isinstance(item, Message):
            return replace(item, parts=parts)
        return Message("assistant", parts, finish_reason="tool_calls")

    def _with_id(self, part: Any, taken: set[str]) -> Any:
        if not isinstance(part, ToolCall):
            return part
        self._ids += 1
        if part.id:
            return part
        seen = self._checker.seen_ids
        call_id = f"call_{self._ids}"
        while call_id in taken or call_id in seen:
            self._ids += 1
            call_id = f"call_{self._ids}"
        taken.add(call_id)
        # A fresh call each time: a script item may be replayed, and ids must stay unique.
        return ToolCall(call_id, part.name, part.arguments, part.raw_arguments, part.parse_error)

    def _usage(self, messages: Sequence[Message], reply: Message) -> Usage:
        """Deterministic token counts: about 4 characters per token, counted incrementally
        (from scratch when the history was rewritten: a compacted run)."""
        if self._counted and (len(messages) < self._counted
                              or messages[self._counted - 1] is not self._last_counted):
            self._input_chars = self._counted = 0
        for index in range(self._counted, len(messages)):
            self._input_chars += _chars(messages[index])
        self._counted = len(messages)
        self._last_counted = messages[-1] if messages else None
        return Usage(input_tokens=self._input_chars // 4 + 1,
                     output_tokens=_chars(reply) // 4 + 1)


def _chars(message: Message) -> int:
    """Characters that count as tokens: text, call arguments and results (not thinking)."""
    total = 0
    for part in message.parts:
        if isinstance(part, TextPart):
            total += len(part.text)
        elif isinstance(part, ToolCall):
            total += len(part.raw_arguments)
        elif isinstance(part, ToolResult):
            total += len(part.content)
    return total


def last_tool_results(messages: Sequence[Message]) -> dict[str, str]:
    """Helper for function scripts: the results of the latest tool message, by tool name."""
    for message in reversed(messages):
        if message.role == "tool":
            return {r.name: r.content for r in message.results}
    return {}


def arguments_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))
