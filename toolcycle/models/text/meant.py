"""Calls read as the model meant them, where what it wrote cannot run as written.

Each repair here was seen on the first-hour agents (issue 68) with Qwen2.5-Coder-1.5B, and
each only applies where the written call could not run at all, so a call that could is never
changed:

- a call nested in another call's argument runs first (:mod:`.nested`);
- the arguments of a tool with exactly one parameter written as that parameter's bare value:
  ``{"name": "add", "arguments": [1000, 1500]}`` or ``"arguments": "Mesa Panels"``. Refused
  ("arguments must be a JSON object, got list"), the model wrote the same call again and
  again until the run failed (held-out agent h03, 33 iterations). The value is taken as the
  one parameter's; the tool's schema still validates it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ...messages import ToolCall
from ...tools import ToolDefinition
from .nested import unnest_calls


def as_meant(calls: Sequence[ToolCall], tools: Sequence[ToolDefinition]) -> list[ToolCall]:
    """``calls`` with the repairs above applied (the nested call's cut included)."""
    offered = {tool.name: tool for tool in tools}
    return unnest_calls([_bare_value(call, offered.get(call.name)) for call in calls], tools)


def _bare_value(call: ToolCall, tool: ToolDefinition | None) -> ToolCall:
    if call.arguments is not None or tool is None or not call.raw_arguments.strip():
        return call
    properties = tool.parameters.get("properties")
    if not isinstance(properties, dict) or len(properties) != 1:
        return call
    ((name, schema),) = properties.items()
    try:
        value: Any = json.loads(call.raw_arguments)
    except (ValueError, RecursionError):
        text = call.raw_arguments.strip()
        if text[:1] in "{[" or not (isinstance(schema, dict) and schema.get("type") == "string"):
            return call  # broken JSON stays broken: the model hears its arguments were unread
        value = text  # bare text for a string parameter
    if isinstance(value, dict):
        return call
    arguments = {name: value}
    return ToolCall(call.id, call.name, arguments, json.dumps(arguments),
                    original_name=call.original_name)
