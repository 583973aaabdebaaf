"""Calling a tool for the model: a failed call's arguments as another tool takes them, typed
as its schema asks, and the call made as the loop would make it.

A fallback (:mod:`.fallback`) and a probe (:mod:`.probe`) ask a second tool what the model
asked the first, with no model to write the second call. The arguments carry over by name.
Two services rarely agree on names, though (``rota_board(clinician)`` beside
``schedule_api(doctor)``), and a name alone does not say that two parameters mean the same
(``station_board(station)`` beside ``delay_feed(service)`` do not). So a parameter named
apart carries only where that was seen to work: a :class:`Rename` ``doctor>clinician``, which
a run showed (the alternative called with the failed call's value under its own name,
:func:`~toolcycle.playbook.evidence.repair_of`) or a probe checked against the expected
answer (:func:`guess_rename`: the one text argument left over for the one text parameter
missing). A learned pitfall keeps it in its typed repair (``Repair.rename``).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from typing import Any

from ..context import RunContext
from ..run.calls import on_thread
from ..tools import Tool
from .parts import Rename as Rename  # (defined there: a repair keeps one; imported from here)


def carried(arguments: Mapping[str, Any], tool: Tool[Any], rename: Rename | None = None
            ) -> dict[str, Any] | None:
    """``arguments`` (a call of another tool) as a whole call of ``tool``: by name, and
    ``rename``'s source as its target; None where that is not a whole call, or shares nothing
    (then it is not the same question)."""
    wanted = properties(tool)
    required = required_params(tool)
    if required is None:
        return None
    given = {k: v for k, v in arguments.items() if v is not None}
    out = {k: v for k, v in given.items() if k in wanted}
    if rename is not None and rename.source in given and rename.source not in wanted and (
            rename.target in wanted and rename.target not in out):
        out[rename.target] = given[rename.source]
    if any(r not in out for r in required):
        return None
    return out or None


def respelled(arguments: Mapping[str, Any], prompt: str) -> dict[str, Any]:
    """``arguments`` with each text value that re-spells words of the ``prompt`` (``print_server``
    or ``Print-Server`` for "the print server") written as the prompt wrote them; for a
    probe, which asks what the model meant and checks it against the expected answer.

    Why: a small model writes the names it passes in the style of the identifiers it reads
    (snake case: "payroll_portal" for "the payroll portal"), while the data that holds the
    answer knows them as the task wrote them; a probe that passes the model's spelling finds
    nothing where the answer is, and no alternative is learned.
    """
    out = dict(arguments)
    lowered = prompt.lower()
    for key, value in arguments.items():
        if not isinstance(value, str) or not value.strip() or value.lower() in lowered:
            continue
        words = re.split(r"[\s_-]+", value.strip())
        if sum(map(len, words)) > len(prompt):  # cannot be there: build no pattern for it
            continue
        pattern = r"(?<!\w)" + r"[\s_-]+".join(map(re.escape, words)) + r"(?!\w)"
        found = re.search(pattern, prompt, re.IGNORECASE)
        if found is not None:
            out[key] = found.group(0)
    return out


def guess_rename(arguments: Mapping[str, Any], tool: Tool[Any]) -> Rename | None:
    """For a probe, which checks what it guessed: the one text argument of ``arguments`` that
    ``tool`` does not take, for the one required text parameter of ``tool`` they lack."""
    wanted = properties(tool)
    required = required_params(tool) or []
    given = {k: v for k, v in arguments.items() if v is not None}
    missing = [r for r in required if r not in given]
    spare = [k for k in given if k not in wanted]
    if len(missing) != 1 or len(spare) != 1 or not isinstance(given[spare[0]], str) or not (
            _text(wanted.get(missing[0]))):
        return None
    return Rename(spare[0], missing[0])


def can_carry(own: set[str], tool: Tool[Any], rename: Rename | None = None) -> bool:
    """Whether every call of a tool whose parameters are ``own`` carries to ``tool``."""
    wanted = properties(tool)
    required = required_params(tool)
    if required is None:
        return False
    names = own & set(wanted)
    if rename is not None and rename.source in own and rename.target in wanted:
        names.add(rename.target)
    return bool(names) and all(r in names for r in required)


def required_params(tool: Tool[Any]) -> list[str] | None:
    """``tool``'s required parameter names; None where its schema's list is no list."""
    required = tool.spec.parameters.get("required", [])
    return [r for r in required if isinstance(r, str)] if isinstance(required, list) else None


def _text(schema: Any) -> bool:
    """Whether a parameter's schema takes a string (or says nothing of its type)."""
    if not isinstance(schema, dict):
        return False
    options = schema.get("anyOf") or schema.get("oneOf")
    if "type" not in schema and isinstance(options, list):
        return any(_text(o) for o in options)
    kind = schema.get("type", "string")
    return kind == "string" or (isinstance(kind, list) and "string" in kind)


# -- the call, made as the loop makes it -----------------------------------------------------


class CallRefused(Exception):
    """A step the run's budgets refused (``RunContext.admit_call``): it was not called."""


async def invoke_step(step: Tool[Any], ctx: RunContext[Any], arguments: dict[str, Any]) -> Any:
    """One tool called as the loop would call it: counted against the run's budgets, with its
    timeout, on its thread (or none). Raises :class:`CallRefused` when a budget is spent."""
    admit = getattr(ctx, "admit_call", None)  # None: called outside a run (no ctx)
    refusal = admit(step) if admit is not None else None
    if refusal is not None:
        raise CallRefused(refusal)
    if step.is_async:
        pending = step.invoke(ctx, arguments)
        return await (asyncio.wait_for(pending, step.timeout) if step.timeout else pending)
    if step.inline:
        return step.invoke(ctx, arguments)
    return await on_thread(step, ctx, arguments)  # the loop's own worker threads and timeout


def typed(value: str, schema: Any) -> Any:
    """``value``, taken out of a result as text, as the parameter's schema types it: a
    number, boolean, array or object read as JSON where the schema asks for one and the text
    is one ("8" for an integer ``ms``); the text itself otherwise (the tool's own validation
    then says what is wrong). Found by the engine fuzzer: a fed integer was rejected as
    ``"8" is not of type "integer"``."""
    if not isinstance(schema, dict):
        return value
    options = [schema, *(o for o in schema.get("anyOf", []) if isinstance(o, dict))]
    wanted: set[Any] = set()
    for option in options:  # {"type": "integer"}, {"type": ["integer", "null"]}, anyOf
        kinds = option.get("type")
        wanted.update(kinds if isinstance(kinds, list) else [kinds])
    if not wanted - {"string", None}:
        return value
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return value
    return value if isinstance(parsed, str) else parsed


def properties(tool: Tool[Any]) -> dict[str, Any]:
    """A tool's parameters as its JSON Schema names them."""
    props = tool.spec.parameters.get("properties")
    return dict(props) if isinstance(props, dict) else {}
