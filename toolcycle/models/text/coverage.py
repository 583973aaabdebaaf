"""The literal values of a user's request that a turn's calls leave out.

A small model asked for several calls in one reply (``parallel_tool_calls``) often closes its
list after the first: asked for the circumference of circles of radius 5, 10, 15 and 20 cm,
Qwen2.5-Coder-1.5B wrote one call, with radius 5 (28 of the 36 misses in BFCL's two parallel
categories on the spread selection, docs/benchmarks.md). What it left out is visible without
understanding the request: the values 10, 15 and 20 are in the request and in no call.

So this module reads a request's *literal values*, the parts of a message that are written the
same way in any language and that a call has to carry over as they are:

- numbers (``5``, ``0.035``, ``1,000,000``, ``-3``; a number followed by ``%`` is also found
  as its fraction, ``5%`` as ``0.05``);
- quoted strings (``"Project Update"``, ``'gamer123'``, ``“...”``, ``«...»``);
- names: runs of capitalised words (``Magnus Carlsen``, ``New York``, ``USD``), except a single
  word that starts a sentence (which is capitalised for the sentence, not as a name);
- addresses: e-mail addresses and URLs;
- options: a value a called tool's parameter lists (an ``enum``'s string, a word its
  description quotes) that the request names word for word ("the last five years" for
  ``five_years``): lower-case words no other kind finds.

No word list of any language is involved: the cue is how values are *written*, not what the
words around them mean. A value counts as used when a call's arguments carry it: a number
equal to an argument's number or written inside an argument's text, a quoted string or an
address inside an argument's text (or the other way round), a name when one of its words is a
word of an argument's text. That is deliberately lenient: a value the calls might have used is
not reported, because a report costs a second request and may add a call.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ...messages import ToolCall
from ...tools import ToolDefinition

ValueKind = Literal["number", "quoted", "name", "address", "option"]


@dataclass(frozen=True, slots=True)
class RequestValue:
    """One literal value of a request: its text as written there, and what kind it is."""

    text: str
    kind: ValueKind


_NUMBER = re.compile(  # possessive: "1.75m" is 1.75, never a shorter "1"
    r"(?<![\w.^])(-)?(\d{1,3}(?:,\d{3})++(?:\.\d++)?+|\d++(?:\.\d++)?+(?:[eE][-+]?\d++)?+"
    r"|\.\d++)(%)?")
_DIGITS_IN_TEXT = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_QUOTED = re.compile(r"\"([^\"\n]{1,200})\"|(?<!\w)'([^'\n]{1,200})'(?!\w)|“([^”\n]{1,200})”"
                     r"|«([^»\n]{1,200})»|„([^“\n]{1,200})“|「([^」\n]{1,200})」")
_ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\bhttps?://[^\s\"'<>]+")
#: A word of two or more letters (a single capital, "I" or an initial, is no name), digits
#: allowed after the first letter ("COVID19"), a possessive or elision kept on it.
_WORD = re.compile(r"[^\W\d_][^\W_]+(?:['’][^\W\d_]+)?")
_SENTENCE_END = re.compile(r"[.!?:;\n]\s*$")
_SEPARATOR = re.compile(r"\s+")
#: What may open a sentence before its first word: quotes, brackets, inverted marks.
_OPENING = "\"'“”‘’«»„([{¿¡「"


def request_values(text: str) -> tuple[RequestValue, ...]:
    """Every literal value of ``text``, each distinct one once, in the order written."""
    found: dict[tuple[str, ValueKind], None] = {}
    for match in _ADDRESS.finditer(text):
        found.setdefault((match.group(0).rstrip(".,;:)"), "address"))
    outside = _ADDRESS.sub(" ", text)
    for match in list(_QUOTED.finditer(outside)):
        quoted = next(g for g in match.groups() if g is not None).strip()
        if quoted and len(match.group(0)) < 0.9 * len(text.strip()):  # not the whole message
            found.setdefault((quoted, "quoted"))
            # what a quote holds is that one value, not a name or a number besides
            outside = outside[:match.start()] + " " * len(match.group(0)) + outside[match.end():]
    for match in _NUMBER.finditer(outside):
        found.setdefault((match.group(0), "number"))
    for name in _names(outside):
        found.setdefault((name, "name"))
    return tuple(RequestValue(value, kind) for value, kind in found)


def written_numbers(text: str) -> list[float]:
    """The magnitude of every number ``text`` writes, as :func:`request_values` reads them
    ("1,500" 1500, "-3" 3, "5%" 5: a reader that wants the fraction or the sign too derives
    it)."""
    return [_float(match.group(2)) for match in _NUMBER.finditer(text)]


def unused_values(request: str, calls: Sequence[ToolCall],
                  tools: Sequence[ToolDefinition] = ()) -> tuple[RequestValue, ...]:
    """The literal values of ``request`` that none of ``calls`` carries (see the module
    docstring for what counts as carried). A name that the called tools' own definitions
    hold (their names, descriptions, parameters) counts as carried: it names what the tool
    does ("the Greatest Common Divisor (GCD) of 36 and 48", a unit, a parameter), not a value
    a call left out."""
    called = {c.name for c in calls}
    used = [t for t in tools if t.name in called]
    carried = _Carried.of(calls, used)
    values = request_values(request)
    written = {v.text.casefold() for v in values}
    options = [o for o in _options_named(request, used) if o.text.casefold() not in written]
    return tuple(v for v in (*values, *options) if not carried.has(v))


#: A quoted word or phrase in a parameter's description: an option it lists ("options:
#: 'Darwin', 'Lamarck'", "default is 'bus'").
_DESCRIBED_OPTION = re.compile(r"'([^'\n]{2,40})'|\"([^\"\n]{2,40})\"")


def options_of(tool: ToolDefinition) -> list[str]:
    """The values a tool's parameters list as their options: each ``enum``'s strings, and
    the words quoted in a parameter's description."""
    properties = tool.parameters.get("properties")
    found: list[str] = []
    for schema in (properties.values() if isinstance(properties, dict) else ()):
        if not isinstance(schema, dict):
            continue
        enum = schema.get("enum")
        if isinstance(enum, list):
            found.extend(v for v in enum if isinstance(v, str))
        described = schema.get("description")
        if isinstance(described, str):
            found.extend(next(g for g in m.groups() if g is not None)
                         for m in _DESCRIBED_OPTION.finditer(described[:2000]))
    return list(dict.fromkeys(o for o in found if _option_words(o)))[:200]


