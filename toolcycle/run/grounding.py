"""Grounding: an answer's figures and names should come from the request or a tool result.

A small model that got a tool error, or never called the tool, often answers anyway with a
figure it made up (issue 68: "gave up after one tool error and invented a figure"). With
``Agent(grounding=True)`` the run checks the answer before accepting it: every figure
(``1,200``, ``42.50``), every identifier holding letters and digits (``A-17``) and every
capitalised word that does not open a sentence (a name: ``Lyon``) must occur in the request,
the instructions, a tool's description or a successful tool result. If some do not, the
answer is rejected, as a validator would reject it: the model is told exactly what it
asserted without support and asked to call a tool that gives it or to answer from what it
has. The check rejects once, and a second time only where the re-asked attempt called a
tool that answered (:func:`may_check`), never on the last attempt, so it can cost a re-ask
or two but never the run; each check that rejects is an attempt in the trace, with
validator ``"grounding"``.

When the re-ask is spent (or the run had no attempt left for it) and the answer the run
returns still asserts what no source holds, the run's status is ``"ungrounded"``, not
``"success"`` (:func:`run_status`): the issue's other demand is that a run says so when its
answer is not right, and an unsupported figure is the one case the run can tell.

On by default for in-process local models only (:func:`grounds_by_default`): it is a
heuristic (a figure the model rightly derives, such as a sum, reads as unsupported unless the
answer also states the supported figures it adds up to: :func:`.figures.is_shown_sum`; so
does a capitalised word of the model's own phrasing). Single-digit integers are not checked
where a tool returned something to count (a non-empty list, or text that is not JSON): counts
a model may get by counting what a tool returned. Where every result was empty, a count of
1 to 9 counted nothing and is checked like any figure; 0 stays where a result held a list,
empty or not (the count of nothing), and is checked where none did (a fine of "0 EUR" after
a lookup that returned only an id). A tool result counts as a source only when the figures
its call was given do, and the dates (a date the sources do not name, where they name one,
makes its result about another day: :func:`.sources.sources_of`).

Where the run's last finding was an id that no call used (a lookup's ``SH-475``, the detail
call it was for never made), the re-ask says which tool takes it (:mod:`.unused_handle`),
beside an unsupported figure or, for a supported answer, as a re-ask of its own.

Where the answer asserts nothing unsupported but uses nothing the tools found (no new
figure, no string value of any result), the check re-asks as a second look instead
(:mod:`.unused_results`): the model is shown the question and those results; the status
does not read it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..models.base import Model
from ..output import ValidationProblem
from ..status import RunStatus, returned_status
from ..words import TITLES
from .asked_field import field_that_would_work
from .asked_total import asked_total, is_total
from .call_figures import small
from .figures import FIGURE, figure_key, is_shown_sum
from .provenance import all_figures, calls_of, request_of
from .said_missing import said_missing
from .sources import Sources, sources_of
from .state import RunState
from .units import read_unit
from .unlike_sum import sum_that_would_work
from .unused_handle import unused_handle
from .unused_results import reask, unused
from .would_take import conversion_that_would_work, taken_by

#: Checks that may reject per run (per validator): one re-ask, a second only where the
#: re-asked attempt found something (:func:`may_check`), then the answer stands.
MAX_CHECKS = 2
#: Turns of the re-ask that must call while nothing was found (see :func:`look_first`).
LOOK_TURNS = 3
#: The re-ask after an answer when a tool call of the run failed and none found anything.
NOTHING_FOUND = ("every tool call of this run failed or found nothing, so no tool result "
                 "supports your answer: call the tool again the way its error says would "
                 "work, or say that you could not find the answer")
#: The re-ask after an answer that is an empty value (:func:`holds_nothing`).
EMPTY_ANSWER = ("your answer is an empty value, which answers nothing: answer the question in "
                "words from what the tools returned, or say that you could not find the answer")
#: Unsupported figures tried as a total of the answer's own figures (:func:`.figures.
#: is_shown_sum`), at most: an answer is a sentence or two; a long one full of figures from
#: nowhere is not read 2**10 times per figure.
_TOTALS_TRIED = 20
#: Unsupported items named to the model, at most.
_SHOWN = 5
#: How much of the answer is read (a huge answer is checked on its start).
_READ = 20_000
_TOKEN = re.compile(r"\w+(?:-\w+)*")
_WORD = re.compile(r"[^\W\d_][\w'-]*")
_SENTENCE_END = re.compile(r"[.!?:\n]\s*$")
#: A title's full stop ends no sentence: the name after "Mr." is checked like any other.
_AFTER_TITLE = re.compile(r"(?<!\w)(?:" + "|".join(sorted(TITLES)) + r")\.\s*$", re.IGNORECASE)


def grounds_by_default(model: Model) -> bool:
    """Whether an agent that says nothing about grounding checks it: for in-process local
    models, the small ones the first-hour agents were measured on (docs/benchmarks.md,
    "First-hour agents"), where a wrong figure reported as a success was the common failure;
    a provider's large model rarely invents figures, and its users did not ask for the
    re-ask's cost."""
    return model.system == "local"


