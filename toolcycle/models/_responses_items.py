"""Output items of the OpenAI Responses API as the neutral assistant message, and back.

Private to :mod:`toolcycle.models.openai_responses`. A response is a list of output items
(``reasoning``, ``message``, ``function_call``) in the order the model produced them; the
neutral message keeps that order in its parts, so that each reasoning item still precedes
the item that followed it when the history goes back.

Reasoning items are provider-opaque and must go back unchanged (stateless requests carry
their ``encrypted_content``; the API refuses a ``function_call`` item sent without the
reasoning item it followed, and a reasoning item sent without its following item). They
live where the neutral history keeps provider-opaque data already: the ``signature`` of a
:class:`~toolcycle.messages.ThinkingPart` (Anthropic keeps its thinking signatures there),
as a JSON envelope holding the item exactly as received and the id of the item that
followed it. ``text`` is the readable summary, as for other providers' thinking.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ModelError
from ..media import refuse_media
from ..messages import Message, Part, TextPart, ThinkingPart, ToolCall, Usage
from ._media_wire import has_media, responses_content, responses_output
from .base import StreamItem, TextDelta, ThinkingDelta, ToolCallDelta

Wire = dict[str, Any]

#: The key of the envelope in ``ThinkingPart.signature`` that marks a Responses reasoning item.
ENVELOPE_KEY = "openai_responses_reasoning"

TRUNCATED = (
    "the response hit the output token limit (max_output_tokens) while the model was writing "
    "this call's arguments, so they are incomplete; call the tool again with complete arguments"
)


def wire_usage(usage: Any) -> Usage:
    """``usage`` of a response: ``input_tokens_details.cached_tokens`` are cache reads.

    Reasoning tokens (``output_tokens_details.reasoning_tokens``) are part of
    ``output_tokens``, as the API bills them, and also reported apart as
    ``Usage.reasoning_tokens``.
    """
    if usage is None:
        return Usage(requests=1)
    details = getattr(usage, "input_tokens_details", None)
    output_details = getattr(usage, "output_tokens_details", None)
    return Usage(
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        cache_read_tokens=getattr(details, "cached_tokens", None) or 0,
        requests=1,
        reasoning_tokens=getattr(output_details, "reasoning_tokens", None) or 0,
    )


def reasoning_part(item: Mapping[str, Any], following: Mapping[str, Any] | None) -> ThinkingPart:
    """A reasoning item as a thinking part that carries the item itself for the way back."""
    summary = "".join(
        s.get("text", "") for s in item.get("summary") or () if isinstance(s, Mapping)
    )
    content = "".join(
        c.get("text", "") for c in item.get("content") or () if isinstance(c, Mapping)
    )
    after = {"type": following.get("type"), "id": following.get("id")} if following else None
    envelope = {ENVELOPE_KEY: {"item": dict(item), "next": after}}
    return ThinkingPart(summary or content, signature=json.dumps(envelope))


def signature_envelope(part: ThinkingPart, key: str) -> dict[str, Any] | None:
    """The JSON envelope under ``key`` in a thinking part's signature, or ``None`` (another
    provider's signature). Shared with the Gemini adapter, which keeps its signatures so."""
    signature = part.signature
    if not signature or not signature.startswith('{"' + key):
        return None
    try:
        data = json.loads(signature)
    except ValueError:
        return None
    envelope = data.get(key) if isinstance(data, dict) else None
    return envelope if isinstance(envelope, dict) else None


def envelope_of(part: ThinkingPart) -> Mapping[str, Any] | None:
    """The envelope a Responses reasoning part carries, or ``None`` (another provider's)."""
    envelope = signature_envelope(part, ENVELOPE_KEY)
    if envelope is None or not isinstance(envelope.get("item"), dict):
        return None
    return envelope


def input_items(message: Message, raw_arguments: Any) -> list[Wire]:
    """One neutral message as Responses input items (tool results become one output each).

    ``raw_arguments`` gives the arguments string to send back for a call.
    """
    role = message.role
    if role == "tool":
        return [
            {"type": "function_call_output", "call_id": r.call_id, "output": responses_output(r)}
            for r in message.results
        ]
    if role == "user" and has_media(message):
        refuse_media([message], "OpenAI Responses", frozenset({"image", "document"}))
        return [{"role": "user", "content": responses_content(message)}]
    if role != "assistant":
        return [{"role": role, "content": message.text}]
    out: list[Wire] = []
    follower: Mapping[str, Any] | None = None  # type and id of the item after a reasoning item
    for part in message.parts:
        if isinstance(part, ThinkingPart):
            envelope = envelope_of(part)
            if envelope is not None:  # other providers' reasoning cannot go to this API
                out.append(envelope["item"])
                follower = envelope.get("next")
            continue
        if isinstance(part, TextPart):
            if not part.text:
                continue
            item: Wire = {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": part.text, "annotations": []}],
            }
            if follower is not None and follower.get("type") == "message":
                item = {"id": follower["id"], **item, "status": "completed"}
            else:
                item = {"role": "assistant", "content": part.text}
            out.append(item)
        elif isinstance(part, ToolCall):
            call: Wire = {
                "type": "function_call",
                "call_id": part.id,
                "name": part.name,
                "arguments": raw_arguments(part),
            }
            if follower is not None and follower.get("type") == "function_call":
                call["id"] = follower["id"]
            out.append(call)
        else:
            continue
        follower = None
    return out