def _options_named(request: str, tools: Sequence[ToolDefinition]) -> list[RequestValue]:
    """The options of the called tools' parameters (:func:`options_of`) the request names,
    word for word whatever their case and separators ("five years" for ``five_years``,
    "Lamarck" for 'Lamarck'): each a value a call carries where it is asked for. A request
    holding "the last six months, the last year and the last five years" asks for three
    options of one parameter, lower-case words that no other kind of value finds."""
    said = f" {' '.join(_option_words(request))} "
    return [RequestValue(option, "option") for tool in tools for option in options_of(tool)
            if f" {' '.join(_option_words(option))} " in said]


def _option_words(text: str) -> list[str]:
    return [w.casefold() for w in re.findall(r"[^\W_]+", text) if not w.isdigit()]


def _names(text: str) -> Iterator[str]:
    """Runs of capitalised words (joined by single spaces or hyphens), a lone sentence-initial
    word left out; a single capital letter ("I", an initial) is no name on its own."""
    run: list[re.Match[str]] = []
    for match in [*_WORD.finditer(text), None]:
        if match is not None and match.group(0)[0].isupper() and (
                not run or _SEPARATOR.fullmatch(text[run[-1].end():match.start()]) or
                text[run[-1].end():match.start()] == "-"):
            run.append(match)
            continue
        if run:
            name = text[run[0].start():run[-1].end()]
            before = text[:run[0].start()].rstrip().rstrip(_OPENING).rstrip()
            starts_sentence = not before or bool(_SENTENCE_END.search(before))
            if len(name) > 1 and not (len(run) == 1 and starts_sentence):
                yield name
        run = [match] if match is not None and match.group(0)[0].isupper() else []


