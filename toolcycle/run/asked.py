"""Does the answer answer what was asked? Units, conversions, sums and the things named.

Grounding (:mod:`.grounding`) checks that an answer's figures come from a source. A small
model also answers *another* question with a figure a tool did return (issue 68, first-hour
agents, 1.5B): "How many km" answered in miles, a balance in a currency nobody asked for, a
weight in pounds where the record holds kilograms, one exhibit's value added to its own
weight, the area of one vineyard given as two vineyards' sum. Each leaves evidence in the
run, read here from typed parts (the request, the calls and their results), never from the
model's prose about them:

- **unit**: the answer states a figure in one unit where the request asks for another of the
  same kind (km and miles, USD and EUR);
- **conversion**: the answer's only figure is a conversion tool's result (a call that turned
  one figure into one figure, its name, arguments or description naming two units of one
  kind) into a unit the request does not name; an extra one beside the figure asked passes;
- **unlike sum**: the answer's figure is a call that added figures up (its result is their
  sum) over unlike parts, each traced back to its record: different units, fields the
  request names only some of, or one record's figure twice (:mod:`.unlike_sum`);
- **converted sum**: the answer's figure is a sum whose parts were each converted into a
  unit the request does not name (:mod:`.converted_sum`);
- **field**: the answer's figure, or each figure a call added up into it, was read from a
  field the request does not name, where the same results hold one it does (two
  ``capacity`` figures added up for "the two ticket prices": :mod:`.asked_field`), or the
  answer gives a name from such a field instead of the record's figure the request names
  (the head nurse for "what number of beds");
- **not looked up**: the request names two things side by side ("Les Pins and Clos
  Bellet"), the run looked one up by name, and the other went to no call and is in no result;
  or a name of the request was looked up, its id went to no later call though a tool takes
  it, and the answer gives another record's figure (:mod:`.looked_up`);
- **unfinished sum**: the model's last sum was over figures from nowhere, nothing was added
  up after it, and the calls since found figures of one field in two or more results that
  the answer does not add (:mod:`.unfinished_sum`).

Like grounding (the same ``Agent(grounding=...)`` switch, on for local models), a mismatch
rejects the answer once (a second time only where the re-asked attempt called a tool that
answered, :func:`.grounding.may_check`; never on the last attempt; validator
``"asked"``, code ``MISMATCHED`` or :data:`LOOK_UP` in the trace) with what is off and what
the tools said, and an answer that still shows one ends with status ``"mismatched"``, not
``"success"``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..output import ValidationProblem
from ..status import RunStatus
from . import grounding
from .asked_field import gives_named, unasked_fields, unasked_values
from .converted_sum import converted_sum
from .looked_up import listed, names_in, unread, unvisited
from .provenance import (
    Call,
    Figure,
    added_up,
    all_figures,
    calls_of,
    conversion_of,
    converters_into,
    made_by,
    norm,
    number,
    numbers_in,
    recorded_unit,
    request_of,
    result_strings,
    single,
    written,
)
from .state import RunState
from .unfinished_sum import unfinished_sum, untotalled
from .units import (
    Unit,
    asks_for,
    field_unit,
    read_unit,
    requested_units,
    stated_units,
)
from .unlike_sum import unlike_sum
from .unused_handle import takers

#: The rejection's code when a thing the request names was not looked up: the re-ask's
#: first turn must call (:func:`look_again`); ``MISMATCHED`` otherwise.
LOOK_UP = "NOT_LOOKED_UP"
#: The rejection's code when each mismatch is a conversion nobody asked for: the fix is an
#: answer with the figure the tools gave, so the re-ask's first turn must answer
#: (:func:`answer_now`).
AS_GIVEN = "ANSWER_AS_GIVEN"
#: The rejection's code when the fix is a call of the converter the re-ask names (a figure
#: in one unit where the request asks for another, and no result holds it in that one): the
#: re-ask's first turn calls that converter (:func:`convert_first`).
CONVERT = "CONVERT_FIRST"
#: How much of the answer and of the request is read (a huge one on its end or start).
_READ = 20_000
#: Mismatches named to the model, at most.
_SHOWN = 3
_FIGURE = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")  # (as provenance reads figures)


#: The ways an answer answers another question (the module's docstring says each).
MismatchKind = Literal["unit", "conversion", "unlike_sum", "converted_sum", "field",
                       "not_looked_up", "unfinished_sum"]


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One way the answer answers another question, and what to tell the model."""

    kind: MismatchKind
    message: str
    #: The offered tool whose call is the fix, where the message names one (a converter).
    call: str | None = None


