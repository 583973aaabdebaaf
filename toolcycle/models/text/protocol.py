"""The JSON protocol: tool calls written as JSON objects, optionally under a grammar.

:class:`JsonToolsModel` is the default protocol of the local models: calls as
``{"name": ..., "arguments": {...}}`` (a list of them with ``parallel_tool_calls``), the
answer as ``{"answer": ...}``, and the questions it asks of a reply of calls (about values no
source gives, :mod:`.invented`; for the further calls a list left out, :mod:`.further`). The
base every text protocol shares, :class:`~.base.TextProtocolModel`, is in :mod:`.base` and
importable from here as before; :class:`~toolcycle.models.text.react.ReActModel` and
:class:`~toolcycle.models.text.hermes.HermesToolsModel` are the other protocols.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

from ...messages import Message, Part, ToolCall, ToolResult
from ..base import (
    Model,
    ModelResponse,
    ModelSettings,
    OutputMode,
    ResponseFormat,
    StreamItem,
    ToolDefinition,
    usage_of,
)
from ..paid import paying
from .base import TextProtocolModel as TextProtocolModel
from .calls import calls_before_placeholder as calls_before_placeholder  # (old public path)
from .calls import render_observation_text, render_tool_call
from .choice import after_observation
from .choice import repeated_call_names as repeated_call_names  # (old public path)
from .constrained import CONSTRAINED, reply_schema, with_constrained
from .describe import describe_tools as describe_tools  # importable from here, as before
from .describe import json_tool_instructions
from .further import FURTHER_ROUNDS, JSON_FURTHER, ONLY_FURTHER, covered, revised_stream
from .invented import questioned
from .json_reply import json_reply_parts
from .native import answer_form, answer_only_instructions, rendered_answer
from .native import reply_format as native_reply_format
from .streaming import json_answer_so_far

#: The JSON protocol's output modes over a grammar-decoding model, best first: the output tool,
#: then native. Native first tied on the 1.5B (the default pack) and lost on its held-out
#: first-hour agents, and only tool mode has the string-field repair; it won on the 0.5B, which
#: falls back to it within its attempts (measurements: docs/local-model.md).
LOCAL_OUTPUT_MODES: tuple[OutputMode, ...] = ("tool", "native", "prompted")


class JsonToolsModel(TextProtocolModel):
    """Calls written as JSON objects ``{"name": ..., "arguments": {...}}``.

    With ``constrained=True`` (or ``ModelSettings(extra={"constrained": True})`` per agent),
    every reply is grammar-constrained to :func:`~toolcycle.models.text.constrained.reply_schema`:
    one call to an offered tool or ``{"answer": ...}``. Unconstrained replies are parsed
    tolerantly (tags, fences, bare JSON, several calls) and text outside the calls is kept as
    the thought.

    ``constrained="lazy"`` lets the model decide freely and constrains only the call: a request
    that offers tools with ``tool_choice="auto"`` is first answered without the grammar; a
    reply that calls no tool is the answer, one that calls is written again under the grammar
    (both replies' usage counted). Under the grammar a small model calls a tool on every
    question, fitting or not; free, it declines as llama.cpp's own handlers let it, and the
    grammar still shapes the calls it makes (BFCL, Qwen2.5-Coder-0.5B: docs/benchmarks.md).
    This is llama.cpp's "lazy grammar" idea, done with two requests where that is not exposed.

    ``further_calls=True``: with ``parallel_tool_calls``, a reply of calls that leaves some
    of the request's values out is asked for the further calls (:mod:`.further`), again
    while a round keeps a call and values are left out, at most ``further_rounds`` times.
    ``invented_values=True``: a reply whose calls give values no source gives is asked
    once whether the request gives them (:mod:`.invented`); before the further calls.
    ``argument_notes=True``: the tool list says what each argument means, from the schema's
    descriptions (:func:`~.describe.argument_notes`).
    """

    #: How a further-calls request asks for the calls (:func:`~.further.further_history`):
    #: in this protocol's reply form.
    further_wording = JSON_FURTHER
    #: How many further-calls requests one reply may be asked (each while the last kept a
    #: call and values are still left out).
    further_rounds = FURTHER_ROUNDS

    def __init__(self, inner: Model, *, constrained: bool | Literal["lazy"] = False,
                 further_calls: bool = False, invented_values: bool = False,
                 argument_notes: bool = False) -> None:
        super().__init__(inner)
        self.constrained = constrained
        self.further_calls = further_calls
        self.invented_values = invented_values
        self.argument_notes = argument_notes

    def is_constrained(self, settings: ModelSettings) -> bool:
        return bool(settings.extra.get(CONSTRAINED, self.constrained))

    def insisted(self, settings: ModelSettings) -> ModelSettings:
        """Asked again after a reply that ignored ``tool_choice``, the reply is decoded under
        the grammar of that choice (calls only where one is required, the answer only where
        it is asked for) when the inner model decodes under a JSON Schema
        (``schema_grammar``: llama.cpp in process), constrained or not otherwise: the choice
        the model ignored once is kept by construction the second time.

        Why: with grounding's re-ask requiring a call, the 1.5B (unconstrained, its pack's
        default) wrote the same invented answer when asked and again when asked once more,
        and the run ended on it (held-out first-hour seed 6814: "The power draw of Rack
        Delta is 10.5 kW ..." and a written plan "I'll use the `train_id_by_name` tool ...",
        each twice, no call made)."""
        return with_constrained(settings, True) if self.inner.schema_grammar else settings

    def _decides_freely(self, settings: ModelSettings) -> bool:
        """Lazy constraint: the model may answer or call, so it first replies freely (never
        in native output mode, where the grammar is what the mode is)."""
        return (settings.extra.get(CONSTRAINED, self.constrained) == "lazy"
                and bool(settings.tools) and settings.tool_choice == "auto"
                and settings.response_format is None)

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        return await self._revised(messages, settings, await self._reply(messages, settings))

    async def _revised(self, messages: Sequence[Message], settings: ModelSettings,
                       reply: Message) -> Message:
        """``reply`` after the questions this protocol asks of a reply of calls: about values
        no source gives, then for the further calls the request asks for."""
        reply = await questioned(self._ask, messages, settings, reply, self.invented_values)
        return await covered(self._ask, messages, settings, reply, self.further_calls,
                             self.further_wording, self.further_rounds)

    async def _reply(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        if not self._decides_freely(settings):
            return await super().request(messages, settings)
        reply, parts = await self._ask(messages, with_constrained(settings, False))
        if not any(isinstance(p, ToolCall) for p in parts):
            return self._message(reply, parts, usage_of(reply).copy())
        paid = usage_of(reply).copy()  # the free reply's usage, and the constrained one's
        with paying(paid, []):
            message = await super().request(messages, with_constrained(settings, True))
        paid.add(usage_of(message))
        message.usage = paid
        return message

    def stream(
        self, messages: Sequence[Message], settings: ModelSettings
    ) -> AsyncIterator[StreamItem]:
        return revised_stream(self._stream_reply(messages, settings),
                              lambda reply: self._revised(messages, settings, reply))

    async def _stream_reply(
        self, messages: Sequence[Message], settings: ModelSettings
    ) -> AsyncIterator[StreamItem]:
        if not self._decides_freely(settings):
            async for item in super().stream(messages, settings):
                yield item
            return
        outcome: list[tuple[Message, list[Part]]] = []
        async for delta in self._stream_ask(messages, with_constrained(settings, False), outcome):
            yield delta
        reply, parts = outcome.pop()
        if not any(isinstance(p, ToolCall) for p in parts):
            yield ModelResponse(self._message(reply, parts, usage_of(reply).copy()))
            return
        paid = usage_of(reply).copy()
        with paying(paid, []):
            async for item in super().stream(messages, with_constrained(settings, True)):
                if isinstance(item, ModelResponse):
                    paid.add(usage_of(item.message))
                    item.message.usage = paid
                yield item

    def tool_instructions(self, tools: Sequence[ToolDefinition], settings: ModelSettings) -> str:
        return json_tool_instructions(tools, settings, answer_form(settings),
                                      arguments=self.argument_notes)

    def answer_instructions(self, settings: ModelSettings) -> str:
        return answer_only_instructions(settings)

    def render_assistant(self, message: Message, settings: ModelSettings) -> str:
        """Past calls alone, their thought left out (the trace keeps it), in the form the
        model is asked for now: with ``parallel_tool_calls``, a list, as every reply is.

        Measured on Qwen2.5-Coder-1.5B: with its earlier plan in the history it rewrites the
        whole plan before the next call (138 tokens instead of 20, ~6x slower per step).
        """
        calls = [render_tool_call(c) for c in message.tool_calls]
        listed = bool(settings.parallel_tool_calls)
        if not calls and message.text:
            answer = {"answer": rendered_answer(message.text, settings)}
            return json.dumps([answer] if listed else answer, ensure_ascii=False)
        return f"[{', '.join(calls)}]" if listed and calls else "\n".join(calls)

    def render_observations(self, results: Sequence[ToolResult], settings: ModelSettings) -> str:
        observations = "\n".join(render_observation_text(r) for r in results)
        return f"{observations}\n{after_observation(settings, answer_form(settings))}"

    def parse_reply(
        self, text: str, tools: Sequence[ToolDefinition], id_prefix: str,
        *, truncated: bool = False,
    ) -> list[Part]:
        return json_reply_parts(text, tools, id_prefix, truncated=truncated)

    def answer_so_far(self, written: str) -> str:
        return json_answer_so_far(written)

    def output_modes(self) -> tuple[OutputMode, ...]:
        """Native mode first where the inner model decodes under any schema's grammar
        (llama.cpp in-process): the order measured on the 0.5B (docs/structured-output.md)."""
        if self.inner.schema_grammar:
            return LOCAL_OUTPUT_MODES
        return super().output_modes()

    def reply_format(self, settings: ModelSettings) -> ResponseFormat | None:
        return native_reply_format(settings)

    def request_extra(self, settings: ModelSettings) -> dict[str, Any]:
        if not self.is_constrained(settings) or settings.response_format is not None:
            return {}
        schema = reply_schema(settings.tools, settings.tool_choice,
                              parallel=bool(settings.parallel_tool_calls),
                              further=bool(settings.extra.get(ONLY_FURTHER)))
        if schema is None:
            return {}
        return {"response_format": {"type": "json_object", "schema": schema}}

