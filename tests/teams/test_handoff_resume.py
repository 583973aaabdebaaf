"""A run handed to another agent goes on as that agent across a pause (its instructions,
tools, output type and toolsets), resumed by the agent that started it; a handoff target with
toolsets (a real MCP server over stdio) gets its tools listed, and closed with the team."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from toolcycle import Agent, Message, SnapshotError, tool
from toolcycle.mcp import MCPTools
from toolcycle.testing import HistoryChecker, ScriptedModel, call

from .helpers import nested_usage

SDK_EXAMPLE = str(Path(__file__).resolve().parents[1] / "mcp" / "sdk_example_server.py")


class Refund(BaseModel):
    order: str
    done: bool


def _system(messages: list[Message]) -> str:
    return messages[0].text if messages and messages[0].role == "system" else ""


def desk(snapshot_key: str | None = None) -> tuple[Agent[Any, Any], list[str], list[Any]]:
    """triage -> billing, whose refund needs a person's yes; billing's model records what it
    is shown (system message and tools) on each request."""
    refunded: list[str] = []
    seen: list[tuple[str, list[str]]] = []

    @tool(requires_approval=True)
    def refund(order: str) -> str:
        """Refund an order."""
        refunded.append(order)
        return f"refunded {order}"

    def billing_script(messages: list[Message], settings: Any) -> Any:
        seen.append((_system(messages), [t.name for t in settings.tools]))
        if messages[-1].role == "tool" and "refunded" in messages[-1].parts[0].content:
            return call("final_result", {"order": "A1", "done": True})
        return call("refund", {"order": "A1"})

    billing = Agent(ScriptedModel(billing_script), "You handle refunds.", [refund],
                    name="billing", output=Refund)
    triage = Agent(ScriptedModel([call("transfer_to_billing")]), "You route requests.",
                   name="triage", handoffs=[billing], snapshot_key=snapshot_key)
    return triage, refunded, seen


async def test_a_run_paused_after_a_handoff_resumes_as_the_agent_it_was_handed_to() -> None:
    triage, refunded, seen = desk()
    paused = await triage.run("refund A1")
    assert paused.status == "paused" and paused.agent_name == "billing" and refunded == []
    assert paused.trace.agent_name == "triage"

    final = await triage.resume(json.loads(json.dumps(paused.snapshot)),
                                [paused.pending_approvals[0].approve()])
    assert final.status == "success" and final.output == Refund(order="A1", done=True)
    assert final.agent_name == "billing" and refunded == ["A1"]
    # billing's instructions and tools (its output tool included) on the request after resume
    assert seen[-1] == ("You handle refunds.", ["refund", "final_result"])
    HistoryChecker("both").check(final.messages)
    assert nested_usage(final.trace) == final.usage


async def test_a_handed_run_is_sealed_with_the_starting_agents_key() -> None:
    triage, refunded, _ = desk(snapshot_key="k" * 32)
    paused = await triage.run("refund A1")
    assert paused.snapshot is not None
    assert paused.snapshot["integrity"]["algorithm"] == "hmac-sha256"
    forged = dict(paused.snapshot, integrity={"algorithm": "sha256", "digest": "0" * 64})
    with pytest.raises(SnapshotError, match="not signed"):
        await triage.resume(forged, [paused.pending_approvals[0].approve()])
    final = await triage.resume(paused.snapshot, [paused.pending_approvals[0].approve()])
    assert final.agent_name == "billing" and refunded == ["A1"]


async def test_a_handed_run_resumes_by_stream_too() -> None:
    triage, refunded, _ = desk()
    paused = await triage.run("refund A1")
    stream = triage.resume_stream(paused.snapshot, [paused.pending_approvals[0].approve()])
    async for _ in stream:
        pass
    assert stream.result is not None and stream.result.agent_name == "billing"
    assert refunded == ["A1"]


def _servers() -> set[int]:
    """This process's children running the SDK's example MCP server."""
    found = set()
    me = os.getpid()
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError, ValueError):
            continue
        if int(fields[1]) == me and "sdk_example_server" in cmdline and fields[0] != "Z":
            found.add(int(entry))
    return found


async def test_a_handoff_target_with_an_mcp_toolset_offers_and_runs_its_tools() -> None:
    offered: list[list[str]] = []

    def math_script(messages: list[Message], settings: Any) -> Any:
        offered.append([t.name for t in settings.tools])
        if messages[-1].role == "tool" and messages[-1].parts[0].name == "add":
            return f"the sum is {json.loads(messages[-1].parts[0].content)['result']}"
        return call("add", {"a": 2, "b": 40})

    math = Agent(ScriptedModel(math_script), "You add numbers.",
                 [MCPTools.stdio(sys.executable, SDK_EXAMPLE)], name="math")
    async with Agent(ScriptedModel([call("transfer_to_math")]), name="triage",
                     handoffs=[math]) as triage:
        result = await triage.run("what is 2 + 40?")
        assert _servers()  # the target's server runs within the team
    assert result.output == "the sum is 42" and result.agent_name == "math"
    assert offered == [["add"], ["add"]]  # listed before the first request after the handoff
    assert not _servers()  # closed with the agent that hands off to it
    HistoryChecker("both").check(result.messages)


async def test_a_run_handed_to_an_agent_with_toolsets_pauses_and_resumes_with_them() -> None:
    added: list[str] = []

    def math_script(messages: list[Message], settings: Any) -> Any:
        if messages[-1].role == "tool" and messages[-1].parts[0].name == "add":
            added.append(messages[-1].parts[0].content)
            return "done adding"
        return call("add", {"a": 1, "b": 2})

    math = Agent(ScriptedModel(math_script), "You add numbers.",
                 [MCPTools.stdio(sys.executable, SDK_EXAMPLE)], name="math",
                 approval=lambda request, ctx: __import__("toolcycle").Defer())
    async with Agent(ScriptedModel([call("transfer_to_math")]), name="triage",
                     handoffs=[math]) as triage:
        paused = await triage.run("1 + 2?")
        [request] = paused.pending_approvals
        assert request.tool_name == "add" and paused.agent_name == "math"
        final = await triage.resume(paused.snapshot, [request.approve()])
    assert final.output == "done adding" and final.agent_name == "math"
    assert json.loads(added[0]) == {"result": 3}


async def test_a_member_with_an_mcp_toolset_pauses_the_team_and_a_fresh_team_resumes_it(
) -> None:
    """The member's snapshot names the tools its server listed; a team built afresh (another
    process, as it were: its servers not started) lists them before checking it."""
    from toolcycle import Approve, Defer

    def team() -> Agent[Any, Any]:
        def math_script(messages: list[Message], settings: Any) -> Any:
            if messages[-1].role == "tool":
                return f"sum: {json.loads(messages[-1].parts[0].content)['result']}"
            return call("add", {"a": 20, "b": 22})

        def lead_script(messages: list[Message], settings: Any) -> Any:
            if messages[-1].role == "tool":
                return f"lead: {messages[-1].parts[0].content}"
            return call("math", {"input": "add 20 and 22"})

        math = Agent(ScriptedModel(math_script), "You add.",
                     [MCPTools.stdio(sys.executable, SDK_EXAMPLE)], name="math")
        return Agent(ScriptedModel(lead_script), tools=[math.as_tool()], name="lead",
                     approval=lambda r, ctx: Defer() if r.tool_name == "add" else Approve())

    async with team() as first:
        paused = await first.run("20 + 22?")
    [request] = paused.pending_approvals
    assert (request.agent_name, request.tool_name) == ("math", "add")
    async with team() as fresh:
        final = await fresh.resume(json.loads(json.dumps(paused.snapshot)), [request.approve()])
        assert final.output == "lead: sum: 42"
        stream_team = team()
    paused_again = await stream_team.run("20 + 22?")
    stream = stream_team.resume_stream(paused_again.snapshot,
                                       [paused_again.pending_approvals[0].approve()])
    async for _ in stream:
        pass
    assert stream.result is not None and stream.result.output == "lead: sum: 42"
    await stream_team.close()
