"""One bad MCP server costs one call (or its own tools), never the run (issue 63's MCP-client
class). The servers are the fuzzer's hostile one (tests/fuzz/mcp_server.py) with a plan
written by hand; each test failed before its fix."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import HERE, PYTHON, ROOT, alive, child_pids, free_port, http_server

from toolcycle import Agent, CancelToken, Limits, tool
from toolcycle.errors import Cancelled, ToolsUnavailable
from toolcycle.mcp import MCPTools
from toolcycle.testing import ScriptedModel, call
from toolcycle.tracing.store import TraceStore

SERVER = str(ROOT / "tests" / "fuzz" / "mcp_server.py")
#: A bound on a run that should end by itself: reaching it means the run hung.
HANG = 60


def server(plan: dict[str, Any], **options: Any) -> MCPTools:
    return MCPTools.stdio(PYTHON, SERVER, env={"FUZZ_MCP_PLAN": json.dumps(plan)}, **options)


def observations(result: Any) -> list[tuple[str, str, bool]]:
    return [(p.name, p.content, p.is_error) for m in result.messages for p in m.parts
            if p.kind == "tool_result"]


@tool
def local_tool() -> str:
    """The agent's own tool."""
    return "local"


# -- r2-01: every interaction bounded by the run's timeout and cancel token ---------------------

async def test_a_listing_that_never_comes_ends_the_run_at_its_timeout() -> None:
    tools = server({"list": "hang"}, startup_timeout=HANG)
    async with Agent(ScriptedModel(["answered without tools"]), tools=[tools],
                     limits=Limits(timeout=1, on_limit="partial")) as agent:
        result = await asyncio.wait_for(agent.run("go"), HANG)
    assert result.termination.reason == "timeout"
    assert not child_pids(SERVER)


async def test_a_streamed_run_whose_listing_never_comes_ends_at_its_timeout() -> None:
    tools = server({"list": "hang"}, startup_timeout=HANG)
    async with Agent(ScriptedModel(["answered without tools"]), tools=[tools]) as agent:
        stream = agent.stream("go", limits=Limits(timeout=1, on_limit="partial"))

        async def drain() -> None:
            async for _ in stream:
                pass
        await asyncio.wait_for(drain(), HANG)
    assert stream.result.termination.reason == "timeout"


async def test_a_listing_that_never_comes_is_cancelled_by_the_token() -> None:
    token = CancelToken()
    asyncio.get_running_loop().call_later(0.5, token.cancel)
    async with Agent(ScriptedModel(["never asked"]),
                     tools=[server({"list": "hang"}, startup_timeout=HANG)]) as agent:
        with pytest.raises(Cancelled) as caught:
            await asyncio.wait_for(agent.run("go", cancel_token=token), HANG)
    assert caught.value.result is not None  # the run's trace, as for any cancelled run


async def test_the_listing_is_bounded_by_the_startup_timeout() -> None:
    async with Agent(ScriptedModel(["never asked"]),
                     tools=[server({"list": "hang"}, startup_timeout=1)]) as agent:
        with pytest.raises(ToolsUnavailable, match=r"tools/list: no answer within 1\.0 s"):
            await asyncio.wait_for(agent.run("go"), HANG)


async def test_a_listing_that_hangs_mid_run_ends_the_run_at_its_timeout() -> None:
    """Not AGENT_ERROR with the engine's internal LimitHit (r2-01 (c))."""
    tools = server({"list": "hang_later", "tools": [["changer", "object"]],
                    "calls": {"changer": "changed"}}, startup_timeout=HANG)
    model = ScriptedModel([call("changer", {}), "done"])
    async with Agent(model, tools=[tools], limits=Limits(timeout=2, on_limit="partial")
                     ) as agent:
        result = await asyncio.wait_for(agent.run("go"), HANG)
    assert result.termination.reason == "timeout"


# -- r2-02: names ----------------------------------------------------------------------------

async def test_a_name_listed_twice_costs_only_the_second() -> None:
    tools = server({"tools": [["dup", "object"], ["dup", "object"], ["ok_tool", "object"]]})
    model = ScriptedModel([call("ok_tool", {}), "done"] * 2)
    async with Agent(model, tools=[tools]) as agent:
        for _ in range(2):  # run after run
            result = await agent.run("go")
            assert result.status == "success"
            assert observations(result) == [("ok_tool", "ok_tool ok", False)]
    assert any("'dup'" in p and "more than once" in p for p in tools.problems)


