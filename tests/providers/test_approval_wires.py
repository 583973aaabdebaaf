"""Tool approval on every wire (OpenAI chat tools, legacy functions, Anthropic, the OpenAI
Responses API, Gemini; JSON and SSE):
approved, denied and deferred calls, the run paused and resumed, through the official SDKs and
the checking server, which refuses any history (the resumed one included) a real API would."""

from __future__ import annotations

import json
from typing import Any

from toolcycle import Agent, ApprovalRequest, Approve, Defer, Deny, RunContext, tool
from toolcycle.result import RunResult

from .script import Call, Reply
from .server import ProviderServer
from .test_agent_scenarios import FACTORIES, add, results_sent, run, stream, wire

__all__ = ["stream", "wire"]  # the parametrised fixtures, shared with the scenarios

#: The wires whose tool results carry an error flag (a denial is sent as an error there).
ERROR_FLAG_WIRES = ("anthropic", "gemini")


async def resume(agent: Agent[Any, Any], stream: bool, snapshot: Any,
                 approvals: dict[str, bool | str]) -> RunResult[Any]:
    if not stream:
        return await agent.resume(snapshot, approvals)
    events = agent.resume_stream(snapshot, approvals)
    hooks = [event.hook async for event in events]
    assert hooks[0] == "on_resume"
    assert events.result is not None
    return events.result


def _drop_tool(dropped: list[str]) -> Any:
    @tool(requires_approval=True)
    def drop(table: str) -> str:
        """Drop a table.

        Args:
            table: The table.
        """
        dropped.append(table)
        return f"dropped {table}"

    return drop


def policy(request: ApprovalRequest, ctx: RunContext[Any]) -> Approve | Deny | Defer:
    if not request.requires_approval:
        return Approve()
    if request.arguments.get("table") == "prod":
        return Deny("prod is off limits")
    return Defer()


async def test_approve_deny_defer_and_resume(server: ProviderServer, wire: str,
                                             stream: bool) -> None:
    first = [Call("add", {"a": 1, "b": 2}), Call("drop", {"table": "prod"})]
    replies = ([Reply(calls=first[:1]), Reply(calls=first[1:])] if wire == "functions"
               else [Reply(calls=first)])
    server.script([*replies, Reply(text="one more", calls=[Call("drop", {"table": "tmp"})]),
                   Reply(text="done")])
    dropped: list[str] = []
    agent = Agent(FACTORIES[wire](server), tools=[add, _drop_tool(dropped)], approval=policy)
    paused = await run(agent, stream)
    assert paused.status == "paused" and dropped == []
    (pending,) = paused.pending_approvals
    assert (pending.tool_name, pending.arguments) == ("drop", {"table": "tmp"})
    snapshot = json.loads(json.dumps(paused.snapshot))
    final = await resume(agent, stream, snapshot, {pending.call_id: True})
    assert final.output == "done" and dropped == ["tmp"] and final.run_id == paused.run_id
    sent = results_sent(server)
    assert sent[0] == ("3", False)
    assert sent[1] == ("prod is off limits", wire in ERROR_FLAG_WIRES)
    assert sent[2] == ("dropped tmp", False)
    assert [r.approval and r.approval["decision"] for r in final.tool_calls] == [
        "approved", "denied", "approved"]
    assert final.usage.requests == len(server.requests)
    assert [r.streamed for r in server.requests] == [stream] * len(server.requests)


async def test_a_person_denies_on_resume(server: ProviderServer, wire: str,
                                         stream: bool) -> None:
    server.script([Reply(calls=[Call("drop", {"table": "users"})]), Reply(text="kept it")])
    dropped: list[str] = []
    agent = Agent(FACTORIES[wire](server), tools=[_drop_tool(dropped)])
    paused = await run(agent, stream)
    final = await resume(agent, stream, paused.snapshot,
                         {paused.pending_approvals[0].call_id: "ask the DBA"})
    assert final.output == "kept it" and dropped == []
    assert results_sent(server) == [("ask the DBA", wire in ERROR_FLAG_WIRES)]
