"""Collect real replies of the three packed models into ``fixtures/replies.json``.

Run it by hand when the prompts change (``.venv/bin/python tests/local/collect_fixtures.py``);
the parser tests replay the saved replies, so they need no model. It drives each model through
a minimal call/observe cycle (the protocol wrappers without the Agent loop) with the JSON
protocol (free and constrained) and ReAct, and records every raw reply verbatim. Expectations
reviewed by hand (the ``expected`` key) survive a re-collection for replies that did not change.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from toolcycle.cli.demo import find_customer, latest_order, sayHello
from toolcycle.messages import Message, ToolResult
from toolcycle.models.base import Model, ModelSettings, ToolDefinition
from toolcycle.models.local.llama import LlamaChatModel, resolve_weights
from toolcycle.models.text.protocol import JsonToolsModel, TextProtocolModel
from toolcycle.models.text.react import ReActModel
from toolcycle.tools import Tool

FIXTURES = Path(__file__).parent / "fixtures" / "replies.json"

def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


FUNCTIONS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (sayHello, find_customer, latest_order, add)
}
TOOLS = {name: Tool.from_function(f).spec for name, f in FUNCTIONS.items()}

TASKS: list[tuple[str, tuple[str, ...]]] = [
    ("Say hello to Alice.", ("sayHello",)),
    ("Say hello to the world.", ("sayHello", "add")),
    ("What is 1234 plus 4321?", ("add", "sayHello")),
    ("When will Ada Lovelace's latest order arrive?", ("find_customer", "latest_order")),
    ("Hi! What can you do?", ("find_customer", "latest_order", "sayHello")),
]


class Recorder(Model):
    """Passes requests through and keeps every raw reply."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.name = inner.name
        self.replies: list[str] = []

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        reply = await self.inner.request(messages, settings)
        self.replies.append(reply.text)
        return reply


async def run_task(
    model: TextProtocolModel, recorder: Recorder, task: str, names: tuple[str, ...]
) -> list[str]:
    definitions = tuple(ToolDefinition(n, TOOLS[n].description, TOOLS[n].parameters) for n in names)
    settings = ModelSettings(tools=definitions, max_tokens=160)
    messages = [Message.system("You are a helpful assistant."), Message.user(task)]
    start = len(recorder.replies)
    for _ in range(4):
        reply = await model.request(messages, settings)
        messages.append(reply)
        if not reply.tool_calls:
            break
        results = []
        for call in reply.tool_calls:
            if call.name not in names or call.arguments is None:
                results.append(ToolResult(call.id, call.name, f"unknown tool {call.name}", True))
                continue
            try:
                content = json.dumps(FUNCTIONS[call.name](**call.arguments))
                results.append(ToolResult(call.id, call.name, content))
            except (TypeError, LookupError) as exc:
                results.append(ToolResult(call.id, call.name, str(exc), True))
        messages.append(Message.tool_results(results))
    return recorder.replies[start:]


async def main(packs: list[str]) -> None:
    records: list[dict[str, Any]] = []
    FIXTURES.parent.mkdir(exist_ok=True)
    for pack in packs:
        path, name = resolve_weights(pack)
        for protocol in ("json", "json-constrained", "react"):
            recorder = Recorder(LlamaChatModel(path, name=name))
            model: TextProtocolModel
            if protocol == "react":
                model = ReActModel(recorder)
            else:
                model = JsonToolsModel(recorder, constrained=protocol == "json-constrained")
            for task, names in TASKS:
                replies = await run_task(model, recorder, task, names)
                for turn, reply in enumerate(replies, 1):
                    records.append(
                        {"model": name, "protocol": protocol, "task": task, "turn": turn,
                         "tools": list(names),
                         "schemas": {n: TOOLS[n].parameters for n in names},
                         "reply": reply}
                    )
                    print(json.dumps(records[-1])[:300], flush=True)
    previous = json.loads(FIXTURES.read_text()) if FIXTURES.exists() else []
    reviewed = {(r["model"], r["protocol"], r["task"], r["turn"], r["reply"]): r.get("expected")
                for r in previous}
    for record in records:
        key = (record["model"], record["protocol"], record["task"], record["turn"], record["reply"])
        if reviewed.get(key) is not None:
            record["expected"] = reviewed[key]
    FIXTURES.write_text(json.dumps(records, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:] or ["smollm2-135m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"]))