@dataclass(slots=True)
class _Call:
    index: int
    call_id: str
    name: str
    arguments: list[str] = field(default_factory=list)


class ItemAssembly:
    """Collects a response's output items, whole or streamed, into one assistant message."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget a failed attempt before a retry starts the stream over."""
        self.done: dict[int, Wire] = {}
        self.calls: dict[int, _Call] = {}
        self.final: Any = None

    # -- streaming ------------------------------------------------------------------------

    def add_event(self, event: Any) -> list[StreamItem]:
        """Stream items for one event; terminal events keep the response for :meth:`finish`."""
        kind = event.type
        if kind == "response.output_text.delta":
            return [TextDelta(event.delta)] if event.delta else []
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return [ThinkingDelta(event.delta)] if event.delta else []
        if kind == "response.output_item.added" and event.item.type == "function_call":
            call = _Call(len(self.calls), event.item.call_id, event.item.name)
            self.calls[event.output_index] = call
            return [ToolCallDelta(call.index, call.call_id, call.name, "")]
        if kind == "response.function_call_arguments.delta":
            pending = self.calls.get(event.output_index)
            if pending is None or not event.delta:
                return []
            pending.arguments.append(event.delta)
            return [ToolCallDelta(pending.index, None, None, event.delta)]
        if kind == "response.output_item.done":
            # The done item is the complete one: encrypted reasoning may still be partial
            # in the "added" event, the API says.
            self.done[event.output_index] = event.item.to_dict(mode="json")
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            self.final = event.response
        return []

    # -- the message ----------------------------------------------------------------------

    def finish(self, response: Any, model_name: str) -> Message:
        """The neutral message of a finished response (raises for a failed or empty one)."""
        status = getattr(response, "status", None)
        if status == "failed":
            error = getattr(response, "error", None)
            text = getattr(error, "message", None) or "the response failed"
            raise ModelError(
                f"openai-responses request failed: {text}",
                provider="openai-responses",
                model=model_name,
                provider_message=text,
                error_type=getattr(error, "code", None),
            )
        items = list(self._items(response))
        reason = getattr(getattr(response, "incomplete_details", None), "reason", None)
        if status == "incomplete" and reason != "max_output_tokens":
            raise ModelError(
                f"openai-responses response incomplete: {reason or 'no reason given'}",
                provider="openai-responses",
                model=model_name,
                error_type=reason,
            )
        parts = self._parts(items, truncated=status == "incomplete")
        usage = wire_usage(getattr(response, "usage", None))
        if status == "incomplete" and not any(
            isinstance(p, ToolCall) or (isinstance(p, TextPart) and p.text) for p in parts
        ):
            raise ModelError(
                "openai-responses response hit max_output_tokens before any answer or tool "
                f"call was written ({usage.output_tokens} output tokens, reasoning included)",
                provider="openai-responses",
                model=model_name,
                error_type="max_output_tokens",
            )
        calls = any(isinstance(p, ToolCall) for p in parts)
        finish = "length" if status == "incomplete" else "tool_calls" if calls else "stop"
        return Message("assistant", parts, usage=usage, finish_reason=finish, model_name=model_name)

    def _items(self, response: Any) -> Iterator[Wire]:
        output = list(getattr(response, "output", None) or ())
        for index in range(max(len(output), max(self.done, default=-1) + 1)):
            if index in self.done:
                yield self.done[index]
            elif index < len(output):
                yield output[index].to_dict(mode="json")

    def _parts(self, items: list[Wire], *, truncated: bool) -> list[Part]:
        parts: list[Part] = []
        last_call = max((i for i, it in enumerate(items) if it["type"] == "function_call"),
                        default=-1)
        for index, item in enumerate(items):
            kind = item.get("type")
            if kind == "reasoning":
                following = items[index + 1] if index + 1 < len(items) else None
                parts.append(reasoning_part(item, following))
            elif kind == "message":
                text = "".join(
                    c.get("text", "") if c.get("type") == "output_text" else c.get("refusal", "")
                    for c in item.get("content") or ()
                )
                parts.append(TextPart(text))
            elif kind == "function_call":
                call = ToolCall.from_raw(item["call_id"], item["name"], item.get("arguments", ""))
                if truncated and index == last_call:
                    call.arguments, call.parse_error = None, TRUNCATED
                parts.append(call)
        return parts
