"""Making a model's reply fit to be sent back: the history must stay acceptable to every API.

A model may write a tool name no API accepts (``functions.add``, ``get weather``, an empty
string: seen from small local models), reuse a call id (within the turn, or one already in the
conversation: a new model continuing an old history), or answer with an empty or
whitespace-only turn. The loop answers such calls like any other (an unknown tool is an error
observation), but writing them back as they are would make the next request fail with a 400
(Anthropic refuses empty assistant turns, OpenAI duplicate ids). So the reply is repaired at
the edge before it enters the history: names and ids are re-keyed, blank text is dropped, an
empty turn gets a placeholder. What was changed is said in words and kept in the trace
(``Step.repairs``), and an unknown-tool observation quotes the name the model wrote.

A reply that needs nothing (nearly all of them) is returned as is, without a copy.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..messages import Message, Part, TextPart, ToolCall
from ..tools import TOOL_NAME_PATTERN

#: Call ids every provider accepts (Anthropic's rule is the strictest).
CALL_ID_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

#: The text of an assistant turn that had none (APIs refuse empty assistant content).
EMPTY_TURN = "(empty reply)"


def repair_reply(message: Message, used_ids: set[str]) -> tuple[Message, list[str]]:
    """The reply as it may enter the history, and what was repaired (empty if nothing).

    ``used_ids`` holds every call id already in the conversation; it is not changed here.
    """
    if not _needs_repair(message, used_ids):
        return message, []
    repairs: list[str] = []
    parts: list[Part] = []
    taken = set(used_ids)
    for part in message.parts:
        if isinstance(part, TextPart) and not part.text.strip():
            if part.text:
                repairs.append("dropped a whitespace-only text part")
            continue
        if isinstance(part, ToolCall):
            part = _repaired_call(part, taken, repairs)
            taken.add(part.id)
        parts.append(part)
    if not parts:
        parts.append(TextPart(EMPTY_TURN))
        repairs.append(f"an empty turn was written as {EMPTY_TURN!r}")
    return replace(message, parts=parts), repairs


def _needs_repair(message: Message, used_ids: set[str]) -> bool:
    has_content = False
    seen: set[str] = set()
    for part in message.parts:
        if isinstance(part, ToolCall):
            if (part.id in used_ids or part.id in seen or not CALL_ID_PATTERN.match(part.id)
                    or not TOOL_NAME_PATTERN.match(part.name)):
                return True
            seen.add(part.id)
            has_content = True
        elif isinstance(part, TextPart):
            if not part.text.strip():
                return True
            has_content = True
        else:
            has_content = True
    return not has_content


def _repaired_call(call: ToolCall, taken: set[str], repairs: list[str]) -> ToolCall:
    name, id_ = call.name, call.id
    if not TOOL_NAME_PATTERN.match(name):
        name = invalid_name(name)
        repairs.append(f"tool name {call.name[:80]!r} is not a valid name; written as {name!r}")
    if id_ in taken or not CALL_ID_PATTERN.match(id_):
        id_ = _fresh_id(id_, taken)
        repairs.append(f"call id {call.id[:80]!r} was "
                       f"{'empty' if not call.id else 'reused or invalid'}; re-keyed {id_!r}")
    if name == call.name and id_ == call.id:
        return call
    return replace(call, id=id_, name=name)


def invalid_name(name: str) -> str:
    """A valid name that says the model's was not, and matches no real tool."""
    cleaned = re.sub(r"[^a-zA-Z0-9_-]+", "_", name).strip("_")[:40]
    return f"invalid_name_{cleaned}" if cleaned else "invalid_name"


def _fresh_id(original: str, taken: set[str]) -> str:
    stem = re.sub(r"[^a-zA-Z0-9_-]+", "_", original)[:40] or "call"
    n = 2
    while f"{stem}_{n}" in taken:
        n += 1
    return f"{stem}_{n}"
