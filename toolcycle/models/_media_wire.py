"""Media parts (:mod:`toolcycle.media`) in each provider's own form.

One function per wire, each turning a user message's parts, text and media in order, into
that wire's content list, and one per wire for the media a tool returned
(``ToolResult.media``). Kept apart from the adapters so the four forms sit side by side:
they differ in every field name (a data URL here, a base64 ``source`` there, raw bytes for the
Gemini SDK), and a wrong name is refused by the provider only at run time.

Tool results, per the official SDKs' types: Anthropic's ``tool_result`` takes ``image`` and
``document`` blocks, Responses' ``function_call_output`` takes ``input_image`` and
``input_file`` items, Gemini's ``functionResponse`` takes ``parts`` with ``inline_data``.
Chat Completions' ``tool`` message takes text only, so its media go in one ``user`` message
right after the turn's tool messages (each call still answered once, by its tool message).
A kind a wire's tool result cannot carry (audio, but on Chat Completions) is not sent: the
result's text already names it, so the model learns it exists and the run goes on.
"""

from __future__ import annotations

from typing import Any

from ..media import MediaKind, MediaPart
from ..messages import Message, TextPart, ToolResult

Wire = dict[str, Any]

_AUDIO_FORMATS = {"audio/wav": "wav", "audio/mpeg": "mp3"}


def has_media(message: Message) -> bool:
    return any(isinstance(p, MediaPart) for p in message.parts)


def openai_chat_content(message: Message) -> list[Wire]:
    """Chat Completions: ``text``, ``image_url`` (a data URL), ``file`` (``file_data`` as a
    data URL, with a ``filename``) and ``input_audio`` (base64 and a format)."""
    out: list[Wire] = []
    for part in message.parts:
        if isinstance(part, TextPart) and part.text:
            out.append({"type": "text", "text": part.text})
        elif isinstance(part, MediaPart):
            if part.media_kind == "image":
                out.append({"type": "image_url", "image_url": {"url": part.data_url}})
            elif part.media_kind == "document":
                out.append({"type": "file", "file": {
                    "filename": part.name or "document.pdf", "file_data": part.data_url}})
            else:
                out.append({"type": "input_audio", "input_audio": {
                    "data": part.base64, "format": _AUDIO_FORMATS[part.media_type]}})
    return out


def responses_content(message: Message) -> list[Wire]:
    """Responses: ``input_text``, ``input_image`` (a data URL) and ``input_file``
    (``file_data`` as a data URL, with a ``filename``). The API takes no audio input: the
    adapter refuses it before this."""
    out: list[Wire] = []
    for part in message.parts:
        if isinstance(part, TextPart) and part.text:
            out.append({"type": "input_text", "text": part.text})
        elif isinstance(part, MediaPart):
            if part.media_kind == "image":
                out.append({"type": "input_image", "image_url": part.data_url, "detail": "auto"})
            else:
                out.append({"type": "input_file", "filename": part.name or "document.pdf",
                            "file_data": part.data_url})
    return out


def anthropic_block(part: MediaPart) -> Wire:
    """Messages API: an ``image`` or ``document`` block with a base64 ``source``. No audio:
    the adapter refuses it before this."""
    block_type = "image" if part.media_kind == "image" else "document"
    return {"type": block_type, "source": {"type": "base64", "media_type": part.media_type,
                                           "data": part.base64}}


def gemini_part(part: MediaPart) -> Wire:
    """Gemini through the google-genai SDK: ``inline_data`` with the raw bytes (the SDK
    writes them as base64 ``inlineData`` on the wire)."""
    return {"inline_data": {"mime_type": part.media_type, "data": part.data}}


#: The kinds each wire takes in a tool result (the rest are named in the text only).
RESULT_KINDS: frozenset[MediaKind] = frozenset({"image", "document"})


def _sent(result: ToolResult, kinds: frozenset[MediaKind]) -> list[MediaPart]:
    return [part for part in result.media if part.media_kind in kinds]


def openai_chat_tool_media(message: Message) -> list[Wire]:
    """Chat Completions: the media of a turn's tool results as one ``user`` message to put
    after its ``tool`` messages (none when no result carries media). Each result's media
    follow a line naming the call they came from, so the model can tell whose they are."""
    content: list[Wire] = []
    for result in message.results:
        if result.media:
            content.append({"type": "text", "text": f"Returned by `{result.name}` "
                                                   f"(call {result.call_id}):"})
            content.extend(openai_chat_content(Message("user", list(result.media))))
    return [{"role": "user", "content": content}] if content else []


def responses_output(result: ToolResult) -> str | list[Wire]:
    """Responses: a ``function_call_output``'s ``output``: the text, or, with media, a list
    of ``input_text``, ``input_image`` and ``input_file`` items."""
    media = _sent(result, RESULT_KINDS)
    if not media:
        return result.content
    return responses_content(Message("user", [TextPart(result.content), *media]))


def anthropic_result_content(result: ToolResult) -> str | list[Wire]:
    """Messages API: a ``tool_result``'s ``content``: the text, or, with media, a ``text``
    block and ``image`` / ``document`` blocks."""
    media = _sent(result, RESULT_KINDS)
    if not media:
        return result.content
    return [{"type": "text", "text": result.content or " "},
            *(anthropic_block(part) for part in media)]


def gemini_response_parts(result: ToolResult) -> list[Wire]:
    """Gemini: a ``functionResponse``'s ``parts`` (``inline_data`` with the raw bytes)."""
    return [gemini_part(part) for part in _sent(result, RESULT_KINDS)]
