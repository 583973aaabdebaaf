"""Every way a server can fail becomes exactly one error observation for the call it concerns
(the ScriptedModel rejects a history with a call left unanswered or answered twice), and no
server process outlives its MCPTools. The server is tests/mcp/hostile_server.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import HOSTILE, PYTHON, alive, child_pids

from toolcycle import Agent, Limits
from toolcycle.context import CancelToken
from toolcycle.errors import Cancelled, ConfigurationError, ToolsUnavailable
from toolcycle.mcp import MCPTools
from toolcycle.testing import ScriptedModel, call
from toolcycle.tracing.store import TraceStore


def hostile(log: Path, **options: Any) -> MCPTools:
    env = {"HOSTILE_LOG": str(log)}
    env.update({k: str(v) for k, v in options.pop("env", {}).items()})
    return MCPTools.stdio(PYTHON, HOSTILE, env=env, **options)


def received(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def observations(result: Any) -> list[tuple[str, str, bool]]:
    return [(p.name, p.content, p.is_error) for m in result.messages for p in m.parts
            if p.kind == "tool_result"]


async def run_calls(tools: MCPTools, *calls: Any, **run_options: Any) -> Any:
    model = ScriptedModel([*([c] for c in calls), "done"])
    agent = Agent(model, tools=[tools])
    return await agent.run("go", **run_options)


async def test_errors_reported_by_the_server(tmp_path: Path) -> None:
    async with hostile(tmp_path / "log") as tools:
        result = await run_calls(tools, call("fail", {}), call("error", {}),
                                 call("echo", {"text": 5}), call("echo", {"text": "still up"}))
    (_, fail, e1), (_, error, e2), (_, invalid, e3), (_, echo, e4) = observations(result)
    assert e1 and fail == "Tool `fail` failed: MCPToolError: the disk is full"
    assert e2 and "MCPServerError" in error and "internal: database locked" in error
    assert e3 and invalid.startswith("Invalid arguments for `echo`")
    assert not e4 and echo == "still up"
    calls = [m["params"]["name"] for m in received(tmp_path / "log")
             if m.get("method") == "tools/call"]
    assert calls == ["fail", "error", "echo"]  # the invalid call was never sent


async def test_crash_mid_call_is_noticed_and_the_server_restarted(tmp_path: Path) -> None:
    tools = hostile(tmp_path / "log", call_timeout=60)
    await tools.get_tools()
    (first,) = child_pids(HOSTILE)
    result = await run_calls(tools, call("crash", {}), call("echo", {"text": "back"}))
    (_, crash, crashed), (_, echo, failed) = observations(result)
    assert crashed and "closed the connection" in crash
    assert "fatal: crashed on purpose" in crash  # the server's last words, from its stderr
    assert not failed and echo == "back"
    (second,) = child_pids(HOSTILE)
    assert second != first and not alive(first)
    await tools.close()
    assert not alive(second)


async def test_lost_too_often_is_refused_clearly(tmp_path: Path) -> None:
    tools = hostile(tmp_path / "log", max_restarts=0)
    result = await run_calls(tools, call("crash", {}), call("echo", {"text": "x"}))
    (_, _, crashed), (_, refused, is_error) = observations(result)
    assert crashed and is_error and "it is not restarted again" in refused
    await tools.close()
    assert not child_pids(HOSTILE)


async def test_call_timeout_cancels_on_the_server(tmp_path: Path) -> None:
    async with hostile(tmp_path / "log", call_timeout=0.5) as tools:
        result = await run_calls(tools, call("hang", {}), call("echo", {"text": "ok"}))
    (_, hang, timed_out), (_, echo, _) = observations(result)
    assert timed_out and hang == "Tool `hang` timed out after 0.5 s."
    assert echo == "ok"
    messages = received(tmp_path / "log")
    (request,) = [m for m in messages if m.get("params", {}).get("name") == "hang"]
    cancels = [m for m in messages if m.get("method") == "notifications/cancelled"]
    assert [c["params"]["requestId"] for c in cancels] == [request["id"]]


async def test_cancelling_the_run_sends_the_cancel_notification(tmp_path: Path) -> None:
    token = CancelToken()
    async with hostile(tmp_path / "log") as tools:
        model = ScriptedModel([call("hang", {}), "never"])
        agent = Agent(model, tools=[tools])
        asyncio.get_running_loop().call_later(1.0, token.cancel, "user stop")
        with pytest.raises(Cancelled) as caught:
            await agent.run("go", cancel_token=token)
        (record,) = caught.value.result.trace.steps[0].tool_calls  # type: ignore[union-attr]
        assert "not completed" in (record.error or "")
        for _ in range(50):  # the notification is written before the cancel returns
            if any(m.get("method") == "notifications/cancelled"
                   for m in received(tmp_path / "log")):
                break
            await asyncio.sleep(0.05)
        else:
            pytest.fail("no notifications/cancelled reached the server")
    assert not child_pids(HOSTILE)


async def test_garbage_fails_the_call_at_once(tmp_path: Path) -> None:
    async with hostile(tmp_path / "log", call_timeout=120) as tools:
        result = await run_calls(tools, call("garbage", {}), call("echo", {"text": "ok"}))
    (_, garbage, is_error), (_, echo, _) = observations(result)
    assert is_error and "not valid JSON-RPC" in garbage  # at once, not a 120 s timeout
    assert echo == "ok"


async def test_stray_garbage_between_calls_fails_no_later_call(tmp_path: Path) -> None:
    async with hostile(tmp_path / "log") as tools:
        first = await run_calls(tools, call("garbage_after", {}))
        await asyncio.sleep(0.3)  # the stray line has been read by now
        second = await run_calls(tools, call("echo", {"text": "fine"}))
    assert observations(first) == [("garbage_after", "answered", False)]
    assert observations(second) == [("echo", "fine", False)]


async def test_flood_and_huge_results(tmp_path: Path) -> None:
    async with hostile(tmp_path / "log") as tools:
        result = await run_calls(tools, call("flood", {}), call("huge", {}),
                                 limits=Limits(max_observation_chars=1000))
    (_, flood, _), (_, huge, is_error) = observations(result)
    assert flood == "flood done"
    assert not is_error and huge.startswith("x" * 1000)
    assert huge.endswith("[... truncated: 1999000 of 2000000 characters cut]")


async def test_list_changed_refreshes_within_the_run_and_dotted_names_map_back(
        tmp_path: Path) -> None:
    """The server announces a new tool while the run goes on: the very next request offers
    it, and the model calls it in the same run (under its provider-safe name)."""
    tools = hostile(tmp_path / "log")
    model = ScriptedModel([call("grow", {}), call("late_tool", {}), "done"])
    async with Agent(model, tools=[tools]) as agent:
        result = await agent.run("grow, then use the new tool")
    assert "late_tool" not in {d.name for d in model.requests[0].settings.tools}
    assert "late_tool" in {d.name for d in model.requests[1].settings.tools}
    assert observations(result) == [("grow", observations(result)[0][1], False),
                                    ("late_tool", "late tool ran", False)]
    assert tools.names.original("late_tool") == "late.tool"
    sent = [m["params"]["name"] for m in received(tmp_path / "log")
            if m.get("method") == "tools/call"]
    assert sent == ["grow", "late.tool"]
    lists = [m for m in received(tmp_path / "log") if m.get("method") == "tools/list"]
    assert len(lists) == 2  # once, then once after the notification


async def test_startup_timeout_at_the_first_run(tmp_path: Path) -> None:
    """No tool list was ever made: the run ends at its start, before any model request, with
    a documented error whose partial result carries the finished trace (stored too)."""
    tools = hostile(tmp_path / "log", startup_timeout=1, env={"HOSTILE_START_DELAY": 30})
    store = TraceStore(tmp_path / "traces.db")
    model = ScriptedModel(["never asked"])
    agent = Agent(model, tools=[tools], trace_store=store)
    with pytest.raises(ToolsUnavailable, match=r"did not start within 1\.0 s") as caught:
        await agent.run("go")
    result = caught.value.result
    assert result is not None and result.termination.reason == "error"
    assert result.usage.requests == 0 and model.requests == []
    stored = store.get(result.run_id)
    assert stored is not None and stored.status == "failure"
    assert stored.error is not None and stored.error["code"] == "TOOLS_UNAVAILABLE"
    assert not child_pids(HOSTILE)  # the slow server was stopped, not left behind
    await agent.close()


async def test_a_command_that_does_not_exist_ends_the_run_with_its_trace(tmp_path: Path
                                                                         ) -> None:
    store = TraceStore(tmp_path / "traces.db")
    agent = Agent(ScriptedModel(["never asked"]),
                  tools=[MCPTools.stdio("/nonexistent/mcp-server", startup_timeout=5)],
                  trace_store=store)
    with pytest.raises(ToolsUnavailable, match="nonexistent") as caught:
        await agent.run("go")
    assert caught.value.result is not None
    assert store.get(caught.value.result.run_id) is not None
    await agent.close()


async def test_tools_listed_before_stay_offered_when_the_server_cannot_start(
        tmp_path: Path) -> None:
    """Listed once, then the server is gone for good: the next run still offers the tools,
    and each call reaches the model as one error observation with the server's message."""
    tools = hostile(tmp_path / "log", max_restarts=0)
    # one turn: grow (the server says its list changed: list again before the next request),
    # then crash (it may not be restarted)
    model = ScriptedModel([[call("grow", {}), call("crash", {})],
                           call("echo", {"text": "x"}), "done"])
    async with Agent(model, tools=[tools]) as agent:
        result = await agent.run("go")
    (_, _, grew), (_, _, crashed), (name, refused, is_error) = observations(result)
    assert not grew and crashed
    assert name == "echo" and is_error and "MCPServerError" in refused
    assert [d.name for d in model.requests[1].settings.tools] == [
        d.name for d in model.requests[0].settings.tools]  # the old list, offered again
    lists = [m for m in received(tmp_path / "log") if m.get("method") == "tools/list"]
    assert len(lists) == 1  # the second listing could not happen


