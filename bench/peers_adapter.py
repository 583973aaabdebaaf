"""toolcycle in the shared peer benchmark harness (../shared/bench-peers/common/harness.py).

Run beside the peers with `bench/run_peers.sh` (interleaved, same machine, same harness), or
alone: `.venv/bin/python bench/peers_adapter.py --scenarios S1,MEM,S2,S3,S4`.

The scripted model reads only the last tool result (O(1)), like every peer's adapter. The agent
is built with `parallel_tools=True` because the peers run all calls of a turn concurrently by
default (toolcycle's default is emission order, which would make S2 serial); sync tools run in
toolcycle's worker threads (the default), as in pydantic-ai and the OpenAI Agents SDK.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HARNESS = Path(os.environ.get("BENCH_PEERS", Path(__file__).resolve().parents[2] / "shared"
                              / "bench-peers")) / "common"
sys.path.insert(0, str(HARNESS))
import harness  # type: ignore[import-not-found]  # noqa: E402


class Toolcycle(harness.PeerBase):  # type: ignore[misc]
    name = "toolcycle"
    async_api = True
    async_tools = True
    parallel_tools = True
    stateful_agent = False

    def load(self) -> None:
        global Agent, Limits, Message, ModelBase, ToolCall, Usage, TextPart
        from toolcycle import Agent, Limits, Message, ToolCall, Usage
        from toolcycle.messages import TextPart
        from toolcycle.models.base import Model as ModelBase

    def versions(self) -> dict[str, str]:
        from importlib.metadata import version

        return {p: version(p) for p in ("toolcycle", "pydantic", "jsonschema-rs")}

    def notes(self) -> dict[str, str]:
        return {"parallel_tools": "True (peers' default); toolcycle's own default is ordered",
                "python": sys.version.split()[0]}

    def make_agent(self, tools: list[Callable[..., Any]], script: Any) -> Any:
        class Scripted(ModelBase):
            name = "scripted"

            async def request(self, messages: Sequence[Any], settings: Any) -> Any:
                last = messages[-1]
                value = last.parts[-1].content if last.role == "tool" else None
                decision = script.decide(value)
                usage = Usage(input_tokens=10, output_tokens=5)
                if isinstance(decision, str):
                    return Message("assistant", [TextPart(decision)], usage=usage)
                return Message("assistant", [ToolCall(c.id, c.name, c.args, "")
                                             for c in decision], usage=usage)

        n = script.n if script.kind == "chain" else 1
        return Agent(Scripted(), tools=tools, parallel_tools=True,
                     limits=Limits(max_iterations=n + 5))

    async def arun(self, agent: Any, script: Any) -> str:
        result = await agent.run("go")
        return str(result.output)


if __name__ == "__main__":
    harness.main(Toolcycle)
