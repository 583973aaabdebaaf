"""Handles: the ids a lookup gives (``AQ-620`` for "Jelly Tank"), and which one a lookup
already gave for a value.

A first-hour chain looks a thing up by its name and passes the id it gets to a detail tool.
:func:`handle_of` says whether a result is such an id; :func:`handle_given` finds the id a
lookup gave for a name, so that a detail call given the name itself can be told the id in
its place (:mod:`.recovery`). Seen on the 1.5B (held-out first-hour seed 6815): it wrote the
whole chain in one reply, the lookups by name, the detail calls by the same names, a sum of
made-up figures and an answer; told that the detail tool's `id` "is taken from the request;
the lookup can give it", it wrote the same reply again, the lookups' ids unused above it.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Collection, Iterator
from typing import Any

from ..messages import ToolCall, ToolResult, bounded_repr
from .producers import consumers
from .state import RunState

_HANDLE = re.compile(r"[A-Za-z0-9][\w.:/#-]{0,63}")
_QUOTED = 120


def handle_of(content: str) -> str | None:
    """The handle a result is, where its whole is one token holding a digit."""
    text = content.strip()
    if len(text) > 200:
        return None
    value: Any = text
    with contextlib.suppress(ValueError):  # (not JSON: the text itself)
        value = json.loads(text)
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))
    if not isinstance(value, str):
        return None
    token: str = value.strip()
    return token if _HANDLE.fullmatch(token) and any(c.isdigit() for c in token) else None


def handle_source(state: RunState, handle: str, *, this_turn: bool = False
                  ) -> tuple[str, str] | None:
    """(the tool, the value it was given) of the latest call whose result is the handle
    ``handle`` (:func:`handle_of`), as :func:`handle_given` reads calls and results; ``None``
    where no call gave it."""
    found = None
    for call, content in _answered(state, this_turn):
        if handle_of(content) == handle.strip() and isinstance(call.arguments, dict):
            given = next((v for v in call.arguments.values() if isinstance(v, str)), None)
            if given is not None:
                found = (call.name, given)
    return found


def handle_given(state: RunState, givers: Collection[str], value: str, *,
                 this_turn: bool = False) -> tuple[str, str] | None:
    """(the tool, the handle) where a call to one of ``givers`` was given ``value`` (as one
    of its string arguments, case aside) and its result is a handle: in an earlier turn, or,
    with ``this_turn``, earlier in this one (for a call that runs alone: every call written
    before it has then finished, :mod:`.calls`; a call run beside others in a concurrent
    batch might or might not see them, so it does not look). The latest such call's;
    ``None`` where there is none."""
    wanted = value.strip().casefold()
    if not wanted:
        return None
    found = None
    for call, content in _answered(state, this_turn):
        if (call.name not in givers or not isinstance(call.arguments, dict) or not any(
                isinstance(v, str) and v.strip().casefold() == wanted
                for v in call.arguments.values())):
            continue
        if (handle := handle_of(content)) is not None:
            found = (call.name, handle)
    return found


def _answered(state: RunState, this_turn: bool) -> Iterator[tuple[ToolCall, str]]:
    """Each call that succeeded, with its result's text, in order: of earlier turns, and with
    ``this_turn`` of this one so far (:func:`handle_given` says when that is safe)."""
    calls: dict[str, ToolCall] = {}
    results: list[ToolResult] = []
    for message in state.messages:
        for part in message.parts:
            if isinstance(part, ToolCall):
                calls[part.id] = part
            elif isinstance(part, ToolResult):
                results.append(part)
    if this_turn and state.turn is not None:
        calls.update((c.id, c) for c in state.turn.calls)
        results.extend(answer[0] for answer in state.turn.answers.values())
    for result in results:
        call = calls.get(result.call_id)
        if not result.is_error and call is not None:
            yield call, state.tool_text(result)


def handle_back(state: RunState, own: str, name: str, value: str, alone: bool) -> str | None:
    """Where ``value`` is the handle a call of ``own`` itself gave (an id a lookup returned,
    passed back to the lookup as a name): the line naming the tool that takes such a handle
    (:func:`.producers.consumers`, as the line about unused ids names it); else
    ``None``. ``alone`` as :func:`handle_given`'s ``this_turn``.

    Why: told that a lookup's ids were unused and which tool takes them, the 1.5B passed
    'VY-314' back to the lookup by name, read "no vineyard named 'VY-314'" with nothing
    more, and went round the lookup until the loop guard ended the run (held-out seed
    6823)."""
    source = handle_source(state, value, this_turn=alone)
    if source is None or source[0] != own:
        return None
    takers = consumers(state, own)
    if not takers:
        return None
    taker, parameter = takers[0]
    return (f"`{name}` {bounded_repr(value)[:_QUOTED]} is the id `{own}` gave for "
            f"{bounded_repr(source[1])[:_QUOTED]}, not what `{own}` takes: `{taker}` takes it "
            f"as `{parameter}`; call `{taker}` with `{parameter}` {bounded_repr(value)}")
