r"""An MCP tool result as the observation the model reads.

A ``tools/call`` result is a list of content blocks plus, for tools with an ``outputSchema``,
``structuredContent``. So:

- text blocks are the text itself;
- structured content is its JSON; a text block that only repeats it (the specification asks
  servers to add one for older clients) is not said twice;
- images, audio and embedded binary resources of a media type toolcycle sends
  (:data:`~toolcycle.media.MEDIA_TYPES`) become :class:`~toolcycle.media.MediaPart`\ s,
  which go to the model like any tool's returned media (docs/media.md);
- other images, audio and blobs, resource links and embedded text resources are *described*
  (kind, MIME type, size, URI, a text resource's text), never dropped silently: the model
  learns the tool produced them, and a missing picture cannot pass for an empty answer.

A result with ``isError`` raises :class:`~toolcycle.mcp.connection.MCPToolError` with the
server's text, which the loop turns into one error observation like any tool exception.
Length is not capped here: the run's ``max_observation_chars`` truncates this text exactly as
it does any tool's return value.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from ..media import MEDIA_TYPES, MediaError, MediaPart
from .connection import MCPToolError


def observation(result: Any) -> str | list[str | MediaPart]:
    """What a ``CallToolResult`` returns to the run: its text, or a list of text and media
    parts in block order when it holds media (raises for ``isError`` results)."""
    structured = getattr(result, "structured_content", None)
    structured_json = (None if structured is None
                       else json.dumps(structured, ensure_ascii=False, separators=(",", ":")))
    parts: list[str | MediaPart] = []
    if structured_json is not None:
        parts.append(structured_json)
    for block in result.content or ():
        media = None if result.is_error else media_of(block)
        if media is not None:
            parts.append(media)
            continue
        text = describe_block(block)
        if structured is not None and getattr(block, "type", "") == "text" and _same_json(
                text, structured):
            continue
        parts.append(text)
    if result.is_error:
        text = "\n".join(p for p in parts if isinstance(p, str))
        raise MCPToolError(text or "the tool reported an error without a message")
    if any(isinstance(p, MediaPart) for p in parts):
        return parts
    return "\n".join(p for p in parts if isinstance(p, str))


def media_of(block: Any) -> MediaPart | None:
    """An image, audio or embedded blob block as a media part, when its MIME type is one
    toolcycle sends and its data decode; ``None`` otherwise (it is described instead)."""
    kind = getattr(block, "type", None)
    if kind in ("image", "audio"):
        data, mime, name = block.data, block.mime_type, None
    elif kind == "resource" and isinstance(getattr(block.resource, "blob", None), str):
        resource = block.resource
        data, mime = resource.blob, getattr(resource, "mime_type", None)
        name = str(resource.uri).rstrip("/").rsplit("/", 1)[-1] or None
    else:
        return None
    if mime not in MEDIA_TYPES or not isinstance(data, str):
        return None
    try:
        return MediaPart(base64.b64decode(data, validate=True), mime, name)
    except (binascii.Error, MediaError, ValueError):  # undecodable, empty or oversized
        return None


def describe_block(block: Any) -> str:
    """One content block as text (see the module docstring)."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind}: {block.mime_type}, {_decoded_size(block.data)}]"
    if kind == "resource_link":
        extra = "".join(f", {label} {value}" for label, value in (
            ("MIME type", getattr(block, "mime_type", None)), ("size", _size(block))) if value)
        return f"[resource link: {block.name} <{block.uri}>{extra}]"
    if kind == "resource":
        resource = block.resource
        mime = getattr(resource, "mime_type", None) or "unknown type"
        text = getattr(resource, "text", None)
        if text is not None:
            return f"[resource <{resource.uri}>, {mime}]\n{text}"
        return f"[resource <{resource.uri}>, {mime}, {_decoded_size(resource.blob)}]"
    dumped = block.model_dump_json() if hasattr(block, "model_dump_json") else repr(block)
    return f"[{kind or 'unknown'} content: {dumped[:300]}]"


def _same_json(text: str, value: Any) -> bool:
    """Whether ``text`` only repeats ``value``: its JSON, or, for the ``{"result": ...}``
    wrapper the SDK puts around a value that is not an object, the wrapped value."""
    candidates = [value]
    if isinstance(value, dict) and list(value) == ["result"]:
        candidates.append(value["result"])
        if isinstance(value["result"], str) and text == value["result"]:
            return True
    try:
        parsed = json.loads(text)
    except (ValueError, TypeError):
        return False
    return any(parsed == c for c in candidates)


def _decoded_size(data: str) -> str:
    try:
        return f"{len(base64.b64decode(data, validate=True)):,} bytes"
    except (binascii.Error, ValueError):
        return f"{len(data):,} characters of undecodable base64"


def _size(block: Any) -> str | None:
    size = getattr(block, "size", None)
    return None if size is None else f"{size:,} bytes"