@dataclass(frozen=True, slots=True)
class _Carried:
    """What a turn's calls carry: their argument numbers, texts and the words of the texts."""

    numbers: tuple[float, ...]
    texts: tuple[str, ...]
    words: frozenset[str]
    #: The words of the called tools' definitions (names are carried by them too).
    told: frozenset[str]

    @classmethod
    def of(cls, calls: Sequence[ToolCall], tools: Sequence[ToolDefinition]) -> _Carried:
        numbers: list[float] = []
        texts: list[str] = []
        # (what a tool is or takes, not the options it lists: "Lamarck" in "options:
        # 'Darwin', 'Lamarck'" is a value a call carries, not the tool's own word)
        told = " ".join(f"{t.name} {t.description} {json.dumps(_without_options(t.parameters))}"
                        for t in tools)
        for call in calls:
            for leaf in _leaves(call.arguments):
                if isinstance(leaf, bool):
                    continue
                if isinstance(leaf, int | float):
                    numbers.append(float(leaf))
                elif isinstance(leaf, str):
                    texts.append(leaf.casefold())
                    numbers.extend(_float(d) for d in _DIGITS_IN_TEXT.findall(leaf))
        words = frozenset(w.casefold() for t in texts for w in re.findall(r"[^\W_]+", t))
        return cls(tuple(numbers), tuple(texts), words,
                   frozenset(w.casefold() for w in re.findall(r"[^\W\d_]+", told)))

    def has(self, value: RequestValue) -> bool:
        if value.kind == "number":
            return any(_same(n, target) for n in self.numbers for target in _readings(value))
        written = value.text.casefold()
        if value.kind == "option":  # one option is carried as itself: "year" is not "five_years"
            return any(_option_words(t) == _option_words(written) for t in self.texts)
        words = [w for w in re.findall(r"[^\W_]+", written) if len(w) > 1]
        if words and all(w in self.told for w in words):  # what a called tool is, or takes
            return value.kind != "address"
        if value.kind == "name":
            return any(w in self.words for w in words) or any(written in t for t in self.texts)
        return any(written in t or (len(t) > 2 and t in written) for t in self.texts)


def _without_options(schema: Any) -> Any:
    """A parameters schema without its options: ``enum`` lists dropped, and the quoted words
    of descriptions (:data:`_DESCRIBED_OPTION`)."""
    if isinstance(schema, dict):
        return {k: _DESCRIBED_OPTION.sub(" ", v) if k == "description" and isinstance(v, str)
                else _without_options(v) for k, v in schema.items() if k != "enum"}
    if isinstance(schema, list):
        return [_without_options(v) for v in schema]
    return schema


def _readings(value: RequestValue) -> tuple[float, ...]:
    """A written number's values: itself, its magnitude (``-3`` may be meant as ``b = -3`` or
    as "minus" written in words), and with ``%`` its fraction too."""
    match = _NUMBER.fullmatch(value.text)
    if match is None:  # not reached: a number value is one of _NUMBER's matches
        return ()
    magnitude = _float(match.group(2))
    readings = [magnitude, -magnitude]
    if match.group(3):
        readings.append(magnitude / 100)
    return tuple(readings)


def _float(text: str) -> float:
    return float(text.replace(",", ""))


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _leaves(value: Any) -> Iterator[Any]:
    """The scalar values inside a call's arguments (nested objects and lists walked)."""
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)
    elif value is not None:
        yield value
