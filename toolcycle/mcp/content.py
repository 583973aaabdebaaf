"""An MCP tool result as the observation the model reads.

A ``tools/call`` result is a list of content blocks plus, for tools with an ``outputSchema``,
``structuredContent``. The model reads text, so:

- text blocks are the text itself;
- structured content is its JSON; a text block that only repeats it (the specification asks
  servers to add one for older clients) is not said twice;
- images, audio, resource links and embedded resources are *described* (kind, MIME type,
  size, URI, an embedded text resource's text), never dropped silently: the model learns the
  tool produced them, and a missing picture cannot pass for an empty answer.

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

from .connection import MCPToolError


def observation(result: Any) -> str:
    """The observation text of a ``CallToolResult`` (raises for ``isError`` results)."""
    structured = getattr(result, "structured_content", None)
    structured_json = (None if structured is None
                       else json.dumps(structured, ensure_ascii=False, separators=(",", ":")))
    parts: list[str] = []
    if structured_json is not None:
        parts.append(structured_json)
    for block in result.content or ():
        text = describe_block(block)
        if structured is not None and getattr(block, "type", "") == "text" and _same_json(
                text, structured):
            continue
        parts.append(text)
    text = "\n".join(parts)
    if result.is_error:
        raise MCPToolError(text or "the tool reported an error without a message")
    return text


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