async def test_startup_timeout_on_restart_is_one_observation(tmp_path: Path) -> None:
    tools = hostile(tmp_path / "log", startup_timeout=1, env={"HOSTILE_SLOW_RESTART": 30})
    async with tools:
        result = await run_calls(tools, call("crash", {}), call("echo", {"text": "x"}))
    (_, _, crashed), (_, slow, is_error) = observations(result)
    assert crashed and is_error and "did not start within 1.0 s" in slow
    assert not child_pids(HOSTILE)


async def test_crash_during_initialize_at_the_first_run(tmp_path: Path) -> None:
    tools = hostile(tmp_path / "log", env={"HOSTILE_INIT_CRASH": "always"})
    store = TraceStore(tmp_path / "traces.db")
    model = ScriptedModel(["never asked"])
    agent = Agent(model, tools=[tools], trace_store=store)
    with pytest.raises(ToolsUnavailable) as caught:
        await agent.run("go")
    result = caught.value.result
    assert result is not None and model.requests == []
    stored = store.get(result.run_id)
    assert stored is not None and stored.error is not None
    assert stored.error["code"] == "TOOLS_UNAVAILABLE"
    assert not child_pids(HOSTILE)
    await agent.close()


async def test_crash_during_initialize_on_restart_is_one_observation(tmp_path: Path) -> None:
    tools = hostile(tmp_path / "log", env={"HOSTILE_INIT_CRASH": "restart"})
    async with tools:
        result = await run_calls(tools, call("crash", {}), call("echo", {"text": "x"}))
    (_, _, crashed), (name, failed, is_error) = observations(result)
    assert crashed and name == "echo" and is_error and "MCPServerError" in failed
    assert not child_pids(HOSTILE)


def test_bad_options_are_listed_at_construction() -> None:
    with pytest.raises(ConfigurationError) as caught:
        MCPTools.stdio(PYTHON, HOSTILE, startup_timeout=0, call_timeout=float("nan"),
                       max_restarts=-1)
    assert len(caught.value.problems) == 3
    with pytest.raises(ConfigurationError, match="url must be"):
        MCPTools.http("ftp://example.org/mcp")
