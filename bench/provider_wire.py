"""Cost of turning the neutral history into each provider's wire form, per iteration.

The adapters cache the wire form of every message they have converted (keyed by the message
object) and of the tool tuple, so iteration n converts only the new messages; the request is
then just a list of references. This script times ``build_request`` (what an adapter does
before the SDK serializes and sends) at growing history lengths, warm (the same adapter across
iterations, as in a run) and cold (a fresh adapter each time: everything converted again).
No network: nothing is sent.

    .venv/bin/python bench/provider_wire.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

from toolcycle.messages import Message, ToolCall, ToolResult
from toolcycle.models.anthropic import AnthropicModel
from toolcycle.models.base import Model, ModelSettings, ToolDefinition
from toolcycle.models.openai import OpenAIFunctionsModel, OpenAIModel

TOOLS = tuple(
    ToolDefinition(
        f"tool_{i}",
        f"Tool number {i}.",
        {"type": "object", "properties": {"x": {"type": "integer"}}},
    )
    for i in range(8)
)
SETTINGS = ModelSettings(tools=TOOLS)


def history(iterations: int) -> list[Message]:
    messages = [Message.system("You are helpful. " * 50), Message.user("Start.")]
    for i in range(iterations):
        call = ToolCall.from_args(f"c{i}", "tool_1", {"x": i})
        messages.append(Message.assistant(f"Step {i}.", [call]))
        messages.append(Message.tool_results([ToolResult(f"c{i}", "tool_1", "ok " * 40)]))
    return messages


def adapters() -> dict[str, type[Model]]:
    return {"openai": OpenAIModel, "functions": OpenAIFunctionsModel, "anthropic": AnthropicModel}


def make(kind: type[Model]) -> Model:
    """An adapter with a stand-in client: ``build_request`` never touches the client, and
    building a real SDK client (~0.1 s) would swamp the cold figures."""
    return kind("bench", client=object())  # type: ignore[call-arg]


def per_request_us(kind: type[Model], iterations: int, warm: bool, repeats: int) -> list[float]:
    """Median-ready samples: µs for the request of the last iteration of a run this long."""
    messages = history(iterations)
    samples = []
    for _ in range(repeats):
        model = make(kind)
        if warm:  # what a run has done before its last iteration: every earlier request
            model.build_request(messages[:-2], SETTINGS)  # type: ignore[attr-defined]
        started = time.perf_counter()
        for _ in range(20):
            if not warm:
                model = make(kind)
            model.build_request(messages, SETTINGS)  # type: ignore[attr-defined]
        samples.append((time.perf_counter() - started) / 20 * 1e6)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print("adapter    iterations  warm µs (min-max)        cold µs (min-max)")
    for name, kind in adapters().items():
        for iterations in (10, 100, 1000):
            warm = per_request_us(kind, iterations, True, args.repeats)
            cold = per_request_us(kind, iterations, False, args.repeats)
            print(
                f"{name:10s} {iterations:10d}  {statistics.median(warm):8.1f} "
                f"({min(warm):.1f}-{max(warm):.1f})   {statistics.median(cold):9.1f} "
                f"({min(cold):.1f}-{max(cold):.1f})"
            )


if __name__ == "__main__":
    main()
