"""An id a lookup gave that no call used: a chain of calls stopped after its first step.
(A call given it that failed did not use it: it read no record.)

The commonest first-hour chain is a lookup by name that gives an id, then a detail call that
takes it. A small model often stops between the two: it answers that the record is "not
available", or with a figure it made up, or with instructions to call the detail tool
itself. Seen on the 1.5B: the detail tool refused the
ship's name, the lookup gave ``SH-475``, and the model answered "100 meters"; told that 100
had no source, it wrote the same answer again, twice. The run can tell from its typed parts:
the last result that found something is a handle, no call was given it afterwards, and an
offered tool takes what the tool that gave it produces.

A handle: the whole of a successful result is one token holding a digit (``SH-475``,
``VN-777``), as text, a JSON string or an object's only value. Its consumers: the offered
tools with a required parameter the tool that gave it can give
(:func:`.producers.producers`: the parameter named in its description, or its noun there:
``ship_id`` for ``get_ship_id``). What follows is a line for grounding's re-asks
(:mod:`.grounding`): beside an unsupported figure, and as a re-ask of its own where the
answer is supported but the chain stopped (status unchanged, as the second look's): an
answer may rightly be the id itself.

Two things asked about are two lookups: every handle the same tool gave that no call used
is named, not only the last. And a result that is no source (:class:`.sources.Unfounded`: a
call over figures from nowhere) does not carry the chain on: it read no record. Seen on the
1.5B (first-hour held-out agents, seed 6816): asked for two tanks' volumes added up, it
looked both ids up, called ``add`` over volumes it made up, and answered that sum; the re-ask
named the made-up figures but not the two ids, and the model repeated the same three calls.
"""

from __future__ import annotations

from ..messages import ToolCall, ToolResult, bounded_repr
from .handles import handle_of
from .producers import consumers
from .provenance import strings
from .sources import Sources, sources_of
from .state import RunState

#: Tools named as taking the handle, at most.
_SHOWN = 2
#: Handles named, at most (the latest: a request names a few things, not dozens).
_HANDLES = 4


def unused_handle(state: RunState, sources: Sources | None = None,
                  then: str = "answer from") -> str | None:
    """The line telling the model which tool takes the ids it left unused, or ``None`` where
    the run's last finding is no handle, later calls used them, or no offered tool takes
    them. (``sources``: the run's :func:`.sources.sources_of`, where the caller has it;
    ``then``: what the model does with the results, ``""`` for nothing said.)"""
    ending = {d.name for d in state.output.tool_definitions}
    no_source = {u.call_id for u in (sources or sources_of(state)).unfounded}
    pending: list[tuple[str, str]] = []  # (the tool that gave it, the handle), in order
    asked: dict[str, set[str]] = {}  # call id -> what the call was given
    tried: set[str] = set()  # what calls that failed were given
    given: set[str] = set()  # (what calls that succeeded were given: a handle looked up again
    for message in state.messages:  # after its use is no stopped chain)
        for part in message.parts:
            if isinstance(part, ToolCall) and part.name not in ending:
                asked[part.id] = {s.strip().lower() for s in strings(part.arguments)}
            elif isinstance(part, ToolResult) and part.is_error:
                tried.update(asked.get(part.call_id, ()))
            elif isinstance(part, ToolResult) and part.name not in ending:
                # Only a call that succeeded used what it was given: one that failed read no
                # record ("E-311" given to a payslip call that raised, then "E-311 does not
                # exist": the record was never read).
                given.update(asked.get(part.call_id, ()))
                pending = [p for p in pending if p[1].lower() not in given]
                text = state.tool_text(part)
                handle = handle_of(text)
                if handle is not None:
                    if handle.lower() not in given | {h.lower() for _, h in pending}:
                        pending.append((part.name, handle))
                elif text.strip() and part.call_id not in no_source:
                    pending = []  # the chain went on (a record read: :mod:`.asked` says
                    # which listed thing's record is still unread, NOT_LOOKED_UP)
    if not pending:
        return None
    giver = pending[-1][0]
    taking = takers(state, giver)
    if not taking:
        return None
    handles = [handle for tool, handle in pending if tool == giver]
    shown = " and ".join(bounded_repr(handle) for handle in handles[-_HANDLES:])
    if len(handles) == 1:
        since = ("no call given it has succeeded since" if handles[0].lower() in tried
                 else "no call has used since")
        return (f"`{giver}` gave {shown}, which {since}: {' and '.join(taking)}; call it with "
                f"{shown}" + (f", then {then} its result" if then else ""))
    since = ("no call given them has succeeded since"
             if all(handle.lower() in tried for handle in handles) else "no call has used since")
    return (f"`{giver}` gave {shown}, which {since}: {' and '.join(taking)}; call it with "
            "each" + (f", then {then} their results" if then else ""))


def takers(state: RunState, giver: str) -> list[str]:
    """How the offered tools take what ``giver`` gives ("`ship_info` takes `ship_id`"), at
    most :data:`_SHOWN` of them; empty where none does."""
    return [f"`{tool}` takes `{name}`" for tool, name in consumers(state, giver)][:_SHOWN]