async def test_a_name_taken_by_the_agents_own_tool_leaves_the_servers_out(
        tmp_path: Path) -> None:
    """At the first listing and at a later one (the server adds ``local.tool`` mid-run): the
    agent's tool keeps its name, the server's is left out, logged and recorded in the trace."""
    tools = server({"tools": [["local_tool", "object"], ["grow", "object"]],
                    "calls": {"grow": "changed"}})
    store = TraceStore(tmp_path / "traces.db")
    model = ScriptedModel([call("grow", {}), call("local_tool", {}), "done"])
    async with Agent(model, tools=[tools, local_tool], trace_store=store) as agent:
        result = await agent.run("go")
    assert result.status == "success"
    assert observations(result)[1] == ("local_tool", "local", False)
    stored = store.get(result.run_id)
    assert stored is not None
    (problem,) = stored.metadata["toolset_problems"]
    assert "'local_tool'" in problem and "left out" in problem


# -- r2-13: one bad schema costs that tool only ----------------------------------------------

@pytest.mark.parametrize("kind", ["string", "junk"])
async def test_a_tool_with_a_bad_schema_is_left_out_and_the_others_work(kind: str) -> None:
    tools = server({"tools": [["bad", kind], ["ok_tool", "object"]]})
    async with Agent(ScriptedModel([call("ok_tool", {}), "done"]), tools=[tools]) as agent:
        result = await agent.run("go")
    assert observations(result) == [("ok_tool", "ok_tool ok", False)]
    assert len(tools.problems) == 1 and "'bad'" in tools.problems[0]
    assert [t.name for t in await tools.get_tools()] == ["ok_tool"]


# -- r2-11: stderr kept as a bounded tail ------------------------------------------------------

def _held_in_deleted_files() -> int:
    held = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").endswith("(deleted)"):
                held += os.fstat(int(fd)).st_size
        except OSError:
            pass
    return held


async def test_stderr_is_a_bounded_tail_quoted_when_the_server_fails() -> None:
    before = _held_in_deleted_files()
    tools = server({"tools": [["noisy", "object"], ["die", "object"]],
                    "calls": {"noisy": "stderr", "die": "crash"}}, max_restarts=0)
    model = ScriptedModel([call("noisy", {}), call("noisy", {}), call("die", {}), "done"])
    async with Agent(model, tools=[tools]) as agent:
        result = await agent.run("go")
        assert _held_in_deleted_files() - before < 1_000_000  # 10 MB written
    *_, (name, crashed, is_error) = observations(result)
    assert name == "die" and is_error and "its stderr ends with: " in crashed
    assert crashed.endswith("fatal: die crashed; it is restarted on the next call")
    assert len(crashed) < 2000  # the end of 10 MB, not all of it


def test_the_stderr_tail_keeps_exactly_the_last_bytes() -> None:
    import random

    from toolcycle.mcp.stdio import StderrTail

    rng = random.Random(7)
    tail, written = StderrTail(limit=100), b""
    for _ in range(300):
        chunk = bytes(rng.choice(b"abc\n") for _ in range(rng.choice([0, 1, 7, 99, 100, 250])))
        tail.feed(chunk)
        written += chunk
        assert tail.text(1000) == written[-100:].decode().strip()
    assert tail.seen == len(written)


async def test_a_line_without_end_fails_its_call_not_the_memory() -> None:
    """70 MB without a newline: dropped as it streams in (64 MiB is the limit), the call fails
    at once, and the next call is answered."""
    tools = server({"tools": [["endless", "object"], ["echo", "object"]],
                    "calls": {"endless": "endless_line"}})
    model = ScriptedModel([call("endless", {}), call("echo", {}), "done"])
    async with Agent(model, tools=[tools]) as agent:
        result = await agent.run("go")
    (_, endless, failed), echo = observations(result)
    assert failed and "longer than 67108864 bytes" in endless
    assert echo == ("echo", "echo ok", False)


# -- r2-12: the server's children end with it ------------------------------------------------

