"""The OpenAI Agents SDK's ``as_tool`` and handoffs, measured as ``bench/teams.py`` measures
toolcycle's (same scenarios, same JSON lines, ``"peer": "openai-agents"``).

Runs in the peer's own venv (../shared/bench-peers/openai_agents/README.md: openai-agents
0.24.0 on Python 3.11), tracing off; ``bench/run_teams.sh`` interleaves it with toolcycle.
This file imports nothing of toolcycle.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import time
from typing import Any

from agents import Agent, RunConfig, Runner, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

set_tracing_disabled(True)
_IDS = itertools.count()  # call ids unique across the chain's agents (the SDK checks)
CONFIG = RunConfig(tracing_disabled=True)


def _text(text: str) -> ModelResponse:
    out = [ResponseOutputMessage(id="msg", type="message", role="assistant", status="completed",
                                 content=[ResponseOutputText(type="output_text", text=text,
                                                             annotations=[])])]
    return ModelResponse(output=out, usage=Usage(requests=1, input_tokens=10, output_tokens=5,
                                                 total_tokens=15), response_id=None)


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> ModelResponse:
    out = [ResponseFunctionToolCall(type="function_call", id=f"fc_{call_id}", call_id=call_id,
                                    name=name, arguments=json.dumps(arguments),
                                    status="completed")]
    return ModelResponse(output=out, usage=Usage(requests=1, input_tokens=10, output_tokens=5,
                                                 total_tokens=15), response_id=None)


class Chain(Model):
    """Calls ``tool_name`` ``n`` times (one call per turn), then answers."""

    def __init__(self, n: int, tool_name: str, arguments: dict[str, Any]) -> None:
        self.n, self.tool_name, self.arguments, self.calls = n, tool_name, arguments, 0

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        if self.calls >= self.n:
            self.calls = 0
            return _text("done")
        self.calls += 1
        return _call(f"c{self.calls}", self.tool_name, self.arguments)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


class Answer(Model):
    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return _text("42")

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


class Transfer(Model):
    """Hands off to its one handoff (the SDK offers it as the tool ``transfer_to_<name>``)."""

    def __init__(self, target: str) -> None:
        self.target = target

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return _call(f"t{next(_IDS)}", f"transfer_to_{self.target}", {})

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


@function_tool
async def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def plain(n: int) -> Agent[Any]:
    return Agent(name="bench", model=Chain(n, "add", {"a": 1, "b": 2}), tools=[add])


def as_tool(n: int) -> Agent[Any]:
    helper = Agent(name="helper", model=Answer())
    return Agent(name="bench", model=Chain(n, "helper", {"input": "what is 6 x 7?"}),
                 tools=[helper.as_tool(tool_name="helper", tool_description="Answers.")])


def handoff(n: int) -> Agent[Any]:
    agent: Agent[Any] = Agent(name=f"h{n}", model=Answer())
    for index in range(n - 1, -1, -1):
        agent = Agent(name=f"h{index}", model=Transfer(agent.name), handoffs=[agent])
    return agent


async def measure(agent: Agent[Any], n: int, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        result = await Runner.run(agent, "go", max_turns=n + 5, run_config=CONFIG)
        elapsed = time.perf_counter() - started
        assert result.final_output in ("done", "42"), result.final_output
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
        line = {"peer": "openai-agents", "scenario": scenario, "metric": "us_per_turn",
                "value": round(value, 1), "unit": "us", "n": args.n, "rep": args.rep_id}
        print(json.dumps(line))
        if scenario != "plain":
            print(json.dumps(dict(line, metric="extra_us",
                                  value=round(value - figures["plain"], 1))))


if __name__ == "__main__":
    main()
