"""The base of the text protocols: a model that only writes text, given tools and calls.

:class:`TextProtocolModel` wraps any :class:`~toolcycle.models.base.Model` that returns text
(an in-process llama.cpp model, a ``llama_cpp.server`` behind the OpenAI adapter, any chat
API) and gives the loop what every other adapter gives it: neutral assistant messages with
:class:`~toolcycle.messages.ToolCall` parts. The loop is unchanged; the conversation the inner
model sees is plain text: tool calls are written back the way the model was told to write
them, and observations come back as user turns. Here: the turn (render, ask, parse, ask
again where a reply ignored ``tool_choice``), streamed or not; what a protocol writes and
reads is its subclass's (:mod:`.protocol`, :mod:`.react`, :mod:`.hermes`).

Keys in ``ModelSettings.extra`` meant for the wrapper (``"constrained"``) stay with it; the
rest pass through, with OpenAI-style body keys (``response_format``, ``stop``) that both the
in-process model and ``llama_cpp.server`` understand.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import Any

from ...errors import ModelError
from ...media import refuse_media
from ...messages import Message, Part, Role, TextPart, ToolCall, ToolResult, Usage
from ..base import (
    Model,
    ModelResponse,
    ModelSettings,
    ResponseFormat,
    StreamItem,
    TextDelta,
    ToolCallDelta,
    ToolDefinition,
    usage_of,
)
from ..paid import paying
from .choice import (
    CALL_MADE,
    answer_required,
    call_prefix,
    call_required,
    directive_for,
    ignored_call,
    insisting,
    repeated_call_names,
    way_forward,
)
from .constrained import CONSTRAINED
from .describe import describe_tools as describe_tools  # importable from here, as before
from .further import FURTHER_CALLS, ONLY_FURTHER
from .invented import INVENTED_VALUES
from .streaming import new_text

_WRAPPER_KEYS = frozenset({CONSTRAINED, FURTHER_CALLS, ONLY_FURTHER, INVENTED_VALUES})
class TextProtocolModel(Model):
    """Base of the text protocols: history rendering and settings translation.

    Subclasses say how tools are described (:meth:`tool_instructions`), how a past assistant
    turn and a batch of observations are written (:meth:`render_assistant`,
    :meth:`render_observations`) and how a reply is read (:meth:`parse_reply`).
    """

    def __init__(self, inner: Model) -> None:
        self.inner: Model = inner
        self.name = inner.name
        self.system = inner.system

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        usage, replaced = Usage(), list[str]()
        with paying(usage, replaced):  # a failure still reports the replies it was served
            reply, parts = await self._turn(messages, settings, usage, replaced)
            forward = way_forward(settings, repeated_call_names(parts, messages))
            if forward is not None:
                replaced.append(reply.text)
                reply, parts = await self._turn(messages, replace(settings, tool_choice=forward),
                                                usage, replaced)
            return self._message(reply, parts, usage, replaced)

    async def _turn(self, messages: Sequence[Message], settings: ModelSettings, usage: Usage,
                    replaced: list[str]) -> tuple[Message, list[Part]]:
        """One reply that honours ``tool_choice``: asked once more (:func:`insisting`, under
        :meth:`insisted` settings) when a call was required and the reply made none, or the
        answer was asked for and it called a tool; a second refusal stands. Every reply's
        usage goes into ``usage``, the text of each one asked again after into
        ``replaced``."""
        reply, parts = await self._ask(messages, settings)
        usage.add(usage_of(reply))
        again = self._insisting(messages, settings, reply, parts)
        if again is not None:
            replaced.append(reply.text)
            reply, parts = await self._ask(again, self.insisted(settings), call_prefix(messages))
            usage.add(usage_of(reply))
        return reply, parts

    def insisted(self, settings: ModelSettings) -> ModelSettings:
        """The settings of the request that asks again after a reply ignored
        ``tool_choice``: the same here; a protocol that can write the choice into a grammar
        decodes that request under it (:meth:`JsonToolsModel.insisted
        <toolcycle.models.text.protocol.JsonToolsModel.insisted>`)."""
        return settings

    def _insisting(self, messages: Sequence[Message], settings: ModelSettings,
                   reply: Message, parts: list[Part]) -> list[Message] | None:
        """The history to ask again with when ``reply`` ignored ``tool_choice``, else None
        (a call written where the answer was asked for is shown back as the call it is)."""
        if ignored_call(settings, parts):
            return insisting(messages, parts)
        if not answer_required(settings):
            return None
        called = self.parse_reply(reply.text, settings.tools, call_prefix(messages),
                                  truncated=reply.finish_reason == "length")
        if not any(isinstance(p, ToolCall) for p in called):
            return None
        return insisting(messages, called, CALL_MADE)

    async def stream(
        self, messages: Sequence[Message], settings: ModelSettings
    ) -> AsyncIterator[StreamItem]:
        """Answer text as the inner model writes it; calls whole at the end (see
        :mod:`.streaming`), then the same message :meth:`request` would return."""
        outcome: list[tuple[Message, list[Part]]] = []
        usage, replaced = Usage(), list[str]()
        with paying(usage, replaced):
            async for delta in self._stream_turn(messages, settings, outcome, usage, replaced):
                yield delta
            reply, parts = outcome.pop()
            forward = way_forward(settings, repeated_call_names(parts, messages))
            if forward is not None:
                replaced.append(reply.text)
                async for delta in self._stream_turn(
                        messages, replace(settings, tool_choice=forward), outcome, usage,
                        replaced):
                    yield delta
                reply, parts = outcome.pop()
        message = self._message(reply, parts, usage, replaced)
        for index, call in enumerate(message.tool_calls):
            yield ToolCallDelta(index, call.id, call.name, call.raw_arguments)
        yield ModelResponse(message)

    def _message(self, reply: Message, parts: list[Part], usage: Usage,
                 replaced: Sequence[str] = ()) -> Message:
        return Message(
            "assistant",
            parts,
            usage=usage,
            finish_reason="tool_calls" if any(p.kind == "tool_call" for p in parts)
            else reply.finish_reason,
            model_name=reply.model_name or self.name,
            asked_again=tuple(replaced),
        )

    def _prepare(
        self, messages: Sequence[Message], settings: ModelSettings
    ) -> tuple[list[Message], ModelSettings, Sequence[ToolDefinition], str]:
        """The inner request (text turns, settings), the tools offered, the call-id prefix."""
        refuse_media(messages, self.name)  # the protocol is text: a picture cannot be said
        tools = settings.tools if settings.tool_choice != "none" else ()
        text_messages = self.render_conversation(messages, settings)
        extra = {k: v for k, v in settings.extra.items() if k not in _WRAPPER_KEYS}
        extra.update(self.request_extra(settings))
        inner_settings = ModelSettings(
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            seed=settings.seed,
            extra=extra,
            response_format=self.reply_format(settings),
        )
        return text_messages, inner_settings, tools, call_prefix(messages)

    async def _ask(
        self, messages: Sequence[Message], settings: ModelSettings, ids: str | None = None,
    ) -> tuple[Message, list[Part]]:
        """One request to the inner model: render, send, parse (``ids``: the call-id prefix,
        when ``messages`` hold a turn of this request's own, see :func:`insisting`)."""
        text_messages, inner_settings, tools, prefix = self._prepare(messages, settings)
        prefix = ids or prefix
        reply = await self.inner.request(text_messages, inner_settings)
        return reply, self.parse_reply(reply.text, tools, prefix,
                                       truncated=reply.finish_reason == "length")

    async def _stream_turn(
        self, messages: Sequence[Message], settings: ModelSettings,
        outcome: list[tuple[Message, list[Part]]], usage: Usage, replaced: list[str],
    ) -> AsyncIterator[TextDelta]:
        """:meth:`_turn`, streamed. Where a call is required, a reply's text is held back
        until it is kept (one that called nothing is asked again: its words were no answer).
        Where the answer is asked for, it streams as written; only the end of a reply that
        reads as no answer is held back (a call written anyway, asked again)."""
        held: list[TextDelta] = []
        ends: list[str] = []
        required = call_required(settings)
        async for delta in self._stream_ask(messages, settings, outcome,
                                            ends=ends if answer_required(settings) else None):
            if required:
                held.append(delta)
            else:
                yield delta
        reply, parts = outcome[-1]
        usage.add(usage_of(reply))
        again = self._insisting(messages, settings, reply, parts)
        if again is not None:
            replaced.append(outcome.pop()[0].text)
            held = []
            async for delta in self._stream_ask(again, self.insisted(settings), outcome,
                                                call_prefix(messages)):
                held.append(delta)
            usage.add(usage_of(outcome[-1][0]))
        else:
            held += [TextDelta(end) for end in ends if end]
        for delta in held:
            yield delta

    async def _stream_ask(
        self, messages: Sequence[Message], settings: ModelSettings,
        outcome: list[tuple[Message, list[Part]]], ids: str | None = None,
        ends: list[str] | None = None,
    ) -> AsyncIterator[TextDelta]:
        """One streamed request: answer deltas while it is written; the reply and its parts
        are appended to ``outcome`` at the end (``ids``: as in :meth:`_ask`). The answer's
        end, not yet shown when the reply is parsed, goes to ``ends`` when given (the caller
        shows it once it knows the reply stands), else it is yielded."""
        text_messages, inner_settings, tools, prefix = self._prepare(messages, settings)
        prefix = ids or prefix
        written, shown, reply = "", "", None
        async for item in self.inner.stream(text_messages, inner_settings):
            if isinstance(item, TextDelta):
                written += item.text
                fresh = new_text(shown, self.answer_so_far(written))
                if fresh:
                    shown += fresh
                    yield TextDelta(fresh)
            elif isinstance(item, ModelResponse):
                reply = item.message
        if reply is None:
            raise ModelError(f"{self.name}: the stream ended without a final response")
        parts = self.parse_reply(reply.text, tools, prefix,
                                 truncated=reply.finish_reason == "length")
        if not any(isinstance(p, ToolCall) for p in parts):
            rest = new_text(shown, "".join(p.text for p in parts if isinstance(p, TextPart)))
            if ends is not None:
                ends.append(rest)
            elif rest:
                yield TextDelta(rest)
        outcome.append((reply, parts))

    def answer_so_far(self, written: str) -> str:
        """The answer the reply written so far already shows (default: none until it ends)."""
        return ""

    def load(self) -> None:
        self.inner.load()

    async def aclose(self) -> None:
        await self.inner.aclose()

    # -- the protocol ---------------------------------------------------------------------

    @abstractmethod
    def tool_instructions(self, tools: Sequence[ToolDefinition], settings: ModelSettings) -> str:
        """The system-prompt text that describes the tools and how to call them."""

    @abstractmethod
    def render_assistant(self, message: Message, settings: ModelSettings) -> str:
        """A past assistant turn, written as the model is asked to write it now (``settings``
        are the current request's: the form may depend on them)."""

    @abstractmethod
    def render_observations(self, results: Sequence[ToolResult], settings: ModelSettings) -> str:
        """The observations of one iteration, as a user turn (``settings`` are the current
        request's: what the model may do next depends on its ``tool_choice``)."""

    @abstractmethod
    def parse_reply(
        self, text: str, tools: Sequence[ToolDefinition], id_prefix: str,
        *, truncated: bool = False,
    ) -> list[Part]:
        """Neutral parts (thought, calls, answer) from the model's reply; ``truncated``: it hit
        the token limit, so a call it ends inside is cut off (not missing its braces)."""

    def request_extra(self, settings: ModelSettings) -> dict[str, Any]:
        """Body keys this protocol adds to the inner request (grammar, stop sequences)."""
        return {}

    def reply_format(self, settings: ModelSettings) -> ResponseFormat | None:
        """The schema every reply of the inner model must follow (native output mode, where
        the protocol has a form for it); ``None``: the reply is free text."""
        return None

    def answer_instructions(self, settings: ModelSettings) -> str:
        """The system-prompt text when no tool is offered (default: none)."""
        return ""

    # -- history --------------------------------------------------------------------------

    def render_conversation(
        self, messages: Sequence[Message], settings: ModelSettings
    ) -> list[Message]:
        """The neutral history as plain system/user/assistant text turns.

        Consecutive turns of the same role are merged (an observation followed by a
        validation-retry prompt becomes one user turn), because chat templates expect
        alternation. The tool description goes at the end of the system prompt, so it stays
        a stable prefix that llama.cpp's prompt cache reuses from request to request.
        """
        tools = settings.tools if settings.tool_choice != "none" else ()
        system = "\n\n".join(m.text for m in messages if m.role == "system")
        told = (self.tool_instructions(tools, settings) if tools
                else self.answer_instructions(settings))
        if told:
            system = f"{system}\n\n{told}".strip()
        rendered: list[Message] = [Message.system(system)] if system else []
        written: dict[str, str] = {}  # call id -> the name the model wrote, where it was repaired
        for message in messages:
            role: Role
            if message.role == "system":
                continue
            if message.role == "assistant":
                role, text = "assistant", self.render_assistant(message, settings)
                if not text.strip():
                    continue  # (an empty reply, see insisting): no turn a chat API would take
                written = {c.id: c.original_name for c in message.tool_calls
                           if c.original_name is not None}
            elif message.role == "tool":
                results = message.results
                if written:  # a text model is shown the name it wrote, not the placeholder
                    results = [replace(r, name=written.get(r.call_id, r.name)) for r in results]
                role, text = "user", self.render_observations(results, settings)
            else:
                role, text = "user", message.text
            if rendered and rendered[-1].role == role:
                text = f"{rendered[-1].text}\n\n{text}"
                rendered[-1] = Message(role, [TextPart(text)])
            else:
                rendered.append(Message(role, [TextPart(text)]))
        directive = directive_for(settings)
        if directive:
            if rendered and rendered[-1].role == "user":
                rendered[-1] = Message.user(f"{rendered[-1].text}\n\n{directive}")
            else:
                rendered.append(Message.user(directive))
        return rendered
