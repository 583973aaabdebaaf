"""What would work when a call's arguments could not be read: said in the model's terms.

A model that writes code more than JSON writes a call's arguments as an expression: a sum to
work out (``"value": 766.4 + 40.3``) or another tool's call to make first
(``"numbers": [get_farm("Mesa")["output"], ...]``). Seen on the 1.5B over the first-hour
agents: the parser's reason ("Expecting ',' delimiter: line 1 column 82") says where the
JSON broke, not what to do, and the model wrote the same expression again and again (four
times in one run) until its attempts ran out. JSON holds values only, so each of these has
one remedy, and the run can tell which from the raw text and the offered tools alone:

- **a call inside the arguments**: an offered tool's name followed by ``(``: that tool is
  called on its own first, and its result goes into this call;
- **arithmetic between figures**: ``+``, ``-``, ``*`` or ``/`` between two numbers outside
  any string: the figure is worked out first, by the offered tool that adds up where there
  is exactly one (its name says so, ``add``, ``sum_numbers``, and it takes figures: a list
  of numbers or two numbers; ``order_total(order_id)`` does not), and its result is written.

Strings are left out before either is looked for (a date ``"2026-12-07"`` or a name
``"add(x)"`` in a string is a value), and so is a date written without its quotes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..tools import ToolDefinition

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
#: Two figures and an operator between them; not a link of a chain of ``-`` or ``/`` (an
#: unquoted date, ``2026-12-07`` or ``12/07/2026``, wants quotes, not working out).
_ARITHMETIC = re.compile(r"(?<![\w.])(?<!\d[-/])(\d+(?:\.\d+)?)\s*([-+*/])\s*"
                         r"(-?\d+(?:\.\d+)?)(?![\w.])(?!\s*[-/]\s*\d)")
_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
#: Words of a tool's name that say it adds figures up.
_ADDING = frozenset({"add", "sum", "plus", "total", "addition"})
#: How much of the raw text is read.
_READ = 4_000
#: How much of the expression the advice quotes.
_SHOWN = 60


def unreadable_advice(name: str, raw: str, tools: Sequence[ToolDefinition]) -> str:
    """What would work for a call of ``name`` whose arguments ``raw`` were no JSON object,
    as lines to append to the observation (``""`` when the text shows neither expression)."""
    bare = _STRING.sub('""', raw[:_READ])
    lines: list[str] = []
    inner = [t.name for t in tools if t.name != name and re.search(
        rf"(?<![\w.]){re.escape(t.name)}\s*\(", bare)]
    if inner:
        listed = " and ".join(f"`{n}`" for n in dict.fromkeys(inner))
        lines.append(f"arguments hold values, not calls: call {listed} on its own first, "
                     f"then call `{name}` with the value it returns")
    if (expression := _ARITHMETIC.search(bare)) is not None:
        shown = " ".join(expression.groups())
        shown = shown if len(shown) <= _SHOWN else shown[:_SHOWN] + "…"
        adders = adding_tools(tools, but=name)
        how = (f"call `{adders[0]}` with the figures first" if len(adders) == 1
               else "work it out first")
        lines.append(f"a JSON value is one figure, not arithmetic (`{shown}`): {how}, then "
                     f"call `{name}` with the result as one number")
    if not lines:
        return ""
    return "\nWhat would work:\n" + "\n".join(f"- {line}" for line in lines)


def adding_tools(tools: Sequence[ToolDefinition], but: str = "") -> list[str]:
    """The offered tools that add figures up (:func:`_adds`), ``but`` the one named."""
    return [t.name for t in tools if t.name != but and _adds(t)]


def _adds(tool: ToolDefinition) -> bool:
    """Whether a tool adds figures up: its name says so and it takes figures to add (a list
    of numbers, or two or more numbers)."""
    if not _ADDING & {w.lower() for w in _NAME_WORDS.findall(tool.name)}:
        return False
    properties = tool.parameters.get("properties")
    if not isinstance(properties, dict):
        return False
    kinds = [p for p in properties.values() if isinstance(p, dict)]
    numbers = sum(p.get("type") in ("number", "integer") for p in kinds)
    lists = any(p.get("type") == "array" and isinstance(p.get("items"), dict)
                and p["items"].get("type") in ("number", "integer") for p in kinds)
    return lists or numbers >= 2
