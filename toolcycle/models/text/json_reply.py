"""How a JSON-protocol reply is read: its calls (as meant, placeholders cut), its answer, its
thought, as neutral parts (:class:`~.protocol.JsonToolsModel` and the protocols built on it)."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from ...messages import Part, TextPart, ThinkingPart
from ..base import ToolDefinition
from .calls import calls_before_placeholder, parse_tool_calls
from .meant import as_meant
from .nested import call_written_as_code

_ESCAPED_JSON = re.compile(r"\{\s*&(?:#34|quot);")


def json_reply_parts(text: str, tools: Sequence[ToolDefinition], id_prefix: str,
                     *, truncated: bool = False) -> list[Part]:
    """Neutral parts from a JSON-protocol reply: the thought and the calls, or the thought
    (as thinking) and the answer, or the whole text as the answer (``truncated``: the reply
    hit the token limit, see :func:`~.calls.parse_tool_calls`)."""
    if _ESCAPED_JSON.search(text):
        # llama_cpp.server's chatml-function-calling template HTML-escapes the history,
        # and the model then writes its calls the way it sees them: {&#34;name&#34;: ...
        text = html.unescape(text)
    parsed = parse_tool_calls(text, id_prefix, {t.name for t in tools}, truncated=truncated)
    parts: list[Part] = []
    if parsed.calls and not tools:
        # Tools were withdrawn; whatever was written is the answer.
        return [TextPart(parsed.answer if parsed.answer is not None else text.strip())]
    if parsed.calls:
        if parsed.thought:
            parts.append(TextPart(parsed.thought))
        parts.extend(calls_before_placeholder(as_meant(parsed.calls, tools)))
    elif (code := call_written_as_code((parsed.answer if parsed.answer is not None
                                        else text).strip(), tools, f"{id_prefix}_1")):
        parts.append(code)  # an answer that is only a call, written as code: that call
    elif parsed.answer is not None:
        if parsed.thought:
            parts.append(ThinkingPart(parsed.thought))
        parts.append(TextPart(parsed.answer))
    elif text.strip():
        parts.append(TextPart(text.strip()))
    return parts
