"""What a stand-in did for one call: a typed record, and the text a routine answers with.

A routine (and a stand-in, repair or fallback built on one) calls tools for the model and
answers with one text: a header saying what ran, then one line per step, ``name(arguments) ->
result`` or how the step failed. The model reads that text. The learner reads a typed
:class:`~toolcycle.tracing.stand_in.StandIn` instead, which the stand-in notes (:func:`note`)
on the record of the call it answered, in the trace (``ToolCallRecord.stand_in``), and the
learner reads there (:func:`noted` collects a whole trace's): which kind of stand-in
answered, whether it got through,
and each call it made (:class:`StepOutcome`), since the trace's own records are the
stand-in's call, not the calls it made. Without the steps, a tool called mostly inside routines
looks unreliable in the tool statistics: only the model's own calls of it are counted, and
those are the ones the routine exists to replace (a detail call with a made-up id), so the
tool a learned sequence recommends shows nothing but misses.

Why typed: the learner used to read these facts back out of the stand-ins' own answer texts
(a marker phrase per stand-in, a regex per header); any change of wording, a truncated
observation or a tool result that looked like a step line changed what was learned.
:func:`steps_of` still reads a result's text, for what analyses traces stored before the
record was kept (``bench/learning.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from typing import Any

from ..context import RunContext
from ..tracing.stand_in import StandIn, StandInKind, StepOutcome, StepStatus
from ..tracing.trace import Trace
from .evidence import is_empty_result

#: The stand-in record's types are the trace's (:mod:`toolcycle.tracing.stand_in`); the
#: playbook's modules name them from here, beside what writes and reads them.
__all__ = ["MAX_STEPS", "CallKey", "StandIn", "StandInKind", "StepOutcome",
           "StepStatus", "completed", "note", "noted", "ran_whole", "steps_of"]

#: How a step's line says it ended, after ``name(arguments)``.
_ENDINGS: tuple[tuple[str, StepStatus], ...] = (
    (" -> ", "ok"),
    (" failed: ", "error"),
    (" rejected its arguments: ", "error"),
    (" timed out after ", "timeout"),
)
#: A step's line starts at a line's start with a tool's name and its JSON arguments.
_STEP_START = re.compile(r"^([A-Za-z0-9_.-]{1,64})\(\{", re.MULTILINE)
#: A fallback's header names the tool that failed before its alternative ran.
_FELL_BACK_FROM = re.compile(
    r"^Ran [A-Za-z0-9_.-]+ for you, since ([A-Za-z0-9_.-]{1,64}) "
    r"(timed out|failed: |found nothing)")
_DECODER = json.JSONDecoder()
#: A routine has a few steps: past this many lines that look like one, the rest is a result's
#: text (a hostile tool's result cannot make reading it back quadratic).
MAX_STEPS = 16


#: A call within its run: its attempt and its id (an id is unique within one attempt).
CallKey = tuple[int, str]

def note(ctx: RunContext[Any] | None, record: StandIn) -> None:
    """Record what the stand-in answering ``ctx``'s call did, on that call's record in the
    trace (the last note of a call wins: a respelled call's note replaces its reshaped
    call's). Outside a run there is no call to keep it on, and nothing learns from it."""
    if ctx is not None and ctx.record_stand_in is not None:
        ctx.record_stand_in(record)


def noted(trace: Trace) -> Mapping[CallKey, StandIn]:
    """What stand-ins did in a run, by call (read while it runs or once it is over, in this
    process or from a stored trace)."""
    return {(call.attempt, call.call_id): call.stand_in
            for step in trace.steps for call in step.tool_calls
            if call.stand_in is not None}


def completed(names: list[str], lines: list[str]) -> str:
    """What the model reads when every step ran: that they ran, then each call and result.

    Given the calls and results alone, a small model may read the first result and call the
    next step itself, a turn for nothing; a header that says the calls were made, and to
    answer from their results, tells it what the list is.
    """
    return (f"Ran {', then '.join(names)} for you (already called; answer from these "
            "results):\n" + "\n".join(lines))


def ran_whole(result: str | None) -> bool:
    """Whether a routine's result says every step ran (:func:`completed`, or a repair's
    chain): not one that stopped or failed partway."""
    return result is not None and result.startswith("Ran ")


def steps_of(result: str | None, tools: Collection[str] | None = None) -> list[StepOutcome]:
    """The calls a routine's ``result`` says it made, in order; [] for any other text.

    ``tools``: the names a step may have (others are read as part of the step before). A
    fallback's header adds the failed call of the tool it stood in for (its arguments are the
    alternative's, which the fallback passed on unchanged or renamed, so they are not kept).
    A "(stopped: ...)" line that ends a chain is not part of the last step's result.
    """
    if not result:
        return []
    steps: list[StepOutcome] = []
    starts: list[tuple[int, int, str, dict[str, Any], StepStatus]] = []
    for match in _STEP_START.finditer(result):
        name = match.group(1)
        if tools is not None and name not in tools:
            continue
        if len(starts) == MAX_STEPS:
            break
        try:
            arguments, end = _DECODER.raw_decode(result, match.end() - 1)
        except ValueError:
            continue
        if not isinstance(arguments, dict) or not result.startswith(")", end):
            continue
        ending = next(((marker, status) for marker, status in _ENDINGS
                       if result.startswith(marker, end + 1)), None)
        if ending is None:
            continue
        marker, status = ending
        starts.append((match.start(), end + 1 + len(marker), name, arguments, status))
    for i, (_, body, name, arguments, status) in enumerate(starts):
        stop = starts[i + 1][0] if i + 1 < len(starts) else len(result)
        text = _without_stop_line(result[body:stop].rstrip("\n"))
        if status == "ok" and is_empty_result(text):
            status = "empty"
        steps.append(StepOutcome(name, arguments, status, text))
    header = _FELL_BACK_FROM.match(result)
    if header is not None and steps and (tools is None or header.group(1) in tools):
        how = header.group(2)
        failed: StepStatus = ("timeout" if how == "timed out" else
                              "error" if how.startswith("failed") else "empty")
        steps.insert(0, StepOutcome(header.group(1), {}, failed, ""))
    return steps


def _without_stop_line(text: str) -> str:
    head, sep, tail = text.rpartition("\n")
    return head if sep and tail.startswith("(stopped: ") else text
