"""How a run ended, in one word everyone reads: ``result.status`` (docs/status.md).

Why a vocabulary of its own: a run that *returns* has not necessarily succeeded. A limit may
have forced the answer (one more request without tools, its output unchecked against the
task), the run may have stopped with what existed, or the model may have handed a tool's error
text back as its answer. Each of these used to read ``"success"`` everywhere (the trace store,
the viewer's green badge, batch records, the playbook, a served agent), so a user found a
wrong run only by reading its trace. Here each way of ending has its own word, and exactly one
of them, ``"success"``, means the run did what was asked:

==============  ======================================================================  =====
status          meaning                                                                  ok
==============  ======================================================================  =====
``success``     the model answered on its own and the answer passed validation           yes
``forced``      a limit was reached and one more request (without tools) produced the    no
                answer: it exists, but nothing says it is right (``termination.limit``)
``partial``     a limit was reached with ``on_limit="partial"``: the output is what      no
                existed then (maybe ``None``)
``tool_error``  the answer is a tool's error text passed through (see                    no
                :func:`passes_tool_error`)
``ungrounded``  with grounding on (``Agent(grounding=True)``), the answer still asserts   no
                figures or names that no source holds after its re-asks, or a
                tool call failed and none found anything, or the answer is an empty
                value (``[]``, ``null``)
``mismatched``  with grounding on, the answer still answers another question than the       no
                request after its re-asks: a unit or a conversion it did not ask
                for, figures of different units added up, a figure from a field it
                does not name, a thing it names left unlooked-up, a sum begun
                on figures from nowhere and not done on those found
                (:mod:`toolcycle.run.asked`)
``paused``      calls wait for a person's decision (``agent.resume(result.snapshot)``)    no
``failure``     the run raised (``error.result`` carries this status)                    no
``cancelled``   the run was cancelled (``error.result``)                                 no
``running``     the run has not ended (a trace being written, a store row)               no
``crashed``     a stored ``running`` run whose process is gone (trace store reads only)  no
==============  ======================================================================  =====

Callers that need a yes/no use :func:`is_success` (``result.succeeded``): every status but
``success`` is a failure to act on, ``paused`` being the one a caller can continue.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, Literal, TypeGuard

__all__ = [
    "NOT_SUCCESS",
    "RETURNED_MEANINGS",
    "RUN_STATUSES",
    "RunStatus",
    "is_run_status",
    "is_success",
    "passes_tool_error",
    "returned_status",
]

#: Every value ``status`` takes on a result, an event, a trace or a store row (a batch record
#: adds ``error`` for a run that raised and ``malformed`` for a line it could not read).
RunStatus = Literal["success", "forced", "partial", "tool_error", "ungrounded", "mismatched",
                    "paused", "failure", "cancelled", "running", "crashed"]

#: The vocabulary in the order the docs and ``trace list --status`` show it.
RUN_STATUSES: tuple[RunStatus, ...] = ("success", "forced", "partial", "tool_error",
                                       "ungrounded", "mismatched", "paused", "failure",
                                       "cancelled", "running", "crashed")
#: The statuses of a run that ended without doing what was asked (all but success, running).
NOT_SUCCESS: frozenset[RunStatus] = frozenset(RUN_STATUSES) - {"success", "running"}

#: What a run that returned an output without succeeding means, as the views say it under the
#: termination (the viewer's panel, ``trace show``): the output looks like an answer.
RETURNED_MEANINGS: dict[str, str] = {
    "forced": "a limit forced this answer (one more request, without tools): it was not "
    "checked against the task, so do not trust it as a success",
    "partial": "a limit stopped the run: the output is only what existed then",
    "tool_error": "the answer is a tool's error text (or the loop guard's note on a result), "
    "passed through by the model",
    "ungrounded": "the answer asserts figures or names that no tool result, the request or "
    "the instructions hold, or a tool call failed and none found anything, or it is an empty "
    "value, or it says what was asked is not there where a result says it is (grounding), so "
    "do not trust it as a success",
    "mismatched": "the answer answers another question than the request (a unit or a "
    "conversion it did not ask for, figures of different units added up, a figure from a "
    "field it does not name, a thing it names never looked up, a sum begun on figures from "
    "nowhere and never done on the figures found), so do not trust it as a success",
}

#: A stretch cut out of an error shorter than this is too common in real answers (a name, a
#: number) to say anything; "not found" (9) is just long enough.
_MIN_CUT_CHARS = 8
#: Answers longer than this are compared by containment only (the stretch search is
#: quadratic in the answer's length).
_MAX_CUT_SEARCH = 4000
#: Bounds on the walk through a structured output (its string leaves are compared).
_MAX_DEPTH = 32
_MAX_TEXTS = 1000
_SPACE = re.compile(r"\s+")
_FRAME = " \t\n\"'`.:;!"
_QUOTED = re.compile(r"'[^'\n]{1,200}'|\"[^\"\n]{1,200}\"")


def is_run_status(value: object) -> TypeGuard[RunStatus]:
    """Whether ``value`` is a word of the vocabulary (a stored trace may hold anything)."""
    return isinstance(value, str) and value in RUN_STATUSES


def is_success(status: object) -> bool:
    """Whether a run with this status did what was asked: only ``"success"`` did."""
    return status == "success"


def returned_status(action: str, output: Any, error_observations: Iterable[str]
                    ) -> RunStatus:
    """The status of a run that returned (did not raise or pause).

    ``action`` is its ``termination.action``; ``error_observations`` the texts of the tool
    calls that failed, as the model saw them (:meth:`Trace.error_observations
    <toolcycle.tracing.trace.Trace.error_observations>`). How the run ended comes first: a
    forced or partial answer keeps that status even when it also repeats a tool's error.
    """
    if action == "final_answer":
        return "forced"
    if action == "partial":
        return "partial"
    if passes_tool_error(output, error_observations):
        return "tool_error"
    return "success"


def passes_tool_error(output: Any, error_observations: Iterable[str]) -> bool:
    """Whether the answer is a tool's error text passed through, read from the trace.

    Structural, not a guess at wording: it compares the answer (each string of a structured
    one) with the error observations the run actually received, whitespace, case, enclosing
    quotes or punctuation and the values an error quotes aside. The answer passes an error
    through when

    - it contains the error's whole text, and that text is at least half of the answer
      (the error, maybe with a short "Sorry:" around it); or
    - at least two thirds of it is one stretch cut out of the error, a stretch of at least 8
      characters and a third of the error (``ValueError: no such city`` out of ``Tool `x`
      failed: ValueError: no such city``, or a bare ``not found`` for ``not found``).

    An answer that only *mentions* a failure ("the lookup failed, so I searched instead:
    21 °C") is neither, nor is a longer answer that quotes a short error or a name that an
    error also holds.
    """
    errors = [text for text in (_normal(e) for e in error_observations) if text]
    if not errors:
        return False
    for answer in _texts(output):
        text = _normal(answer)
        if text and any(_passes(text, error) for error in errors):
            return True
    return False


def _passes(text: str, error: str) -> bool:
    if error in text:
        return 2 * len(error) >= len(text)
    # two thirds of the answer and a third of the error, rounded up: a name an error quotes
    # ("ambiguous city Paris, France or Paris, Texas") is not the error
    need = max(_MIN_CUT_CHARS, -(-2 * len(text) // 3), -(-len(error) // 3))
    if need > len(text) or len(text) > _MAX_CUT_SEARCH:
        return False
    # every stretch that long holds the answer's middle: one search rules most answers out
    if text[len(text) - need:need] not in error:
        return False
    return any(text[i:i + need] in error for i in range(len(text) - need + 1))


def _normal(text: str) -> str:
    """The text as compared: spaces folded, case folded, and each quoted value one mark
    (a model that retells an error with another id in its quotes, ``no farm with id
    'SF-101'`` for ``... 'Mesa Panels'``, still passes the error's text through)."""
    return _QUOTED.sub("'…'", _SPACE.sub(" ", text).casefold()).strip(_FRAME)


def _texts(output: Any) -> Iterator[str]:
    """The strings of an output: itself, or a structured one's leaves (a bounded walk over
    its JSON form, so pydantic models and dataclasses read alike)."""
    if isinstance(output, str):  # free text: no pydantic to load (a plain run never does)
        yield output
        return
    from pydantic_core import to_jsonable_python

    try:
        data = to_jsonable_python(output, fallback=str)
    except ValueError:  # a structure that refers to itself: its text form is the answer
        data = str(output)
    seen = 0
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack and seen < _MAX_TEXTS:
        item, level = stack.pop()
        if isinstance(item, str):
            seen += 1
            yield item
        elif level < _MAX_DEPTH and isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif level < _MAX_DEPTH and isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
