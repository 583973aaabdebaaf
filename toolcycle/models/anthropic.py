"""Anthropic Messages adapter (``tool_use`` / ``tool_result``) on the official ``anthropic`` SDK.

What the protocol demands, and where it is handled:

- **One user message with every ``tool_result`` of an iteration**, each with ``is_error``;
  a neutral user message that follows the tool message (a validation-retry prompt) is merged
  into that same user message after the results, because roles must alternate.
- **``stop_reason``**: ``max_tokens`` while a ``tool_use`` was being written leaves truncated
  arguments: the call becomes a :class:`~toolcycle.messages.ToolCall` with ``parse_error`` so
  the loop answers it with an error observation instead of running it. ``pause_turn`` (a long
  server-side turn paused) is continued here, transparently, by sending the partial turn back.
- **Thinking blocks** keep their ``signature`` and go back verbatim, as the API requires.
- **Prompt caching**: ``cache_control`` breakpoints on the tools, the system prompt, the
  last message of every request and the message the previous request ended with (four, the
  API's maximum), so each iteration re-reads the cached prefix and pays full price only for
  what is new, even when a turn adds more than the 20 blocks the service looks back over.
  Usage maps ``cache_creation_input_tokens`` to ``cache_write_tokens`` and
  ``cache_read_input_tokens`` to ``cache_read_tokens``; ``input_tokens`` is the total
  (uncached + written + read), as with OpenAI.

Conversions are cached per message object and per tool tuple, as in the OpenAI adapter.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import replace
from typing import Any

from .._tool_schema import closed_schema
from ..media import MediaPart, refuse_media
from ..messages import (
    Message,
    Part,
    TextPart,
    ThinkingPart,
    ToolCall,
    Usage,
    parse_json_object,
)
from ..pricing import Price
from ._media_wire import anthropic_block, anthropic_result_content
from .base import (
    ModelResponse,
    ModelSettings,
    StreamItem,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolDefinition,
)
from .repair import EMPTY_TURN_TEXT
from .retry import RetryPolicy, StreamIncomplete, stream_with_retries, with_retries
from .sdk_client import LoopBoundClient, SDKModel
from .wire_cache import MessageCache

Wire = dict[str, Any]
EPHEMERAL: Wire = {"type": "ephemeral"}
TRUNCATED = (
    "the response hit max_tokens while the model was writing this call's arguments, "
    "so they are incomplete; call the tool again with complete arguments"
)


class AnthropicModel(SDKModel):
    """Claude through the Messages API.

    ``max_tokens`` is required by the API; ``settings.max_tokens`` overrides the default here.
    ``thinking_budget`` turns extended thinking on (except for requests that force a tool,
    which the API refuses to combine with thinking). ``cache`` switches the breakpoints off for
    models or gateways that reject ``cache_control``. ``max_continuations`` bounds how many
    ``pause_turn`` continuations one request may take.
    """

    system = "anthropic"

    def __init__(
        self,
        model_name: str,
        *,
        client: Any | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 300.0,
        retry: RetryPolicy | None = None,
        max_tokens: int = 4096,
        thinking_budget: int | None = None,
        cache: bool = True,
        max_continuations: int = 5,
        price: Price | None = None,
    ) -> None:
        self.name = model_name
        self.price = price
        self.retry = retry if retry is not None else RetryPolicy()
        self.max_tokens = max_tokens
        self.thinking_budget = thinking_budget
        self.cache = cache
        self.max_continuations = max_continuations
        factory = None
        if client is None:
            import anthropic

            def factory() -> Any:
                return anthropic.AsyncAnthropic(
                    api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0,
                    http_client=anthropic.DefaultAsyncHttpxClient(),  # see sdk_client.py
                )

        # One client per event loop: a caller may run us under several (see sdk_client.py).
        self._client = LoopBoundClient(factory, client)
        self._messages = MessageCache()
        self._tools_key: tuple[ToolDefinition, ...] | None = None
        self._tools_wire: list[Wire] = []

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        kwargs = self.build_request(messages, settings)
        assembly = _Assembly()
        for _ in range(self.max_continuations + 1):

            async def send(kwargs: Wire = kwargs) -> Any:
                return await self.client.messages.create(**kwargs)

            response = await with_retries(send, self.retry, provider="anthropic", model=self.name)
            assembly.add_response(response)
            if response.stop_reason != "pause_turn":
                break
            kwargs = self._continue(kwargs, response.content)
        return assembly.finish(self.name)

    async def stream(
        self, messages: Sequence[Message], settings: ModelSettings
    ) -> AsyncIterator[StreamItem]:
        kwargs = self.build_request(messages, settings)
        assembly = _Assembly()
        for _ in range(self.max_continuations + 1):
            mark = assembly.mark()

            async def events(kwargs: Wire = kwargs, mark: int = mark) -> AsyncIterator[Any]:
                assembly.rewind(mark)
                response = await self.client.messages.create(**kwargs, stream=True)
                async with response:
                    async for event in response:
                        yield event
                        if event.type == "message_stop":
                            return
                raise StreamIncomplete("the stream ended before message_stop")

            stream = stream_with_retries(events, self.retry, provider="anthropic", model=self.name)
            async with aclosing(stream):
                async for event in stream:
                    for item in assembly.add_event(event):
                        yield item
            if assembly.stop_reason != "pause_turn":
                break
            kwargs = self._continue(kwargs, assembly.blocks_since(mark))
        yield ModelResponse(assembly.finish(self.name))

    def _continue(self, kwargs: Wire, content: Sequence[Any]) -> Wire:
        """The same request with the paused partial turn appended as an assistant message."""
        blocks = [_block_param(b) for b in content]
        return {
            **kwargs,
            "messages": [*kwargs["messages"], {"role": "assistant", "content": blocks}],
        }

    # ------------------------------------------------------------ wire building

    def build_request(self, messages: Sequence[Message], settings: ModelSettings) -> Wire:
        """The keyword arguments of ``messages.create`` for this conversation."""
        system = [m for m in messages if m.role == "system"]
        kwargs: Wire = {
            "model": self.name,
            "max_tokens": settings.max_tokens or self.max_tokens,
            "messages": self.wire_messages([m for m in messages if m.role != "system"]),
        }
        if system:
            blocks: list[Wire] = [{"type": "text", "text": m.text} for m in system]
            if self.cache:
                blocks[-1] = {**blocks[-1], "cache_control": EPHEMERAL}
            kwargs["system"] = blocks
        # The API refuses thinking with a forced tool: a named tool (the loop forces the output
        # tool at a limit) goes without thinking; "required" (structured output) keeps the
        # thinking and is sent as "auto", the loop rejecting a text answer as it always did.
        # ``temperature`` is no longer a Messages API parameter (SDK 2.x); endpoints that
        # still take it get it through ``ModelSettings.extra``.
        if self.thinking_budget is not None and settings.tool_choice == "required":
            settings = replace(settings, tool_choice="auto")
        if settings.tools:
            kwargs["tools"] = self.tools_wire(settings.tools)
            kwargs["tool_choice"] = _tool_choice(settings)
        forced = bool(settings.tools) and settings.tool_choice not in ("auto", "none")
        if self.thinking_budget is not None and not forced:
            kwargs["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_budget}
        if settings.response_format is not None:  # Anthropic takes closed objects only
            kwargs["output_config"] = {"format": {
                "type": "json_schema", "schema": closed_schema(settings.response_format.schema)}}
        if settings.extra:
            kwargs["extra_body"] = dict(settings.extra)
        return kwargs

    def tools_wire(self, tools: tuple[ToolDefinition, ...]) -> list[Wire]:
        if tools is not self._tools_key:
            wire: list[Wire] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in tools
            ]
            if self.cache and wire:
                wire[-1]["cache_control"] = EPHEMERAL
            self._tools_wire, self._tools_key = wire, tools
        return self._tools_wire

    def wire_messages(self, messages: Sequence[Message]) -> list[Wire]:
        """Alternating user/assistant messages; consecutive same-role turns are merged.

        Cached wire messages are shared between requests, so they are never modified: a merge
        or the last message's cache breakpoint works on a fresh copy.
        """
        out: list[Wire] = []
        fresh = False  # whether out[-1] is a copy made for this request (safe to extend)
        for message in messages:
            wire = self._messages.get(message)
            if wire is None:
                wire = _convert(message)
                self._messages.put(message, wire)
            if out and out[-1]["role"] == wire["role"]:
                if not fresh:
                    out[-1] = {"role": wire["role"], "content": list(out[-1]["content"])}
                    fresh = True
                out[-1]["content"].extend(wire["content"])
            else:
                out.append(wire)
                fresh = False
        self._messages.prune(messages)
        if self.cache and out:
            # The last message, and the last user message before it: where the previous
            # request of the loop ended, so its cache entry is read however many blocks the
            # latest turn added (the service looks only 20 blocks back from a breakpoint).
            for index in (-3, -1) if len(out) >= 3 else (-1,):
                marked = out[index]
                out[index] = {
                    "role": marked["role"],
                    "content": _with_last_breakpoint(marked["content"]),
                }
        return out


def _convert(message: Message) -> Wire:
    if message.role == "tool":
        blocks: list[Wire] = []
        for result in message.results:
            block: Wire = {
                "type": "tool_result",
                "tool_use_id": result.call_id,
                "content": anthropic_result_content(result),
            }
            if result.is_error:
                block["is_error"] = True
            blocks.append(block)
        return {"role": "user", "content": blocks}
    blocks = []
    for part in message.parts:
        if isinstance(part, TextPart) and part.text.strip():  # the API refuses blank blocks
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, MediaPart):
            refuse_media([message], "Anthropic", frozenset({"image", "document"}))
            blocks.append(anthropic_block(part))
        elif isinstance(part, ThinkingPart) and part.redacted is not None:
            blocks.append({"type": "redacted_thinking", "data": part.redacted})
        elif isinstance(part, ThinkingPart) and part.signature:
            blocks.append({"type": "thinking", "thinking": part.text, "signature": part.signature})
        elif isinstance(part, ToolCall):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": part.id,
                    "name": part.name,
                    "input": part.arguments or {},
                }
            )
    if message.role == "assistant":
        # a blank turn stays blank in the history (what the model said); the API refuses it
        return {"role": "assistant",
                "content": blocks or [{"type": "text", "text": EMPTY_TURN_TEXT}]}
    return {"role": "user", "content": blocks}


def _with_last_breakpoint(blocks: list[Wire]) -> list[Wire]:
    """A copy of ``blocks`` with a cache breakpoint on the last block that may carry one."""
    marked = list(blocks)
    for index in range(len(marked) - 1, -1, -1):
        if marked[index]["type"] not in ("thinking", "redacted_thinking"):
            marked[index] = {**marked[index], "cache_control": EPHEMERAL}
            break
    return marked


def _tool_choice(settings: ModelSettings) -> Wire:
    choice = settings.tool_choice
    wire: Wire
    if choice == "auto":
        wire = {"type": "auto"}
    elif choice == "required":
        wire = {"type": "any"}
    elif choice == "none":
        return {"type": "none"}
    else:
        wire = {"type": "tool", "name": choice}
    if settings.parallel_tool_calls is False:
        wire["disable_parallel_tool_use"] = True
    return wire


def _block_param(block: Any) -> Wire:
    data: Wire = block.model_dump(exclude_none=True) if hasattr(block, "model_dump") else block
    data.pop("citations", None)
    return data


class _Assembly:
    """Collects content blocks (whole or streamed) into one neutral assistant message."""

    def __init__(self) -> None:
        self.blocks: list[Wire] = []
        self.arguments: dict[int, list[str]] = {}
        self.usage = Usage(requests=1)
        self.stop_reason: str | None = None
        self._calls = 0
        self._requests = 0
        self._base = 0

    def mark(self) -> int:
        return len(self.blocks)

    def rewind(self, mark: int) -> None:
        """Forget a failed attempt's blocks before a retry starts the stream over."""
        del self.blocks[mark:]
        self._calls = sum(1 for b in self.blocks if b["type"] == "tool_use")

    def blocks_since(self, mark: int) -> list[Wire]:
        out = []
        for index, block in enumerate(self.blocks[mark:], start=mark):
            if block["type"] == "tool_use" and index in self.arguments:
                block = {**block, "input": _json_object("".join(self.arguments[index]))}
            out.append(block)
        return out

    def add_response(self, response: Any) -> None:
        self.blocks.extend(_block_param(b) for b in response.content)
        self._add_usage(response.usage, output=True)
        self.stop_reason = response.stop_reason

    def add_event(self, event: Any) -> list[StreamItem]:
        kind = event.type
        if kind == "message_start":
            self._add_usage(event.message.usage, output=False)
            self._base = len(self.blocks)
        elif kind == "content_block_start":
            return self._start_block(self._base + event.index, _block_param(event.content_block))
        elif kind == "content_block_delta":
            return self._delta(self._base + event.index, event.delta)
        elif kind == "message_delta":
            self.stop_reason = event.delta.stop_reason or self.stop_reason
            self.usage.output_tokens += event.usage.output_tokens or 0
        return []

    def _start_block(self, index: int, block: Wire) -> list[StreamItem]:
        self.blocks.append(block)
        if block["type"] == "tool_use":
            self.arguments[index] = []
            self._calls += 1
            return [ToolCallDelta(self._calls - 1, block["id"], block["name"], "")]
        if block["type"] == "text" and block.get("text"):
            return [TextDelta(block["text"])]
        return []

    def _delta(self, index: int, delta: Any) -> list[StreamItem]:
        block = self.blocks[index]
        if delta.type == "text_delta":
            block["text"] = block.get("text", "") + delta.text
            return [TextDelta(delta.text)]
        if delta.type == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta.thinking
            return [ThinkingDelta(delta.thinking)]
        if delta.type == "signature_delta":
            block["signature"] = block.get("signature", "") + delta.signature
        elif delta.type == "input_json_delta":
            self.arguments[index].append(delta.partial_json)
            call_index = sum(1 for b in self.blocks[: index + 1] if b["type"] == "tool_use") - 1
            return [ToolCallDelta(call_index, None, None, delta.partial_json)]
        return []

    def _add_usage(self, usage: Any, *, output: bool) -> None:
        if usage is None:
            return
        written = getattr(usage, "cache_creation_input_tokens", None) or 0
        read = getattr(usage, "cache_read_input_tokens", None) or 0
        self.usage.input_tokens += (usage.input_tokens or 0) + written + read
        self.usage.cache_write_tokens += written
        self.usage.cache_read_tokens += read
        if output:
            self.usage.output_tokens += usage.output_tokens or 0
        self._requests += 1

    def finish(self, model_name: str) -> Message:
        leading: list[Part] = []
        calls: list[Part] = []
        last_call = max(
            (i for i, b in enumerate(self.blocks) if b["type"] == "tool_use"), default=-1
        )
        for index, block in enumerate(self.blocks):
            kind = block["type"]
            if kind == "text" and block.get("text"):
                leading.append(TextPart(block["text"]))
            elif kind == "thinking":
                leading.append(ThinkingPart(block.get("thinking", ""), block.get("signature")))
            elif kind == "redacted_thinking":
                leading.append(ThinkingPart("", None, redacted=block.get("data", "")))
            elif kind == "tool_use":
                calls.append(self._call(index, block, truncated=index == last_call))
        self.usage.requests = max(1, self._requests)
        return Message(
            "assistant",
            leading + calls,
            usage=self.usage,
            finish_reason=self.stop_reason,
            model_name=model_name,
        )

    def _call(self, index: int, block: Wire, *, truncated: bool) -> ToolCall:
        if index in self.arguments:
            call = ToolCall.from_raw(block["id"], block["name"], "".join(self.arguments[index]))
        else:
            call = ToolCall.from_args(block["id"], block["name"], block.get("input") or {})
        if truncated and self.stop_reason == "max_tokens":
            call.arguments, call.parse_error = None, TRUNCATED
        return call


def _json_object(raw: str) -> Any:
    """The streamed input of a tool_use block as an object (``{}`` when it is not one)."""
    value, _ = parse_json_object(raw) if raw.strip() else ({}, None)
    return value if value is not None else {}


def model_from_string(text: str) -> AnthropicModel:
    """``"anthropic:claude-sonnet-5"`` (key from ``ANTHROPIC_API_KEY``), optionally
    ``"anthropic:<model>@<base url>"`` for a gateway or a local test server."""
    name, sep, url = text.partition("@")
    return AnthropicModel(name, base_url=url if sep else None)
