"""What a team costs: an agent called as a tool and a handoff, against a plain tool call.

Scripted models (no LLM, no network): every microsecond is framework overhead. Prints JSON
lines ``{"peer", "scenario", "metric", "value", "unit", "rep"}``; ``bench/teams_peer.py`` prints
the same for the OpenAI Agents SDK's ``as_tool`` and handoffs, and ``bench/run_teams.sh`` runs
both interleaved, rep by rep, on the same machine.

Scenarios (N turns per run, one call per turn, then a final answer):
- ``plain``: the model calls a tool ``add(a, b)``;
- ``as_tool``: the model calls another agent as a tool; that agent answers at once (one
  request of its own), so a turn costs a call plus a whole nested run;
- ``handoff``: a chain of N agents, each handing the conversation to the next; the last answers.

Figures: wall µs per turn (median of the reps' best-of runs) and, for as_tool and handoff, the
extra over a plain call (``extra_us``).

Run: ``.venv/bin/python bench/teams.py [--n 50] [--reps 5] [--rep-id 0]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Sequence
from typing import Any

from toolcycle import Agent, Limits, Message, tool
from toolcycle.messages import TextPart, ToolCall, Usage
from toolcycle.models.base import Model, ModelSettings

LIMITS = Limits(max_iterations=1000, max_repeats=0)


class Chain(Model):
    """O(1) scripted model: calls ``tool_name`` until the run has made ``n`` calls, then
    answers (it reads only the count of tool messages it has seen, kept on itself)."""

    name = "chain"

    def __init__(self, n: int, tool_name: str, arguments: dict[str, Any]) -> None:
        self.n, self.tool_name, self.arguments, self.calls = n, tool_name, arguments, 0

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        if self.calls >= self.n:
            self.calls = 0
            return Message("assistant", [TextPart("done")], usage=Usage(10, 5, requests=1))
        self.calls += 1
        call = ToolCall.from_args(f"c{self.calls}", self.tool_name, self.arguments)
        return Message("assistant", [call], usage=Usage(10, 5, requests=1))


class Answer(Model):
    """Answers at once (a called agent, the last of a handoff chain)."""

    name = "answer"

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        return Message("assistant", [TextPart("42")], usage=Usage(10, 5, requests=1))


class Transfer(Model):
    """Hands the conversation to the agent its tool names (its one transfer tool)."""

    name = "transfer"

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        target = settings.tools[0].name
        return Message("assistant", [ToolCall.from_args(f"t{len(messages)}", target, {})],
                       usage=Usage(10, 5, requests=1))


@tool
async def add(a: int, b: int) -> int:
    """Add two numbers (async: no worker-thread hop, like the called agent's run)."""
    return a + b


def plain(n: int) -> Agent[Any, Any]:
    return Agent(Chain(n, "add", {"a": 1, "b": 2}), tools=[add], limits=LIMITS)


def as_tool(n: int) -> Agent[Any, Any]:
    helper = Agent(Answer(), name="helper", limits=LIMITS)
    return Agent(Chain(n, "helper", {"input": "what is 6 x 7?"}),
                 tools=[helper.as_tool(inline=True)], limits=LIMITS)


def handoff(n: int) -> Agent[Any, Any]:
    agent: Agent[Any, Any] = Agent(Answer(), name=f"h{n}", limits=LIMITS)
    for index in range(n - 1, -1, -1):
        agent = Agent(Transfer(), name=f"h{index}", handoffs=[agent], limits=LIMITS)
    return agent


async def measure(agent: Agent[Any, Any], n: int, runs: int) -> float:
    """Best-of ``runs`` wall µs per turn."""
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        result = await agent.run("go")
        elapsed = time.perf_counter() - started
        assert result.output in ("done", "42"), result.output
        best = min(best, elapsed)
    return best / (n + 1) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rep-id", type=int, default=0)
    args = parser.parse_args()
    figures: dict[str, float] = {}
    for scenario, build in (("plain", plain), ("as_tool", as_tool), ("handoff", handoff)):
        figures[scenario] = asyncio.run(measure(build(args.n), args.n, args.runs))
    for scenario, value in figures.items():
        line = {"peer": "toolcycle", "scenario": scenario, "metric": "us_per_turn",
                "value": round(value, 1), "unit": "us", "n": args.n, "rep": args.rep_id}
        print(json.dumps(line))
        if scenario != "plain":
            extra = dict(line, metric="extra_us", value=round(value - figures["plain"], 1))
            print(json.dumps(extra))


if __name__ == "__main__":
    main()
