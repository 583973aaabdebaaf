"""Gemini ``Content``/``Part`` objects as the neutral history, and back.

Private to :mod:`toolcycle.models.google`. A Gemini candidate's content is a list of parts:
``text`` (``thought: true`` for thought summaries), ``functionCall``; any part may carry a
``thoughtSignature``, an opaque token that must come back on the same part, or the API
refuses the next request (for a ``functionCall`` part, with a 400). Signatures live where
the neutral history keeps provider-opaque data: the ``signature`` of a
:class:`~toolcycle.messages.ThinkingPart`, as a JSON envelope. A thought part becomes a
thinking part holding its own signature; a signature on a text or call part becomes an empty
thinking part just before it (``"on": "next"``), re-attached to that part on the way back.

Gemini may leave ``functionCall.id`` out; the neutral call then gets a synthesised id
(prefixed :data:`SYNTHETIC`) that is never sent back: answers are matched by order and name.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from ..media import MediaPart
from ..messages import Message, Part, TextPart, ThinkingPart, ToolCall, Usage
from ._media_wire import gemini_part, gemini_response_parts, has_media
from ._responses_items import signature_envelope

Wire = dict[str, Any]
ENVELOPE_KEY = "gemini_thought"
SYNTHETIC = "gemini-call-"


def _signature(part: Any) -> str | None:
    raw = getattr(part, "thought_signature", None)
    if raw is None:
        return None
    return base64.b64encode(raw).decode() if isinstance(raw, bytes) else str(raw)


def envelope(signature: str, on: str) -> str:
    return json.dumps({ENVELOPE_KEY: {"signature": signature, "on": on}})


def envelope_of(part: ThinkingPart) -> Mapping[str, Any] | None:
    """The envelope a Gemini thinking part carries, or ``None`` (another provider's)."""
    return signature_envelope(part, ENVELOPE_KEY)


def neutral_parts(parts: list[Any], call_prefix: str, first_call: int = 0) -> list[Part]:
    """SDK ``Part`` objects as neutral parts (see the module docstring)."""
    out: list[Part] = []
    calls = first_call
    for part in parts:
        signature = _signature(part)
        call = getattr(part, "function_call", None)
        text = getattr(part, "text", None)
        if getattr(part, "thought", None) and call is None:
            sig = envelope(signature, "self") if signature else None
            out.append(ThinkingPart(text or "", signature=sig))
            continue
        if signature is not None:
            out.append(ThinkingPart("", signature=envelope(signature, "next")))
        if call is not None:
            call_id = call.id or f"{SYNTHETIC}{call_prefix}-{calls}"
            calls += 1
            args = json.dumps(call.args or {})
            out.append(ToolCall.from_raw(call_id, call.name or "", args))
        elif text is not None:
            out.append(TextPart(text))
    return out


def contents(message: Message) -> tuple[str | None, Wire | None]:
    """One neutral message as (system text, Gemini content); either may be ``None``."""
    if message.role == "system":
        return message.text, None
    if message.role == "user":
        if not has_media(message):
            return None, {"role": "user", "parts": [{"text": message.text or " "}]}
        return None, {"role": "user", "parts": [
            gemini_part(p) if isinstance(p, MediaPart) else {"text": p.text}
            for p in message.parts if isinstance(p, MediaPart) or (
                isinstance(p, TextPart) and p.text)]}
    if message.role == "tool":
        parts: list[Wire] = []
        for result in message.results:
            response: Wire = {
                "name": result.name,
                "response": {"error" if result.is_error else "result": result.content},
            }
            if not result.call_id.startswith(SYNTHETIC):
                response["id"] = result.call_id
            if result.media and (media := gemini_response_parts(result)):
                response["parts"] = media
            parts.append({"function_response": response})
        return None, {"role": "user", "parts": parts} if parts else None
    out: list[Wire] = []
    pending: str | None = None
    for part in message.parts:
        if isinstance(part, ThinkingPart):
            env = envelope_of(part)
            if env is None:
                continue  # another provider's reasoning cannot go to this API
            if env.get("on") == "next":
                pending = env.get("signature")
            elif part.text or env.get("signature"):
                thought: Wire = {"text": part.text, "thought": True}
                if env.get("signature"):
                    thought["thought_signature"] = base64.b64decode(env["signature"])
                out.append(thought)
            continue
        wire: Wire
        if isinstance(part, TextPart):
            if not part.text and pending is None:
                continue
            wire = {"text": part.text}
        elif isinstance(part, ToolCall):
            call: Wire = {"name": part.name, "args": part.arguments or {}}
            if not part.id.startswith(SYNTHETIC):
                call["id"] = part.id
            wire = {"function_call": call}
        else:
            continue
        if pending is not None:
            wire["thought_signature"] = base64.b64decode(pending)
            pending = None
        out.append(wire)
    return None, {"role": "model", "parts": out} if out else None


def wire_usage(usage: Any) -> Usage:
    """``usageMetadata``: thoughts are billed as output and reported apart as reasoning."""
    if usage is None:
        return Usage(requests=1)
    thoughts = usage.thoughts_token_count or 0
    return Usage(
        input_tokens=usage.prompt_token_count or 0,
        output_tokens=(usage.candidates_token_count or 0) + thoughts,
        cache_read_tokens=usage.cached_content_token_count or 0,
        requests=1,
        reasoning_tokens=thoughts,
    )
