"""An agent as a tool: one team, one run (limits, usage, cancelling, trace, result.runs)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel

from toolcycle import (
    Agent,
    AgentError,
    Cancelled,
    CancelToken,
    ConfigurationError,
    Limits,
    Output,
    Trace,
    tool,
)
from toolcycle.events import RunStart, ToolCallEvent
from toolcycle.testing import ScriptedModel, call
from toolcycle.tracing.html import render_html
from toolcycle.tracing.otel import OTelCallbacks

from .helpers import check_team


@tool
def lookup(q: str) -> str:
    """Look something up."""
    return f"found {q}"


def researcher(script: list[Any], **kwargs: Any) -> Agent[Any, Any]:
    return Agent(ScriptedModel(script), "You research.", [lookup], name="researcher", **kwargs)


async def test_a_called_agent_answers_the_call_and_the_team_adds_up() -> None:
    helper = researcher([call("lookup", {"q": "x"}), "x is 42"])
    boss = Agent(ScriptedModel([call("researcher", {"input": "find x"}), "done: 42"]),
                 "You lead.", [helper.as_tool(description="Finds things.")], name="boss")
    result = await boss.run("go")

    assert result.output == "done: 42"
    assert [r.agent_name for r in result.runs] == ["researcher"]
    [member] = result.runs
    assert member.output == "x is 42" and member.status == "success"
    [record, *_] = result.tool_calls
    assert record.result == "x is 42"
    assert record.run is member.trace  # the member's run hangs under its call
    assert member.trace.user_prompt == "find x"
    assert result.usage.requests == 4 and result.usage.tool_calls == 2
    check_team(result)
    # the whole nested trace round-trips through JSON and shows in the text view
    again = Trace.from_json(result.trace.to_json())
    assert again.tool_calls[0].run is not None
    assert again.tool_calls[0].run.tool_calls[0].result == "found x"
    assert "     | run " in result.trace.render()


class Ticket(BaseModel):
    title: str
    priority: int


class Verdict(BaseModel):
    team: str
    urgent: bool


async def test_typed_input_and_structured_output_cross_the_call() -> None:
    triager = Agent(ScriptedModel([call("final_result", {"team": "billing", "urgent": True})]),
                    "Triage {title}.", name="triager", input_type=Ticket, output=Verdict)
    agent_tool = triager.as_tool()
    assert agent_tool.spec.parameters["required"] == ["title", "priority"]
    boss = Agent(ScriptedModel([call("triager", {"title": "refund", "priority": 1}), "ok"]),
                 tools=[agent_tool])
    result = await boss.run("handle it")
    assert json.loads(result.tool_calls[0].result or "") == {"team": "billing", "urgent": True}
    assert result.runs[0].output == Verdict(team="billing", urgent=True)
    check_team(result)


async def test_an_input_the_member_refuses_is_an_error_observation() -> None:
    triager = Agent(ScriptedModel(["unused"]), name="triager", input_type=Ticket)
    boss = Agent(ScriptedModel([call("triager", {"title": "x", "priority": "high"}), "ok"]),
                 tools=[triager.as_tool()])
    result = await boss.run("go")
    record = result.tool_calls[0]
    assert record.error is not None and "priority" in record.error
    assert result.runs == []
    check_team(result)


async def test_a_failing_member_is_an_error_observation_and_its_run_is_kept() -> None:
    broken = researcher(["", "", ""], limits=Limits(max_attempts=1))  # empty replies
    boss = Agent(ScriptedModel([call("researcher", {"input": "x"}), "it failed, sorry"]),
                 tools=[broken.as_tool()])
    result = await boss.run("go")
    assert result.output == "it failed, sorry"
    record = result.tool_calls[0]
    assert record.error is not None and "Agent `researcher` failed" in record.error
    assert [r.status for r in result.runs] == ["failure"]
    check_team(result)


async def test_the_parents_tool_call_budget_bounds_the_member() -> None:
    helper = researcher([call("lookup", {"q": str(i)}) for i in range(5)] + ["gave up"])
    boss = Agent(ScriptedModel([call("researcher", {"input": "x"}), "final"]),
                 tools=[helper.as_tool()], limits=Limits(max_tool_calls=3))
    result = await boss.run("go")
    member = result.runs[0]
    executed = [c for c in member.tool_calls if c.error is None]
    assert len(executed) == 2  # the call of the member itself was the team's first
    assert member.termination.limit == "max_tool_calls"
    assert "a limit of the team, set on agent 'agent'" in member.termination.detail
    assert result.termination.limit == "max_tool_calls"  # the parent meets it next
    check_team(result)


async def test_the_parents_iterations_bound_the_member() -> None:
    helper = researcher([call("lookup", {"q": str(i)}) for i in range(8)] + ["member answer"])
    boss = Agent(ScriptedModel([call("researcher", {"input": "x"}), "final"]),
                 tools=[helper.as_tool()], limits=Limits(max_iterations=4))
    result = await boss.run("go")
    member = result.runs[0]
    # the parent's first request, then the member's three, then the member's forced answer
    assert member.iterations == 4 and member.forced_final_answer
    assert result.forced_final_answer and result.output == "final"
    check_team(result)


async def test_the_parents_timeout_bounds_the_member() -> None:
    @tool
    async def slow(q: str) -> str:
        """Takes its time."""
        await asyncio.sleep(30)
        return q

    helper = Agent(ScriptedModel([call("slow", {"q": "x"}), "never"]), tools=[slow],
                   name="researcher")
    boss = Agent(ScriptedModel([call("researcher", {"input": "x"}), "out of time"]),
                 tools=[helper.as_tool()], limits=Limits(timeout=0.2))
    result = await boss.run("go")
    assert result.termination.reason == "timeout"
    assert result.output == "out of time"
    [member] = result.runs
    assert member.status in {"success", "cancelled"}
    check_team(result)


async def test_cancelling_the_parent_cancels_the_member_and_answers_every_call() -> None:
    token = CancelToken()

    @tool
    async def wait(q: str) -> str:
        """Waits."""
        token.cancel("stop now")
        await asyncio.sleep(30)
        return q

    inner = Agent(ScriptedModel([call("wait", {"q": "a"}), "never"]), tools=[wait],
                  name="inner")
    middle = Agent(ScriptedModel([call("inner", {"input": "deeper"}), "never"]),
                   tools=[inner.as_tool()], name="middle")
    boss = Agent(ScriptedModel([call("middle", {"input": "x"}), "never"]),
                 tools=[middle.as_tool()], name="boss")
    with pytest.raises(Cancelled) as caught:
        await boss.run("go", cancel_token=token)
    result = caught.value.result
    assert result is not None
    assert [r.agent_name for r in result.runs] == ["middle", "inner"]
    assert [r.status for r in result.runs] == ["cancelled", "cancelled"]
    check_team(result)


async def test_the_callers_callbacks_and_spans_see_the_member_nested() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    seen: list[Any] = []
    helper = researcher([call("lookup", {"q": "x"}), "x is 42"])
    boss = Agent(ScriptedModel([call("researcher", {"input": "find x"}), "done"]),
                 tools=[helper.as_tool()], name="boss",
                 callbacks=[OTelCallbacks(tracer_provider=provider),
                            {"on_run_start": seen.append, "on_tool_call": seen.append}])
    result = await boss.run("go")
    starts = [e for e in seen if isinstance(e, RunStart)]
    assert [(s.agent_name, s.parent_call_id) for s in starts] == [
        ("boss", None), ("researcher", result.tool_calls[0].call_id)]
    assert [e.call.name for e in seen if isinstance(e, ToolCallEvent)] == ["researcher",
                                                                           "lookup"]
    finished = exporter.get_finished_spans()
    spans = {s.name: s for s in finished}
    parents = {s.context.span_id: s.parent.span_id for s in finished if s.parent is not None}
    member_span = spans["invoke_agent researcher"]
    call_span = spans["execute_tool researcher"]
    assert member_span.parent is not None
    assert member_span.parent.span_id == call_span.context.span_id
    chain, span_id = [], spans["execute_tool lookup"].context.span_id
    while span_id in parents:
        span_id = parents[span_id]
        chain.append(span_id)
    assert member_span.context.span_id in chain  # the member's calls sit inside its span
    assert spans["invoke_agent boss"].context.span_id == chain[-1]
    assert spans["invoke_agent boss"].end_time is not None


async def test_the_html_viewer_draws_the_member_run_escaped() -> None:
    helper = researcher([call("lookup", {"q": "<script>"}), "<b>bold</b>"])
    boss = Agent(ScriptedModel([call("researcher", {"input": "x"}), "done"]),
                 tools=[helper.as_tool()])
    page = render_html((await boss.run("go")).trace)
    assert 'class="member-run"' in page and "Run of agent researcher" in page
    assert "<b>bold</b>" not in page and "&lt;b&gt;bold&lt;/b&gt;" in page


async def test_streaming_the_caller_streams_the_members_events() -> None:
    helper = researcher([call("lookup", {"q": "x"}), "x is 42"])
    boss = Agent(ScriptedModel([call("researcher", {"input": "x"}), "done"]),
                 tools=[helper.as_tool()])
    stream = boss.stream("go")
    names = [e.call.name async for e in stream if isinstance(e, ToolCallEvent)]
    assert names == ["researcher", "lookup"]
    assert stream.result is not None and stream.result.output == "done"


async def test_concurrent_members_run_side_by_side() -> None:
    first = researcher([call("lookup", {"q": "a"}), "a done"])
    second = Agent(ScriptedModel(["b done"]), name="second")
    boss = Agent(ScriptedModel([[call("researcher", {"input": "a"}),
                                 call("second", {"input": "b"})], "both"]),
                 tools=[first.as_tool(concurrent=True), second.as_tool(concurrent=True)])
    result = await boss.run("go")
    assert sorted(r.agent_name for r in result.runs) == ["researcher", "second"]
    assert [c.result for c in result.tool_calls[:2]] == ["a done", "b done"]
    check_team(result)


def test_bad_tool_names_are_configuration_errors() -> None:
    agent = Agent(ScriptedModel(["x"]), name="has space")
    with pytest.raises(ConfigurationError) as caught:
        agent.as_tool()
    assert "as_tool(name=...)" in str(caught.value)
    assert agent.as_tool(name="ok_name").name == "ok_name"
    with pytest.raises(ConfigurationError):
        agent.as_tool(name="fine", max_calls=0)


async def test_a_member_that_raises_a_structured_failure_keeps_the_team_well_formed() -> None:
    strict = Agent(ScriptedModel([call("final_result", {"team": 1})] * 3), name="strict",
                   output=Output(Verdict))
    boss = Agent(ScriptedModel([call("strict", {"input": "x"}), "could not"]),
                 tools=[strict.as_tool()])
    result = await boss.run("go")
    assert "MAX_ATTEMPTS" in (result.tool_calls[0].error or "")
    check_team(result)
    with pytest.raises(AgentError):
        await strict.run("direct")  # the agent still runs on its own


async def test_the_teams_approval_policy_decides_a_members_calls() -> None:
    from toolcycle import Approve, Deny

    @tool(requires_approval=True)
    def delete(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    def policy(request: Any, ctx: Any) -> Any:
        path = request.arguments.get("path", "")  # (the janitor's own call has none)
        return Deny("system files are off limits") if path.startswith("/etc") else Approve()

    janitor = Agent(ScriptedModel([[call("delete", {"path": "/etc/passwd"}),
                                    call("delete", {"path": "/tmp/a"})], "cleaned /tmp/a"]),
                    tools=[delete], name="janitor")
    boss = Agent(ScriptedModel([call("janitor", {"input": "clean up"}), "done"]),
                 tools=[janitor.as_tool()], approval=policy)
    result = await boss.run("tidy")
    member = result.runs[0]
    assert [c.error or c.result for c in member.tool_calls[:2]] == [
        "system files are off limits", "deleted /tmp/a"]
    assert member.tool_calls[0].approval is not None
    assert member.tool_calls[0].approval["by"] == "policy"
    check_team(result)


async def test_the_trace_store_keeps_the_nested_runs(tmp_path: Any) -> None:
    from toolcycle.tracing.store import TraceStore

    store = TraceStore(str(tmp_path / "traces.db"))
    helper = researcher([call("lookup", {"q": "x"}), "x is 42"])
    boss = Agent(ScriptedModel([call("researcher", {"input": "find x"}), "done"]),
                 tools=[helper.as_tool()], trace_store=store)
    result = await boss.run("go")
    stored = store.get(result.run_id)
    assert stored is not None
    nested = stored.tool_calls[0].run
    assert nested is not None and nested.agent_name == "researcher"
    assert nested.tool_calls[0].result == "found x"
    assert stored.usage == result.usage
