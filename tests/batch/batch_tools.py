"""Tools and the scripted model of the batch tests (named by ``--tools`` and ``--model``)."""

from __future__ import annotations

import os
from typing import Any

from toolcycle.messages import Message, TextPart, ToolCall, ToolResult, Usage
from toolcycle.testing import ScriptedModel, call

SPEC = {
    "name": "echo_agent",
    "instructions": "Look the word up, then answer with what the tool said.",
    "tools": [{"name": "lookup", "description": "Looks a word up.",
               "parameters": {"type": "object", "properties": {"word": {"type": "string"}},
                              "required": ["word"]}}],
}


def note(variable: str, text: str) -> None:
    """Append ``text`` as a line to the file $variable names (when it is set): the tests'
    record of side effects, written before the tool returns."""
    if os.environ.get(variable):
        with open(os.environ[variable], "a") as mark:
            mark.write(f"{text}\n")


def wait_for_gate(word: str) -> None:
    """``wait...`` words block until the file $BATCH_TEST_GATE exists (a test opens it)."""
    if word.startswith("wait") and os.environ.get("BATCH_TEST_GATE"):
        import time

        while not os.path.exists(os.environ["BATCH_TEST_GATE"]):
            time.sleep(0.01)


def lookup(word: str) -> str:
    """Looks a word up (``boom`` raises; with $BATCH_TEST_SLOW set, waits on a sleep; with
    $BATCH_TEST_MARK set, appends this process's id to that file first; with
    $BATCH_TEST_EFFECTS set, appends the word to that file; ``wait`` words wait for the
    test's gate)."""
    note("BATCH_TEST_MARK", str(os.getpid()))
    note("BATCH_TEST_EFFECTS", word)
    wait_for_gate(word)
    if os.environ.get("BATCH_TEST_SLOW"):
        import time

        time.sleep(float(os.environ["BATCH_TEST_SLOW"]))
    if word == "boom":
        raise RuntimeError("the lookup exploded")
    return f"{word}:{len(word)}"


def _reply(messages: list[Message], settings: Any) -> Message:
    """One lookup of the user's text, then an answer quoting the tool's result.

    The usage is stated here, from this conversation alone: ScriptedModel's own estimate counts
    everything one model instance was asked, and a batch shares the model between its runs.
    """
    last = messages[-1]
    if last.role == "user" and last.text.startswith("flaky") and not os.path.exists(
            os.environ.get("BATCH_TEST_FLAKY", "")):
        raise RuntimeError("the model is down")  # until the test creates $BATCH_TEST_FLAKY
    if last.role == "user":
        part: TextPart | ToolCall = call("lookup", {"word": last.text})
    else:
        results = [p for p in last.parts if isinstance(p, ToolResult)]
        part = TextPart(f"answer {results[0].content}")
    usage = Usage(input_tokens=sum(len(m.text) for m in messages) // 4 + 1, output_tokens=5)
    return Message("assistant", [part], usage=usage)


def model() -> ScriptedModel:
    return ScriptedModel(_reply)
