"""Further calls: a reply of calls that leaves part of the request out is asked for the rest.

With ``parallel_tool_calls`` one reply may hold every call a request needs ("the weather in
Paris and Rome": two calls), and a small model often closes its list after the first. On
BFCL's spread selection Qwen2.5-Coder-1.5B wrote too few calls on about 28 of its 36 misses in
the two parallel categories: one call with radius 5 for "circles of radius 5, 10, 15 and 20
cm". In an agent loop the calls left out may come in later iterations, or never: the model
reads the first result and answers from it.

What a reply left out shows in the request's literal values (:mod:`.coverage`): 10, 15 and 20
are written there and carried by no call. When a reply of calls leaves such values out, the
model is shown its calls and the values, and asked, under a grammar that admits only a
list of calls (the empty list included), for the further calls the request asks for, or
``[]``. A further call is kept only when it carries a value that was left out and is not a
call already made, so a model that answers the question with more of the same adds nothing.
Where a round kept a call and values are still left out, it is asked again: a request of
three tasks often gets its second in the first further reply and its third only in the next
(on 80 BFCL dev entries of the parallel categories a second round was asked on 10 and turned
2 right, none wrong: bench/runs/2026-12-08/bfcl47/).

Bounded: at most :data:`FURTHER_ROUNDS` more requests per turn, each only when values are
left out and the round before kept a call (on BFCL's ``simple_python`` entries outside the
graded selection, the right single call leaves a value out on 14 % of them; the first call
of a parallel entry on 90 %: bench/runs/2026-12-05/bfcl-count/). Their tokens are in the
turn's usage. The setting is
:class:`~.protocol.JsonToolsModel`'s ``further_calls`` (``?further_calls=`` in a model string,
``ModelSettings(extra={"further_calls": False})`` per agent), on by default for
:func:`~toolcycle.models.local.llama.local_model`; docs/local-model.md has the measurement
behind that default.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import replace

from ...errors import ModelError
from ...messages import Message, Part, ToolCall
from ..base import ModelResponse, ModelSettings, StreamItem, TextDelta, ToolCallDelta, usage_of
from ..paid import paying
from .choice import call_prefix
from .coverage import RequestValue, request_values, unused_values

#: The ``ModelSettings.extra`` key that turns the further-calls request on or off per request.
FURTHER_CALLS = "further_calls"
#: The ``ModelSettings.extra`` key the protocol sets on the further-calls request itself: its
#: grammar admits only a list of calls, the empty list included (no answer).
ONLY_FURTHER = "only_further_calls"

Ask = Callable[[Sequence[Message], ModelSettings], Awaitable[tuple[Message, list[Part]]]]
"""One request to the inner model: the reply and its parsed parts (a protocol's ``_ask``)."""

#: The most further-calls requests one reply is asked (each while the last kept a call and
#: values are still left out). A bound, not a measured optimum: in the measurement behind
#: asking again (module docstring) no third round was due.
FURTHER_ROUNDS = 3

#: How the JSON protocol asks for the further calls: in its own reply form, a JSON list.
JSON_FURTHER = ("If the request asks for more calls, reply with a JSON list of only the "
                "further calls; if it does not, reply [].")


def left_out(messages: Sequence[Message], settings: ModelSettings, reply: Message,
             default: bool) -> tuple[RequestValue, ...]:
    """The request's values that the calls made for it so far (``reply``'s included) leave
    out, where a further-calls request is due; ``()`` where it is not: the setting is off
    (``default``, or the request's own ``extra``), replies are not lists
    (``parallel_tool_calls``), a tool is forced by name, or ``reply`` makes no call or calls
    the tool that ends the attempt (``settings.on_repeat`` names it: structured output's
    output tool, reflection's submit), which asks for nothing further."""
    calls = reply.tool_calls
    if (not settings.extra.get(FURTHER_CALLS, default) or not settings.parallel_tool_calls
            or settings.tool_choice not in ("auto", "required") or not calls
            or any(c.name == settings.on_repeat for c in calls)):
        return ()
    request, made = _request(messages)
    return unused_values(request, [*made, *calls], settings.tools)


def further_history(messages: Sequence[Message], reply: Message,
                    left: Sequence[RequestValue], asked: str = JSON_FURTHER) -> list[Message]:
    """The conversation the further calls are asked with: the reply's calls, then what they
    leave out and the two ways on (more calls, or the empty list), in ``asked``: the
    protocol's own wording of them (a JSON list, or the model family's call layout).

    Not "the further calls whose arguments you already know", as the list instructions say
    (they still do, in the system prompt): told that, the 1.5B answered ``[]`` on four of
    the five BFCL dev entries that needed more calls (bench/runs/2026-12-05/bfcl-count/)."""
    values = ", ".join(v.text for v in left)
    request, _ = _request(messages)
    unmet = "".join(f"\n- {s}" for s in holding(request, left))
    told = f" Not called for yet:{unmet}\n" if unmet else " "
    return [*messages, Message("assistant", list(reply.tool_calls)),
            Message.user(f"These calls leave out {values} from the request.{told}{asked}")]


#: Where a request's sentence ends: ``.``, ``!`` or ``?`` before white space (not the point of
#: ``0.02`` or ``e.g.x``), ``;``, or a line break.
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
#: At most this many sentences are quoted, each cut to this many characters.
_QUOTED_SENTENCES, _SENTENCE_CHARS = 4, 240


def holding(request: str, left: Sequence[RequestValue]) -> list[str]:
    """The sentences of a request of several sentences whose values are all left out, as
    written: what no call has begun, in the request's own words ("Secondly, ... I need to
    book 3 tickets for the concert.") rather than as bare values ("3"). A sentence one of
    whose values a call carries is under way, and one with no values asks for nothing
    checkable. ``[]`` where the request is one sentence (quoting it adds nothing) or every
    sentence would be quoted."""
    sentences = [s.strip() for s in _SENTENCE.split(request.strip()) if s.strip()]
    if len(sentences) < 2:
        return []
    out = set(left)
    kept = [s for s in sentences if (values := request_values(s)) and set(values) <= out]
    if len(kept) == len(sentences):
        return []
    return [s if len(s) <= _SENTENCE_CHARS else s[:_SENTENCE_CHARS] + "..."
            for s in kept[:_QUOTED_SENTENCES]]


def further_settings(settings: ModelSettings) -> ModelSettings:
    """The further-calls request's settings: calls or nothing (no answer, no forced tool)."""
    return replace(settings, tool_choice="auto", extra={**settings.extra, ONLY_FURTHER: True})


def with_further(messages: Sequence[Message], settings: ModelSettings, reply: Message,
                 further: Message, parts: Sequence[Part], left: Sequence[RequestValue]
                 ) -> Message:
    """``reply`` with the further calls kept from ``parts`` (each carries a left-out value,
    repeats no call made, is not the attempt's last tool), numbered on from its calls; both
    requests' usage."""
    request, made = _request(messages)
    done = {_key(c) for c in [*made, *reply.tool_calls]}
    taken = {c.id for c in reply.tool_calls}
    prefix, number = call_prefix(messages), len(reply.tool_calls)
    kept: list[ToolCall] = []
    for call in (p for p in parts if isinstance(p, ToolCall)):
        if (call.arguments is None or call.name == settings.on_repeat or _key(call) in done
                or set(left) <= set(unused_values(request, [call], settings.tools))):
            continue
        number += 1
        while f"{prefix}_{number}" in taken:
            number += 1
        kept.append(replace(call, id=f"{prefix}_{number}"))
        done.add(_key(call))
    usage = usage_of(reply).copy()
    usage.add(usage_of(further))
    return replace(reply, parts=[*reply.parts, *kept], usage=usage,
                   finish_reason="tool_calls")


async def covered(ask: Ask, messages: Sequence[Message], settings: ModelSettings,
                  reply: Message, default: bool, asked: str = JSON_FURTHER,
                  rounds: int = FURTHER_ROUNDS) -> Message:
    """``reply``, with the further calls it left out where :func:`left_out` finds values
    (asked for in ``asked``'s words: :func:`further_history`), asked up to ``rounds`` times
    while each round keeps a call and values are still left out."""
    for _ in range(rounds):
        left = left_out(messages, settings, reply, default)
        if not left:
            return reply
        # A further request that fails or is cancelled still leaves the tokens spent so far.
        with paying(usage_of(reply).copy(), []):
            further, parts = await ask(further_history(messages, reply, left, asked),
                                       further_settings(settings))
        revised = with_further(messages, settings, reply, further, parts, left)
        kept = len(revised.tool_calls) > len(reply.tool_calls)
        reply = revised
        if not kept:
            return reply
    return reply


async def revised_stream(items: AsyncIterator[StreamItem],
                         revise: Callable[[Message], Awaitable[Message]]
                         ) -> AsyncIterator[StreamItem]:
    """A protocol's stream with its final message revised by ``revise`` (:func:`covered`,
    or a protocol's chain of such questions): answer text as it comes, the calls (whole, as
    ever) once the revised message is known, then that message."""
    held: list[ToolCallDelta] = []
    final: Message | None = None
    async for item in items:
        if isinstance(item, ToolCallDelta):
            held.append(item)
        elif isinstance(item, ModelResponse):
            final = item.message
        else:
            yield item
    if final is None:
        raise ModelError("the stream ended without a final response")
    message = await revise(final)
    if message is not final:
        held = [ToolCallDelta(n, c.id, c.name, c.raw_arguments)
                for n, c in enumerate(message.tool_calls)]
        if not held and message.text:  # asked again, the model answered: its answer's text
            yield TextDelta(message.text)
    for delta in held:
        yield delta
    yield ModelResponse(message)


def _request(messages: Sequence[Message]) -> tuple[str, list[ToolCall]]:
    """The user's latest request, and the calls made for it since (earlier turns')."""
    last = max((n for n, m in enumerate(messages) if m.role == "user"), default=-1)
    if last < 0:
        return "", []
    made = [c for m in messages[last + 1:] if m.role == "assistant" for c in m.tool_calls]
    return messages[last].text, made


def _key(call: ToolCall) -> tuple[str, str]:
    return call.name, json.dumps(call.arguments, sort_keys=True, default=str)