def check(state: RunState, answer: str | dict[str, Any]) -> ValidationProblem | None:
    """The verdict on ``answer``: a problem naming each mismatch, or ``None`` (it answers
    what was asked as far as the run can tell, or the check is spent)."""
    if not state.setup.core.grounding or not grounding.may_check(state, "asked"):
        return None
    found = mismatches_in(state, answer)
    if not found:
        return None
    code = (LOOK_UP if any(m.kind == "not_looked_up" for m in found)
            else AS_GIVEN if all(m.kind == "conversion" for m in found)
            else CONVERT if all(m.call is not None for m in found) else "MISMATCHED")
    return ValidationProblem([m.message for m in found[:_SHOWN]], "asked", code)


def look_again(state: RunState) -> bool:
    """Whether this request must call a tool (``tool_choice="required"``): the previous
    attempt was rejected because a thing the request names was never looked up
    (:data:`LOOK_UP`), and this attempt has not called yet. Why: told "look 'Clos Bellet' up
    the same way", the 1.5B answered in words that the names were not found (held-out h04,
    firsthour3 run), without a call; the fix is a lookup, so the re-ask's first turn is one.
    Text answers only, as grounding's :func:`~.grounding.look_first`."""
    if not state.setup.settings.tools or not _rejected_last(state, LOOK_UP):
        return False
    return not any(step.attempt == state.attempt and step.tool_calls
                   for step in state.trace.trace.steps)


def answer_now(state: RunState) -> bool:
    """Whether this request must answer, not call: the previous attempt was rejected for a
    conversion nobody asked for (:data:`AS_GIVEN`), and this attempt has made no turn yet.

    Why: told "answer with 27.4 as the tools gave it", the 1.5B called the converter again
    and answered its result, in most such re-asks seen (text and structured answers alike).
    The figure asked for is in the run already; the fix is the answer, so the re-ask's first
    turn is one (as a lookup is :func:`look_again`'s)."""
    return _rejected_last(state, AS_GIVEN) and not any(
        step.attempt == state.attempt for step in state.trace.trace.steps)


def convert_first(state: RunState) -> str | None:
    """The converter this request must call (its name, a ``tool_choice``), or ``None``: the
    previous attempt was rejected for a figure in another unit than the one asked, the
    re-ask named the offered tool that converts to it (:data:`CONVERT`), and this attempt
    has made no turn yet.

    Why: told "`mwh_to_kwh` converts to kWh: answer in kWh", the 1.5B answered the same
    megawatt-hours labelled kWh again in 4 of 18 such re-asks on the first-hour agents
    (2026-12-06 and 07), each ending ``mismatched``; in the 14 where it called first, 13 ended
    ``success``. The fix is that call, so the re-ask's first turn is one (as a lookup is
    :func:`look_again`'s)."""
    if not _rejected_last(state, CONVERT) or any(
            step.attempt == state.attempt for step in state.trace.trace.steps):
        return None
    # (the one converter into a unit the request asks for: where several are, which one
    # the re-ask named depends on the figure's kind, and a wrong forced call misleads)
    converters = converters_into({u.name for u in asked_units(state)},
                                 [(d.name, d.description) for d in state.setup.settings.tools])
    return converters[0] if len(converters) == 1 else None


def _rejected_last(state: RunState, code: str) -> bool:
    """Whether this check rejected the previous attempt with ``code`` (grounding on)."""
    return state.setup.core.grounding and any(
        a.attempt == state.attempt - 1 and a.validator == "asked" and a.code == code
        for a in state.trace.trace.attempts)


