"""An MCP server's resources and prompts, as toolcycle values.

Resources are data a server exposes by URI (files, records, generated text). The caller reads
them (:meth:`MCPTools.read_resource`) and attaches them to a prompt
(:func:`resource_text`), or offers them to the model as two read-only tools
(``MCPTools(..., resource_tools=True)``: ``list_resources`` and ``read_resource``). Prompts are
message templates a server offers; :meth:`MCPTools.get_prompt` returns them as neutral
:class:`~toolcycle.messages.Message` objects, ready for ``message_history=``.

Everything here reads what an untrusted server sent: a field of the wrong kind is a
:class:`~toolcycle.mcp.MCPServerError`, never a raw ``AttributeError``; binary content is kept
as bytes and only *described* where text is wanted (its MIME type and size), never inlined.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..messages import Message, TextPart
from ..tools import Tool, ToolSpec
from .connection import MCPServerError
from .content import describe_block

#: Pages read of one listing at most: a server whose cursor never ends cannot hang the caller.
_MAX_PAGES = 100


@dataclass(frozen=True, slots=True)
class Resource:
    """One resource a server lists."""

    uri: str
    name: str
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None


@dataclass(frozen=True, slots=True)
class ResourceContent:
    """What reading a resource gave: ``text``, or ``data`` (decoded bytes) for a blob."""

    uri: str
    mime_type: str | None = None
    text: str | None = None
    data: bytes | None = None

    def as_text(self) -> str:
        """The content for a prompt or an observation: the text itself under a header, or,
        for binary data, only its header (URI, MIME type, size)."""
        mime = self.mime_type or "unknown type"
        if self.text is not None:
            return f"[resource <{self.uri}>, {mime}]\n{self.text}"
        return f"[resource <{self.uri}>, {mime}, {len(self.data or b''):,} bytes]"


@dataclass(frozen=True, slots=True)
class PromptArgument:
    name: str
    description: str | None = None
    required: bool = False


@dataclass(frozen=True, slots=True)
class Prompt:
    """One prompt template a server lists."""

    name: str
    description: str | None = None
    arguments: tuple[PromptArgument, ...] = ()


def resource_text(contents: list[ResourceContent]) -> str:
    """Read contents as one text block to attach to a prompt."""
    return "\n\n".join(c.as_text() for c in contents)


async def list_resources(client: Any) -> list[Resource]:
    """Every page of ``resources/list``."""
    found: list[Resource] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await client.list_resources(cursor=cursor)
        found.extend(Resource(str(r.uri), str(r.name), r.description, r.mime_type, r.size)
                     for r in page.resources)
        cursor = page.next_cursor
        if cursor is None:
            break
    return found


async def read_resource(client: Any, uri: str) -> list[ResourceContent]:
    """``resources/read`` of ``uri``: each content, blobs decoded."""
    result = await client.read_resource(uri)
    contents = []
    for item in result.contents:
        text = getattr(item, "text", None)
        blob = getattr(item, "blob", None)
        if text is None and blob is None:
            raise MCPServerError(f"resources/read <{uri}>: a content has neither text nor blob")
        data = None
        if text is None:
            try:
                data = base64.b64decode(str(blob), validate=True)
            except (binascii.Error, ValueError) as exc:
                raise MCPServerError(
                    f"resources/read <{uri}>: a blob is not valid base64") from exc
        contents.append(ResourceContent(str(item.uri), item.mime_type,
                                        None if text is None else str(text), data))
    return contents


async def list_prompts(client: Any) -> list[Prompt]:
    """Every page of ``prompts/list``."""
    found: list[Prompt] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await client.list_prompts(cursor=cursor)
        found.extend(Prompt(str(p.name), p.description, tuple(
            PromptArgument(str(a.name), a.description, bool(a.required))
            for a in p.arguments or ())) for p in page.prompts)
        cursor = page.next_cursor
        if cursor is None:
            break
    return found


def prompt_messages(result: Any) -> list[Message]:
    """A ``prompts/get`` result as neutral messages, consecutive blocks of one role merged
    into one message. Text stays text; an embedded text resource is its text under a header;
    images, audio and links are described (their kind, MIME type and size)."""
    messages: list[Message] = []
    for item in result.messages:
        if item.role not in ("user", "assistant"):
            raise MCPServerError(f"prompts/get: a message has the role {item.role!r}")
        part = TextPart(describe_block(item.content))
        if messages and messages[-1].role == item.role:
            messages[-1].parts.append(part)
        else:
            messages.append(Message(item.role, [part]))
    return messages


def resource_tools(prefix: str, listing: Callable[[], Awaitable[list[Resource]]],
                   reading: Callable[[str], Awaitable[list[ResourceContent]]],
                   timeout: float | None) -> list[Tool[Any]]:
    """The two read-only tools that let a model browse a server's resources."""

    async def list_all() -> str:
        return "\n".join(json.dumps({k: v for k, v in (
            ("uri", r.uri), ("name", r.name), ("description", r.description),
            ("mimeType", r.mime_type)) if v is not None}, ensure_ascii=False)
            for r in await listing()) or "(the server lists no resources)"

    async def read(uri: str) -> str:
        return resource_text(await reading(uri))

    listed = ToolSpec(f"{prefix}list_resources",
                      "List the resources (documents, data) this server offers: one JSON "
                      "object per line with uri, name, description and mimeType.",
                      {"type": "object", "properties": {}, "additionalProperties": False})
    reader = ToolSpec(f"{prefix}read_resource",
                      "Read one of this server's resources by its URI.",
                      {"type": "object", "properties": {"uri": {
                          "type": "string", "description": "the resource's URI"}},
                       "required": ["uri"], "additionalProperties": False})
    return [Tool(listed, list_all, timeout=timeout, read_only=True, idempotent=True),
            Tool(reader, read, timeout=timeout, read_only=True, idempotent=True)]
