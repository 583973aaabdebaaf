"""``toolcycle mcp serve`` keeps the agent's approval promise (r2-03): a served tool that needs
approval runs only on a yes (the agent's policy, or the MCP client's user asked through
elicitation), and a served run that pauses answers with an error listing what waits.

The real SDK client talks to the real SDK server in memory; the client's user is an
elicitation callback. Each elicitation test runs in both protocol eras: ``auto`` negotiates
2026-07-28, where the server answers ``input_required`` and reads the answer from the client's
retry; ``legacy`` forces the initialize handshake of older protocols, where the server asks over
the ``elicitation/create`` back-channel inside the call."""

from __future__ import annotations

import asyncio
from typing import Any

import mcp.types as types
import pytest
from mcp import Client

from toolcycle import Agent, ApprovalRequest, Approve, Defer, Deny, RunContext, tool
from toolcycle.mcp.serve import agent_server
from toolcycle.testing import ScriptedModel, call


def _agent(deleted: list[str], policy: Any = None, script: list[Any] | None = None) -> Agent:
    @tool(requires_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        deleted.append(path)
        return f"deleted {path}"

    @tool
    def list_files(folder: str) -> str:
        """List a folder."""
        return "a.log"

    return Agent(ScriptedModel(script or ["unused"]), tools=[delete_file, list_files],
                 approval=policy, name="janitor")


def _user(answer: types.ElicitResult, asked: list[str]) -> Any:
    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return answer

    return elicit


#: The two ways a served tool asks the client's user (see the module docstring).
ERAS = ("auto", "legacy")


def _call(agent: Agent, name: str, arguments: dict[str, Any], user: Any = None,
          mode: str = "auto") -> types.CallToolResult:
    async def go() -> types.CallToolResult:
        async with Client(agent_server(agent), elicitation_callback=user, mode=mode) as client:
            return await client.call_tool(name, arguments)

    return asyncio.run(go())


@pytest.mark.parametrize("mode", ERAS)
def test_a_tool_that_requires_approval_is_refused_when_the_client_cannot_ask(mode: str) -> None:
    deleted: list[str] = []
    result = _call(_agent(deleted), "delete_file", {"path": "/etc/passwd"}, mode=mode)
    assert result.is_error and "elicitation" in result.content[0].text  # type: ignore[union-attr]
    assert deleted == []


def test_the_agents_policy_decides_a_direct_call_first() -> None:
    def guard(request: ApprovalRequest, ctx: RunContext[Any]) -> Approve | Deny | Defer:
        if request.arguments["path"].startswith("/etc"):
            return Deny("system files are off limits")
        return Approve()

    deleted: list[str] = []
    agent = _agent(deleted, guard)
    refused = _call(agent, "delete_file", {"path": "/etc/passwd"})
    assert refused.is_error and "off limits" in refused.content[0].text  # type: ignore[union-attr]
    ran = _call(agent, "delete_file", {"path": "/tmp/x"})
    assert not ran.is_error and deleted == ["/tmp/x"]


@pytest.mark.parametrize(("answer", "runs"), [
    (types.ElicitResult(action="accept", content={"approve": True}), True),
    (types.ElicitResult(action="accept", content={"approve": False, "reason": "no"}), False),
    (types.ElicitResult(action="decline"), False),
    (types.ElicitResult(action="cancel"), False),
])
@pytest.mark.parametrize("mode", ERAS)
def test_the_client_user_is_asked_through_elicitation(answer: types.ElicitResult,
                                                      runs: bool, mode: str) -> None:
    deleted: list[str] = []
    asked: list[str] = []
    result = _call(_agent(deleted), "delete_file", {"path": "/tmp/x"}, _user(answer, asked),
                   mode)
    assert len(asked) == 1 and "delete_file" in asked[0] and "/tmp/x" in asked[0]
    assert result.is_error is not runs
    assert deleted == (["/tmp/x"] if runs else [])


@pytest.mark.parametrize("mode", ERAS)
def test_a_policy_deferral_asks_the_user_and_an_ungated_tool_runs_without_asking(mode: str
                                                                                 ) -> None:
    deleted: list[str] = []
    asked: list[str] = []
    agent = _agent(deleted, lambda request, ctx: Defer() if request.requires_approval
                   else Approve())
    user = _user(types.ElicitResult(action="accept", content={"approve": True}), asked)
    assert not _call(agent, "list_files", {"folder": "/tmp"}, user, mode).is_error
    assert asked == []
    assert not _call(agent, "delete_file", {"path": "/tmp/y"}, user, mode).is_error
    assert len(asked) == 1 and deleted == ["/tmp/y"]


def test_a_served_run_that_pauses_answers_with_an_error_listing_the_pending_calls() -> None:
    deleted: list[str] = []
    agent = _agent(deleted, script=[call("delete_file", {"path": "/tmp/x"}), "never"])
    result = _call(agent, "janitor", {"input": "clean /tmp"})
    assert result.is_error and deleted == []
    assert "delete_file" in result.content[0].text  # type: ignore[union-attr]
    assert result.structured_content is not None
    assert result.structured_content["status"] == "paused"
    assert result.structured_content["pending"][0]["arguments"] == {"path": "/tmp/x"}
