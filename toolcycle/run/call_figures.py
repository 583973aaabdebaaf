"""The figures a tool call was given, read against its parameters' schema.

Grounding reads a call's numbers two ways (:mod:`.sources`, :mod:`.unsourced_call`): as what
its result is about (a result over figures from nowhere is no source) and as what the model
claims to know when it calls. Both need to tell a *count* from a *measure*. A single digit may
be a count the model got by counting a result's rows, or a setting it picked (``limit=5``),
so it is no claim. It is one where the schema types its place ``number`` (not ``integer``:
an amount, a weight, a price) and nothing the run had found so far could be counted: seen on
the 0.5B (issue 68, first-hour dev agents), ``to_grams(amount=1, unit="cup")`` as its first
call, an amount it made up without reading the recipe, and the converter's 227 g passed as a
sourced answer. After a list came back, ``add(numbers=[3, 4])`` may add two counts.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .figures import figure_key

#: How many numbers of one call are read (a call with more is no ordinary one).
_MAX_FIGURES = 1000


def small(value: str) -> bool:
    """Whether a figure is a single digit: a count a model may get by counting rows."""
    return value.isdigit() and len(value) == 1


def given_figures(arguments: dict[str, Any] | None, parameters: dict[str, Any],
                  counted: bool) -> list[str]:
    """The numbers a call was given, as :func:`~.figures.figure_key` writes them, in the order
    written: every number but a single digit, and single digits too where the schema types
    the value ``number`` unless ``counted`` (the run had found something countable before
    the call). Strings are names and ids, not figures."""
    return [text for text, measure, _ in _numbers(arguments, parameters)
            if not small(text) or (measure and not counted)]


def measured_figures(arguments: dict[str, Any] | None, parameters: dict[str, Any],
                     counted: bool) -> list[str]:
    """The numbers of :func:`given_figures` where the schema types the value ``number``: the
    measures a call passes on (``add(numbers=[...])``, ``to_grams(amount=...)``)."""
    return [text for text, measure, _ in _numbers(arguments, parameters)
            if measure and (not small(text) or not counted)]


def listed_measures(arguments: dict[str, Any] | None, parameters: dict[str, Any],
                    counted: bool) -> list[list[str]]:
    """The measures of :func:`measured_figures` that one list of the arguments holds side by
    side (``add(numbers=[250, 67.64])``), a group for each list of two or more: the things
    one list holds are peers (the parts of one sum, the values of one average), so each one
    needs a source of its own."""
    groups: dict[int, list[str]] = {}
    for text, measure, owner in _numbers(arguments, parameters):
        if owner is not None and measure and (not small(text) or not counted):
            groups.setdefault(owner, []).append(text)
    return [group for group in groups.values() if len(group) >= 2]


def _numbers(arguments: dict[str, Any] | None, parameters: dict[str, Any]
             ) -> Iterator[tuple[str, bool, int | None]]:
    """Each JSON number of ``arguments`` at any depth, written as a figure, whether the
    schema types its place ``number``, and which list holds it (an identity, the same for
    the items of one list; ``None`` outside a list)."""
    stack: list[tuple[Any, Any, int | None]] = [(arguments, parameters, None)]
    seen = 0
    while stack and seen < _MAX_FIGURES:
        value, schema, owner = stack.pop()
        if isinstance(value, dict):
            properties = _object_properties(schema)
            stack.extend((v, properties.get(k), None)
                         for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            items = _array_items(schema)
            stack.extend((v, items, id(value)) for v in reversed(value))
        elif (text := _written(value)) is not None:
            seen += 1
            yield text, _typed_number(schema), owner


def _written(value: Any) -> str | None:
    """A JSON number written as a figure (:func:`~.figures.figure_key`); ``None`` for any
    other value."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    number = abs(value)  # (an int stays one: a huge one has no float, so no float())
    text = str(int(number)) if isinstance(number, int) or (
        number.is_integer() and number < 1e15) else str(number)
    return figure_key(text)


def _branches(schema: Any) -> list[dict[str, Any]]:
    """The schema and its ``anyOf``/``oneOf`` branches (``Optional[float]`` is one)."""
    if not isinstance(schema, dict):
        return []
    found = [schema]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            found.extend(o for o in options if isinstance(o, dict))
    return found


def _object_properties(schema: Any) -> dict[str, Any]:
    for branch in _branches(schema):
        properties = branch.get("properties")
        if isinstance(properties, dict):
            return properties
    return {}


def _array_items(schema: Any) -> Any:
    for branch in _branches(schema):
        if "items" in branch:
            return branch["items"]
    return None


def _typed_number(schema: Any) -> bool:
    """Whether the schema says ``number`` and nowhere ``integer``: a float parameter."""
    declared: list[Any] = []
    for branch in _branches(schema):
        kind = branch.get("type")
        declared.extend(kind if isinstance(kind, list) else [kind])
    return "number" in declared and "integer" not in declared
