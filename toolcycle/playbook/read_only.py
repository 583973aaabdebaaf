"""Telling a user what the playbook cannot do for an agent none of whose tools is read-only.

Everything the playbook does *for* the model calls a tool the model did not ask for: offline
learning's probes (which of the other tools held the answer a failed run missed), routines,
fallbacks, reshaped and respelled calls, head starts. It does so only with tools declared
``read_only`` (a lookup: calling it changes nothing), so for an agent that declares none the
playbook can only advise, and the lesson "where the answer really is" is never learned from
a failed run. Nothing fails, so nothing says so: issue 69 measured the docs' own example,
which declared no tool read-only, learning no empty-database lesson at all. Hence one warning
per agent name and process (logged on ``toolcycle.playbook``) and a note in
:class:`~toolcycle.playbook.learning.LearningReport` and the evals' playbook A/B.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from ..tools import Tool

log = logging.getLogger("toolcycle.playbook")

#: How to declare a lookup, in each place a tool is declared.
HOW = ("declare its lookups read-only: @tool(read_only=True), "
       "Tool.from_function(f, read_only=True), \"read_only\": true on a tool of an agent spec, "
       "or MCPTools(..., trust_hints=True) for a server you trust whose tools say "
       "readOnlyHint (docs/playbook.md)")

_told: set[str] = set()
_lock = threading.Lock()


def missing_read_only(agent_name: str, tools: Mapping[str, Any]) -> str | None:
    """What ``agent_name`` misses when it has tools and none is declared read-only (``None``
    when one is, or when it has no tools yet: an MCP server's arrive with the first run)."""
    listed = [t for t in tools.values() if isinstance(t, Tool)]
    if not listed or any(t.policy.read_only for t in listed):
        return None
    return (f"agent {agent_name!r}: none of its {len(listed)} tools is declared read-only, so "
            "its playbook can only advise: learning runs no probes (a failed run never learns "
            "where the answer was), and no routine, fallback, reshaped call or head start "
            f"can call a tool for the model; {HOW}")


def tell_once(agent_name: str, tools: Mapping[str, Any]) -> None:
    """Log :func:`missing_read_only`'s note, the first time it holds for ``agent_name`` in
    this process (an agent is built, and its runs list tools, many times)."""
    note = missing_read_only(agent_name, tools)
    if note is None:
        return
    with _lock:
        if agent_name in _told:
            return
        _told.add(agent_name)
    log.warning("%s", note)
