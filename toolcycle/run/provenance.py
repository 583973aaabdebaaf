"""Where an answer's figures come from: the run's calls and the figures their results hold.

The checks of :mod:`.asked` explain a figure by the run's own typed parts, never by the
model's words about it: the call whose whole result it is (:func:`made_by`), whether that
call converts (:func:`conversion_of`: one figure in, one out, two units of one kind named by
its name, arguments or description) or adds up (:func:`added_up`: its result is the sum of
the figures it was given), and the field a record gave it under (``weight_kg``: the unit its
name ends with, :func:`figures_of`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..messages import ToolCall, ToolResult
from .state import RunState
from .units import Unit, field_unit, name_units, named_units, one_kind, read_unit, stated_units

_FIGURE = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call that succeeded, as the run holds it: ``name``, ``arguments``, the result
    text the model read, and that tool's description."""

    name: str
    arguments: dict[str, Any]
    result: str
    description: str


@dataclass(frozen=True, slots=True)
class Figure:
    """A figure a call's result holds, with where it is (``key``: the field, or ``""``) and
    its unit when the result says it (a field name's ending, a unit beside it)."""

    value: float
    call: int
    tool: str
    key: str
    unit: Unit | None


def made_by(value: float, calls: Sequence[Call]) -> int | None:
    """The last call whose whole result is ``value``: the answer's figure is its result."""
    for index in range(len(calls) - 1, -1, -1):
        if single(calls[index].result) == value:
            return index
    return None


def conversion_of(call: Call) -> tuple[Unit, Unit] | None:
    """The units a call converts from and to: one figure in, one figure out, and two units
    of one kind named by its name (``kg_to_lb``), else its arguments
    (``to_currency="USD"``), else its description ("Convert a value in kg to pounds"). Two
    kinds (kWh in, EUR out) is a price worked out, not a conversion."""
    if single(call.result) is None:
        return None
    return converts(call.name, call.arguments, call.description)


def converts(name: str, arguments: dict[str, Any], description: str
             ) -> tuple[Unit, Unit] | None:
    """The units a call of tool ``name`` with ``arguments`` would convert from and to, before
    it runs: one figure in, and two units of one kind named as :func:`conversion_of` reads
    them."""
    if len(list(numbers_in(arguments))) != 1:
        return None
    for units in (name_units(name),
                  [u for v in strings(arguments) if (u := read_unit(str(v)))],
                  named_units(description)):
        if (pair := one_kind(units)) is not None:
            return pair
    return None


def converts_to(name: str, description: str) -> Unit | None:
    for units in (name_units(name), named_units(description)):
        if (pair := one_kind(units)) is not None:
            return pair[1]
    return None


def converters_into(names: Collection[str], offered: Iterable[tuple[str, str]]) -> list[str]:
    """The offered tools (name, description) that convert into one of the units ``names``
    (by :func:`converts_to`), in the order offered."""
    return [name for name, description in offered
            if (target := converts_to(name, description)) and target.name in names]


def added_up(call: Call) -> list[float] | None:
    """The figures a call added up: two or more numbers in, their sum out."""
    given = list(numbers_in(call.arguments))
    result = single(call.result)
    if len(given) < 2 or result is None:
        return None
    whole = total(given)
    return given if whole is not None and math.isclose(whole, result, rel_tol=1e-9,
                                                       abs_tol=0.011) else None


def total(values: Iterable[float]) -> float | None:
    """The exact sum of ``values``, or ``None`` where it overflows a float (tool output is
    untrusted: two results of ``8.9e307`` add up past the largest float)."""
    try:
        return math.fsum(values)
    except OverflowError:
        return None


@dataclass(frozen=True, slots=True)
class Part:
    """A figure as the run explains it, traced back (:func:`traced`): ``value`` as it was
    used, the figures of earlier results it was read from (``sources``: every field that held
    it, the latest last; empty where no result holds it) and its unit (the target of the
    conversion that made it, else the record's), and the conversion tool on the way."""

    value: float
    sources: tuple[Figure, ...]
    unit: Unit | None
    converted_by: str = ""


#: Parts one figure is traced into, and steps taken, at most (nested sums of a long run).
_PARTS, _STEPS = 64, 2000


def traced(value: float, before: int, calls: Sequence[Call], figures: Sequence[Figure]
           ) -> list[Part]:
    """What the figure ``value``, used at call ``before``, is made of: the parts an earlier
    sum added up (each traced in turn), the figure an earlier conversion was given (in the
    unit it converted into), else the record figures that hold it. Why whole chains: a small
    model adds a converted figure to another (``add(2298, pounds_to_euros(56.67))``) or a sum
    it made to a third figure (``add(add(333, 333), 170)``); what was added is read from the
    records at the chain's start, as the model cannot rename it on the way."""
    todo: list[tuple[float, float, int, Unit | None, str]] = [(value, value, before, None, "")]
    parts: list[Part] = []
    steps = 0
    while todo and len(parts) < _PARTS and steps < _STEPS:
        steps += 1
        used, look, at, unit, by = todo.pop()
        made = made_by(look, calls[:at])
        if made is not None and unit is None and (inputs := added_up(calls[made])) is not None:
            todo.extend((x, x, made, None, "") for x in reversed(inputs))
            continue
        if made is not None and (conversion := conversion_of(calls[made])) is not None:
            given = next(numbers_in(calls[made].arguments))
            todo.append((used, given, made, unit or conversion[1], by or calls[made].name))
            continue
        sources = tuple(f for f in figures if f.call < at and f.value == look)
        parts.append(Part(used, sources, unit or (sources[-1].unit if sources else None), by))
    return parts