def check(state: RunState, answer: str | dict[str, Any]) -> ValidationProblem | None:
    """The grounding verdict on ``answer`` (the text, or the output tool's arguments): a
    problem naming what no source supports, or ``None`` (supported, or the check may not
    reject now: :func:`may_check`)."""
    if not state.setup.core.grounding or not may_check(state, "grounding"):
        return None
    if holds_nothing(answer):
        return ValidationProblem([EMPTY_ANSWER], "grounding", "UNGROUNDED")
    sources = sources_of(state)
    text = answer_text(answer)
    request, calls = request_of(state), calls_of(state)
    found = all_figures(calls)
    total = asked_total(request, calls, found)
    unsupported = _unsupported(text, sources, total)
    if not unsupported and _nothing_found(state, sources):
        return ValidationProblem([NOTHING_FOUND, *_undated(sources)], "grounding",
                                 "UNGROUNDED")
    if not unsupported:
        # (second looks, not verdicts: run_status reads neither)
        left_out = unused(state, text)
        if left_out and not any(is_total(f, total) for f in FIGURE.findall(text)):
            return ValidationProblem([reask(state, left_out)], "grounding", "UNUSED_RESULTS")
        stopped = unused_handle(state, sources)  # an id a lookup gave that no call used
        return ValidationProblem([stopped], "grounding", "UNUSED_RESULTS") if stopped else None
    shown = ", ".join(repr(item) for item in unsupported[:_SHOWN])
    more = f" and {len(unsupported) - _SHOWN} more" if len(unsupported) > _SHOWN else ""
    errors = [f"your answer asserts {shown}{more}, which appear in no tool result and not in "
              "the request: call a tool that gives them, or answer only from what you have"
              + (sum_that_would_work(request, calls, found, state.setup.settings.tools)
                 or conversion_that_would_work(request, calls, found,
                                               state.setup.settings.tools)
                 or field_that_would_work(request, text, calls, found))]
    for left in sources.unfounded:
        if left.figures and any(item in left.result for item in unsupported) \
                and len(errors) <= _SHOWN:
            errors.append(f"`{left.tool}` was given {', '.join(left.figures[:_SHOWN])}, which "
                          "no tool result and not the request hold, so its result is no "
                          "source: first call the tools that give those figures"
                          # the call that would work: as many figures as it was given in
                          # all, its found half included (`add(555.78, 486.03)`, the second
                          # from nowhere, may be a sum of other figures altogether)
                          f"{taken_by(state, left.tool, left.given, found)}")
    errors.extend(_undated(sources)[:_SHOWN])
    if (stopped := unused_handle(state, sources)) is not None:
        errors.append(stopped)
    return ValidationProblem(errors, "grounding", "UNGROUNDED")


