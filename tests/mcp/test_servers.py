"""Runs through real MCP servers nobody here wrote: `mcp-server-time` (PyPI, stdio),
`@modelcontextprotocol/server-everything` (npm, stdio and streamable HTTP) and the SDK's own
quickstart server, each with the protocol-checking ScriptedModel."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from conftest import (
    HOSTILE,
    PYTHON,
    SDK_EXAMPLE,
    alive,
    child_pids,
    everything_path,
    free_port,
    http_server,
)

from toolcycle import Agent, Limits
from toolcycle.mcp import MCPTools
from toolcycle.testing import ScriptedModel, call


def results(result: object) -> dict[str, tuple[str, bool]]:
    out = {}
    for message in result.messages:  # type: ignore[attr-defined]
        for part in message.parts:
            if part.kind == "tool_result":
                out[part.name] = (part.content, part.is_error)
    return out


async def test_time_server_run_and_close_by_pid() -> None:
    tools = MCPTools.stdio(PYTHON, "-m", "mcp_server_time")
    model = ScriptedModel([
        call("get_current_time", {"timezone": "Europe/Paris"}),
        [call("convert_time", {"source_timezone": "UTC", "time": "12:00",
                               "target_timezone": "Asia/Tokyo"}),
         call("get_current_time", {"tz": "Europe/Paris"})],  # checked here, never sent
        "It is 21:00 in Tokyo.",
    ])
    agent = Agent(model, tools=[tools])
    assert not tools.running  # lazy: nothing starts before a run
    result = await agent.run("What time is it in Tokyo when it is noon UTC?")
    assert result.output == "It is 21:00 in Tokyo."
    (_, now, e1), (_, converted, e2), (_, invalid, e3) = [
        (p.name, p.content, p.is_error) for m in result.messages for p in m.parts
        if p.kind == "tool_result"]
    assert not e1 and json.loads(now)["timezone"] == "Europe/Paris"  # structured -> JSON
    assert not e2 and "T21:00" in json.loads(converted)["target"]["datetime"]
    assert e3 and "Invalid arguments for `get_current_time`" in invalid
    assert '"timezone" is a required property' in invalid
    # the tool definitions the model saw are the server's schemas
    sent = {d.name: d for d in model.requests[0].settings.tools}
    assert sent["get_current_time"].parameters["required"] == ["timezone"]
    assert [r.name for r in result.trace.steps[0].tool_calls] == ["get_current_time"]
    pids = child_pids("mcp_server_time")
    assert len(pids) == 1
    await agent.close()
    assert not any(alive(pid) for pid in pids)
    assert not child_pids("mcp_server_time")


async def test_everything_stdio_content_kinds_and_errors() -> None:
    tools = MCPTools.stdio("node", everything_path(), "stdio")
    model = ScriptedModel([
        [call("echo", {"message": "hi"}), call("get-tiny-image", {}),
         call("get-structured-content", {"location": "New York"}),
         call("get-resource-links", {"count": 2}),
         call("get-resource-reference", {"resourceType": "Text", "resourceId": 1}),
         call("get-sum", {"a": "one", "b": 2})],
        "done",
    ])
    async with Agent(model, tools=[tools]) as agent:
        result = await agent.run("exercise")
    seen = results(result)
    assert seen["echo"] == ("Echo: hi", False)
    image, _ = seen["get-tiny-image"]
    assert "[image: image/png, " in image and " bytes, sha256 " in image
    # the picture itself goes to the model as a media part (docs/media.md), named in the text
    (picture,) = next(p for m in result.messages for p in m.results
                      if p.name == "get-tiny-image").media
    assert picture.media_type == "image/png" and picture.data.startswith(b"\x89PNG")
    assert picture.describe() in image
    assert result.trace.tool_calls[1].media == [picture.summary()]
    structured, _ = seen["get-structured-content"]
    assert json.loads(structured.splitlines()[0])["temperature"] is not None
    links, _ = seen["get-resource-links"]
    assert links.count("[resource link: ") == 2 and "<demo://resource/" in links
    reference, _ = seen["get-resource-reference"]
    assert "[resource <demo://resource/static/document/" in reference or "[resource <" in reference
    invalid, is_error = seen["get-sum"]
    assert is_error and "Invalid arguments for `get-sum`" in invalid


async def test_everything_over_streamable_http(everything_http: str) -> None:
    tools = MCPTools.http(everything_http, headers={"X-Test": "toolcycle"})
    model = ScriptedModel([call("get-sum", {"a": 2, "b": 3}), call("echo", {"message": "x"}),
                           "5"])
    agent = Agent(model, tools=[tools])
    result = await agent.run("2+3?")
    seen = results(result)
    assert "5" in seen["get-sum"][0] and not seen["get-sum"][1]
    assert seen["echo"] == ("Echo: x", False)
    assert tools.running
    await agent.close()
    assert not tools.running


async def test_sdk_example_server_and_tools_listed_once() -> None:
    tools = MCPTools.stdio(PYTHON, SDK_EXAMPLE)
    model = ScriptedModel([call("add", {"a": 1, "b": 2}), "3", call("add", {"a": 2, "b": 2}),
                           "4"])
    async with Agent(model, tools=[tools]) as agent:
        first = await agent.run("1+2")
        listed = await tools.get_tools()
        second = await agent.run("2+2")
        assert await tools.get_tools() is listed  # no list_changed: not listed again
    assert json.loads(results(first)["add"][0]) == {"result": 3}
    assert json.loads(results(second)["add"][0]) == {"result": 4}


async def test_results_are_truncated_to_the_runs_budget() -> None:
    model = ScriptedModel([call("get-env", {}), "ok"])
    async with Agent(model, tools=[MCPTools.stdio("node", everything_path(), "stdio")]) as agent:
        result = await agent.run("env", limits=Limits(max_observation_chars=50))
    content, _ = results(result)["get-env"]
    assert content.startswith(content[:50]) and "[... truncated: " in content


async def test_list_changed_on_the_2026_protocol_via_listen() -> None:
    tools = MCPTools.stdio(PYTHON, str(Path(SDK_EXAMPLE).with_name("sdk_growing_server.py")))
    model = ScriptedModel([call("grow", {}), "grown", call("late_tool", {}), "done"])
    async with Agent(model, tools=[tools]) as agent:
        await agent.run("grow")
        for _ in range(100):  # the event arrives on the listen stream, after the call's reply
            if any(t.name == "late_tool" for t in await tools.get_tools()):
                break
            await asyncio.sleep(0.02)
        result = await agent.run("use it")
    assert "late_tool" in {d.name for d in model.requests[-1].settings.tools}
    assert results(result)["late_tool"] == ('{"result":"late tool ran"}', False)


async def test_streaming_run_connects_when_iterated() -> None:
    tools = MCPTools.stdio(PYTHON, HOSTILE)
    async with Agent(ScriptedModel([call("echo", {"text": "7"}), "7"]), tools=[tools]) as agent:
        stream = agent.stream("2+5")
        assert not tools.running
        kinds = [type(event).__name__ async for event in stream]
    assert stream.result is not None and stream.result.output == "7"
    assert "ToolResultEvent" in kinds


def test_run_sync_leaves_no_orphan_at_exit() -> None:
    """A script that never closes its agent: the server still ends with the interpreter."""
    script = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from conftest import child_pids
from toolcycle import Agent
from toolcycle.mcp import MCPTools
from toolcycle.testing import ScriptedModel, call
agent = Agent(ScriptedModel([call("echo", {{"text": "2"}}), "2"]),
              tools=[MCPTools.stdio(sys.executable, {HOSTILE!r})])
print(agent.run_sync("1+1").output)
print(*child_pids("hostile_server"))
"""
    done = subprocess.run([PYTHON, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    output, pids = done.stdout.splitlines()
    assert output == "2" and pids
    assert not any(alive(int(pid)) for pid in pids.split())


async def test_http_server_killed_mid_call() -> None:
    """The server dies during a long call: that call fails well before its timeout, and the
    next call's reconnection fails with its own clear error."""
    port = free_port()
    others = child_pids("streamableHttp")  # the module's own HTTP server may be running
    with http_server(["node", everything_path(), "streamableHttp"], port,
                     env={**os.environ, "PORT": str(port)}) as url:
        tools = MCPTools.http(url, call_timeout=60, startup_timeout=5)
        await tools.get_tools()
        (pid,) = child_pids("streamableHttp") - others
        model = ScriptedModel([call("trigger-long-running-operation", {"duration": 30,
                                                                       "steps": 3}),
                               call("echo", {"message": "x"}), "done"])
        asyncio.get_running_loop().call_later(0.5, os.kill, pid, signal.SIGKILL)
        async with Agent(model, tools=[tools]) as agent:
            result = await agent.run("go")
    (long, lost), (echo, refused) = [
        (p.content, p.is_error) for m in result.messages for p in m.parts
        if p.kind == "tool_result"]
    assert lost and "the server closed the connection" in long
    assert refused and "could not start or connect" in echo


def test_a_tools_module_exporting_mcp_tools_serves_toolcycle_run(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`toolcycle run SPEC --tools MODULE`: an MCPTools object in the module joins the spec's
    tools (a late-bound library may hold a server), and its process ends with the command."""
    from toolcycle.cli import main

    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("TOOLCYCLE_TRACE_DB", str(tmp_path / "traces.db"))
    code = main(["run", "examples/hello_world.gram", "--tools", "tests/mcp/time_tools.py",
                 "--model", "python:tests.spec.cli_models:time_model", "Hello, what time is it?"])
    out, err = capsys.readouterr()
    assert code == 0, err
    greeting, now = out.strip().split(" | ")
    assert greeting == "Hello, Ada!"
    assert json.loads(now)["timezone"] == "UTC"
    assert not child_pids("mcp_server_time")


@pytest.mark.parametrize("trust", [False, True])
async def test_a_trusted_servers_read_only_hints_become_tool_flags(trust: bool) -> None:
    """mcp-server-time annotates both tools readOnlyHint/idempotentHint; believed only when
    asked (the MCP spec calls annotations untrusted), so a routine may then call them."""
    async with MCPTools.stdio(PYTHON, "-m", "mcp_server_time", trust_hints=trust) as tools:
        listed = {t.name: t for t in await tools.get_tools()}
    assert set(listed) == {"get_current_time", "convert_time"}
    assert all(t.policy.read_only is trust and t.policy.idempotent is trust
               for t in listed.values())


@pytest.mark.parametrize(("annotations", "flags"), [
    ({"readOnlyHint": True}, {"read_only": True}),
    ({"readOnlyHint": True, "idempotentHint": True}, {"read_only": True, "idempotent": True}),
    ({"readOnlyHint": "true"}, {}),  # only a JSON true
    ({"readOnlyHint": 1}, {}),
    ({"readOnlyHint": True, "destructiveHint": True}, {}),  # a contradiction: neither
    ({"destructiveHint": False}, {}),
    ("read-only", {}),
    (None, {}),
])
def test_hints_are_read_strictly(annotations: object, flags: dict[str, bool]) -> None:
    from toolcycle.mcp.tools import hinted_policy

    listed = {"name": "t"} if annotations is None else {"name": "t", "annotations": annotations}
    assert hinted_policy(listed) == flags


def test_trust_hints_must_be_a_bool() -> None:
    from toolcycle import ConfigurationError

    with pytest.raises(ConfigurationError, match="trust_hints must be True or False"):
        MCPTools.stdio(PYTHON, "-m", "mcp_server_time", trust_hints="yes")
