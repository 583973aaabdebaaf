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
(:func:`.recovery.producers`: the parameter named in its description, or its noun there:
``ship_id`` for ``get_ship_id``). What follows is a line for grounding's re-asks
(:mod:`.grounding`): beside an unsupported figure, and as a re-ask of its own where the
answer is supported but the chain stopped (status unchanged, as the second look's): an
answer may rightly be the id itself.
"""

from __future__ import annotations

from ..messages import ToolCall, ToolResult, bounded_repr
from .handles import handle_of
from .provenance import strings
from .recovery import producers, required_of
from .state import RunState

#: Tools named as taking the handle, at most.
_SHOWN = 2


def unused_handle(state: RunState) -> str | None:
    """The line telling the model which tool takes the id it left unused, or ``None`` where
    the run's last finding is no handle, a later call used it, or no offered tool takes it."""
    ending = {d.name for d in state.output.tool_definitions}
    pending: tuple[str, str] | None = None  # (the tool that gave it, the handle)
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
                if pending is not None and pending[1].lower() in given:
                    pending = None
                text = state.tool_text(part)
                handle = handle_of(text)
                if handle is not None:
                    pending = None if handle.lower() in given else (part.name, handle)
                elif text.strip():
                    pending = None  # the chain went on to something else
    if pending is None:
        return None
    giver, handle = pending
    taking = takers(state, giver)
    if not taking:
        return None
    shown = bounded_repr(handle)
    used = ("no call given it has succeeded since" if handle.lower() in tried
            else "no call has used since")
    return (f"`{giver}` gave {shown}, which {used}: "
            f"{' and '.join(taking)}; call it with {shown}, then answer from its result")


def takers(state: RunState, giver: str) -> list[str]:
    """How the offered tools take what ``giver`` gives ("`ship_info` takes `ship_id`"), at
    most :data:`_SHOWN` of them; empty where none does."""
    ending = {d.name for d in state.output.tool_definitions}
    return [f"`{d.name}` takes `{name}`" for d in state.setup.settings.tools
            if d.name != giver and d.name not in ending
            for name in required_of(d.parameters) if giver in producers(state, d.name, name)
            ][:_SHOWN]
