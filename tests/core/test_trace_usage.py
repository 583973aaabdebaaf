"""Usage adds up on every path; the trace records thoughts, calls and observations."""

from __future__ import annotations

import pytest

from toolcycle import Agent, MaxIterationsExceeded, Message, Trace, Usage, tool
from toolcycle.messages import TextPart, ThinkingPart
from toolcycle.models.scripted import ScriptedModel, call


@tool
def lookup(city: str) -> dict[str, object]:
    """Weather for a city."""
    if city == "Atlantis":
        raise LookupError("no such city")
    return {"city": city, "temp_c": 21}


def test_usage_adds() -> None:
    a = Usage(1, 2, 3, 4, 5, 6)
    b = Usage(10, 20, 30, 40, 50, 60)
    assert a + b == Usage(11, 22, 33, 44, 55, 66)
    assert (a + b).total_tokens == 33
    assert Usage.from_dict((a + b).to_dict()) == a + b


async def test_usage_is_the_sum_over_steps_and_trace_has_thoughts() -> None:
    thought = Message("assistant", [ThinkingPart("need weather"), TextPart("Checking."),
                                    call("lookup", {"city": "Paris"})])
    model = ScriptedModel([thought, [call("lookup", {"city": "Atlantis"})], "21 °C in Paris."])
    result = await Agent(model, tools=[lookup], name="weather").run("weather?")
    steps = result.trace.steps
    assert len(steps) == 3 == result.usage.requests
    total = Usage()
    for step in steps:
        total.add(step.usage)
    assert total == result.usage == result.trace.usage
    assert result.usage.tool_calls == 2
    assert steps[0].thought == "Checking." and steps[0].thinking == "need weather"
    assert steps[0].tool_calls[0].result == '{"city": "Paris", "temp_c": 21}'
    assert steps[1].tool_calls[0].error == "Tool `lookup` failed: LookupError: no such city"
    assert steps[2].thought == "21 °C in Paris."
    assert [r.to_dict()["name"] for r in result.tool_calls] == ["lookup", "lookup"]
    record = result.tool_calls[0].to_dict()
    assert {"name", "args", "result", "error", "iteration"} <= record.keys()
    assert result.trace.status == "success"
    assert result.trace.termination == {"reason": "completed", "action": "answered",
                                        "detail": "", "limit": None}
    text = result.trace.render()
    assert "thinking: need weather" in text and "error: Tool `lookup` failed" in text


async def test_trace_json_round_trip() -> None:
    model = ScriptedModel([call("lookup", {"city": "Rome"}), "ok"])
    result = await Agent(model, tools=[lookup]).run("go")
    again = Trace.from_json(result.trace.to_json())
    assert again.to_dict() == result.trace.to_dict()
    assert again.tool_calls[0].args == {"city": "Rome"}


async def test_trace_and_usage_survive_failure() -> None:
    model = ScriptedModel(lambda _m, _s: call("lookup", {"city": "Oslo"}))
    agent = Agent(model, tools=[lookup])
    with pytest.raises(MaxIterationsExceeded) as info:
        await agent.run("go", limits=__import__("toolcycle").Limits(
            max_iterations=3, on_limit="error"))
    partial = info.value.result
    assert partial is not None
    assert len(partial.trace.steps) == 3
    assert partial.usage.requests == 3 and partial.usage.tool_calls == 3
    assert partial.trace.status == "failure"
    assert partial.trace.error is not None and partial.trace.error["code"] == "MAX_ITERATIONS"


def test_message_round_trip() -> None:
    message = Message("assistant", [ThinkingPart("t", "sig"), TextPart("x"),
                                    call("lookup", {"city": "A"}, id="1")])
    assert Message.from_dict(message.to_dict()) == message


async def test_reasoning_tokens_add_up_into_the_run_and_survive_the_trace_round_trip() -> None:
    """``Usage.reasoning_tokens`` (part of the output tokens, reported apart by the Responses
    and Gemini adapters) reaches each step and the run's total, and the stored trace."""
    from toolcycle import Agent, Message, Trace, Usage
    from toolcycle.testing import ScriptedModel, call

    def script(messages: list[Message], _settings: object) -> Message:
        reply = (Message.assistant(tool_calls=[call("add", {"a": 1, "b": 2})])
                 if messages[-1].role == "user" else Message.assistant("3"))
        reply.usage = Usage(input_tokens=10, output_tokens=7, reasoning_tokens=5)
        return reply

    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    result = await Agent(ScriptedModel(script), tools=[add]).run("1+2?")
    assert result.usage.reasoning_tokens == 10 and result.usage.output_tokens == 14
    assert [s.usage.reasoning_tokens for s in result.trace.steps] == [5, 5]
    again = Trace.from_dict(result.trace.to_dict())
    assert again.usage.reasoning_tokens == 10


def test_the_field_orders_the_hot_path_builds_by_position_stay_as_they_are() -> None:
    """The loop and the trace builder build these positionally (a keyword costs more than the
    field it sets, once per iteration). Many fields share a type, so a reordering would swap
    values without a type error: it must fail here and be mirrored at the call sites
    (toolcycle/run/loop.py ``_request``, toolcycle/tracing/recorder.py)."""
    from dataclasses import fields

    from toolcycle.tracing.trace import Step, ToolCallRecord

    assert [f.name for f in fields(Usage)][:7] == [
        "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "requests",
        "tool_calls", "reasoning_tokens"]
    assert [f.name for f in fields(Step)][:10] == [
        "iteration", "attempt", "thought", "thinking", "tool_calls", "usage", "model_ms",
        "tools_ms", "started_at", "forced"]
    assert [f.name for f in fields(ToolCallRecord)][:9] == [
        "call_id", "name", "args", "iteration", "attempt", "result", "error", "duration_ms",
        "kind"]
