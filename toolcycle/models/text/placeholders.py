"""Calls planned ahead with placeholders for values the model cannot know yet.

Asked to plan, models write every step at once: the calls after the first often hold a
placeholder (``<customer_id>``, ``{{id}}``) where a value from an earlier result belongs.
Such a call can only fail; :func:`calls_before_placeholder` keeps the calls before it, so the
model writes it again once it has read the observation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...messages import ToolCall

_PLACEHOLDER = re.compile(r"^\s*(?:<[^<>]+>|\{\{.+\}\}|\$\{.+\}|\[[A-Za-z_ ]+\])\s*$")


def calls_before_placeholder(calls: Sequence[ToolCall]) -> list[ToolCall]:
    """The calls up to the first one whose arguments hold a placeholder such as ``<id>``.

    Asked to plan, models write every step at once, filling arguments they cannot know yet
    with placeholders (measured: Qwen2.5-Coder-1.5B writes ``find_customer`` and then
    ``latest_order({"customer_id": "<customer_id>"})``). Running that call only produces an
    error; dropping it and what follows lets the model write it again with the observation.
    """
    kept: list[ToolCall] = []
    for call in calls:
        values = call.arguments.values() if call.arguments else ()
        if kept and any(isinstance(v, str) and _PLACEHOLDER.match(v) for v in values):
            break
        kept.append(call)
    return kept