def run_status(state: RunState, action: str, output: Any) -> RunStatus:
    """The run's status: grounding's (:func:`.grounding.run_status`), then ``"mismatched"``
    for a successful answer that still answers another question."""
    status = grounding.run_status(state, action, output)
    if status != "success" or not state.setup.core.grounding:
        return status
    return "mismatched" if mismatches_in(state, grounding.as_data(output)) else status


def mismatches_in(state: RunState, answer: Any) -> list[Mismatch]:
    """What the run's request, calls and results say about ``answer``."""
    request = request_of(state)[-_READ:]  # (the question ends it; instructions come first)
    asked = asked_units(state)
    calls = calls_of(state)
    return mismatches(request, asked, calls, answer, [
        (d.name, d.description) for d in state.setup.settings.tools],
        lambda giver: takers(state, giver))


def asked_units(state: RunState) -> list[Unit]:
    """The units the request names, and those the output's fields name (``total_usd``)."""
    asked = requested_units(request_of(state)[-_READ:])  # (the question ends it)
    for definition in state.output.tool_definitions:
        asked.extend(u for u in map(field_unit, _property_names(definition.parameters)) if u)
    return asked


def mismatches(request: str, asked: Sequence[Unit], calls: Sequence[Call], answer: Any,
               offered: Sequence[tuple[str, str]] = (),
               takes: Callable[[str], list[str]] = lambda giver: []) -> list[Mismatch]:
    """The mismatches of ``answer`` (text, or a structured output's JSON form) with a request
    that names the units ``asked``, given the run's successful ``calls`` in order, the
    offered tools' names and descriptions and how they take what a tool gives (``takes``:
    :func:`.unused_handle.takers`).

    A figure beside the one asked for does not make the answer another's: the unit and
    conversion checks speak only when no figure of the answer is in a unit the request asks
    for (the unit check), or none is a tool's figure as it gave it (the conversion check):
    "3.0 mm of rain, 35.78°F" answers the rain question with an extra conversion."""
    figures = all_figures(calls)
    text = grounding.answer_text(answer)[:_READ]
    stated = {v: unit for written, unit in stated_units(text)
              if (v := norm(written)) is not None}
    if isinstance(answer, dict):
        stated.update(_keyed_units(answer))
    read: dict[float, _Read] = {}
    for match in _FIGURE.finditer(text):
        value = norm(match.group())
        if value is not None and value not in read:
            read[value] = _read(match.group(), value, stated.get(value), calls, figures)
    names = {u.name for u in asked}
    found: list[Mismatch] = []
    for figure in read.values():
        unit = figure.unit
        if unit is None or not unit.dimension or unit.name in names:
            continue
        wanted = [u for u in asked if u.dimension == unit.dimension]
        if wanted and not any(f.unit and f.unit.name in names for f in read.values()):
            message, converter = _unit_message(figure, wanted, calls, figures, offered)
            found.append(Mismatch("unit", message, converter))
    plain = _answers_plainly(text, request, calls, figures, read, names)
    for figure in read.values():
        if figure.conversion is None or figure.made is None or plain or any(
                m.kind == "unit" for m in found):
            continue
        target = figure.conversion[1]
        if not asks_for(request, names, target):
            # converted from a field the request does not ask about, beside one it does
            # ("what number of fish": `volume_l` converted to gallons, `fish` in the same
            # record): which field comes first, or "answer with 59624 as the tools gave it"
            # sends the model to the other wrong figure (seen on the 1.5B, held-out 6815)
            if other := unasked_fields(request, [(figure.written, figure.value)], calls,
                                       figures):
                found.extend(Mismatch("field", message) for message in other)
                continue
            found.append(Mismatch("conversion", (
                f"the request does not ask for {say_unit(target)}; your answer's {figure.written} "
                f"is `{calls[figure.made].name}`'s result, in {say_unit(target)}, converted from "
                f"{_origin(calls[figure.made], figure.made, figures)}: answer with "
                f"{_first_input(calls[figure.made])} as the tools gave it, unless the request "
                "asks for another unit")))
    # (what follows judges the answer's own figure or name; one a named field holds, given
    # as a tool gave it, is the answer, and a sum or name beside it an extra)
    named = gives_named(request, text, read, calls, figures)
    for figure in read.values():
        if named or figure.made is None or added_up(calls[figure.made]) is None:
            continue
        if said := unlike_sum(request, figure.written, figure.made, calls, figures, asked):
            found.append(Mismatch("unlike_sum", said))
        elif not _plain_besides(figure, read, figures, names) and not any(
                m.kind in ("unit", "conversion") for m in found) and (
                said := converted_sum(request, names, figure.written, figure.made, calls,
                                      figures)):
            found.append(Mismatch("converted_sum", said))
    if not found and not named:
        found.extend(Mismatch("field", message) for message in unasked_fields(
            request, [(f.written, f.value) for f in read.values()], calls, figures))
    if not found and not named:
        found.extend(Mismatch("field", message)
                     for message in unasked_values(request, text, calls, figures))
    things = names_in(request)
    found.extend(Mismatch("not_looked_up", m) for m in unvisited(request, things, calls))
    if not any(m.kind == "not_looked_up" for m in found) and any(
            f.value in read for f in figures):
        found.extend(Mismatch("not_looked_up", m) for m in unread(things, calls, text, takes))
    if not found and (left := unfinished_sum(request, calls, figures, read)) is not None:
        found.append(Mismatch("unfinished_sum", left))
    if not found and (left := untotalled(request, listed(request, things), calls, figures,
                                         read)) is not None:
        found.append(Mismatch("unfinished_sum", left))
    return found