def may_check(state: RunState, validator: str) -> bool:
    """Whether ``validator`` (grounding's or :mod:`.asked`'s) may reject this attempt's
    answer: never on the last attempt; once; and a second time only where an attempt since
    its rejection made a tool call that succeeded, never more than :data:`MAX_CHECKS`.

    Why a second: a re-ask that made the model find something is a new situation, the same
    answer after it is not. Seen on the 1.5B: told
    to answer in pounds, it called ``kg_to_lb`` (41.23) and still answered the 18.7 kg;
    told its 1000 litres had no source, it looked the tank's id up and answered 1000 again.
    A re-ask that found nothing (every call failed, or none was made) is not asked again:
    the model has nothing new to answer from."""
    if state.attempt >= (state.limits.max_attempts or 1):
        return False
    trace = state.trace.trace
    rejected = [a.attempt for a in trace.attempts if a.validator == validator]
    if not rejected:
        return True
    if len(rejected) >= MAX_CHECKS:
        return False
    return any(step.attempt > rejected[-1] and any(
        call.kind == "tool" and call.error is None and call.result is not None
        for call in step.tool_calls) for step in trace.steps)


def look_first(state: RunState) -> bool:
    """Whether this request must call a tool (``tool_choice="required"``): grounding rejected
    the previous attempt's text answer, the run has no tool result to answer from (no call
    yet, only failed ones, or only calls over figures from nowhere), and this attempt has
    called in fewer than :data:`LOOK_TURNS` turns.

    Why: told its figure had no source and asked to call a tool or answer from what it had,
    the 1.5B wrote the same invented answer again in every such re-ask measured on the
    first-hour agents ("The late fee for Tom Reed is 10 EUR.", twice, without a call). With
    nothing looked up there is nothing to answer from, so the one re-ask is a turn that must
    look, and its next turns too while every call fails (forced once, the 1.5B called the
    detail tool with the product's name, read that ``find_product`` gives the id, and wrote
    its invented answer again); the request after a call that worked is free again."""
    if not state.setup.core.grounding or not state.setup.settings.tools:
        return False
    trace = state.trace.trace
    if not any(a.attempt == state.attempt - 1 and a.validator == "grounding"
               for a in trace.attempts):
        return False
    turns = sum(1 for step in trace.steps if step.attempt == state.attempt and step.tool_calls)
    return turns < LOOK_TURNS and sources_of(state).results == 0


def run_status(state: RunState, action: str, output: Any) -> RunStatus:
    """The status of a run that returned ``output``: the vocabulary's rule
    (:func:`toolcycle.status.returned_status`), then, with grounding on, ``"ungrounded"`` for
    an answer that stands although some of its figures or names come from no source.

    The loop guard's notes on results ("returned this same result 3 times") count with the
    tools' errors as text an answer may pass through: seen on the 0.5B, an answer that was
    the note itself, a ``success`` before."""
    passed = [*state.trace.trace.error_observations(),
              *(note.strip() for note in state.loop_notes.values())]
    status = returned_status(action, output, passed)
    if status != "success" or not state.setup.core.grounding:
        return status
    if isinstance(output, str) and holds_nothing(output):
        return "ungrounded"
    sources = sources_of(state)
    text = answer_text(as_data(output))
    calls = calls_of(state)
    if _unsupported(text, sources, asked_total(request_of(state), calls, all_figures(calls))) or (
            _nothing_found(state, sources)) or said_missing(state, text) is not None:
        return "ungrounded"
    return status


def holds_nothing(answer: str | dict[str, Any]) -> bool:
    """Whether a text answer is an empty value and nothing else (``[]``, ``{}``, ``null``,
    ``None``, ``""``): no answer to any question. A structured answer is the schema's, where
    an empty list may be the answer ("no items"), so it is never read so.

    Why: a small model copies an empty tool result as its answer (the 1.5B wrote "[]"
    after a lookup found nothing), and the run reported ``success``."""
    if not isinstance(answer, str):
        return False
    text = answer.strip()
    if text in ("None", "none", "NULL"):
        return True
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return value is None or value == [] or value == {} or value == ""


def as_data(output: Any) -> Any:
    """A returned output as the model's arguments were (its JSON form), for the checks that
    read a structured answer the way they read the output tool's arguments."""
    from pydantic_core import to_jsonable_python

    try:
        return to_jsonable_python(output, fallback=str)
    except ValueError:  # a structure that refers to itself: its text form is the answer
        return str(output)


