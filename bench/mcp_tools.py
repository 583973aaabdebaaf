"""MCP tools: time to the first call and the cost of each call, against a stdio server.

Run: `nice -n 10 .venv/bin/python bench/mcp_tools.py [--calls N] [--repeats R]`. Prints one line per
figure (median of R repeats). The server is the SDK's own quickstart server
(tests/mcp/sdk_example_server.py: one `add(a, b)` tool, MCPServer over stdio).

- first call: from nothing running to the first `add` result in hand. Raw: the SDK's
  `Client(StdioServerParameters(...))` entered, then `call_tool`. toolcycle: `agent.run` of a
  scripted model whose first reply calls `add`, timed until that call's result event (the
  server is started, its tools listed and turned into tools inside the run).
- per call: N sequential `add` calls on a warm connection. Raw: `call_tool` in a loop.
  toolcycle: one agent run whose single turn makes N `add` calls (validated, run, observed,
  traced), minus the same run against a local `add` tool, so what is left is what MCP adds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from toolcycle import Agent, tool
from toolcycle.events import ToolResultEvent
from toolcycle.mcp import MCPTools
from toolcycle.testing import ScriptedModel, call

SERVER = str(Path(__file__).resolve().parents[1] / "tests" / "mcp" / "sdk_example_server.py")


async def raw_first_call() -> float:
    started = time.perf_counter()
    async with Client(StdioServerParameters(command=sys.executable, args=[SERVER])) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
        return time.perf_counter() - started


async def toolcycle_first_call() -> float:
    first: list[float] = []

    def on_tool_result(event: ToolResultEvent) -> None:
        first.append(time.perf_counter())

    model = ScriptedModel([call("add", {"a": 1, "b": 2}), "3"])
    started = time.perf_counter()
    async with Agent(model, tools=[MCPTools.stdio(sys.executable, SERVER)],
                     callbacks={"on_tool_result": on_tool_result}) as agent:
        await agent.run("1+2")
    return first[0] - started


async def raw_per_call(calls: int) -> float:
    async with Client(StdioServerParameters(command=sys.executable, args=[SERVER])) as client:
        await client.call_tool("add", {"a": 0, "b": 0})
        started = time.perf_counter()
        for i in range(calls):
            await client.call_tool("add", {"a": i, "b": 1})
        return (time.perf_counter() - started) / calls


async def run_with(tools: list[Any], calls: int) -> float:
    model = ScriptedModel([[call("add", {"a": i, "b": 1}) for i in range(calls)], "done"])
    agent = Agent(model, tools=tools)
    warm = ScriptedModel([call("add", {"a": 0, "b": 0}), "warm"])
    await Agent(warm, tools=tools).run("warm up")  # the server is started and listed here
    started = time.perf_counter()
    await agent.run("add them")
    return time.perf_counter() - started


async def toolcycle_per_call(calls: int) -> tuple[float, float]:
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    local = await run_with([add], calls)
    async with MCPTools.stdio(sys.executable, SERVER) as served:
        remote = await run_with([served], calls)
    return remote / calls, (remote - local) / calls


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    def median(values: list[float]) -> float:
        return statistics.median(values) * 1000.0

    raw_first = [await raw_first_call() for _ in range(args.repeats)]
    ours_first = [await toolcycle_first_call() for _ in range(args.repeats)]
    raw_call = [await raw_per_call(args.calls) for _ in range(args.repeats)]
    ours = [await toolcycle_per_call(args.calls) for _ in range(args.repeats)]
    print(f"first call, raw SDK Client:              {median(raw_first):8.1f} ms")
    print(f"first call, MCPTools in an agent run:    {median(ours_first):8.1f} ms")
    print(f"per call, raw SDK call_tool:             {median(raw_call):8.3f} ms")
    print(f"per call, MCPTools in an agent run:      {median([o[0] for o in ours]):8.3f} ms")
    print(f"per call, MCPTools minus a local tool:   {median([o[1] for o in ours]):8.3f} ms")
    print(f"({args.calls} sequential calls per figure, median of {args.repeats} repeats)")


if __name__ == "__main__":
    asyncio.run(main())