def recorded_unit(value: float, figures: list[Figure]) -> Unit | None:
    return next((f.unit for f in reversed(figures) if f.value == value and f.unit), None)


def figures_of(call: Call, index: int) -> list[Figure]:
    """The figures a call's result holds: JSON numbers with their field (and the unit its
    name ends with), or the figures of a text result with the unit beside each."""
    data = result_value(call.result)
    if data is None:
        return [Figure(v, index, call.name, "", unit)
                for written, unit in stated_units(call.result)
                if (v := norm(written)) is not None]
    found: list[Figure] = []
    for key, value in keyed_leaves(data):
        if (figure := number(value)) is not None:
            found.append(Figure(round(figure, 6), index, call.name, key,
                                field_unit(key) if key else None))
            if len(found) >= 1000:
                break
    return found


def all_figures(calls: Sequence[Call]) -> list[Figure]:
    """The figures every call's result holds (:func:`figures_of`), in call order."""
    return [f for index, call in enumerate(calls) for f in figures_of(call, index)]


#: The most characters of a result's field name the run keeps: the checks quote fields back to
#: the model (":`weight_grams`, which the request does not ask about"), and a tool's result is
#: untrusted, so a 5,000-character key must not become 5,000 characters of a re-ask. Field
#: names people write are far shorter; one cut here is still matched by its first words.
FIELD_CHARS = 60


def keyed_leaves(data: Any, most: int = 5000) -> Iterator[tuple[str, Any]]:
    """The leaves of a JSON value with the field each is under (``""`` at the top; a list's
    items under its field; at most :data:`FIELD_CHARS` of its name), at most ``most`` of
    them: tool output is untrusted."""
    stack: list[tuple[str, Any]] = [("", data)]
    seen = 0
    while stack and seen < most:
        key, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((str(k)[:FIELD_CHARS], v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((key, v) for v in value)
        else:
            seen += 1
            yield key, value


def result_strings(result: str) -> list[str]:
    """The string values of a JSON result (names, places): what a text result is, too."""
    data = result_value(result)
    return [] if data is None else list(strings(data))[:1000]


def result_value(text: str) -> Any:
    """A tool result's JSON value, or ``None`` for text (or JSON nested past what the
    parser takes: tool output is untrusted, and a check must not fail the run)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def number(value: Any) -> float | None:
    """A JSON number as a float (an integer too big for one is no figure to compare)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        return float(value)
    except OverflowError:
        return None


def calls_of(state: RunState) -> list[Call]:
    ending = {d.name for d in state.output.tool_definitions}
    described = {d.name: d.description for d in state.setup.settings.tools}
    given: dict[str, ToolCall] = {}
    calls = []
    for message in state.messages:
        for part in message.parts:
            if isinstance(part, ToolCall):
                given[part.id] = part
            elif isinstance(part, ToolResult) and not part.is_error and part.name not in ending:
                arguments = given[part.call_id].arguments if part.call_id in given else {}
                calls.append(Call(part.name, dict(arguments or {}), state.tool_text(part),
                                  described.get(part.name, "")))
    return calls


def request_of(state: RunState) -> str:
    """The instructions and the conversation up to the run's prompt (what the user asked;
    the loop's later feedback is not a request), without the playbook's advice.

    Why not the advice: it was learned from other tasks and names their tools' parameters
    ("Call ward_daily(code, day like ...)"); read as the request, the 1.5B's right answer
    (an occupancy figure, for "occupancy in percent") was refused because the request
    "asked about `code`", the word of the advice."""
    texts = [state.setup.core.instructions or ""]
    for index, message in enumerate(state.messages):
        if message.role in ("user", "system"):
            texts.append(state.said_text(message))
            if index >= state.new_message_index and message.role == "user":
                break
    return "\n".join(texts)


def numbers_in(arguments: Any) -> Iterator[float]:
    """The numbers of a call's arguments (or any JSON value), in the order written."""
    return (n for v in _leaves(arguments) if (n := number(v)) is not None)


def strings(arguments: Any) -> Iterator[str]:
    """The strings of a call's arguments (or any JSON value), in the order written."""
    return (v for v in _leaves(arguments) if isinstance(v, str))


def _leaves(value: Any) -> Iterator[Any]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
        else:
            yield item


@lru_cache(maxsize=1024)  # asked for each figure of an answer, over every call of the run
def single(result: str) -> float | None:
    """The figure a result is, when it is one figure and nothing else."""
    text = result.strip().strip('"')
    return norm(text) if _FIGURE.fullmatch(text) else None


def norm(written: str) -> float | None:
    try:
        return round(float(written.replace(",", "")), 6)
    except ValueError:
        return None


def figures_in(text: str) -> set[float]:
    """The values of the figures written in ``text``."""
    return {v for w in _FIGURE.findall(text) if (v := norm(w)) is not None}


def written(value: float) -> str:
    """A figure as a message to the model writes it (``1200``, ``45.5``, ``3165400``): whole
    figures without a decimal point, others in their shortest form; never the exponent
    ``:g`` writes beyond six digits (``3.1654e+06``), which a model copies as it reads."""
    if not math.isfinite(value) or abs(value) >= 1e15 or 0 < abs(value) < 1e-6:
        return repr(value)  # (beyond what a record writes: as Python does)
    if value == int(value):
        return str(int(value))
    return f"{value:.6f}".rstrip("0")  # (six places: 0.1 + 0.2 is 0.3, not 0.30000000000000004)
