"""Calls written as code: inside another call's argument, or as the whole answer.

A call written inside another call's argument: the inner call is the one to run first.

Asked for a chain, a small model composes the calls the way it would write code:
``gross_pay({"employee_id": "find_employee('Jonas Berg')", "month": "2026-10"})``
(Qwen2.5-Coder-1.5B on the first-hour agents, issue 68: the payroll, weather and flights
agents). Run as written, the outer call fails on an id that is a piece of code, and the model,
reading that failure, concluded that ``find_employee`` did not exist and answered so. What it
asked for first is the inner call, which it cannot yet feed to the outer one: the reply is read
as that inner call, and, as with a placeholder argument (:func:`.calls.calls_before_placeholder`),
the outer call and any after it are dropped; the model writes them again with the observation.

Only a whole argument that is exactly one call to an *offered* tool, with literal arguments
(``find_employee('Ana Silva')``, ``find_station(city="Bergen")``), counts: an argument that
merely mentions a tool, or holds an expression, is left to the tool as written.

An answer that is exactly such a call (:func:`call_written_as_code`) is that call: seen on
the 0.5B (first-hour dev set), ``{"answer": "stock_level(sku: 'yoga_mat')"}``, a call the model
meant to make, which the run took as its answer and called a ``success``. Keyword arguments
may be written ``name: value`` (as that one was) where ``name`` is one of the tool's
parameters.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from collections.abc import Sequence
from typing import Any

from ...messages import ToolCall
from ...tools import ToolDefinition

_CALL = re.compile(r"^\s*([A-Za-z_]\w*)\s*\((.*)\)\s*$", re.S)
#: An argument longer than this is not read as a call (a call is a short expression).
_MAX_CHARS = 500


def unnest_calls(calls: Sequence[ToolCall], tools: Sequence[ToolDefinition]) -> list[ToolCall]:
    """The calls up to the first whose argument is a call to an offered tool, that one
    replaced by the inner call (same id); calls without such an argument are unchanged."""
    offered = {tool.name: tool for tool in tools}
    kept: list[ToolCall] = []
    for call in calls:
        inner = _inner_call(call, offered)
        if inner is not None:
            kept.append(inner)
            break
        kept.append(call)
    return kept


def _inner_call(call: ToolCall, offered: dict[str, ToolDefinition]) -> ToolCall | None:
    for value in (call.arguments or {}).values():
        if not isinstance(value, str) or len(value) > _MAX_CHARS:
            continue
        match = _CALL.match(value)
        if match is None or match.group(1) not in offered:
            continue
        arguments = _literal_arguments(match.group(2), offered[match.group(1)])
        if arguments is not None:
            return ToolCall(call.id, match.group(1), arguments, json.dumps(arguments))
    return None


def call_written_as_code(text: str, tools: Sequence[ToolDefinition], call_id: str
                         ) -> ToolCall | None:
    """The call ``text`` is, where the whole of it is one call to an offered tool with literal
    arguments (``name=value`` or, for the tool's own parameters, ``name: value``)."""
    if len(text) > _MAX_CHARS or (match := _CALL.match(text)) is None:
        return None
    tool = next((t for t in tools if t.name == match.group(1)), None)
    if tool is None:
        return None
    arguments = _literal_arguments(match.group(2), tool)
    properties = tool.parameters.get("properties")
    if arguments is None and isinstance(properties, dict) and properties:
        rewritten = _colons_as_equals(match.group(2), set(properties))
        arguments = None if rewritten is None else _literal_arguments(rewritten, tool)
    if arguments is None:
        return None
    return ToolCall(call_id, tool.name, arguments, json.dumps(arguments))


def _colons_as_equals(text: str, names: set[str]) -> str | None:
    """``sku: 'a'`` as ``sku='a'`` where ``sku`` is one of ``names``, written outside any
    bracket and any string: a value (``note='sku: x'``) is never rewritten. ``None`` where
    the text does not tokenize as Python."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    colons: list[int] = []
    depth = 0
    previous: tokenize.TokenInfo | None = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
            elif token.type == tokenize.OP and token.string in ")]}":
                depth -= 1
            elif (token.type == tokenize.OP and token.string == ":" and depth == 0
                  and previous is not None and previous.type == tokenize.NAME
                  and previous.string in names):
                row, column = token.start
                colons.append(starts[row - 1] + column)
            if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
                previous = token
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    written = list(text)
    for offset in colons:
        written[offset] = "="
    return "".join(written)


def _literal_arguments(text: str, tool: ToolDefinition) -> dict[str, Any] | None:
    """``'Ana Silva'`` or ``name="Ana Silva"`` as the tool's arguments: positional values
    take the parameters in the schema's order; ``None`` for anything but literals."""
    try:
        node = ast.parse(f"f({text})", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(node, ast.Call):
        return None
    properties = tool.parameters.get("properties")
    names = list(properties) if isinstance(properties, dict) else []
    if len(node.args) > len(names):
        return None
    try:
        arguments = {name: ast.literal_eval(arg) for name, arg in zip(names, node.args,
                                                                      strict=False)}
        for keyword in node.keywords:
            if keyword.arg is None:  # **spread
                return None
            arguments[keyword.arg] = ast.literal_eval(keyword.value)
    except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
        return None
    try:
        json.dumps(arguments)
    except (TypeError, ValueError):  # a tuple key, bytes, a set: not JSON arguments
        return None
    return arguments
