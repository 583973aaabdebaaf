"""What an answer may draw on: the request, the instructions, the offered tools'
descriptions and the tool results whose calls were given what those sources hold.

Grounding (:mod:`.grounding`) reads an answer against these; why a result can be no source
(a call over figures or a date from nowhere, a fallback that found nothing) is said where
each is read (:func:`sources_of`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from typing import Any

from ..datetimes import dates_in, example_dates, names_a_date, names_date
from ..messages import ToolCall, ToolResult
from ..tools import ToolDefinition
from ..words import is_empty_result, is_empty_value
from .call_figures import given_figures
from .figures import FIGURE, figure_key
from .state import RunState


@dataclass(frozen=True, slots=True)
class Unfounded:
    """A tool result that is no source: the tool, the figures and the dates its call was
    given that no earlier source held, the result's text, how many figures the call was
    given in all (``figures`` is every one of them, or some), and the call's id."""

    tool: str
    figures: tuple[str, ...]
    dates: tuple[str, ...]
    result: str
    given: int
    call_id: str


@dataclass(frozen=True, slots=True)
class Sources:
    """What an answer may draw on (:func:`sources_of`): ``text``, every source in one text;
    ``results``, how many tool results count as sources; ``unfounded``, the tool results
    left out (:class:`Unfounded`); ``countable``, whether one of the sources holds something
    to count (a JSON list with an item, or text that is not JSON); ``listed``, whether one
    holds a list, empty or not, or text (what a count of 0 may come from); ``found``, how
    many of the results hold something (:class:`Shape`); ``fell_through``, whether a
    fallback answered a call without an answer
    (:meth:`~toolcycle.tracing.trace.Trace.fell_through`): that call failed, and its result,
    text saying so, is no source."""

    text: str
    results: int
    unfounded: tuple[Unfounded, ...]
    countable: bool = True
    listed: bool = True
    found: int = 0
    fell_through: bool = False


def _own_description(state: RunState, definition: ToolDefinition) -> str:
    """A tool's description as its author wrote it: without the note a playbook appended
    (:attr:`~toolcycle.run.plan.RunPlan.notes`, learned from other runs' tasks)."""
    plan = state.setup.core.plan
    note = None if plan is None else plan.notes.get(definition.name)
    return definition.description.replace(note, "") if note else definition.description


def sources_of(state: RunState) -> Sources:
    """The request, the instructions, the offered tools' descriptions (what the model was
    told: "the total, in EUR") and every successful tool result so far whose call's figures
    came from those sources.

    What a playbook added (its advice in the instructions, its notes on the tools) is no
    source: it was learned from other runs' tasks, and an example in it ("Pass date like
    "2026/09/23"") is another task's value: a small model that found nothing may answer
    with the note itself, which must not pass as supported.

    The request is the conversation up to the run's prompt: user messages the loop writes
    later (a rejected attempt's feedback, which quotes the unsupported figure back) are not
    sources, or an answer repeated after the re-ask would find its own figure there.

    A result is a source only when the figures the call was given (its arguments' numbers)
    are: ``add(numbers=[20, 22])`` over figures the model made up returns 42, and 42 in a
    tool result would vouch for an invented answer. Seen on the 1.5B (issue 68, held-out
    first-hour agents): asked for two wards' beds together, it called only ``add`` with two
    invented counts and answered the sum, a ``success``.

    Likewise a date the call was given (a numeric writing: ``13.11.2026``) where the sources
    name dates and none of them is it: the result is about another day, whichever way the
    model came by the date (an example it was shown, a guess). Seen on the 1.5B: asked about
    January 11, 2026, it passed the date of an example in its advice, the report came back
    empty, and "not found" ended ``success``."""
    found = [state.setup.core.instructions]
    found.extend(_own_description(state, d) for d in state.setup.settings.tools)
    ending = {d.name for d in state.output.tool_definitions}  # ("Output accepted." is no data)
    parameters = {d.name: d.parameters for d in state.setup.settings.tools}
    known = {figure_key(f) for text in found for f in FIGURE.findall(text)}
    given: dict[str, tuple[str, ...]] = {}
    dated: dict[str, tuple[str, ...]] = {}
    unfounded: list[Unfounded] = []
    results = 0
    countable = False
    listed = False
    found_any = 0
    fallback_failed = False
    prompted = False
    fell_through = state.trace.trace.fell_through()
    for index, message in enumerate(state.messages):
        texts = []
        if message.role in ("user", "system") and not prompted:
            texts.append(state.said_text(message))
            prompted = index >= state.new_message_index and message.role == "user"
        for part in message.parts:
            if isinstance(part, ToolCall):
                given[part.id] = tuple(dict.fromkeys(given_figures(
                    part.arguments, parameters.get(part.name, {}), countable)))
                dated[part.id] = _argument_dates(part.arguments)
            elif isinstance(part, ToolResult) and part.call_id in fell_through:
                # (a fallback's "found nothing too": a failure in words, no data)
                fallback_failed = True
            elif isinstance(part, ToolResult) and not part.is_error and part.name not in ending:
                returned = state.tool_text(part)  # (not the loop guard's note)
                missing = tuple(f for f in given.get(part.call_id, ()) if f not in known)
                given_dates = dated.get(part.call_id, ())  # (joined only where it was given one)
                undated = _unnamed_dates(given_dates, "\n".join(found)) if given_dates else ()
                if missing or undated:
                    unfounded.append(Unfounded(part.name, missing, undated, returned,
                                               len(given.get(part.call_id, ())), part.call_id))
                    continue
                results += 1
                shape = shape_of(returned)
                countable = countable or shape.countable
                listed = listed or shape.listed
                found_any += shape.holds
                texts.append(returned)
        for text in texts:
            found.append(text)
            known.update(figure_key(f) for f in FIGURE.findall(text))
    found.append(_in_words(dates_in("\n".join(found))))
    return Sources("\n".join(found), results, tuple(unfounded), countable, listed, found_any,
                    fallback_failed)


