"""Tool approval with the protocol-enforcing ScriptedModel: approve, deny, defer, pause, resume.

Every request of every run (resumed ones included) goes through the ScriptedModel's history
check, so a resumed history a real API would reject fails these tests.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

from toolcycle import (
    Agent,
    ApprovalRequest,
    Approve,
    Cancelled,
    ConfigurationError,
    Defer,
    Deny,
    Limits,
    Output,
    RunContext,
    Tool,
    ToolPolicy,
    tool,
)
from toolcycle.events import RunPaused, RunResumed, ToolResultEvent
from toolcycle.testing import ScriptedModel, call
from toolcycle.tracing.store import TraceStore


class Ledger:
    """What the tools did, in order: a tool that runs twice shows up twice."""

    def __init__(self) -> None:
        self.done: list[str] = []

    def tools(self) -> list[Tool[Any]]:
        done = self.done

        @tool(requires_approval=True)
        def delete(path: str) -> str:
            """Delete a file.

            Args:
                path: The file.
            """
            done.append(f"delete {path}")
            return f"deleted {path}"

        @tool
        def ls(path: str) -> str:
            """List a directory.

            Args:
                path: The directory.
            """
            done.append(f"ls {path}")
            return "a b"

        return [ls, delete]


def test_deny_answers_the_call_with_the_reason_and_the_loop_goes_on() -> None:
    ledger = Ledger()

    def policy(request: ApprovalRequest, ctx: RunContext[Any]) -> Approve | Deny:
        if request.tool_name == "delete" and request.arguments["path"].startswith("/etc"):
            return Deny("never touch /etc")
        return Approve()

    model = ScriptedModel([[call("delete", {"path": "/etc/passwd"}),
                            call("delete", {"path": "/tmp/x"})], "ok"])
    seen: list[ToolResultEvent] = []
    agent = Agent(model, tools=ledger.tools(), approval=policy,
                  callbacks={"on_tool_result": seen.append})
    result = agent.run_sync("clean up")
    assert result.status == "success" and result.output == "ok"
    assert ledger.done == ["delete /tmp/x"]
    denied, approved = result.tool_calls
    assert denied.error == "never touch /etc" and denied.result is None
    assert denied.approval == {"decision": "denied", "reason": "never touch /etc", "by": "policy"}
    assert approved.approval == {"decision": "approved", "by": "policy"}
    assert [e.error_type for e in seen] == ["denied", None]
    tool_message = result.messages[-2]
    assert [(r.content, r.is_error) for r in tool_message.results] == [
        ("never touch /etc", True), ("deleted /tmp/x", False)]


def test_defer_pauses_mid_turn_and_resume_runs_each_call_once() -> None:
    ledger = Ledger()
    model = ScriptedModel([
        [call("ls", {"path": "/"}), call("delete", {"path": "/a"}), call("ls", {"path": "/b"})],
        "done",
    ])
    paused_events: list[RunPaused] = []
    agent = Agent(model, tools=ledger.tools(), callbacks={"on_pause": paused_events.append})
    result = agent.run_sync("tidy")
    assert result.status == "paused" and result.paused and result.output is None
    assert result.termination.reason == "paused"
    assert ledger.done == ["ls /"]  # the call before the deferred one ran, the rest wait
    (pending,) = result.pending_approvals
    assert (pending.tool_name, pending.arguments, pending.requires_approval) == (
        "delete", {"path": "/a"}, True)
    assert paused_events and paused_events[0].result is result
    assert result.trace.status == "paused" and result.trace.pauses[0]["pending"][0][
        "call_id"] == pending.call_id
    snapshot = json.loads(json.dumps(result.snapshot))  # plain JSON

    resumed: list[RunResumed] = []
    final = agent.resume_sync(snapshot, {pending.call_id: True},
                              callbacks={"on_resume": resumed.append})
    assert final.status == "success" and final.output == "done"
    assert ledger.done == ["ls /", "delete /a", "ls /b"]
    assert final.run_id == result.run_id and resumed[0].run_id == result.run_id
    assert final.usage.requests == 2 and final.usage.tool_calls == 3
    assert [r.name for r in final.tool_calls] == ["ls", "delete", "ls"]
    assert final.tool_calls[1].approval == {"decision": "approved", "by": "person"}
    assert final.trace.pauses[0]["resumed_at"] is not None
    assert final.trace.pauses[0]["answers"] == {pending.call_id: {"decision": "approved",
                                                                   "by": "person"}}
    assert final.iterations == 2  # the paused step goes on, it is not repeated


def test_a_person_denies_on_resume() -> None:
    ledger = Ledger()
    model = ScriptedModel([call("delete", {"path": "/a"}), "left it"])
    agent = Agent(model, tools=ledger.tools())
    paused = agent.run_sync("go")
    call_id = paused.pending_approvals[0].call_id
    final = agent.resume_sync(paused.snapshot or {}, {call_id: "not today"})
    assert final.output == "left it" and ledger.done == []
    record = final.tool_calls[0]
    assert record.error == "not today"
    assert record.approval == {"decision": "denied", "reason": "not today", "by": "person"}


async def test_async_policy_defers_some_and_the_run_pauses_again() -> None:
    ledger = Ledger()

    async def policy(request: ApprovalRequest, ctx: RunContext[Any]) -> Approve | Defer:
        await asyncio.sleep(0)
        return Defer() if request.requires_approval else Approve()

    model = ScriptedModel([call("delete", {"path": "/1"}), call("delete", {"path": "/2"}),
                           "both gone"])
    agent = Agent(model, tools=ledger.tools(), approval=policy)
    first = await agent.run("go")
    second = await agent.resume(first.snapshot or {}, {first.pending_approvals[0].call_id: True})
    assert second.status == "paused" and ledger.done == ["delete /1"]
    assert second.run_id == first.run_id and len(second.trace.pauses) == 2
    third = await agent.resume(json.dumps(second.snapshot),
                               {second.pending_approvals[0].call_id: True})
    assert third.output == "both gone" and ledger.done == ["delete /1", "delete /2"]
    assert third.usage.requests == 3 and third.iterations == 3


def test_a_failing_or_wrong_policy_denies_and_is_reported() -> None:
    ledger = Ledger()

    def broken(request: ApprovalRequest, ctx: RunContext[Any]) -> Any:
        if request.tool_name == "ls":
            return True  # not a decision
        raise RuntimeError("policy store down")

    model = ScriptedModel([[call("ls", {"path": "/"}), call("delete", {"path": "/a"})], "ok"])
    result = Agent(model, tools=ledger.tools(), approval=broken).run_sync("go")
    assert ledger.done == [] and result.output == "ok"
    errors = [r.error or "" for r in result.tool_calls]
    assert "must return Approve()" in errors[0] and "policy store down" in errors[1]
    assert [e.hook for e in result.callback_errors] == ["approval", "approval"]


def test_missing_unknown_or_bad_approvals_are_refused_listing_each() -> None:
    ledger = Ledger()
    model = ScriptedModel([[call("delete", {"path": "/a"}), call("delete", {"path": "/b"})],
                           "ok"])
    agent = Agent(model, tools=ledger.tools())
    paused = agent.run_sync("go")
    first, second = (r.call_id for r in paused.pending_approvals)
    with pytest.raises(ConfigurationError) as info:
        agent.resume_sync(paused.snapshot or {}, {first: "", "nope": True})
    text = str(info.value)
    assert "'nope' is not a pending call" in text
    assert f"approvals[{first!r}] must be True or a non-empty reason" in text
    assert f"no answer for {second} (delete)" in text
    assert ledger.done == []
    final = agent.resume_sync(paused.snapshot or {}, {first: True, second: "no"})
    assert final.output == "ok" and ledger.done == ["delete /a"]


def test_a_cancel_from_the_batch_before_a_deferred_call_cancels_the_run() -> None:
    """Found by the fuzzer (seed 5585): the token was checked before the batch ran, and the
    run paused although a call of the batch had cancelled it."""
    ledger = Ledger()

    @tool(concurrent=True)
    async def stop(ctx: RunContext[Any]) -> str:
        """Cancel the run."""
        ctx.cancel_token.cancel("stop tool")
        return "stopping"

    model = ScriptedModel([[call("stop"), call("delete", {"path": "/a"})], "never"])
    agent = Agent(model, tools=[stop, *ledger.tools()])
    with pytest.raises(Cancelled) as info:
        agent.run_sync("go")
    assert info.value.result is not None and info.value.result.status == "cancelled"
    assert ledger.done == []


def test_limits_count_across_the_pause() -> None:
    ledger = Ledger()
    model = ScriptedModel([call("ls", {"path": "/"}), call("delete", {"path": "/a"}),
                           call("ls", {"path": "/b"}), "late"])
    agent = Agent(model, tools=ledger.tools(),
                  limits=Limits(max_tool_calls=2, on_limit="partial"))
    paused = agent.run_sync("go")
    assert paused.snapshot is not None
    assert paused.snapshot["counters"]["executed_calls"] == 1
    final = agent.resume_sync(paused.snapshot, {paused.pending_approvals[0].call_id: True})
    # two calls ran (one before the pause, one approved): the limit is reached, the run stops
    # before asking for more (had the pause reset the count, the third call would run)
    assert ledger.done == ["ls /", "delete /a"]
    assert final.termination.limit == "max_tool_calls" and final.partial


class Verdict(BaseModel):
    summary: str


def test_output_call_held_beside_a_deferred_call() -> None:
    """The output call comes first in the turn, a deferred call after: the held answer
    survives the pause and the output is judged after the person decides."""
    ledger = Ledger()
    model = ScriptedModel([[call("final_result", {"summary": "cleaned"}),
                            call("delete", {"path": "/a"})]])
    agent = Agent(model, tools=ledger.tools(), output=Output(Verdict))
    paused = agent.run_sync("go")
    assert paused.snapshot is not None and paused.snapshot["held"]["arguments"] == {
        "summary": "cleaned"}
    final = agent.resume_sync(paused.snapshot, {paused.pending_approvals[0].call_id: "no"})
    assert final.output == Verdict(summary="cleaned") and ledger.done == []
    kinds = [(r.kind, r.result, r.error) for r in final.tool_calls]
    assert kinds == [("output", "Output accepted.", None), ("tool", None, "no")]


def test_no_pause_at_the_final_request_of_a_limit() -> None:
    """The forced final request at a limit must answer now: a deferral there is a denial."""
    ledger = Ledger()

    def policy(request: ApprovalRequest, ctx: RunContext[Any]) -> Approve | Defer:
        return Defer() if request.requires_approval else Approve()

    model = ScriptedModel([call("ls", {"path": "/"}),
                           [call("final_result", {"summary": "s"}),
                            call("delete", {"path": "/a"})]])
    agent = Agent(model, tools=ledger.tools(), approval=policy, output=Verdict,
                  limits=Limits(max_iterations=1))
    result = agent.run_sync("go")
    assert result.status == "forced" and ledger.done == ["ls /"]  # answered at the limit
    assert "cannot be asked now" in (result.tool_calls[-1].error or "")


async def test_streaming_run_pauses_and_the_stream_ends() -> None:
    ledger = Ledger()
    model = ScriptedModel([call("delete", {"path": "/a"}), "done"])
    agent = Agent(model, tools=ledger.tools())
    stream = agent.stream("go")
    hooks = [event.hook async for event in stream]
    assert stream.result is not None and stream.result.status == "paused"
    assert hooks[-1] == "on_pause" and "on_tool_call" not in hooks
    final = await agent.resume(stream.result.snapshot or {},
                               {stream.result.pending_approvals[0].call_id: True})
    assert final.output == "done" and ledger.done == ["delete /a"]


def test_trace_store_keeps_the_paused_then_finished_run(tmp_path: Any) -> None:
    ledger = Ledger()
    store = TraceStore(tmp_path / "traces.db")
    model = ScriptedModel([call("delete", {"path": "/a"}), "done"])
    agent = Agent(model, tools=ledger.tools(), trace_store=store)
    paused = agent.run_sync("go")
    stored = store.get(paused.run_id)
    assert stored is not None and stored.status == "paused" and len(stored.pauses) == 1
    agent.resume_sync(paused.snapshot or {}, {paused.pending_approvals[0].call_id: True})
    stored = store.get(paused.run_id)
    assert stored is not None and stored.status == "success"
    assert stored.pauses[0]["resumed_at"] is not None
    assert stored.tool_calls[0].approval == {"decision": "approved", "by": "person"}


def test_agents_without_approval_are_not_gated() -> None:
    @tool
    def plain(x: int) -> int:
        """Echo.

        Args:
            x: A number.
        """
        return x

    agent = Agent(ScriptedModel(["hi"]), tools=[plain])
    assert agent._core.gated is False
    result = agent.run_sync("go")
    assert result.pending_approvals == [] and result.snapshot is None


def test_tool_policy_is_one_value_carried_by_bind_and_specs() -> None:
    policy = ToolPolicy(timeout=5, requires_approval=True, inline=True)

    def impl(path: str) -> str:
        return path

    built = Tool.from_function(impl, policy=policy)
    assert built.policy == policy and built.requires_approval and built.timeout == 5
    assert built.bind(lambda path: path).policy == policy
    assert Tool.from_function(impl, policy=policy, timeout=1).policy.timeout == 1
    with pytest.raises(ConfigurationError) as info:
        Tool.from_function(impl, max_calls=0, requires_approval="yes")  # type: ignore[arg-type]
    assert "max_calls must be" in str(info.value) and "requires_approval must be" in str(
        info.value)
    with pytest.raises(ConfigurationError, match="approval must be a function"):
        Agent(ScriptedModel(["x"]), approval="always")  # type: ignore[arg-type]


class _Toolset:
    """A toolset (as an MCP server's tools are): known at the start of each run only."""

    def __init__(self, tools: list[Tool[Any]]) -> None:
        self.tools = tools

    async def get_tools(self) -> list[Tool[Any]]:
        return self.tools

    async def close(self) -> None:
        pass


def test_a_toolsets_tool_that_requires_approval_pauses_and_resumes() -> None:
    """The agent's gate and the snapshot's identity include the toolsets' tools, and a resumed
    run (sync or streamed) runs on them."""
    ledger = Ledger()
    model = ScriptedModel([[call("delete", {"path": "/a"})], "done", [
        call("delete", {"path": "/b"})], "done too"])
    agent = Agent(model, tools=[_Toolset(ledger.tools())])
    paused = agent.run_sync("tidy")
    assert paused.status == "paused" and ledger.done == []
    final = agent.resume_sync(paused.snapshot, {paused.pending_approvals[0].call_id: True})
    assert final.output == "done" and ledger.done == ["delete /a"]

    async def streamed() -> Any:
        paused = await agent.stream("again").get_result()
        events = agent.resume_stream(paused.snapshot, {paused.pending_approvals[0].call_id: True})
        return await events.get_result()

    assert asyncio.run(streamed()).output == "done too"
    assert ledger.done == ["delete /a", "delete /b"]
