"""The scripted oracle that proves each generated task solvable, and the naive call's miss.

The oracle is a :class:`toolcycle.testing.ScriptedModel` that makes a task's oracle calls in
order through a real :class:`toolcycle.Agent` and answers with the value the last result
holds under the task's answer key: the answer is read from what the tools returned, never
from the task's expected value, so a task whose tools cannot give the answer fails.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from toolcycle import Message, Tool
from toolcycle.messages import TextPart, ToolResult
from toolcycle.models.base import ModelSettings
from toolcycle.testing import ScriptedModel, call

from .making import Call, Task


def read_answer(task: Task, result: str) -> str | None:
    """The value under the task's answer key in a tool's JSON result (in the row named
    ``task.row`` when the result lists rows), as text; ``None`` when it is not there."""
    try:
        data = json.loads(result)
    except ValueError:
        return None
    if task.row and isinstance(data, dict):
        rows = data.get("items") or []
        data = next((r for r in rows if isinstance(r, dict) and r.get("name") == task.row),
                    None)
    if not isinstance(data, dict) or task.answer_key not in data:
        return None
    return str(data[task.answer_key])


def oracle_model(task: Task) -> ScriptedModel:
    """Calls ``task.oracle`` one per turn, then answers from the results."""
    return ScriptedModel(oracle_reply(task))


def oracle_reply(task: Task) -> Callable[[list[Message], ModelSettings], Message]:
    """:func:`oracle_model`'s reply to a conversation (to serve several tasks in one model)."""

    def reply(messages: list[Message], settings: ModelSettings) -> Message:
        results = [p.content for m in messages for p in m.parts if isinstance(p, ToolResult)]
        if len(results) < len(task.oracle):
            step = task.oracle[len(results)]
            return Message("assistant", [call(step.tool, dict(step.args))])
        answers = [a for r in results if (a := read_answer(task, str(r))) is not None]
        return Message("assistant", [TextPart(f"The answer is {answers[-1]}." if answers
                                              else "No tool had it.")])

    return reply


def naive_result(tool: Tool[Any], naive: Call) -> tuple[str, str]:
    """What the naive first call gives: ``("error", message)`` when the tool raises, else
    ``("ok", result)``. The tool's function is called as the loop would, with its arguments
    checked against its schema first."""
    assert tool.function is not None
    try:
        arguments = tool.validate(dict(naive.args))
        return "ok", str(tool.function(**arguments))
    except Exception as exc:  # any tool failure is what a model would see as an error
        return "error", f"{type(exc).__name__}: {exc}"
