"""A process that runs (or recovers) one durable run; tests/durable/test_kill.py kills it.

    python worker.py SYSTEM_DB_URL WORKFLOW_ID MARKER_DIR start|recover

Every model request and every tool execution leaves a marker file in MARKER_DIR, so the test
counts what ran in which process. With ``$DURABLE_BLOCK`` set, the second turn's concurrent
tool calls block once they have started (``probe`` until its timeout cuts it off), so that the
test can kill the process inside them.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from dbos import DBOS

from toolcycle import Agent, Tool
from toolcycle.durable import DurableAgent
from toolcycle.messages import Message
from toolcycle.models.base import ModelSettings
from toolcycle.testing import ScriptedModel, call

URL, WORKFLOW_ID, MARKERS, MODE = sys.argv[1:5]
DIR = Path(MARKERS)


def mark(kind: str) -> None:
    """One file per execution: ``kind.<pid>.<n>``."""
    n = len(list(DIR.glob(f"{kind}.*")))
    (DIR / f"{kind}.{os.getpid()}.{n}").write_text("")


def block() -> None:
    if os.environ.get("DURABLE_BLOCK"):
        time.sleep(120)  # the test kills the process meanwhile


def note(text: str) -> str:
    """Write a note (a side effect, not idempotent)."""
    mark("note")
    return f"noted {text}"


async def charge(amount: int) -> str:
    """Charge a card (a side effect, not idempotent)."""
    mark("charge")
    await asyncio.to_thread(block)
    return f"charged {amount}"


def lookup(key: str) -> dict[str, str]:
    """Read a value (idempotent)."""
    mark("lookup")
    block()
    return {"key": key, "value": key.upper()}


async def probe(key: str) -> str:
    """A slow read that its timeout cuts off (idempotent)."""
    mark("probe")
    if os.environ.get("DURABLE_BLOCK"):
        await asyncio.sleep(60)
    return "fresh"


REPLIES: list[Any] = [
    call("note", {"text": "start"}, id="c1"),
    [call("charge", {"amount": 5}, id="c2"), call("lookup", {"key": "k"}, id="c3"),
     call("probe", {"key": "p"}, id="c4")],
    "done",
]


def script(messages: list[Message], settings: ModelSettings) -> Any:
    """The reply depends only on the conversation, as a real model's would."""
    mark("model")
    return REPLIES[sum(1 for m in messages if m.role == "assistant")]


agent = Agent(ScriptedModel(script), "Be brief.", [
    Tool.from_function(note),
    Tool.from_function(charge, concurrent=True),
    Tool.from_function(lookup, concurrent=True, idempotent=True),
    Tool.from_function(probe, concurrent=True, idempotent=True, timeout=0.2),
], name="killed")
durable = DurableAgent(agent)


async def main() -> None:
    DBOS(config={"name": "toolcycle-durable-test", "system_database_url": URL,
                 "log_level": "WARNING"})
    DBOS.launch()
    try:
        if MODE == "start":
            result = await durable.run("go", workflow_id=WORKFLOW_ID)
        else:
            result = await durable.result(WORKFLOW_ID)
        print(json.dumps({
            "output": result.output, "run_id": result.run_id,
            "usage": result.usage.to_dict(), "trace": result.trace.to_dict(),
            "messages": [m.to_dict() for m in result.messages],
        }))
    finally:
        DBOS.destroy()


asyncio.run(main())
