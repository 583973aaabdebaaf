"""Streaming through a text protocol: show the answer as it is written, hold back calls.

A text-protocol reply is a call or an answer, and which one is only certain at the end. The
functions here say, for the reply written so far, how much answer text can already be shown:
the inside of ``{"answer": "...`` (JSON protocol), what follows ``Final Answer:`` (ReAct), and
prose up to the first character that may start a call (a brace, a fence, a tag). Everything
else is held back until the reply is complete and parsed; calls then come out whole, as
:class:`~toolcycle.models.base.ToolCallDelta` items. What is shown is a prefix of the final
answer in the common cases; the parsed message stays the authority (prose that turns out to
be the thought before a call has been shown by then, as with native streaming models).
"""

from __future__ import annotations

import json
import re

_ANSWER_OPEN = re.compile(r'(?:\[\s*)?\{\s*"answer"\s*:\s*"')  # [{"answer": with parallel calls
#: What may start a call in the JSON protocol (see :mod:`.calls`): hold back from here on.
_CALL_START = re.compile(r"[{\[`<]")
_FINAL = re.compile(r"(?:^|\n)[ \t]*[*_]*Final[ _]Answer[*_]*[ \t]*:[*_]*[ \t]*", re.IGNORECASE)
_REACT_KEYWORD = re.compile(r"(?:^|\n)[ \t]*[*_]*(?:Action|Observation)", re.IGNORECASE)
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
            "t": "\t"}


def json_answer_so_far(text: str) -> str:
    """The answer text a JSON-protocol reply shows so far (see the module docstring)."""
    stripped = text.lstrip()
    opened = _ANSWER_OPEN.match(stripped)
    if opened is not None:
        return partial_json_string(stripped[opened.end():])
    start = _CALL_START.search(stripped)
    return (stripped if start is None else stripped[: start.start()]).rstrip()


def react_answer_so_far(text: str) -> str:
    """What follows ``Final Answer:`` once no Action comes before it; else nothing yet."""
    final = _FINAL.search(text)
    if final is None or _REACT_KEYWORD.search(text, 0, final.start()):
        return ""
    answer = text[final.end():].lstrip()
    if answer.startswith('"'):  # Qwen 0.5B quotes its answers: the quotes go at the end
        return ""
    return answer.rstrip()


def partial_json_string(body: str) -> str:
    """The decoded content of a JSON string literal whose opening quote is already read,
    up to its closing quote or to the end of what has arrived (a cut escape is held back)."""
    out: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char == '"':
            break
        if char != "\\":
            out.append(char)
            index += 1
            continue
        if index + 1 >= len(body):
            break
        code = body[index + 1]
        if code == "u":
            digits = body[index + 2: index + 6]
            if len(digits) < 4:
                break
            try:
                out.append(json.loads(f'"\\u{digits}"'))
            except json.JSONDecodeError:  # a lone surrogate half: wait for its pair or end
                break
            index += 6
            continue
        out.append(_ESCAPES.get(code, code))
        index += 2
    return "".join(out)


def new_text(shown: str, visible: str) -> str:
    """The part of ``visible`` not shown yet; empty when it no longer extends what was shown."""
    return visible[len(shown):] if visible.startswith(shown) else ""
