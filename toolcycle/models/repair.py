"""Repairing a model's reply at the edge, before it enters the history.

A reply is model output, untrusted: kept as written, an invalid tool name, a reused call id or
an empty assistant turn makes the *next* request fail at the provider (rel-18, rel-20). The
engine runs every reply through :func:`repair_reply` (the check costs one pass and no
allocation when nothing needs repair, the common case); the test model's
:class:`~toolcycle.models.protocol.HistoryChecker` enforces the same rules on whole histories.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace

from ..messages import Message, Part, ToolCall
from ..tools import TOOL_NAME_PATTERN

#: Call ids every provider accepts (Anthropic's ``tool_use.id`` pattern, bounded in length).
CALL_ID_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}\Z")
#: The name a call gets when the model wrote one no provider accepts; no tool may be found by
#: it (the loop answers such a call as an unknown tool, naming ``original_name``).
INVALID_TOOL_NAME = "invalid_tool_name"
#: The text an adapter sends for an assistant turn that had nothing to say, where its wire
#: refuses empty and whitespace-only assistant content (Anthropic). Only on the wire: the
#: history, the trace and the stream keep what the model wrote (r2-15).
EMPTY_TURN_TEXT = "(empty)"


def repair_reply(message: Message, used_ids: AbstractSet[str]) -> tuple[Message, list[str]]:
    """The model's reply as the history may hold it, and what was repaired (for the trace).

    A reply is model output, untrusted: a history that keeps it as written can be refused by
    the next request (rel-18, rel-20). Repairs:

    - a tool name that does not match ``TOOL_NAME_PATTERN`` becomes :data:`INVALID_TOOL_NAME`,
      the name written kept as ``ToolCall.original_name``;
    - a call id that is empty, not accepted by providers (:data:`CALL_ID_PATTERN`), repeated
      within the reply or already in ``used_ids`` (every call id of the history) gets a fresh
      id, deterministic and unique, the id written kept as ``ToolCall.original_id``;

    Text is never changed: a blank or whitespace-only turn is what the model said, and the
    trace, the stream and the history must agree on it (r2-15). The adapters whose wire refuses
    blank text (Anthropic) drop it, or send :data:`EMPTY_TURN_TEXT`, at the edge.

    Pure: ``message`` and its parts are not modified, and the caller adds the returned calls'
    ids to ``used_ids``. When nothing needs repair the same ``message`` object comes back with
    an empty list (the common case allocates nothing); the work is O(number of parts).
    """
    parts = message.parts
    if _sound(message, used_ids):
        return message, []
    repaired: list[Part] | None = None  # made on the first repair
    repairs: list[str] = []
    ids: set[str] | None = None  # this reply's call ids so far, once a reply has two calls
    first_id: str | None = None
    for index, part in enumerate(parts):
        kept: Part = part
        if isinstance(part, ToolCall):
            if first_id is None:
                first_id = part.id
                duplicate = part.id in used_ids
            else:
                if ids is None:
                    ids = {first_id}
                duplicate = part.id in ids or part.id in used_ids
            call = part
            if (duplicate or CALL_ID_PATTERN.match(part.id) is None
                    or not _valid_name(part.name)):
                call = _repaired_call(part, duplicate, used_ids, ids, parts, repairs)
            kept = call
            if ids is not None:
                ids.add(call.id)
            elif call.id != first_id:
                first_id = call.id
        if kept is not part and repaired is None:
            repaired = list(parts[:index])
        if repaired is not None:
            repaired.append(kept)
    if repaired is None:
        return message, repairs
    return replace(message, parts=repaired), repairs


def _sound(message: Message, used_ids: AbstractSet[str]) -> bool:
    """Whether ``message`` needs no repair: the check every reply gets, kept to one pass with
    no allocation for the usual reply of one call or one text (a reply of several calls also
    builds the set of its ids, to see a repeat)."""
    parts = message.parts
    calls = 0
    for part in parts:
        if isinstance(part, ToolCall):
            calls += 1
            call_id = part.id
            if call_id in used_ids or (part.name not in _VALID_NAMES
                                       and not _valid_name(part.name)):
                return False
            # CALL_ID_PATTERN, with a fast path for the usual shapes ("call_…", "toolu_…"): an
            # ASCII identifier of at most 64 characters matches it; the regex (~0.2 us, the
            # costliest step of this check) runs only for the others, such as ids with "-"
            if not (call_id.isascii() and call_id.isidentifier() and len(call_id) <= 64
                    ) and CALL_ID_PATTERN.match(call_id) is None:
                return False
    return calls < 2 or len({p.id for p in parts if isinstance(p, ToolCall)}) == calls


_VALID_NAMES: set[str] = set()  # names seen to match TOOL_NAME_PATTERN (a bounded cache)


def _valid_name(name: str) -> bool:
    """``TOOL_NAME_PATTERN.match``, remembered: a run calls the same few tools over and over."""
    if name in _VALID_NAMES:
        return True
    if TOOL_NAME_PATTERN.match(name) is None:
        return False
    if len(_VALID_NAMES) < 4096:
        _VALID_NAMES.add(name)
    return True


def _repaired_call(
    call: ToolCall,
    duplicate: bool,
    used_ids: AbstractSet[str],
    ids: set[str] | None,
    parts: Sequence[Part],
    repairs: list[str],
) -> ToolCall:
    name_ok = TOOL_NAME_PATTERN.match(call.name) is not None
    id_ok = not duplicate and CALL_ID_PATTERN.match(call.id) is not None
    if name_ok and id_ok:
        return call
    name, call_id = call.name, call.id
    if not name_ok:
        name = INVALID_TOOL_NAME
        repairs.append(f"tool name {call.name!r} is not a valid tool name; "
                       f"written as {INVALID_TOOL_NAME!r}")
    if not id_ok:
        call_id = _fresh_id(used_ids, ids, parts, len(repairs))
        why = "repeats an earlier id" if duplicate else "is not a valid call id"
        repairs.append(f"tool call id {call.id!r} {why}; re-keyed as {call_id!r}")
    return replace(call, name=name, id=call_id,
                   original_name=call.original_name if name_ok else call.name,
                   original_id=call.original_id if id_ok else call.id)


def _fresh_id(
    used_ids: AbstractSet[str], ids: set[str] | None, parts: Sequence[Part], salt: int
) -> str:
    """A call id in none of the history, this reply's ids so far, or the ids it still holds;
    deterministic (a replayed run re-keys the same way)."""
    written = {p.id for p in parts if isinstance(p, ToolCall)}
    number = len(used_ids) + salt + 1
    while True:
        candidate = f"call_r{number}"
        if candidate not in used_ids and candidate not in written and (
            ids is None or candidate not in ids
        ):
            return candidate
        number += 1
