"""rel-18, rel-20: replies that no API would take back are repaired before entering the history."""

from __future__ import annotations

from pydantic import BaseModel

from toolcycle import Agent, Message, tool
from toolcycle.messages import TextPart, ToolResult
from toolcycle.run.repair import EMPTY_TURN, repair_reply
from toolcycle.testing import HistoryChecker, ScriptedModel, call


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_a_sound_reply_is_returned_as_is() -> None:
    reply = Message.assistant("thinking aloud", [call("add", {"a": 1, "b": 2}, id="c1")])
    repaired, repairs = repair_reply(reply, {"c0"})
    assert repaired is reply and repairs == []


def test_names_ids_and_blank_text_are_repaired() -> None:
    reply = Message("assistant", [
        TextPart("   "),
        call("functions.add", {"a": 1, "b": 2}, id="c1"),
        call("add", {"a": 1, "b": 2}, id="c1"),
        call("add", {"a": 3, "b": 4}, id="old"),
        call("add", {"a": 5, "b": 6}, id=""),
    ])
    repaired, repairs = repair_reply(reply, {"old"})
    calls = repaired.tool_calls
    assert [c.name for c in calls] == ["invalid_name_functions_add", "add", "add", "add"]
    assert len({c.id for c in calls} | {"old"}) == 5
    assert not any(isinstance(p, TextPart) for p in repaired.parts)
    assert len(repairs) == 5
    results = Message.tool_results([ToolResult(c.id, c.name, "ok") for c in calls])
    HistoryChecker("both").check([Message.user("go"), repaired, results])


def test_an_empty_turn_gets_a_placeholder() -> None:
    repaired, repairs = repair_reply(Message("assistant", [TextPart(" \n")]), set())
    assert repaired.text == EMPTY_TURN and repairs


async def test_rel18_invalid_names_and_reused_ids_do_not_break_the_next_request() -> None:
    model = ScriptedModel([
        [call("get weather", {}, id="x"), call("add", {"a": 1, "b": 2}, id="x")],
        [call("add", {"a": 2, "b": 2}, id="x")],
        "done",
    ], wire="both")
    result = await Agent(model, tools=[add]).run("go")
    assert result.output == "done"
    records = result.trace.tool_calls
    assert [r.result for r in records] == [None, "3", "4"]
    assert "`get weather` is not a tool name" in (records[0].error or "")
    assert result.trace.steps[0].repairs and result.trace.steps[1].repairs


class Answer(BaseModel):
    value: int


async def test_rel20_an_empty_structured_turn_is_retried_on_every_wire() -> None:
    for wire in ("anthropic", "openai", "both"):
        model = ScriptedModel(["   ", call("final_result", {"value": 1})], wire=wire)
        result = await Agent(model, output=Answer).run("go")
        assert result.output == Answer(value=1)
