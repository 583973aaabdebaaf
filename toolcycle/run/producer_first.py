"""A call that failed on a value another tool gives: the next turn must call that tool.

The commonest first-hour mistake of a small model is passing the name the user wrote where an
id is wanted (``get_vineyard(vineyard_id="Vigna Alta")`` before ``vineyard_id_by_name``).
Recovery (:mod:`.recovery`) already says so in the error ("`vineyard_id` 'Vigna Alta' is
taken from the request, not from a tool result; `vineyard_id_by_name` can give it"), and most
often the model follows it. Where it does not, it answers at once that the thing does not
exist, or makes the identical call again (seen on the 1.5B, issue 68: all three questions of
one held-out agent of seed 6810; on the 0.5B in its family's layout, eight of nine dev
questions ended at the loop guard so). So the turn after the failure is made with
``tool_choice`` naming the tool that gives the value, which a text protocol says in words
("Call the tool vineyard_id_by_name now.") and, constrained, holds to in its grammar. The
model still writes the call's arguments itself.

Why after the first failure, not the second: after such an error on the first-hour agents
(2026-12-06 and 07, 295 runs), the 1.5B called the tool named next in 181, but answered in
words in 95 (a thing "does not exist", or a figure made up) and repeated the call in 15. An
answer so costs one of the run's three answer attempts to grounding's re-ask; held-out seed
6817 lost three questions, and 6816 one, whose third attempt read the right record and
answered it in the wrong unit or field with no attempt left to re-ask. Where the model
would have called the tool anyway, naming it changes nothing.

Only with grounding on (the small-model aids that are on by default for local models); not
where the last turn called that tool already (the model is on its way); once per producing
tool a run (a request made with it is in the trace, ``Step.tool_choice``), so a model that
has called it and still goes wrong is left free.
"""

from __future__ import annotations

from ..tracing.trace import LOOP_ERROR_TYPES, ToolCallRecord
from .producers import producers
from .request_spelling import name_within, request_spelling
from .state import RunState


def producer_first(state: RunState) -> str | None:
    """The tool this request must call, or ``None``: see the module docstring."""
    if not state.setup.core.grounding or not state.messages or (
            state.messages[-1].role != "tool"):
        return None
    calls = state.trace.trace.tool_calls
    if not calls:
        return None
    last = calls[-1].iteration
    offered = {d.name for d in state.setup.settings.tools}
    request = "\n".join(m.text for m in state.messages if m.role == "user")
    forced = {step.tool_choice for step in state.trace.trace.steps}
    called = {r.name for r in calls if r.iteration == last}
    for record in (r for r in calls if r.iteration == last and _tool_failed(r)):
        for name, value in (record.args or {}).items():
            if not isinstance(value, str) or not value or (
                    value not in request and request_spelling(value, request) is None
                    and name_within(value, request) is None):
                continue  # (a name the request writes, as written, rewritten (brook_plot)
                # or with more words ("W Willow Ward"))
            for tool in producers(state, record.name, name):
                if tool in offered and tool not in forced and tool not in called:
                    return tool
    return None


def _tool_failed(record: ToolCallRecord) -> bool:
    """Whether the tool itself raised (not the loop's refusal of the call)."""
    kind = record.error_type
    return (record.error is not None and kind is not None and kind not in LOOP_ERROR_TYPES
            and record.kind == "tool")
