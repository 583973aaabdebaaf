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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..messages import ToolCall, ToolResult
from .state import RunState
from .units import Unit, field_unit, name_units, named_units, read_unit, stated_units

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
    given = list(numbers_in(call.arguments))
    if len(given) != 1 or single(call.result) is None:
        return None
    for units in (name_units(call.name),
                  [u for v in strings(call.arguments) if (u := read_unit(str(v)))],
                  named_units(call.description)):
        if len({u.name for u in units}) >= 2 and units[0].dimension == units[-1].dimension:
            return units[0], units[-1]
    return None


def converts_to(name: str, description: str) -> Unit | None:
    for units in (name_units(name), named_units(description)):
        if len({u.name for u in units}) >= 2 and units[0].dimension == units[-1].dimension:
            return units[-1]
    return None


def added_up(call: Call) -> list[float] | None:
    """The figures a call added up: two or more numbers in, their sum out."""
    given = list(numbers_in(call.arguments))
    result = single(call.result)
    if len(given) < 2 or result is None:
        return None
    total = math.fsum(given)
    return given if math.isclose(total, result, rel_tol=1e-9, abs_tol=0.011) else None


def input_unit(value: float, before: int, calls: Sequence[Call],
                figures: list[Figure]) -> Unit | None:
    """The unit of a figure a call was given: a conversion's target when an earlier call
    converted into it, else the unit the record it came from gives it."""
    made = made_by(value, calls[:before])
    if made is not None and (conversion := conversion_of(calls[made])) is not None:
        return conversion[1]
    return recorded_unit(value, [f for f in figures if f.call < before])


def recorded_unit(value: float, figures: list[Figure]) -> Unit | None:
    return next((f.unit for f in reversed(figures) if f.value == value and f.unit), None)


def figures_of(call: Call, index: int) -> list[Figure]:
    """The figures a call's result holds: JSON numbers with their field (and the unit its
    name ends with), or the figures of a text result with the unit beside each."""
    data = _json(call.result)
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


def keyed_leaves(data: Any, most: int = 5000) -> Iterator[tuple[str, Any]]:
    """The leaves of a JSON value with the field each is under (``""`` at the top; a list's
    items under its field), at most ``most`` of them: tool output is untrusted."""
    stack: list[tuple[str, Any]] = [("", data)]
    seen = 0
    while stack and seen < most:
        key, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((str(k), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((key, v) for v in value)
        else:
            seen += 1
            yield key, value


def result_strings(result: str) -> list[str]:
    """The string values of a JSON result (names, places): what a text result is, too."""
    data = _json(result)
    return [] if data is None else list(strings(data))[:1000]


def _json(text: str) -> Any:
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
                calls.append(Call(part.name, dict(arguments or {}), part.content,
                                  described.get(part.name, "")))
    return calls


def request_of(state: RunState) -> str:
    """The instructions and the conversation up to the run's prompt (what the user asked;
    the loop's later feedback is not a request)."""
    texts = [state.setup.core.instructions or ""]
    for index, message in enumerate(state.messages):
        if message.role in ("user", "system"):
            texts.append(message.text)
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
    """A figure as a message to the model writes it (``1200``, ``45.5``)."""
    return f"{value:g}" if abs(value) < 1e15 else str(value)
