"""What the test server answers: scripted model replies and injected faults.

A script is a list of entries consumed one per request. A :class:`Reply` is written in neutral
terms and rendered in whichever wire protocol the request used; a callable entry receives the
request body and returns a :class:`Reply` (for replies that depend on what the client sent). A
:class:`Fault` makes the server misbehave for one request (error status, slowness, a dropped
connection) without consuming the reply after it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Call:
    """A tool call in a scripted reply; ``arguments`` may be a raw (even malformed) string."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    @property
    def raw(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass(slots=True)
class Reply:
    """One model reply.

    ``truncate`` cuts the last call's arguments in half and reports ``length`` / ``max_tokens``.
    ``pause`` (Anthropic) answers ``pause_turn``; the client must send the partial turn back.
    ``thinking`` becomes an Anthropic thinking block (signed by the server) or OpenAI-compatible
    ``reasoning_content``. ``redacted`` adds an Anthropic ``redacted_thinking`` block (opaque
    data the server can recognise when it comes back). ``event_delay`` spaces streamed events
    out (to cancel mid-stream).
    """

    text: str = ""
    calls: list[Call] = field(default_factory=list)
    thinking: str | None = None
    redacted: bool = False
    truncate: bool = False
    pause: bool = False
    output_tokens: int | None = None
    event_delay: float = 0.0


@dataclass(slots=True)
class Fault:
    """Misbehave once: answer ``status`` (with ``retry_after``), sleep ``delay`` seconds first,
    or ``drop`` the connection part-way through the response. On a streaming request a drop
    renders the next reply and cuts the stream after ``drop_after`` events (the reply is used
    up); on a JSON request it cuts the body."""

    status: int | None = None
    retry_after: str | None = None
    delay: float = 0.0
    drop: bool = False
    drop_after: int = 0
    message: str = "injected failure"


Entry = Reply | Fault | Callable[[dict[str, Any]], Reply]


def text(value: str) -> Reply:
    return Reply(text=value)


def calls(*items: Call, text: str = "") -> Reply:
    return Reply(text=text, calls=list(items))


class ScriptError(Exception):
    """The test script does not fit the request (a test bug, or the adapter sent the wrong
    controls: e.g. calls scripted while the request said ``tool_choice: none``)."""
