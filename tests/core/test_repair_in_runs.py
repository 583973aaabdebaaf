"""rel-18, rel-20 end to end: a reply no API would take back is repaired, and the run goes on.

The repair itself is tested in ``test_repair_reply.py``.
"""

from __future__ import annotations

from pydantic import BaseModel

from toolcycle import Agent, tool
from toolcycle.testing import ScriptedModel, call


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


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