def _in_words(dates: set[date]) -> str:
    """The names of the months and weekdays of ``dates`` (the sources' numeric dates): an
    answer that writes "2026-11-27" as "Friday, November 27, 2026" says what its source
    said, and the month's name is no invented name. As ``strftime`` writes them."""
    return " ".join(sorted({f"{d:%B} {d:%b} {d:%A} {d:%a}" for d in dates}))


@dataclass(frozen=True, slots=True)
class Shape:
    """What one tool result holds, for the counts an answer may take from it: ``countable``,
    something a count of 1 to 9 may come from (text that is not JSON, or a non-empty JSON list
    anywhere in it); ``listed``, what a count of 0 may come from (a JSON list anywhere, empty
    or not, text, or nothing at all: ``null``, ``{}``, ``""``); ``holds``, anything: not a
    result that holds nothing (:func:`toolcycle.words.is_empty_result`: blank, "No
    results.", empty values such as ``{"results": []}``, a page of nothing such as
    ``{"matches": null, "total": 0}``; a zero or a ``false`` alone is something: a count, a
    flag)."""

    countable: bool
    listed: bool
    holds: bool


def shape_of(result: str) -> Shape:
    """The :class:`Shape` of a tool result."""
    try:
        value = json.loads(result)
    except (ValueError, RecursionError):  # text, or JSON nested past the parser
        text = bool(result.strip())  # ("No results." holds nothing)
        return Shape(countable=text, listed=True, holds=not is_empty_result(result))
    holds = not is_empty_value(value)  # (a page of nothing holds nothing)
    countable = False
    listed = value is None or value == {} or value == ""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            listed = True
            countable = countable or bool(item)
            stack.extend(item)
    return Shape(countable, listed, holds)


def _argument_dates(arguments: dict[str, Any] | None) -> tuple[str, ...]:
    """The string values a call was given that are numeric dates (:func:`~toolcycle.
    datetimes.writings`: ``13.11.2026``, ``2026-01-11``), each once."""
    found: dict[str, None] = {}
    stack: list[Any] = [arguments]
    seen = 0
    while stack and seen < 1000:
        value = stack.pop()
        seen += 1
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str) and example_dates(value.strip()):
            found[value.strip()] = None
    return tuple(found)


def _unnamed_dates(values: tuple[str, ...], sources: str) -> tuple[str, ...]:
    """The dates of ``values`` that ``sources`` name in no reading, where they name a date
    at all (a request without a date leaves the model's own date to the tool)."""
    if not names_a_date(sources):
        return ()
    return tuple(v for v in values if not any(names_date(sources, d) for d in example_dates(v)))