def _answers_plainly(text: str, request: str, calls: Sequence[Call], figures: list[Figure],
                     read: dict[float, _Read], names: set[str]) -> bool:
    """Whether the answer holds something a tool gave as it gave it, beside any converted
    figure: a figure of a result that no conversion made, a figure in a unit the request
    asks for, or a name a result holds that the request does not ("the operator is Hana
    Kovac, and the lift is 4530.84 ft long" answers the name question, with an extra)."""
    given = {g.value for g in figures}
    if any((f.value in given and f.conversion is None) or (f.unit and f.unit.name in names)
           for f in read.values()):
        return True
    lowered, asked = text.lower(), request.lower()
    return any(len(value) >= 3 and value.lower() in lowered and value.lower() not in asked
               for call in calls for value in result_strings(call.result))


def _plain_besides(figure: _Read, read: dict[float, _Read], figures: list[Figure],
                   names: set[str]) -> bool:
    """Whether the answer holds, beside ``figure``, a figure as a tool gave it or in a unit
    the request asks for (the sum ``figure`` is then an extra)."""
    given = {g.value for g in figures}
    return any((f.value in given and f.conversion is None) or (f.unit and f.unit.name in names)
               for f in read.values() if f is not figure)


@dataclass(frozen=True, slots=True)
class _Read:
    """An answer's figure as the run explains it: as written, its value, its unit (stated
    beside it, else the unit of the call that made it or the field it was read from), the
    call whose whole result it is (``made``) and, when that call converts, its units."""

    written: str
    value: float
    unit: Unit | None
    made: int | None
    conversion: tuple[Unit, Unit] | None
    stated: Unit | None


def _read(written: str, value: float, stated: Unit | None, calls: Sequence[Call],
          figures: list[Figure]) -> _Read:
    """Where the unit written beside a figure and the unit its source gives it are of one
    kind and differ, the source's counts: relabelling a converted figure does not convert it
    back (the 1.5B, told its 14.11 miles were not the km asked for, wrote "14.11 km")."""
    made = made_by(value, calls)
    conversion = conversion_of(calls[made]) if made is not None else None
    source = conversion[1] if conversion else recorded_unit(value, figures)
    unit = stated or source
    if stated is not None and source is not None and stated.dimension == source.dimension \
            and stated.name != source.name:
        unit = source
    return _Read(written, value, unit, made, conversion, stated)