def _nothing_found(state: RunState, sources: Sources) -> bool:
    """Whether a tool call of the run failed and no call found anything (each failed or
    returned nothing): then no tool result supports the answer, whatever it says. Seen on
    the 1.5B (first-hour dev set): ``find_product`` failed on ``YOGA-MAT`` and it answered
    "The yoga mat is not in stock.", no figure or name to check, a ``success``; and a
    booking lookup that failed twice on the id's format, then a web search that returned
    ``[]``, ended "The booking number is not recognized", a ``success`` too.
    A question about what does not exist ends ``ungrounded`` too: after a failed call the
    run cannot tell "not found" from "looked up wrong", and says so. Without a failed call,
    an empty result is an answer ("no open tickets"). A call a playbook's fallback answered
    without an answer (the tool failed, its alternative found nothing) is a failed call
    that found nothing, though its result is text that says so: seen on the 1.5B (JSON,
    generated utility suite), "energy_live failed: 429 ...; energy_archive(...) found
    nothing too: []", a failed contract lookup, an empty search, and "was not found", a
    ``success``."""
    return sources.found == 0 and (sources.fell_through or any(
        left.dates for left in sources.unfounded) or bool(state.trace.trace.error_observations()))


def _unsupported(text: str, sources: Sources, total: float | None) -> list[str]:
    """:func:`unsupported_claims` of the run's answer, less the total the request asks for
    where the run read each listed record (``total``: :func:`.asked_total.asked_total`): the
    model's own sum of what the tools gave, as the request asked (the answer that states it
    uses what the tools found, too: no second look, :func:`.unused_results.unused`)."""
    unsupported = unsupported_claims(text, sources.text, sources.countable, sources.listed)
    return [item for item in unsupported if not is_total(item, total)]


def unsupported_claims(answer: str, sources: str, countable: bool = True,
                       listed: bool = True) -> list[str]:
    """The figures, identifiers and names of ``answer`` that ``sources`` does not hold, in
    order, each once. ``countable``: a tool returned something a count of 1 to 9 may have
    been counted from (:attr:`Sources.countable`); without it such a count is checked too.
    ``listed``: a tool returned a list, empty or not, or text (:attr:`Sources.listed`), so
    that 0 may be its count; without it 0 is checked too.

    Why: a single digit is exempt as a count a model may take by counting a tool's rows, but
    where every tool returned nothing there was nothing to count, and a small model that
    found nothing answers "1" as readily as any other invented figure. Likewise 0 is the
    count of an empty list, but where no tool returned a list it counts nothing: seen on the
    1.5B, it looked up a member's loan id and answered "The fines owed ... are 0 EUR."
    without calling the tool that held them, a success."""
    text = answer[:_READ]
    figures = {figure_key(f) for f in FIGURE.findall(sources)}
    lowered = sources.lower()
    # a field's name is words too: ``price_eur`` says EUR, as ``{"currency": "EUR"}`` would
    words = {_bare(part) for w in _WORD.findall(sources) for part in {w, *re.split(r"[_-]", w)}}
    found: dict[str, None] = {}
    units: set[str] | None = None  # the units the sources name (read once, where needed)
    for match in _TOKEN.finditer(text):
        token = match.group()
        if (any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
                and token.lower() not in lowered):  # an identifier: A-17, ORD42
            found[token] = None
    unsupported: list[str] = []
    supported: list[str] = []  # the answer's figures a source holds: addends it may show
    for match in FIGURE.finditer(text):
        value = match.group().rstrip(",")
        exempt = small(value) and (countable or (value == "0" and listed))
        if figure_key(value) in figures:
            supported.append(value)
        elif not exempt and not _inside(match, found):
            unsupported.append(value)
    for index, value in enumerate(unsupported):
        if index >= _TOTALS_TRIED or not is_shown_sum(
                value, supported, lambda addends: _one_field(addends, sources)):
            found[value] = None
    for match in _WORD.finditer(text):
        word = match.group()
        if (word[0].isupper() and _bare(word) not in words and not _unit_letter(text, match)
                and not _title(text, match) and (not _SENTENCE_END.search(
                    text[:match.start()] or ".") or _AFTER_TITLE.search(text[:match.start()]))):
            unit = read_unit(word.rstrip("'"), in_sentence=True)
            if unit is not None:
                units = _units_named(sources) if units is None else units
                if unit.name in units:
                    continue
            found[word.rstrip("'")] = None
    return list(found)


