"""What every kind of lesson is built from: the seeded maker of names, codes, figures and tools,
and the typed values a generated task is made of.

A :class:`Maker` draws everything from one ``random.Random``, so a seed gives the same suite
in every process (nothing here reads the clock, the hash seed or the environment).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolcycle import Tool

from .domains import Domain, Figure

_ONSETS = ("b", "br", "c", "d", "dr", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t",
           "v", "w", "z", "th", "st", "gr")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ei", "ou")
_CODAS = ("", "n", "r", "l", "s", "m", "th", "nd", "rk", "ck")


@dataclass(frozen=True)
class Call:
    """One tool call: the tool's name and its arguments."""

    tool: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Task:
    """One generated task and how it is solved.

    ``oracle``: the calls that reach the answer, in order (what a model that knew the lesson
    would call); the last one's result holds ``expected`` under ``answer_key`` (in the row
    whose ``name`` is ``row`` when the result is a list of rows). ``naive``: the call a
    newcomer makes first, which ``naive_miss`` says how it misses (``"error"``: it raises;
    ``"empty"``: it finds nothing; ``"no answer"``: it answers without the expected value).
    """

    kind: str
    prompt: str
    expected: str
    oracle: tuple[Call, ...]
    answer_key: str
    naive: Call
    naive_miss: str
    row: str = ""


@dataclass
class KindPart:
    """One kind's share of a suite: its tools, its tasks and the fewest iterations a task of
    it allows (its calls, then the answer)."""

    kind: str
    tools: list[Tool[Any]]
    tasks: list[Task]
    fewest: int
    variant: str = ""


@dataclass
class Maker:
    """Seeded names, codes, figures and tools for one suite; names never repeat in a suite."""

    rng: random.Random
    domain: Domain
    read_only: bool = True
    _used: set[str] = field(default_factory=set)

    def pick[T](self, options: tuple[T, ...] | list[T]) -> T:
        return options[self.rng.randrange(len(options))]

    def _fresh(self, make: Callable[[], str]) -> str:
        for _ in range(1000):
            value = make()
            if value not in self._used:
                self._used.add(value)
                return value
        raise RuntimeError("the generator ran out of fresh names")  # pragma: no cover

    def word(self) -> str:
        """A made-up word of two syllables, capitalised ("Velmar")."""
        return self._fresh(lambda: "".join(
            self.pick(_ONSETS) + self.pick(_VOWELS) + self.pick(_CODAS) for _ in range(2)
        ).capitalize())

    def person(self) -> str:
        return f"{self.word()} {self.word()}"

    def place(self) -> str:
        if self.rng.random() < 0.7:
            return self.word()
        return f"{self.word()} {self.pick(('Vale', 'Cross', 'North', 'Harbour', 'Park'))}"

    def code(self, prefixes: tuple[str, ...], digits: int = 4) -> str:
        return self._fresh(lambda: self.pick(prefixes) + "".join(
            str(self.rng.randrange(10)) for _ in range(digits)))

    def figure(self, figure: Figure) -> tuple[Any, str]:
        """A value of ``figure`` as the JSON a tool returns, and as the expected answer."""
        if figure.pattern:
            text = "".join(chr(65 + self.rng.randrange(26)) if c == "L"
                           else str(self.rng.randrange(10)) if c == "#" else c
                           for c in figure.pattern)
            return text, text
        if figure.decimals:
            scale = 10 ** figure.decimals
            raw = self.rng.randrange(figure.low * scale, figure.high * scale)
            if raw % 10 == 0:  # no trailing zero: the answer reads one way only
                raw += 1
            value = raw / scale
            return value, f"{value:.{figure.decimals}f}"
        number = self.rng.randrange(figure.low, figure.high + 1)
        return number, str(number)

    def tool_name(self, words: tuple[str, ...]) -> str:
        """A system name: one of the domain's stems and one of ``words`` ("rail_archive")."""
        return self._fresh(lambda: f"{self.pick(self.domain.stems)}_{self.pick(words)}")

    def tool(self, name: str, description: str, params: dict[str, str],
             function: Callable[..., str], optional: dict[str, str] | None = None,
             numbers: tuple[str, ...] = ()) -> Tool[Any]:
        """A lookup tool of string parameters (``numbers``: those that take a number;
        ``optional``: name -> JSON type, not required), declared read-only as a lookup
        should be unless the suite says not."""
        properties: dict[str, Any] = {
            p: {"type": "number" if p in numbers else "string", "description": text}
            for p, text in params.items()}
        for p, kind in (optional or {}).items():
            properties[p] = {"type": kind}
        schema = {"type": "object", "properties": properties, "required": list(params)}
        return Tool.from_schema(name, description, schema, function, read_only=self.read_only)


def as_json(value: Any) -> str:
    return json.dumps(value)


def slug(text: str) -> str:
    """A noun phrase as an identifier part ("lab order" -> "lab_order")."""
    return "_".join(text.lower().replace("-", " ").split())
