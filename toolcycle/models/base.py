"""What the loop needs from a model, and nothing more.

A model adapter turns a neutral conversation plus :class:`ModelSettings` into one assistant
:class:`~toolcycle.messages.Message`. It never executes tools and never keeps conversation
state between requests: the loop owns the history. Streaming adapters also yield deltas; the
default :meth:`Model.stream` falls back to one non-streaming request.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..messages import Message, TextPart, ThinkingPart, Usage
from ..output_modes import OUTPUT_MODES as OUTPUT_MODES  # re-exported beside the settings
from ..output_modes import OutputMode as OutputMode
from ..output_modes import ResponseFormat as ResponseFormat
from ..pricing import Price
from ..tools import ToolDefinition as ToolDefinition  # re-exported: adapters' old import path

ToolChoice = Literal["auto", "required", "none"] | str
"""``"auto"``, ``"required"``, ``"none"`` or the name of one tool that must be called."""

@dataclass(slots=True)
class ModelSettings:
    """Per-request parameters the loop passes to the adapter.

    ``tools`` is the same tuple object on every request of a run (adapters may cache their wire
    form keyed by its identity). ``tool_choice`` names a tool when the loop forces the output
    tool at a limit; ``"none"`` with tools present means "answer without calling tools".
    """

    tools: tuple[ToolDefinition, ...] = ()
    tool_choice: ToolChoice = "auto"
    parallel_tool_calls: bool | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    response_format: ResponseFormat | None = None
    """Native structured output: the reply's text must be JSON of this schema."""
    on_repeat: ToolChoice = "none"
    """What a text-protocol adapter asks for when the model repeats a call it just made: the
    answer without tools (``"none"``), or a named tool (the run sets ``"submit"`` in reflection
    mode), which is forced only if it is offered and is not itself the repeated call, else
    ``"none"``; ``"auto"`` keeps the repeated call (no second request). Small models repeat a
    call they were just answered until the iteration limit; the adapter asks once more, so the
    way forward is run policy, given here, not something an adapter knows."""


@dataclass(slots=True)
class TextDelta:
    """A piece of answer text while a response streams."""

    text: str
    kind: Literal["text_delta"] = "text_delta"


@dataclass(slots=True)
class ThinkingDelta:
    text: str
    kind: Literal["thinking_delta"] = "thinking_delta"


@dataclass(slots=True)
class ToolCallDelta:
    """A piece of a tool call while it streams; ``index`` orders calls within the response."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments_delta: str = ""
    kind: Literal["tool_call_delta"] = "tool_call_delta"


@dataclass(slots=True)
class ModelResponse:
    """The complete assistant message of one request (always the last item of a stream)."""

    message: Message
    kind: Literal["response"] = "response"


StreamItem = TextDelta | ThinkingDelta | ToolCallDelta | ModelResponse


class Model(ABC):
    """Base class of every adapter. Subclasses implement :meth:`request`."""

    #: A human-readable model name recorded in traces and on messages.
    name: str = "model"
    #: The provider family (``"openai"``, ``"anthropic"``, ``"local"``, ``"test"``).
    system: str = "unknown"
    #: The input tokens one request may hold, where the adapter knows it (``None``: unknown).
    #: A run compacts its history before it outgrows this (``Limits.max_context_tokens``
    #: overrides it).
    context_window: int | None = None
    #: Whether the model decodes its reply under a grammar compiled from any JSON Schema given
    #: as ``response_format`` (llama.cpp in-process), so a text protocol may hand it a union of
    #: calls and answer. A cloud API's response format takes only some schemas, and an
    #: OpenAI-compatible server may ignore it: they leave this ``False``.
    schema_grammar: bool = False
    #: What this model's requests cost (:mod:`toolcycle.pricing`); ``None``: what the adapter
    #: knows (a cloud adapter the table's price for its model, a local model nothing).
    price: Price | None = None
    #: The model this one wraps, where it changes only how requests are made (a text
    #: protocol, a durable step): its replies cost what the inner model's do.
    inner: Model | None = None

    def pricing(self, answered_by: str | None = None) -> Price | None:
        """The price of a reply this model served, ``None`` when unknown. ``answered_by`` is
        the reply's ``model_name``: a model that delegates (``FallbackModel``) prices each
        reply as the model that wrote it."""
        if self.price is None and self.inner is not None:
            return self.inner.pricing(answered_by)
        return self.price

    def unpriced(self) -> tuple[str, ...]:
        """The names of the models here whose price is unknown (``Limits(max_cost=...)``
        refuses them at construction)."""
        return () if self.pricing() is not None else (self.name,)

    def context_tokens(self) -> int | None:
        """The window a run's history must fit: :attr:`context_window` when set, else what the
        adapter knows of its model (``None``: unknown, no compaction unless the limits set a
        budget)."""
        return self.context_window

    def output_modes(self) -> tuple[OutputMode, ...]:
        """This model's profile for structured output: the modes it can take, best first.
        The first is the default of an ``Output`` without a mode, and a run whose model fails
        one mode (no output in that mode's form) falls back to the next. The output tool comes
        first (today's behaviour); an adapter without a native response format leaves
        ``"native"`` out. A model this base class knows nothing about keeps to the output
        tool (the local text protocols among them: their grammar already constrains the
        output tool's arguments); ask for a mode with ``Output(..., mode=...)``."""
        return ("tool",)

    @abstractmethod
    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        """Send the conversation, return the assistant message (with ``usage`` set)."""

    async def stream(
        self, messages: Sequence[Message], settings: ModelSettings
    ) -> AsyncIterator[StreamItem]:
        """Yield deltas then the final :class:`ModelResponse`. Default: no real streaming."""
        message = await self.request(messages, settings)
        for part in message.parts:
            if isinstance(part, TextPart) and part.text:
                yield TextDelta(part.text)
            elif isinstance(part, ThinkingPart):
                yield ThinkingDelta(part.text)
        for index, call in enumerate(message.tool_calls):
            yield ToolCallDelta(index, call.id, call.name, call.raw_arguments)
        yield ModelResponse(message)

    def load(self) -> None:  # noqa: B027 - optional hook, remote models have nothing to load
        """Make the model ready for its first request: local weights are read (and a model pack
        assembled) here, or else on the first request. Blocking. A caller that tells a person
        the model is ready (``toolcycle demo``, ``toolcycle run``) calls it first, so the
        first request does not silently pay for the load; a server that may never need the
        model (``toolcycle mcp serve`` of plain tools) does not."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook, most adapters hold nothing
        """Release clients or loaded weights."""


def usage_of(message: Message) -> Usage:
    """The usage recorded on a response (one request at least: an adapter that reports
    tokens only, such as ``ScriptedModel``, still made one), or one request's."""
    usage = message.usage
    if usage is None:
        return Usage(requests=1)
    if usage.requests < 1:
        usage = usage.copy()
        usage.requests = 1
    return usage
