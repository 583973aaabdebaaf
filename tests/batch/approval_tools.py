"""A spec with a tool that needs a person's yes (``erase``), for the paused-input tests.

The model erases the words that start with ``erase`` (a call that pauses the run) and looks the
others up; after the erase call's observation it answers with it (a denial included).
"""

from __future__ import annotations

import os
import time
from typing import Any

from toolcycle import tool
from toolcycle.messages import Message, TextPart, ToolCall, ToolResult, Usage
from toolcycle.testing import ScriptedModel, call

from . import batch_tools
from .batch_tools import note, wait_for_gate

SPEC = {
    "name": "eraser",
    "instructions": "Erase the word when asked to, else look it up.",
    "tools": [
        {"name": "lookup", "description": "Looks a word up.",
         "parameters": {"type": "object", "properties": {"word": {"type": "string"}},
                        "required": ["word"]}},
        {"name": "erase", "description": "Erases a word (needs approval).",
         "parameters": {"type": "object", "properties": {"word": {"type": "string"}},
                        "required": ["word"]}},
    ],
}


def lookup(word: str) -> str:
    """Looks a word up (as tests/batch/batch_tools.py does)."""
    return batch_tools.lookup(word)


@tool(requires_approval=True)
def erase(word: str) -> str:
    """Erases a word (notes ``erased WORD`` in $BATCH_TEST_EFFECTS, then waits $BATCH_TEST_SLOW
    seconds; ``erase-wait`` words wait for the test's gate after noting)."""
    note("BATCH_TEST_EFFECTS", f"erased {word}")
    if os.environ.get("BATCH_TEST_SLOW"):
        time.sleep(10 * float(os.environ["BATCH_TEST_SLOW"]))  # a kill may land in between
    wait_for_gate(word.removeprefix("erase-"))
    return f"erased {word}"


def _reply(messages: list[Message], settings: Any) -> Message:
    last = messages[-1]
    if last.role == "user":
        name = "erase" if last.text.startswith("erase") else "lookup"
        part: TextPart | ToolCall = call(name, {"word": last.text})
    else:
        results = [p for p in last.parts if isinstance(p, ToolResult)]
        part = TextPart(f"answer {results[0].content}")
    return Message("assistant", [part], usage=Usage(input_tokens=3, output_tokens=5))


def model() -> ScriptedModel:
    return ScriptedModel(_reply)