@pytest.mark.parametrize("stubborn", [False, True])
async def test_the_servers_children_end_when_it_is_closed(tmp_path: Path,
                                                          stubborn: bool) -> None:
    """A server that exits when its stdin closes, and one that ignores it and SIGTERM."""
    pidfile = tmp_path / "children"
    tools = server({"children": 2, "grandchildren": True, "pidfile": str(pidfile),
                    "ignore_stdin_close": stubborn})
    async with Agent(ScriptedModel([call("echo", {}), "done"]), tools=[tools]) as agent:
        await agent.run("go")
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) == 4
    await asyncio.sleep(0.2)  # orphans are reaped by init, not by us
    assert [pid for pid in pids if alive(pid)] == []
    assert not child_pids(SERVER)


# -- r2-19: nothing left unretrieved ---------------------------------------------------------

def test_a_startup_timeout_logs_no_unretrieved_future(tmp_path: Path) -> None:
    client = textwrap.dedent(f"""
        import asyncio, json, sys
        from toolcycle import Agent, AgentError
        from toolcycle.mcp import MCPTools
        from toolcycle.testing import ScriptedModel

        async def main():
            tools = MCPTools.stdio(sys.executable, {SERVER!r}, startup_timeout=1,
                                   env={{"FUZZ_MCP_PLAN": json.dumps({{"init": "hang"}})}})
            agent = Agent(ScriptedModel(["done"]), tools=[tools])
            try:
                await agent.run("go")
            except AgentError as exc:
                print(exc.code)
            await agent.close()

        asyncio.run(main())
    """)
    run = subprocess.run([PYTHON, "-c", client], capture_output=True, text=True, timeout=HANG,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.stdout.strip() == "TOOLS_UNAVAILABLE"
    assert "never retrieved" not in run.stderr, run.stderr


# -- a server failing at start-up or teardown ------------------------------------------------

async def test_a_server_that_cannot_start_costs_only_its_own_tools(tmp_path: Path) -> None:
    store = TraceStore(tmp_path / "traces.db")
    broken = server({"init": "crash"})
    model = ScriptedModel([call("local_tool", {}), "done"])
    async with Agent(model, tools=[broken, local_tool], trace_store=store) as agent:
        result = await agent.run("go")
    assert result.status == "success" and result.output == "done"
    stored = store.get(result.run_id)
    assert stored is not None
    (problem,) = stored.metadata["toolset_problems"]
    assert "could not list its tools" in problem


class _BreaksAtTeardown:
    """A toolset whose server breaks while being stopped."""

    def __init__(self, tools: MCPTools) -> None:
        self.tools = tools

    async def get_tools(self) -> Any:
        return await self.tools.get_tools()

    async def close(self) -> None:
        await self.tools.close()
        raise OSError("the server's socket broke at teardown")


async def test_a_server_failing_at_teardown_costs_neither_the_result_nor_the_others() -> None:
    breaks, other = _BreaksAtTeardown(server({})), server({"tools": [["other", "object"]]})
    model = ScriptedModel([call("other", {}), "done"])
    async with Agent(model, tools=[breaks, other]) as agent:
        result = await agent.run("go")
    assert result.output == "done"  # the `async with` exit did not raise
    assert not other.running and not child_pids(SERVER)


# -- streamable HTTP: a session the server expired ---------------------------------------------

async def test_an_expired_http_session_is_initialised_again_and_the_call_retried() -> None:
    """The server ends every session between two calls (HTTP 404 for them from then on): the
    call goes out once more over a new session and succeeds; a renewal is no restart
    (``max_restarts=0`` does not refuse it)."""
    from urllib.request import urlopen

    port = free_port()
    base = f"http://127.0.0.1:{port}"

    def expire_then_add(messages: Any, settings: Any) -> Any:
        urlopen(f"{base}/expire", data=b"").read()  # (the server is another process)
        return call("add", {"a": 2, "b": 3})

    model = ScriptedModel([call("add", {"a": 1, "b": 2}), expire_then_add, "done"])
    with http_server([PYTHON, str(HERE / "expiring_http_server.py"), str(port)], port):
        tools = MCPTools.http(f"{base}/mcp", max_restarts=0)
        async with Agent(model, tools=[tools]) as agent:
            result = await agent.run("go")
        opened = urlopen(f"{base}/initializations").read().decode()
    assert observations(result) == [("add", "3", False), ("add", "5", False)]
    assert opened == "2"
