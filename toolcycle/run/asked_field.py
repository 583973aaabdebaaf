"""Does the answer's figure come from the field the request asks about? One of the ways an
answer answers another question (:mod:`.asked`).

A record holds several figures under names (``{"capacity": 1200, "ticket_price_gbp": 45}``).
A small model asked for "the two ticket prices added up" may add the two ``capacity``
figures instead: every figure came from a tool, so grounding vouches for it. The run can
tell: a field's name is its author's label for what the figure is, and the request names
one field of those records (its words: "ticket", "price") and not the one the figures came
from (the evidence: docs/status.md, "An answer to another question").

The check speaks only where that is plain: the answer's figure (or each figure a call added
up into it) was read from fields the request does not name, the same results hold another
field the request does name, and no figure of the answer came from a named field. A field
is named when each of its words (split at ``_``, ``-`` and case; a unit such as ``gbp`` or
``kg`` aside) is a word of the request, by its root (:func:`toolcycle.words.root`:
"prices" names ``price``, "capacities" ``capacity``). A figure the request
itself holds, or one no field holds, says nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ..words import root, roots
from .looked_up import listed, names_in
from .provenance import (
    Call,
    Figure,
    added_up,
    figures_in,
    keyed_leaves,
    made_by,
    traced,
    written,
)
from .units import read_unit, requested_units

_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_WORDS = re.compile(r"[a-z]+")
_VOWELS = frozenset("aeiou")


def unasked_fields(request: str, answer: Iterable[tuple[str, float]], calls: Sequence[Call],
                   figures: Sequence[Figure]) -> list[str]:
    """A message for each figure of ``answer`` (``(as written, value)`` pairs) read from a
    field the request does not name while the same results name one it does; empty where
    any of the answer's figures came from a named field, or nothing is plain.

    A figure is read back through the sums and conversions that made it
    (:func:`.provenance.traced`): a capacity plus a converted ticket price, given for "who
    is the manager", was read from ``capacity`` and ``ticket_price_gbp``. The field the
    request names may hold a name as well as a figure (``manager``)."""
    words = request_words(request)
    held = figures_in(request)
    messages: list[str] = []
    for shown, value in answer:
        if value in held:
            continue
        made = made_by(value, calls)
        summed = made is not None and added_up(calls[made]) is not None
        parts = traced(value, len(calls), calls, figures)
        origins = [[f for f in part.sources if f.key] for part in parts]
        if not origins or not all(origins):
            continue  # a figure no field holds: nothing to tell by
        if any(named_field(f.key, words) for group in origins for f in group):
            return []  # a figure of the answer came from a field the request names
        asked = named_beside(origins, calls, figures, words)
        if asked is None:
            continue
        key, tool, said, is_figure = asked
        keys = " and ".join(dict.fromkeys(f"`{g[-1].key}`" for g in origins))
        fix = "add those figures instead" if summed and is_figure else "answer with that"
        if summed and made is not None:
            listed = ", ".join(written(p.value) for p in parts)
            messages.append(
                f"your answer's {shown} is `{calls[made].name}` over {listed}, read from "
                f"{keys}, which the request does not ask about; it asks about `{key}` "
                f"(`{tool}` gave {said}): {fix}")
        else:
            messages.append(
                f"your answer's {shown} is {keys}, which the request does not ask about; "
                f"it asks about `{key}` (`{tool}` gave {said}): {fix}")
    return messages


def unasked_values(request: str, text: str, calls: Sequence[Call], figures: Sequence[Figure]
                   ) -> list[str]:
    """A message for a name or other string the answer gives from a field the request does
    not name, where the same record holds a figure under a field it does name and the answer
    gives no figure but those the request holds (a name *instead of* the figure asked; one
    the model worked out itself, a temperature it converted by hand, is no such answer, and
    grounding judges it); empty where nothing is plain.

    Why: the 1.5B asked "Cedar Ward: what number of beds does this ward have?" read the
    ward's record and answered its head nurse, a ``success``: every word came from a tool.
    The field's name is its author's statement of what it holds, as for figures."""
    words = request_words(request)
    if figures_in(text) - figures_in(request):
        return []  # the answer gives a figure: it is not a name instead of one
    for index, key, value in _strings_given(text, request, calls):
        if named_field(key, words):
            return []  # the answer gives a named field's value
        record = [f for f in figures if f.call == index]
        wanted = next((f for f in record if f.key and named_field(f.key, words)), None)
        if wanted is not None:
            return [f"your answer's {value[:60]!r} is `{key}`, which the request does not "
                    f"ask about; it asks about `{wanted.key}` (`{wanted.tool}` gave "
                    f"{written(wanted.value)}): answer with that"]
    return []


def gives_named(request: str, text: str, answer: Iterable[float], calls: Sequence[Call],
                figures: Sequence[Figure]) -> bool:
    """Whether the answer gives the value of a field the request names, as a tool gave it
    (or converted: a temperature in °F for "the room temperature" is the ``temperature_c``
    asked about): a figure read from such a field, or a string such a field holds.

    Why: a small model adds extras to a right answer ("The captain of Maren is Ravi Menon,
    and the cargo in pounds added twice is 2156559.28"; "the driver is Hana Kovac, and the
    route is 274.02 miles"). The value asked for is there; what stands beside it is no other
    question's answer, so the sum and field checks say nothing of it (as the unit and
    conversion checks say nothing of an extra converted figure)."""
    words = request_words(request)
    if not words:
        return False
    if any(named_field(key, words) for _, key, _ in _strings_given(text, request, calls)):
        return True
    for figure in answer:
        made = made_by(figure, calls)
        if made is not None and added_up(calls[made]) is not None:
            continue  # a sum is judged by its parts, not taken as a field's value
        if any(f.key and named_field(f.key, words) for part in traced(
                figure, len(calls), calls, figures) for f in part.sources):
            return True
    return False


def field_that_would_work(request: str, text: str, calls: Sequence[Call],
                          figures: Sequence[Figure]) -> str:
    """``"; what would work: `medicine_info` gave 'Amara Diallo' as `pharmacist`"`` for an
    answer grounding refused, where the run's results (``calls``, and their ``figures``)
    hold one value, and only one, under fields the request names (:func:`named_field`),
    that the answer does not give and the request does not hold; ``""`` otherwise.

    Why: asked "Who is the pharmacist of the medicine Dorvatol?", the 1.5B answered "Dr.
    Smith" before any call, looked the medicine up (``"pharmacist": "Amara Diallo"``) and
    answered "Dr. Smith" twice more, told each time only that 'Smith' had no source
    (held-out seed 6820). Shown the call that would work, it made it in 23 of 24 traced
    re-asks (``bench/runs/2026-12-07/firsthour45/would_work_followed.py``); the value that
    would answer is the same kind of hint. Where the request lists several things ("A and B
    added up"), the results hold several such values, or the value is a figure in another
    unit than the one asked, nothing is said: no one value is the answer."""
    if listed(request, names_in(request)):
        return ""  # several things asked about ("A and B added up"): no one value answers
    words = request_words(request)
    units = {unit.name for unit in requested_units(request)}
    found: dict[str, tuple[str, str, str]] = {}  # the value as said: as shown, tool, field
    for figure in figures:
        if figure.key and named_field(figure.key, words) and not (
                units and figure.unit is not None and figure.unit.name not in units):
            said = written(figure.value)
            found.setdefault(said, (said, figure.tool, figure.key))
    for call in calls:
        for key, value in _keyed_strings(call.result):
            if named_field(key, words) and (said := value.strip()):
                found.setdefault(said, (repr(said[:60]), call.name, key))
    asked = request.lower()
    answers = [said for said in found if said.lower() not in asked]
    if len(answers) != 1 or answers[0].lower() in text.lower():
        return ""
    shown, tool, key = found[answers[0]]
    return f"; what would work: `{tool}` gave {shown} as `{key}`"


def _strings_given(text: str, request: str, calls: Sequence[Call]
                   ) -> Iterator[tuple[int, str, str]]:
    """The string values of the calls' results that the answer ``text`` gives and the
    request does not (three characters or more): each call's index, the field, the value."""
    low, asked = text.lower(), request.lower()
    for index, call in enumerate(calls):
        for key, value in _keyed_strings(call.result):
            said = value.strip().lower()
            if len(said) >= 3 and said not in asked and said in low:
                yield index, key, value.strip()


def _keyed_strings(result: str) -> list[tuple[str, str]]:
    """The string values of a JSON result with the field each is under (a bounded walk)."""
    try:
        data: Any = json.loads(result)
    except (ValueError, RecursionError):
        return []
    return [(key, value) for key, value in keyed_leaves(data, 1000)
            if isinstance(value, str) and key][:200]


def named_beside(origins: list[list[Figure]], calls: Sequence[Call],
                 figures: Sequence[Figure], words: set[str]
                 ) -> tuple[str, str, str, bool] | None:
    """A value of the same results as ``origins`` under a field the request names: its
    field, the tool that gave it, the value as the message writes it, and whether it is a
    figure (else a name or other string).

    Where the answer read several results (a sum over two records' ``cargo_tonnes``), the
    named field's figure of each is given ("`ship_info` gave 178.6 and 75.9"): told only
    the first record's, the 1.5B added that one to a converted figure of the wrong field."""
    read = {f.call for group in origins for f in group}
    named = [f for f in figures if f.call in read and f.key and named_field(f.key, words)]
    if named:
        first = named[0]
        each = {f.call: f for f in reversed(named) if f.key == first.key}
        said = " and ".join(written(each[call].value) for call in sorted(each))
        return first.key, first.tool, said, True
    for index in sorted(read):
        for key, value in _keyed_strings(calls[index].result):
            if named_field(key, words) and value.strip():
                return key, calls[index].name, repr(value.strip()[:60]), False
    return None


def request_words(request: str) -> set[str]:
    """The request's words and their roots (what :func:`named_field` reads)."""
    said = _WORDS.findall(request.lower())
    return roots(said) | set(said)


def named_field(key: str, words: set[str]) -> bool:
    """Whether the request's ``words`` (:func:`request_words`) name the field ``key``: each
    of its words but a unit, by its root ("ticket_price_gbp" by "ticket prices") or as a
    short form of one (:func:`_abbreviates`: "occupancy_pct" by "occupancy in percent")."""
    parts = [p.lower() for p in _PARTS.findall(key)]
    plain = [p for p in parts if not p.isdigit() and read_unit(p) is None]
    return bool(plain) and all(root(p) in words or _abbreviates(p, words) for p in plain)


def _abbreviates(part: str, words: set[str]) -> bool:
    """Whether a field's word is a short form of a word of the request: three letters or
    more, the longer word's first letter first and every letter found in it in order, the
    letters after the first all consonants ("pct" of "percent", "qty" of "quantity", "avg"
    of "average"), or its first four letters or more ("temp" of "temperature").

    Why: a field's author abbreviates what a person writes out; read as a word the request
    lacks, the 1.5B's right answer, ``occupancy_pct`` for "occupancy in percent", was
    refused as a figure of a field the request does not name. Only such forms: a word of
    its own is no short form ("age" is in "average" letter by letter, "set" in "september")."""
    if len(part) < 3 or not part.isalpha():
        return False
    skeleton = not _VOWELS.intersection(part[1:])
    return any(len(word) > len(part) and word[0] == part[0] and (
        (skeleton and _in_order(part, word)) or (len(part) >= 4 and word.startswith(part)))
        for word in words)


def _in_order(letters: str, word: str) -> bool:
    rest = iter(word)
    return all(letter in rest for letter in letters)