def _unit_message(figure: _Read, wanted: list[Unit], calls: Sequence[Call],
                  figures: list[Figure], offered: Sequence[tuple[str, str]]
                  ) -> tuple[str, str | None]:
    """What to tell the model about a figure in another unit than the one asked, and the
    converter whose call is the fix where the message names one."""
    asked = " or ".join(dict.fromkeys(u.word for u in wanted))
    assert figure.unit is not None
    message = (f"the request asks for {asked}; your answer gives {figure.written} in "
               f"{say_unit(figure.unit)}")
    if figure.stated is not None and figure.stated.name != figure.unit.name:
        message = (f"the request asks for {asked}; your answer writes {figure.written} "
                   f"{figure.stated.word}, but {figure.written} is in {say_unit(figure.unit)}")
    made, conversion = figure.made, figure.conversion
    names = {u.name for u in wanted}
    if made is not None and conversion is not None:
        origin = _origin(calls[made], made, figures)
        message += (f" (`{calls[made].name}` converted {origin} into "
                    f"{say_unit(conversion[1])})")
        if conversion[0].name in names:  # the figure before it is the one asked for
            return message + f"; the figure in {asked} is {origin}: answer with it", None
    said = next((f for f in reversed(figures) if f.unit is not None and f.unit.name in names),
                None)
    if said is not None and said.unit is not None:
        where = f"{said.key} in " if said.key else ""
        message += (f"; {where}the result of `{said.tool}` says "
                    f"{written(said.value)} {said.unit.said}")
    elif (done := _converted(figure.value, names, calls)) is not None:
        # (the conversion was made: the fix is its result, not the call again)
        converted = single(done.result)
        assert converted is not None  # (a conversion has one figure out)
        return message + (f"; `{done.name}` converted it into {written(converted)} {asked}: "
                          "answer with that"), None
    elif (converters := converters_into(names, offered)) and any(
            f.value == figure.value for f in figures):
        # (only for a figure a tool gave: told "`ha_to_acres` converts to acres" of a 1.5 no
        # result holds, where grounding could not re-ask twice, a model converts 1.5)
        converter = converters[0]
        message += f"; `{converter}` converts to {asked}"
        return message + f": answer in {asked}", converter
    return message + f": answer in {asked}", None


def _converted(value: float, names: set[str], calls: Sequence[Call]) -> Call | None:
    """The last call that converted ``value`` into one of the units ``names``."""
    return next((call for call in reversed(calls)
                 if (pair := conversion_of(call)) is not None and pair[1].name in names
                 and list(numbers_in(call.arguments)) == [value]), None)


def _first_input(call: Call) -> str:
    given = list(numbers_in(call.arguments))
    return written(given[0]) if given else "the figure it was given"


def _origin(call: Call, index: int, figures: list[Figure]) -> str:
    given = list(numbers_in(call.arguments))
    if not given:
        return "its input"
    value = given[0]
    source = next((f for f in reversed(figures) if f.call < index and f.value == value), None)
    if source is None:
        return written(value)
    unit = f" {source.unit.said}" if source.unit else ""
    field = f"{source.key} in " if source.key else ""
    return f"{written(value)}{unit} ({field}the result of `{source.tool}`)"


def _keyed_units(answer: dict[str, Any]) -> dict[float, Unit]:
    """A structured answer's figures whose field names their unit (``total_usd``), and the
    figure beside a field that is a unit on its own (``{"amount": 5, "currency": "USD"}``)."""
    found: dict[float, Unit] = {}
    values = list(answer.items())
    loose = [u for _, v in values if isinstance(v, str) and (u := read_unit(v))]
    for key, value in values:
        if (figure := number(value)) is not None:
            unit = field_unit(key) or (loose[0] if len(loose) == 1 else None)
            if unit is not None:
                found[round(figure, 6)] = unit
    return found


def _property_names(schema: dict[str, Any]) -> list[str]:
    properties = schema.get("properties")
    return [str(k) for k in properties] if isinstance(properties, dict) else []


def say_unit(unit: Unit) -> str:
    """A unit for the model to read: as written, with its name where the writing is an
    abbreviation (``lb (pound)``, ``mi (mile)``; ``EUR``, ``miles`` as they are)."""
    if unit.dimension == "[currency]":
        return unit.name if len(unit.word) <= 3 else unit.word  # "eur" -> EUR; "euros"
    name = unit.name.replace("_", " ")
    word = unit.word.lower().rstrip("s")
    if word == name.lower() or unit.word.upper() == unit.name or len(unit.word) > 4:
        return unit.word
    return f"{unit.word} ({name})"
