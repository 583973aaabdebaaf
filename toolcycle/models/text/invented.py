"""Invented values: a reply whose calls give values nobody gave is asked about once.

A small model offered a tool calls it, fitting or not, and fills what the question does not
say with values of its own: asked "Who discovered electricity?" beside a circuit tool,
Qwen2.5-Coder-1.5B called it with ``voltage=120, resistance=10``; asked for a Thai
restaurant beside a hotel-booking tool, it booked "The Golden Gate Hotel" from 2023-04-01.
Many of the calls BFCL's ``irrelevance`` entries draw from the 1.5B carry such a value (in
session 37's logs, at least 9 of its 18 wrong ones in a required parameter), and in agents
the same habit writes sums over figures not yet looked up and placeholder ids ("12345"). A
call built on values the model made up answers another question than the one asked, and in
an agent it runs a side effect nobody asked for.

What a value's origin is shows without understanding the request: a value is *given* when
the conversation holds it (the request, the instructions, a tool's result) or the offered
tools' definitions spell it (an enum, a default), other than as an example ("such as
'San Francisco, CA'", "e.g. 42": the form of a value, not one). Where a reply's calls hold
a value given by none of them, the model is asked again, once, with the conversation and
after it what a call would take that nothing gives, and three ways on: call the tool that
gives those values first, call again if the request does give them, or answer in words if
no tool fits (:data:`ASKED`). Its calls are not shown back: shown them and asked, the 1.5B
called again on 9 of 10 development entries (the same calls on at least 6), whatever the
question said.
The second reply stands, whatever it is: the check may be wrong where a value is written
another way (a name abbreviated, a value worked out), and the model, reading the request
again, is the judge.

How a value is read, deliberately lenient, since a report costs a request:

- a number is given when a number of the sources, in digits or in words ("four", "twenty-
  five": :func:`toolcycle.words.spelled_numbers`), equals it, its magnitude, its percentage
  or fraction, or it scaled by a power of a thousand ("213 million" is 213000000, "50 mH" is
  0.05), or the sources name a span of time holding that many of a smaller unit ("over the
  past decade" gives 10, "next week" 7, "3 years" 36: :func:`toolcycle.words.span_numbers`);
  0 and 1 are never reported (they are the neutral values a tool's flag or count takes);
- a date (a string that reads as one) is given when the sources name that day in any
  writing ("June 30th 2023" gives "2023-06-30");
- a code (capitals and digits, two to five: "GBP", "AAPL") is not judged: the model writes
  it for a name the request gives ("British pounds"), which no reading here can see;
- any other string is given when the definitions spell it whole, or at least half of its
  words (words of three letters or more, and words with digits) are words of the sources,
  a word matching another that shares its first four letters ("hotels" for "hotel"); a
  string with no such word ("CA", "x") is not judged, nor any string where the user wrote in
  another language than English (its names reach the call translated: "Beijing, China" for
  "北京").

Only the values of a tool's *required* parameters are read: an optional one the model fills
on its own (``medium="air"``, ``compounding_periods_per_year=12`` for "monthly") is a
setting it chose, often worked out from the request, and on BFCL's development entries the
question over optional values turned right calls into answers from memory. Only with
``tool_choice="auto"`` (a forced call cannot be declined), and never for the tool
that ends the attempt (``settings.on_repeat``: structured output's output tool, whose values
are the answer that grounding checks). The first reply is kept in the message's
``asked_again`` (and so in the trace's step), both requests' usage in its usage. The setting
is :class:`~.protocol.JsonToolsModel`'s ``invented_values``
(``ModelSettings(extra={"invented_values": False})`` per request).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass

from ...datetimes import example_dates, names_date
from ...messages import Message, Part, ToolCall
from ...tools import ToolDefinition
from ...words import EXAMPLE_INTRO, in_list_language, span_numbers, spelled_numbers
from ..base import ModelSettings, usage_of
from ..paid import paying
from .calls import render_tool_call
from .coverage import written_numbers

#: The ``ModelSettings.extra`` key that turns the question about invented values on or off.
INVENTED_VALUES = "invented_values"

Ask = Callable[[Sequence[Message], ModelSettings], Awaitable[tuple[Message, list[Part]]]]
"""One request to the inner model: the reply and its parsed parts (a protocol's ``_ask``)."""

#: The three ways on the question offers (the same words in every protocol: they name no form).
ASKED = ("If a tool gives these values, call it first; if the request does give them, call "
         "the tool; if no tool fits what the request asks, answer it in words instead.")

#: The most values named in the question (the first ones; a longer list says no more).
_SHOWN = 6
_WORD = re.compile(r"[^\W_]+")
#: A code: capitals and digits, two to five of them ("GBP", "AAPL", "LHR", "US"). The model
#: writes it for a name the request gives ("British pounds"), which no reading here can see.
_CODE = re.compile(r"[A-Z][A-Z0-9]{1,4}")
#: The scales a number is also read at: per cent, thousands, millions, billions, and the
#: milli-, micro- and nano- of units.
_SCALES = (1.0, 100.0, 0.01, *(10.0 ** k for k in (3, 6, 9, 12, -3, -6, -9, -12)))
#: An example a definition gives ("in the format 'City, State', such as 'San Francisco, CA'",
#: "e.g. 42"), to the end of its clause: it shows a value's form, it gives no value. Shown
#: what each argument means, the 1.5B asked "I want to find a train." called the search from
#: "San Francisco, CA", the description's example, and it passed as given.
_EXAMPLES = re.compile(rf"\b(?:{EXAMPLE_INTRO})(?![a-z])[^.;)\n]*", re.IGNORECASE)
#: Significant digits two numbers share to count as one (``1e-9`` relative, as written).
_DIGITS = 9
#: How many first letters two words share to count as one (a plural, a verb's form).
_STEM = 4


@dataclass(frozen=True, slots=True)
class InventedValue:
    """A value one of a reply's calls gives that no source holds: the tool, where in its
    arguments (``"dates[1]"``, ``"population.adults"``), and the value."""

    tool: str
    path: str
    value: str | int | float

    def shown(self) -> str:
        return f"{self.path}={json.dumps(self.value, ensure_ascii=False)}"


@dataclass(frozen=True, slots=True)
class _Sources:
    """What the conversation and the offered tools' definitions give."""

    text: str
    #: Every number the sources write, at every scale (:data:`_SCALES`), as :func:`_key`.
    numbers: frozenset[str]
    words: frozenset[str]
    stems: frozenset[str]
    defined: str
    #: Whether the user's words are in the language the word reading reads
    #: (:func:`toolcycle.words.in_list_language`): a request in another ("北京和上海的天气")
    #: gives its names in that language, and the call the tool takes them in, translated
    #: ("Beijing, China"), shares no word with it; its strings are not judged.
    readable: bool

    @classmethod
    def of(cls, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> _Sources:
        parts: list[str] = []
        asked = " ".join(m.text for m in messages if m.role == "user")
        for message in messages:
            if message.role == "assistant":  # the model's own words give nothing
                continue
            parts.append(message.text)
            parts.extend(r.content for r in message.results)
        text = "\n".join(parts)
        defined = _EXAMPLES.sub(" ", " ".join(
            f"{t.name} {t.description} {json.dumps(t.parameters)}" for t in tools)).casefold()
        written = (*written_numbers(f"{text} {defined}"), *map(float, spelled_numbers(text)),
                   *span_numbers(text))
        numbers = frozenset(_key(n * scale) for n in written for scale in _SCALES)
        words = frozenset(w.casefold() for w in _WORD.findall(text))
        return cls(text, numbers, words, frozenset(w[:_STEM] for w in words if len(w) >= _STEM),
                   defined, not asked.strip() or in_list_language(asked))

    def gives(self, value: object) -> bool:
        if isinstance(value, bool) or value is None:
            return True
        if isinstance(value, int | float):
            return value in (0, 1) or _key(value) in self.numbers
        if isinstance(value, str):
            return self._gives_text(value)
        return True

    def _gives_text(self, value: str) -> bool:
        written = value.strip().casefold()
        if not written or written in self.defined or _CODE.fullmatch(value.strip()):
            return True
        days = example_dates(value.strip())
        if days:
            return any(names_date(self.text, day) for day in days)
        words = [w for w in _WORD.findall(written) if len(w) >= 3 or any(c.isdigit() for c in w)]
        if not words or not self.readable:
            return True
        found = sum(1 for w in words
                    if w in self.words or (len(w) >= _STEM and w[:_STEM] in self.stems))
        return 2 * found >= len(words)


def invented_values(messages: Sequence[Message], calls: Sequence[ToolCall],
                    tools: Sequence[ToolDefinition]) -> tuple[InventedValue, ...]:
    """The values ``calls`` give to their tools' *required* parameters that neither
    ``messages`` (every turn but the model's own) nor ``tools``' definitions hold (the
    module docstring says how a value is read). A call to a tool not among ``tools`` is
    not read (an unknown tool is answered as such by the loop)."""
    required = {t.name: set(t.parameters.get("required") or ()) for t in tools}
    if not any(required.get(c.name) for c in calls):
        return ()
    sources = _Sources.of(messages, tools)
    return tuple(InventedValue(call.name, f"{name}{path}", value)
                 for call in calls for name, given in (call.arguments or {}).items()
                 if name in required.get(call.name, ())
                 for path, value in _leaves(given, "") if not sources.gives(value))


def due(messages: Sequence[Message], settings: ModelSettings, reply: Message, default: bool
        ) -> tuple[InventedValue, ...]:
    """The invented values of ``reply``'s calls, where asking about them is due; ``()`` where
    it is not: the setting is off, a tool is forced or required, or a call goes to the tool
    that ends the attempt."""
    calls = reply.tool_calls
    if (not settings.extra.get(INVENTED_VALUES, default) or settings.tool_choice != "auto"
            or not calls or any(c.name == settings.on_repeat for c in calls)):
        return ()
    return invented_values(messages, calls, settings.tools)


def question_history(messages: Sequence[Message], invented: Sequence[InventedValue]
                     ) -> list[Message]:
    """The conversation the question is asked with: ``messages`` and, after them, the values
    a call would take that no source gives and the ways on (:data:`ASKED`).

    Not the reply's calls shown back as the model's turn and then the question: shown its
    calls, the 1.5B called again on 9 of 10 BFCL dev entries, the same calls on at least 6
    (bench/runs/2026-12-06/bfcl39/); told only what a call would take, it weighs the request
    again."""
    values = ", ".join(v.shown() for v in invented[:_SHOWN])
    more = f" and {len(invented) - _SHOWN} more" if len(invented) > _SHOWN else ""
    return [*messages, Message.user(f"Calling a tool here would take {values}{more}, which "
                                    f"neither the request nor a tool result gives. {ASKED}")]


async def questioned(ask: Ask, messages: Sequence[Message], settings: ModelSettings,
                     reply: Message, default: bool) -> Message:
    """``reply``, or where its calls give invented values (:func:`due`), the reply to the
    question about them (:func:`question_history`), with ``reply``'s calls in its
    ``asked_again`` and both requests' usage."""
    invented = due(messages, settings, reply, default)
    if not invented:
        return reply
    paid = usage_of(reply).copy()
    with paying(paid.copy(), []):  # a question that fails still leaves the reply's tokens spent
        again, parts = await ask(question_history(messages, invented), settings)
    paid.add(usage_of(again))
    first = "\n".join(render_tool_call(c) for c in reply.tool_calls)
    return Message("assistant", parts, usage=paid,
                   finish_reason="tool_calls" if any(isinstance(p, ToolCall) for p in parts)
                   else again.finish_reason,
                   model_name=reply.model_name or again.model_name,
                   asked_again=(*reply.asked_again, first))


def _key(number: float) -> str:
    """A number's magnitude to :data:`_DIGITS` significant digits: one lookup per value,
    however many numbers the sources hold (a call over a long list copied from a long result
    costs a set's lookups, not a product of the two lengths)."""
    return f"{abs(number):.{_DIGITS}g}"


def _leaves(value: object, path: str) -> Iterator[tuple[str, str | int | float]]:
    """Every scalar inside an argument's value, with where it is below it."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _leaves(item, f"{path}[{index}]")
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        yield path, value
