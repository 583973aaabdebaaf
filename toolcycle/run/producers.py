"""Which offered tool gives a parameter another tool needs, read from the schemas.

A small model that calls a detail tool with a name where an id is wanted, or leaves the id
out, needs to be told where the id comes from: the lookup. Which tool that is is read from
the schemas, not from a list: a tool whose description names the parameter (``order_id``),
or whose name or description holds the parameter's noun (``order`` of ``order_id``: every
word of the name but the last, when it has several) and which does not itself require the
parameter (a tool that takes an id consumes it). Used by the recovery lines after a tool
error (:mod:`.recovery`), the refusal of a detail call made before its lookup
(:mod:`.producer_first`) and the ids a lookup gave that no call has used
(:mod:`.unused_handle`).
"""

from __future__ import annotations

import re
from typing import Any

from ..tools import ToolDefinition
from ..words import HANDLE_WORDS
from .state import RunState

#: Tools named as producers of one parameter, at most.
_PRODUCERS = 2
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def producers(state: RunState, own: str, parameter: str) -> list[str]:
    """The offered tools (other than ``own`` and the output tools) that can give
    ``parameter``: those naming it in their description first, then those holding its noun;
    not, for a parameter that is no handle (a name), a tool requiring a handle that ``own``
    gives (it comes after ``own`` in a chain, :data:`~toolcycle.words.HANDLE_WORDS`).

    Why the exception: the noun is often the thing every tool of an agent is about
    (``field`` of ``lookup_field(field_name)`` and ``read_field(field_id)``); read both ways
    the 1.5B was told that ``read_field`` gives the name and ``lookup_field`` the id, and
    went round the two until the loop guard ended the run. A handle (``ship_id``) is what a
    lookup gives; the name a lookup takes is the user's."""
    ending = {t.name for t in state.output.tool_definitions}
    tools = state.setup.settings.tools
    mine = next((d for d in tools if d.name == own), None)
    named: list[str] = []
    nouned: list[str] = []
    for definition in tools:
        if definition.name == own or definition.name in ending or _requires(definition, parameter):
            continue
        given = _gives(definition, parameter)
        if given == "named":
            named.append(definition.name)
        elif given == "nouned" and not (mine is not None and not is_handle(parameter) and any(
                is_handle(needed) and _gives(mine, needed)
                for needed in required_of(definition.parameters))):
            nouned.append(definition.name)
    return (named + nouned)[:_PRODUCERS]


def _gives(definition: ToolDefinition, parameter: str) -> str | None:
    """How ``definition`` says it gives ``parameter``: ``"named"`` in its description, or
    ``"nouned"``, the parameter's noun in its name or description; ``None`` otherwise."""
    words = words_of(parameter)
    noun = words[:-1] if len(words) > 1 else words
    if not noun:
        return None
    description = definition.description or ""
    if parameter in description:
        return "named"
    if set(noun) <= set(words_of(definition.name)) | set(words_of(description)):
        return "nouned"
    return None


def is_handle(parameter: str) -> bool:
    """Whether a parameter's last word says it holds a handle (``ship_id``, ``sku``)."""
    words = words_of(parameter)
    return bool(words) and words[-1] in HANDLE_WORDS


def required_of(schema: dict[str, Any]) -> list[str]:
    """The names a JSON schema's ``required`` lists (none where it is no list)."""
    required = schema.get("required")
    return [n for n in required if isinstance(n, str)] if isinstance(required, list) else []


def _requires(definition: ToolDefinition, parameter: str) -> bool:
    return parameter in required_of(definition.parameters)


def words_of(text: str) -> list[str]:
    """``orderId``, ``order_id`` and ``Order ID`` all as ``["order", "id"]``."""
    return [w.lower() for w in _WORD.findall(text[:2000])]


def consumers(state: RunState, giver: str) -> list[tuple[str, str]]:
    """(the tool, its parameter) for each offered tool (not ``giver``, not an output tool)
    with a required parameter ``giver`` can give (:func:`producers`): where what ``giver``
    returns goes next in a chain."""
    ending = {d.name for d in state.output.tool_definitions}
    return [(d.name, name) for d in state.setup.settings.tools
            if d.name != giver and d.name not in ending
            for name in required_of(d.parameters) if giver in producers(state, d.name, name)]
