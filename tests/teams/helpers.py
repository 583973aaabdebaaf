"""What the team tests check on every run: each agent's history is well-formed (every call
id answered once, in order) and the team's usage adds up exactly."""

from __future__ import annotations

from typing import Any

from toolcycle import RunResult, Trace, Usage
from toolcycle.testing import HistoryChecker


def nested_usage(trace: Trace) -> Usage:
    """A trace's own steps plus, recursively, the runs nested under its calls."""
    total = trace.own_usage
    for record in trace.tool_calls:
        if record.run is not None:
            total.add(nested_usage(record.run))
    return total


def check_team(result: RunResult[Any]) -> None:
    """Every history of the team is one a provider accepts, and usage adds up exactly."""
    for run in (result, *result.runs):
        HistoryChecker("both").check(run.messages)
        assert nested_usage(run.trace) == run.usage, run.agent_name
        assert run.trace.usage == run.usage
    own = result.trace.own_usage
    for run in result.runs:  # the direct members' usage covers theirs
        if any(record.run is run.trace for record in result.trace.tool_calls):
            own.add(run.usage)
    assert own == result.usage
