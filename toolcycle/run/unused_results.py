"""Whether an answer uses what the run's tools found: grounding's check of the other direction.

Grounding (:mod:`.grounding`) asks whether what an answer asserts comes from a source. This
module asks the converse: where the tools found figures the request did not already hold,
does the answer use any of them? An answer that uses none (``"No loans found for title
AV3814."`` after a call returned ``{"title": "AV3814", "loans": 93}``) did not answer from
what was found: seen on the 1.5B (JSON protocol, generated suites), which got the figure,
made one more call that returned ``[]``, and answered from the last result alone, a
``success``.

A fact here is a figure: a JSON number of a successful tool result (or a string that is
one), or the length of a non-empty list in it (a count an answer may give); it is new when
the request does not hold it. A result that is not JSON holds none: a tool that returns
"Error 404: no such page" as text, or a fallback's "failed: 429 ...; found nothing too",
writes figures that are no answer. Only figures ask: an id is often a handle passed on to
the next call, which an answer rightly leaves unsaid ("It is in stock." after a lookup
returned the product's id). But an answer that holds any string value of a result (a name,
an id, a date) the request does not hold uses that result, as one holding a new figure
does ("Grace Obi" answers the operator question from a record that also held two figures),
and a numeric date counts in any writing of its day, unless the request names that day.

What follows is a re-ask, inside grounding's checks (:func:`.grounding.may_check`): the
model is shown the results it left out and asked to answer from them or to say why they do
not answer. The run's status does not change with it: an answer may rightly use no figure a
tool found ("Yes, it is in stock." after a call returned the count), so this is a second
look, not a verdict.
"""

from __future__ import annotations

import json
from typing import Any

from ..datetimes import dates_in, names_date
from ..messages import ToolResult, bounded_repr
from .figures import FIGURE, figure_key
from .provenance import request_of
from .said_missing import record_agrees
from .state import RunState

#: Results shown in the re-ask, at most, and the characters of each.
_SHOWN = 2
_EXCERPT = 300
#: Leaves read per result, at most (a huge result is read on its start).
_LEAVES = 500
#: The shortest string value of a result that counts as used where the answer holds it.
_NAMED = 3


def unused(state: RunState, answer: str) -> list[tuple[str, str]]:
    """The ``(tool, result)`` pairs of the results holding new facts, where ``answer`` uses
    nothing of any result; empty where it uses something, or no result held a new fact.

    What counts as used is wider than what asks: a new figure, or a string value of a
    result (at least :data:`_NAMED` characters) that the request does not hold. Why: a name
    answers a "who" question from a record that also holds figures ("Grace Obi" beside a
    length and a rider count); asked again because it used neither figure, a small model
    may talk itself out of the right answer. An answer saying what was asked is not there
    uses the record whose field for it says none (:func:`.said_missing.record_agrees`)."""
    if record_agrees(state, answer):
        return []
    request = request_of(state)
    request_figures = {figure_key(f) for f in FIGURE.findall(request)}
    ending = {d.name for d in state.output.tool_definitions}
    answer_figures = {figure_key(f) for f in FIGURE.findall(answer)}
    low, asked = answer.lower(), request.lower()
    fell_through = state.trace.trace.fell_through()
    holding: list[tuple[str, str]] = []
    for message in state.messages:
        for part in message.parts:
            if (not isinstance(part, ToolResult) or part.is_error or part.name in ending
                    or part.call_id in fell_through):
                continue
            text = state.tool_text(part)
            figures, names = _facts(text)
            new = {figure_key(f) for f in figures} - request_figures
            if new & answer_figures or any(_said(n, low, asked, answer) for n in names):
                return []
            if new:
                holding.append((part.name, text))
    return holding


def _said(value: str, low: str, asked: str, answer: str) -> bool:
    """Whether the answer (``low``: lower-cased) holds a result's string ``value`` that the
    request (``asked``) does not: as written, or, for a numeric date, in any writing of the
    same day ("November 27, 2026" for "2026-11-27")."""
    text = value.lower()
    days = dates_in(value)
    if text in asked or any(names_date(asked, day) for day in days):
        return False  # (the request's own value, or its own date written the tool's way)
    return text in low or any(names_date(answer, day) for day in days)


def reask(state: RunState, holding: list[tuple[str, str]]) -> str:
    """The re-ask: the question again, and the results the answer left out (the latest
    first). Why the question: told only that its answer used nothing found, the 1.5B wrote
    about the results ("the output of X is correct, but Y is empty") instead of answering."""
    shown = "; ".join(f"`{tool}` returned {bounded_repr(content)[:_EXCERPT]}"
                      for tool, content in list(reversed(holding))[:_SHOWN])
    prompt = state.ctx.prompt  # (None for a run without one: a resumed conversation's turn)
    question = f" The question: {prompt[:_EXCERPT]!r}." if prompt else ""
    return (f"your answer uses nothing the tools found.{question} {shown}. Answer the "
            "question from that, or say why it does not answer it")


def _facts(content: str) -> tuple[list[str], list[str]]:
    """What a result holds: its figures (JSON numbers, strings that are one, and the length
    of each non-empty list: a count an answer may give) and its other string values of at
    least :data:`_NAMED` characters (names, ids, dates); nothing where it is not JSON."""
    try:
        value = json.loads(content)
    except (ValueError, RecursionError):
        return [], []
    figures: list[str] = []
    names: list[str] = []
    stack: list[Any] = [value]
    while stack and len(figures) + len(names) < _LEAVES:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            if item:
                figures.append(str(len(item)))  # (a count an answer may give of it)
            stack.extend(item)
        elif isinstance(item, int | float) and not isinstance(item, bool):
            figures.append(str(abs(item)))  # (an answer writes the sign its own way)
        elif isinstance(item, str) and FIGURE.fullmatch(text := item.strip()):
            figures.append(text)
        elif isinstance(item, str) and len(text := item.strip()) >= _NAMED:
            names.append(text[:200])
    return figures, names