def _one_field(figures: list[str], sources: str) -> bool:
    """Whether each of ``figures`` is the value of one same field in the sources' JSON
    (``"power_kw": 8.07`` and ``"power_kw": 15.4``): one quantity of several records, which
    add up. Figures of different fields (a length and a count of seats) are the sum checks'
    concern (:mod:`.unlike_sum`), and are not vouched for here."""
    keys: set[str] | None = None
    for figure in figures:
        pattern = (rf'"([^"\\]{{1,80}})"\s*:\s*"?{re.escape(figure_key(figure))}'
                   r"(?:\.0+)?(?![\d.])")  # (JSON may write 1200 as 1200.0)
        found = set(re.findall(pattern, sources))
        keys = found if keys is None else keys & found
        if not keys:
            return False
    return True


def _unit_letter(text: str, match: re.Match[str]) -> bool:
    """Whether the capitalised word is a lone letter or follows a degree sign: a unit or a
    symbol (``45.32°F``, ``20 °C``, "grade B"), not a name. A name the model invented is a
    word; the figure a unit qualifies is checked on its own. Seen on the 1.5B: "45.32°F",
    the converter's right figure, read as the unsupported name ``F`` (issue 68)."""
    before = text[max(0, match.start() - 2):match.start()].rstrip()
    return len(match.group()) == 1 or before.endswith("°")


def _title(text: str, match: re.Match[str]) -> bool:
    """Whether the capitalised word is a title before a name ("Mr. Ravi Menon", "Dr Lee"):
    a word of address, not a name the answer claims; the name after it is checked on its
    own (:data:`_AFTER_TITLE`). Seen on the 1.5B (held-out first-hour seed 6818): "the
    keeper ... is Mr. Ravi Menon", the record's keeper right, ended ``ungrounded`` for
    "Mr"."""
    return _bare(match.group()) in TITLES and bool(
        re.match(r"\.?\s+[^\W\d_]", text[match.end():match.end() + 4])
        and text[match.end():].lstrip(". \t")[:1].isupper())


def _units_named(sources: str) -> set[str]:
    """The units the sources name in any writing: a word, a symbol, a field name's ending
    (``temperature_c`` names degrees Celsius, ``price_eur`` the euro).

    Why: an answer names a unit its own way ("43.6 degrees Celsius" for a ``temperature_c``
    figure, "Euros" for EUR); read as a name no source holds, a right sum ended
    ``ungrounded`` (issue 68). A unit no source names still counts as a claim: "4.5 GBP"
    from ``postage_fee_eur``."""
    named: set[str] = set()
    for word in set(_WORD.findall(sources[:_READ])):
        for part in {word, *re.split(r"[_-]", word)}:
            if part and (unit := read_unit(part)) is not None:
                named.add(unit.name)
    return named


def _bare(word: str) -> str:
    """A word without the quote that closes it or a possessive: ``'Bergen'`` and
    ``Lopez's`` are the words the sources hold (Bergen, Lopez), not new names."""
    word = word.lower().rstrip("'")
    return word[:-2] if word.endswith("'s") else word


def _inside(match: re.Match[str], identifiers: dict[str, None]) -> bool:
    """Whether the figure is part of an identifier already reported (``17`` of ``A-17``)."""
    return any(match.group() in identifier for identifier in identifiers)


def answer_text(answer: Any) -> str:
    """The answer as the model wrote it, as text: the text, or the string and number values
    of the output tool's arguments, one a line (keys are the schema's words, not claims)."""
    if isinstance(answer, str):
        return answer
    leaves: list[str] = []
    stack = [answer]
    while stack and len(leaves) < 1000:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(reversed(list(value.values())))
        elif isinstance(value, list):
            stack.extend(reversed(value))
        elif isinstance(value, str | int | float) and not isinstance(value, bool):
            leaves.append(str(value))
    return "\n".join(leaves)


def _undated(sources: Sources) -> list[str]:
    """What to tell the model of each call given a date no source names."""
    return [f"`{left.tool}` was given {', '.join(left.dates[:_SHOWN])}, a date the request "
            "does not name, so its result says nothing about the request: call it again with "
            "the request's own date, written as the tool takes it"
            for left in sources.unfounded if left.dates]
