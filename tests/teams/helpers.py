"""What the team tests check on every run: each agent's history is well-formed (every call
id answered once, in order) and the team's usage adds up exactly; and the desk the pause tests
share (a janitor whose ``delete`` waits for a person, called by a boss), and the support
desk's tools the handoff tests share."""

from __future__ import annotations

from typing import Any

from toolcycle import Agent, RunResult, Trace, Usage, tool
from toolcycle.testing import HistoryChecker, ScriptedModel


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


@tool
def refund(order: str) -> str:
    """Refund an order."""
    return f"refunded {order}"


@tool
def reset_password(user: str) -> str:
    """Reset a password."""
    return f"reset link sent to {user}"


class Desk:
    """A janitor (whose ``delete`` needs a person's yes) called as a tool by a boss; built
    afresh per process, as a service would, with each model scripted from ``start``."""

    def __init__(self, janitor_script: list[Any], boss_script: list[Any],
                 **boss_options: Any) -> None:
        self.deleted: list[str] = []
        self.looked: list[str] = []

        @tool(requires_approval=True)
        def delete(path: str) -> str:
            """Delete a file."""
            self.deleted.append(path)
            return f"deleted {path}"

        @tool(concurrent=True)
        def look(path: str) -> str:
            """Look at a file."""
            self.looked.append(path)
            return f"{path}: 3 lines"

        self.janitor = Agent(ScriptedModel(janitor_script), "You clean.", [delete, look],
                             name="janitor")
        self.boss = Agent(ScriptedModel(boss_script), "You lead.",
                          [self.janitor.as_tool(), look], name="boss", **boss_options)


def check_histories(result: RunResult[Any]) -> None:
    """Every history of the team is one a provider accepts; usage adds up from the trace."""
    for run in (result, *result.runs):
        if run.status != "paused":
            HistoryChecker("both").check(run.messages)
        assert nested_usage(run.trace) == run.usage, run.agent_name
