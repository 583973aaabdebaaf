"""A served agent answers with a result only when its run succeeded (docs/status.md): a run a
limit forced, a partial one, one that passed a tool's error through and one that paused are
``isError`` results that carry the status, never the agent's answer. Before, each of them came
back as a plain result (a paused run as the text "null")."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from toolcycle import Agent, Limits, tool
from toolcycle.mcp.serve import agent_server
from toolcycle.models.base import ModelSettings
from toolcycle.testing import ScriptedModel, call


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


@tool
def lookup(city: str) -> str:
    """Find a city."""
    raise ValueError(f"no city called {city} in the atlas we have")


@tool(requires_approval=True)
def refund(order: str) -> str:
    """Refund an order."""
    return f"refunded {order}"


def _forced(_messages: Any, settings: ModelSettings) -> Any:
    return "a guess" if settings.tool_choice == "none" else call("ping")


ERROR = "Tool `lookup` failed: ValueError: no city called Atlantis in the atlas we have"
AGENTS = {
    "forced": lambda: Agent(ScriptedModel(_forced), tools=[ping], name="helper",
                            limits=Limits(max_iterations=1)),
    "partial": lambda: Agent(ScriptedModel(_forced), tools=[ping], name="helper",
                             limits=Limits(max_iterations=1, on_limit="partial")),
    "tool_error": lambda: Agent(ScriptedModel([call("lookup", {"city": "Atlantis"}), ERROR]),
                                tools=[lookup], name="helper"),
    "paused": lambda: Agent(ScriptedModel([call("refund", {"order": "O-1"}, id="c1")]),
                            tools=[refund], name="helper"),
}


@pytest.mark.parametrize("status", sorted(AGENTS))
async def test_a_served_run_that_did_not_succeed_is_an_error(status: str) -> None:
    async with Client(agent_server(AGENTS[status]())) as client:
        ran = await client.call_tool("helper", {"input": "go"})
    assert ran.is_error
    text = ran.content[0].text  # type: ignore[union-attr]
    assert text.startswith(f"The agent did not succeed (status {status})")
    assert ran.structured_content is not None
    assert ran.structured_content["status"] == status
    if status == "forced":
        assert "max_iterations" in text and "not to be trusted: a guess" in text
    if status == "paused":
        assert "refund [c1]" in text


async def test_a_served_run_that_succeeded_is_its_answer() -> None:
    agent = Agent(ScriptedModel([call("ping"), "pong it is"]), tools=[ping], name="helper")
    async with Client(agent_server(agent)) as client:
        ran = await client.call_tool("helper", {"input": "go"})
    assert not ran.is_error and ran.content[0].text == "pong it is"  # type: ignore[union-attr]
