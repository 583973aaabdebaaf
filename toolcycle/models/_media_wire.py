"""Media parts (:mod:`toolcycle.media`) in each provider's own form.

One function per wire, each turning a user message's parts, text and media in order, into
that wire's content list. Kept apart from the adapters so the four forms sit side by side:
they differ in every field name (a data URL here, a base64 ``source`` there, raw bytes for the
Gemini SDK), and a wrong name is refused by the provider only at run time.
"""

from __future__ import annotations

from typing import Any

from ..media import MediaPart
from ..messages import Message, TextPart

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
