"""A call over measures from nowhere is not run the first time: the model is told to look
them up.

Asked for two things' figures added up, a small model often writes the sum first, over
figures it made up: ``add(numbers=[100, 150])`` in the same reply as the lookups, or as its
very first call. Run, the call's result (250) sits in the history as the answer the model
was after, and it answers it even after it has looked the real figures up and added those
(seen on the 1.5B, issue 68, held-out first-hour agents: each of the six wrong sums of the
set of seed 6809 called ``add`` so before reading a record; told by grounding that 1500 had
no source, it looked everything up again and answered 1500 three times). Grounding already
reads such a result as no source (:func:`.sources.sources_of`); this keeps it from being made
at all.

With grounding on (:attr:`~toolcycle.run.state.RunSetup` ``grounding``, the default for
local models), a call is answered without running it when the values its schema types
``number`` (measures: amounts, weights, prices, the numbers to add; not ``integer`` counts
and settings) hold at least one figure and none of them is in the request, the instructions,
a tool's description or a tool result the run has (:mod:`.call_figures` says which single
digits count). A call with one sourced measure runs: a conversion factor or a rate beside a
looked-up figure is the model's own knowledge, not an invention of the figure asked about.
Not so the items of one list (``add(numbers=[250, 67.64])``): they are peers, the parts of one
sum, and one found part does not source a made-up other (seen on the 1.5B, held-out seed
6820: 250, the sum of two prices it had made up on its first attempt, added to the one price
it then read; run, the call's result was the answer it gave, twice).

Refused the first time it is made, and again while the reply that repeats it also calls
another tool: the model is still looking things up, and the call is still written before the
figures it needs (seen on the 1.5B: refused beside the lookups, it wrote the same sum beside
the detail calls). Made again on its own, it runs, since the figure may come from where the
check cannot see (a number the request writes in words, a constant the model knows); the
loop guard bounds the replies that keep looking the same things up. The refusal is the
call's error observation, ``error_type`` ``"unsourced_arguments"``, in the trace with the
rest; the trace is also what says a call was refused before (no state of its own). A call
with no ``number``-typed value reads no sources at all.

The refusal ends with what would work where the run can tell: the call over the figures
found (:func:`.would_take.taken_by`), else the ids a lookup gave that no call has used and
the tool that takes them (:func:`.unused_handle.unused_handle`). Told only to "call the tools
that return these figures", the 1.5B wrote the same two lookups and the same sum five times
running, the ids in the history each time, until the loop guard ended the run (held-out
seed 6821).
"""

from __future__ import annotations

from typing import Any

from ..messages import ToolCall
from .call_figures import listed_measures, measured_figures
from .figures import FIGURE, figure_key
from .sources import sources_of
from .state import RunState
from .unused_handle import unused_handle
from .would_take import taken_by

#: ``ToolCallRecord.error_type`` of a call refused here.
UNSOURCED = "unsourced_arguments"


def unsourced_call(state: RunState, parameters: dict[str, Any], call: ToolCall) -> str | None:
    """Why ``call`` (to a tool whose arguments' schema is ``parameters``) is not run: its
    measures come from no source, and it is made for the first time or beside a call to
    another tool; ``None`` to run it."""
    if not state.setup.core.grounding or call.arguments is None or not measured_figures(
            call.arguments, parameters, False):  # (no measure at all: no sources to read)
        return None
    sources = sources_of(state)
    figures = measured_figures(call.arguments, parameters, sources.countable)
    if not figures:
        return None
    known = {figure_key(f) for f in FIGURE.findall(sources.text)}
    if any(f in known for f in figures):
        # one sourced measure may come with a rate the model knows; not with a made-up peer
        figures = [f for group in listed_measures(call.arguments, parameters, sources.countable)
                   if any(g in known for g in group) for f in group if f not in known]
        if not figures:
            return None
    looking = state.turn is not None and any(c.name != call.name for c in state.turn.calls)
    refused_before = any(r.error_type == UNSOURCED and r.name == call.name
                         and r.args == call.arguments for r in state.trace.trace.tool_calls)
    if refused_before and not looking:
        return None
    listed = ", ".join(dict.fromkeys(figures))
    hint = taken_by(state, call.name, len(dict.fromkeys(figures)))
    if not hint and (handles := unused_handle(state, sources, then="")) is not None:
        hint = f"; what would work first: {handles}"
    return (f"Not run: `{call.name}` was given {listed}, which neither the request nor any "
            "tool result holds. Call the tools that return these figures first, then call "
            f"`{call.name}` with the figures they return{hint}.")
