"""The loop in free-text mode: iterations, several calls per turn, and every failure path
becoming an observation (the seeds' scenarios)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

from toolcycle import Agent, Limits, Message, RunContext, Tool, tool
from toolcycle.models.protocol import ProtocolViolation
from toolcycle.models.scripted import ScriptedModel, call


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


@tool
def boom(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(f"exploded: {reason}")


def results_of(message: Message) -> list[tuple[str, str, bool]]:
    return [(r.call_id, r.content, r.is_error) for r in message.results]


async def test_single_iteration_answer_without_tools() -> None:
    model = ScriptedModel(["Hello!"])
    result = await Agent(model, "Be nice.", [add]).run("hi")
    assert result.output == "Hello!"
    assert result.iterations == 1
    assert result.termination.reason == "completed"
    assert result.termination.action == "answered"
    assert [m.role for m in result.messages] == ["system", "user", "assistant"]


async def test_multi_iteration_chaining_uses_previous_observation() -> None:
    def script(messages: list[Message], _settings: Any) -> Any:
        last = messages[-1]
        if last.role == "user":
            return call("add", {"a": 2, "b": 3})
        value = int(last.results[0].content)
        if value < 10:
            return call("add", {"a": value, "b": value})
        return f"The result is {value}."

    result = await Agent(ScriptedModel(script), tools=[add]).run("double until >= 10")
    assert result.output == "The result is 10."
    assert [r.result for r in result.tool_calls] == ["5", "10"]
    assert [r.iteration for r in result.tool_calls] == [1, 2]
    assert result.iterations == 3


async def test_several_calls_in_one_turn_results_matched_by_id_in_call_order() -> None:
    model = ScriptedModel([
        [call("add", {"a": 1, "b": 1}, id="c-a"), call("add", {"a": 2, "b": 2}, id="c-b"),
         call("add", {"a": 3, "b": 3}, id="c-c")],
        "done",
    ])
    result = await Agent(model, tools=[add]).run("go")
    tool_message = result.messages[-2]
    assert tool_message.role == "tool"
    assert results_of(tool_message) == [("c-a", "2", False), ("c-b", "4", False),
                                        ("c-c", "6", False)]


async def test_unknown_tool_is_an_observation_listing_tools_then_recovery() -> None:
    model = ScriptedModel([call("mul", {"a": 2, "b": 3}), call("add", {"a": 2, "b": 3}), "5"])
    result = await Agent(model, tools=[add, boom]).run("go")
    first = result.tool_calls[0]
    assert first.kind == "unknown"
    assert first.error is not None and "Unknown tool `mul`" in first.error
    assert "add" in first.error and "boom" in first.error
    assert result.tool_calls[1].result == "5"
    assert result.output == "5"


async def test_a_call_of_no_tool_with_unreadable_arguments_is_told_it_names_no_tool() -> None:
    # "Action: None / Action Input: None" (Qwen2.5-Coder-1.5B, ReAct): told its arguments did
    # not parse, it wrote the same again until the iteration limit
    from toolcycle.messages import ToolCall

    none = Message.assistant(tool_calls=[ToolCall.from_raw("c1", "None", "None")])
    typo = Message.assistant(tool_calls=[ToolCall.from_raw("c2", "ad", "{oops")])
    result = await Agent(ScriptedModel([none, typo, "5"]), tools=[add]).run("go")
    first, second = result.tool_calls
    assert first.kind == "unknown" and first.error == (
        "`None` is not a tool: if you have the answer, give it as your final answer. "
        "Available tools: add.")
    assert second.error == "Unknown tool `ad`: did you mean `add`? Available tools: add."


async def test_an_unknown_tool_is_told_the_one_offered_name_it_is_nearest() -> None:
    # ReAct, shown "Call stacks_find(...)" and a lesson about library_now, the 1.5B called
    # `stacks_find_now` ten times, told only "Unknown tool" and the list
    from toolcycle.messages import ToolCall

    def stacks_find(member_name: str) -> str:
        """Find a member."""
        return "PR-1"

    def library_now(title_code: str) -> str:
        """Live availability."""
        return "3"

    blended = Message.assistant(tool_calls=[
        ToolCall.from_raw("c1", "stacks_find_now", '{"member_name": "Ann"}')])
    unlike = Message.assistant(tool_calls=[ToolCall.from_raw("c2", "weather", "{}")])
    result = await Agent(ScriptedModel([blended, unlike, "PR-1"]),
                         tools=[stacks_find, library_now]).run("go")
    first, second = result.tool_calls
    assert first.error == ("Unknown tool `stacks_find_now`: did you mean `stacks_find`? "
                           "Available tools: stacks_find, library_now.")
    assert second.error == "Unknown tool `weather`. Available tools: stacks_find, library_now."


async def test_an_unknown_tool_is_told_the_one_tool_its_arguments_fit() -> None:
    # ReAct, a blend of two tool families' names ("stay_day_stats" beside house_day_stats
    # and stay_card) too far from either for the name alone: its arguments fit one tool
    from toolcycle.messages import ToolCall

    def pond_day_stats(pond: str, day: str) -> str:
        """A pond's figures on a day."""
        return "12"

    def reed_card(pond: str) -> str:
        """A pond's card."""
        return "{}"

    def reed_lookup(name: str, region: str = "") -> str:
        """Find a pond by name."""
        return "P-1"

    blended = Message.assistant(tool_calls=[
        ToolCall.from_raw("c1", "reed_daily", '{"pond": "P-1", "day": "2026-01-14"}')])
    several = Message.assistant(tool_calls=[
        ToolCall.from_raw("c2", "reed_info", '{"pond": "P-1"}')])
    result = await Agent(ScriptedModel([blended, several, "12"]),
                         tools=[pond_day_stats, reed_card, reed_lookup]).run("go")
    first, second = result.tool_calls
    assert first.error == ("Unknown tool `reed_daily`: `pond_day_stats` is the tool that takes "
                           "pond, day; did you mean it? Available tools: pond_day_stats, "
                           "reed_card, reed_lookup.")
    # {"pond"} alone: pond_day_stats also requires a day, so only reed_card takes it
    assert second.error is not None and "`reed_card` is the tool that takes pond" in second.error


@pytest.mark.parametrize("name", ["final_answer", "answer", "Final-Answer", "respond"])
async def test_a_call_to_an_answer_tool_not_offered_is_told_to_answer(name: str) -> None:
    # answer({"answer": ...}) over a native API: told only "Unknown tool", the 1.5B wrote it
    # again to the iteration limit
    model = ScriptedModel([call(name, {"answer": "5"}), "5"])
    result = await Agent(model, tools=[add]).run("go")
    [record] = result.tool_calls
    assert record.kind == "unknown" and record.error == (
        f"`{name}` is not a tool: if you have the answer, give it as your final answer. "
        "Available tools: add.")
    assert result.output == "5"


async def test_an_offered_tool_named_answer_is_called() -> None:
    @tool
    def answer(text: str) -> str:
        """Record an answer."""
        return f"noted {text}"

    result = await Agent(ScriptedModel([call("answer", {"text": "5"}), "ok"]),
                         tools=[answer]).run("go")
    assert result.tool_calls[0].result == "noted 5" and result.tool_calls[0].error is None


async def test_throwing_tool_beside_succeeding_one() -> None:
    model = ScriptedModel([[call("boom", {"reason": "x"}), call("add", {"a": 1, "b": 2})], "ok"])
    result = await Agent(model, tools=[add, boom]).run("go")
    failed, succeeded = result.tool_calls
    assert failed.error == "Tool `boom` failed: RuntimeError: exploded: x"
    assert succeeded.result == "3" and succeeded.error is None
    assert results_of(result.messages[-2])[0][2] is True


async def test_bad_arguments_then_corrected() -> None:
    model = ScriptedModel([
        call("add", {"a": "one", "c": 5}),
        call("add", {"a": 1, "b": 2}),
        "3",
    ])
    result = await Agent(model, tools=[add]).run("go")
    error = result.tool_calls[0].error
    assert error is not None
    assert 'a: "one" is not of type "integer"' in error
    assert "(root): \"b\" is a required property" in error
    assert "'c' was unexpected" in error
    assert "Expected schema:" in error
    assert result.tool_calls[1].result == "3"


async def test_malformed_json_arguments_become_an_observation() -> None:
    model = ScriptedModel([call("add", raw='{"a": 1, "b":'), call("add", raw="[1, 2]"), "gave up"])
    result = await Agent(model, tools=[add]).run("go")
    first, second = result.tool_calls
    assert first.error is not None and "not valid JSON" in first.error
    assert second.error is not None and "must be a JSON object" in second.error
    assert result.output == "gave up"


async def test_tool_timeout_becomes_an_observation() -> None:
    @tool(timeout=0.05)
    async def slow() -> str:
        await asyncio.sleep(5)
        return "never"

    result = await Agent(ScriptedModel([call("slow"), "timed out"]), tools=[slow]).run("go")
    assert result.tool_calls[0].error == "Tool `slow` timed out after 0.05 s."


async def test_sync_tool_timeout_becomes_an_observation() -> None:
    import time

    @tool(timeout=0.05)
    def slow_sync() -> str:
        time.sleep(0.3)
        return "late"

    result = await Agent(ScriptedModel([call("slow_sync"), "ok"]), tools=[slow_sync]).run("go")
    assert result.tool_calls[0].error == "Tool `slow_sync` timed out after 0.05 s."


@pytest.mark.parametrize("limit", [None, 5.0])
async def test_a_tool_raising_its_own_timeout_keeps_its_words(limit: float | None) -> None:
    """A tool whose client gave up raises ``TimeoutError`` itself: the observation says what
    it said, not "timed out after None s" (seen on the learning bench's unreliable feed)."""

    @tool(timeout=limit)
    async def feed() -> str:
        raise TimeoutError("feed timed out after 5.0 s")

    result = await Agent(ScriptedModel([call("feed"), "ok"]), tools=[feed]).run("go")
    assert result.tool_calls[0].error == "Tool `feed` timed out: feed timed out after 5.0 s"


async def test_unserializable_result_falls_back_to_marked_text() -> None:
    class Opaque:
        def __repr__(self) -> str:
            return "<Opaque thing>"

    @tool
    def weird() -> Any:
        return {"x": Opaque()}

    result = await Agent(ScriptedModel([call("weird"), "ok"]), tools=[weird]).run("go")
    record = result.tool_calls[0]
    assert record.error is not None
    assert "not JSON-serializable" in record.error and "<Opaque thing>" in record.error


async def test_structured_tool_results_are_json() -> None:
    class Point(BaseModel):
        x: int
        y: int

    @tool
    def origin() -> Point:
        return Point(x=0, y=0)

    result = await Agent(ScriptedModel([call("origin"), "ok"]), tools=[origin]).run("go")
    assert json.loads(result.tool_calls[0].result or "") == {"x": 0, "y": 0}


async def test_long_observation_truncated_with_marker() -> None:
    @tool
    def big() -> str:
        return "x" * 1000

    agent = Agent(ScriptedModel([call("big"), "ok"]), tools=[big],
                  limits=Limits(max_observation_chars=100))
    result = await agent.run("go")
    content = result.messages[-2].results[0].content
    assert content.startswith("x" * 100)
    assert "[... truncated: 900 of 1000 characters cut]" in content


async def test_run_context_injected_and_hidden_from_schema() -> None:
    seen: dict[str, Any] = {}

    @tool
    def whoami(ctx: RunContext[dict[str, str]], greeting: str) -> str:
        seen.update(deps=ctx.deps, iteration=ctx.iteration, call_id=ctx.tool_call_id)
        ctx.run_state["count"] = ctx.run_state.get("count", 0) + 1
        return f"{greeting}, {ctx.deps['user']}"

    assert "ctx" not in whoami.spec.parameters["properties"]
    model = ScriptedModel([call("whoami", {"greeting": "hi"}, id="w1"), "done"])
    result = await Agent(model, tools=[whoami]).run("go", deps={"user": "ada"})
    assert result.tool_calls[0].result == "hi, ada"
    assert seen == {"deps": {"user": "ada"}, "iteration": 1, "call_id": "w1"}


async def test_multi_turn_memory_via_message_history() -> None:
    first = await Agent(ScriptedModel([call("add", {"a": 1, "b": 2}), "3"]), "Math.",
                        [add]).run("1+2?")

    def second_script(messages: list[Message], _settings: Any) -> Any:
        # the previous run's call, result and answer are all in the history
        roles = [m.role for m in messages]
        assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]
        assert messages[3].results[0].content == "3"
        return "You asked 1+2 before; it was 3."

    second = await Agent(ScriptedModel(second_script), "Math.", [add]).run(
        "what did I ask?", message_history=first.messages
    )
    assert second.output == "You asked 1+2 before; it was 3."
    assert [m.role for m in second.new_messages] == ["user", "assistant"]


async def test_model_error_keeps_partial_result() -> None:
    from toolcycle import ModelError

    model = ScriptedModel([call("add", {"a": 1, "b": 2})])  # exhausted after one reply
    with pytest.raises(ModelError) as info:
        await Agent(model, tools=[add]).run("go")
    partial = info.value.result
    assert partial is not None
    assert partial.tool_calls[0].result == "3"
    assert partial.usage.requests == 2
    assert partial.trace.status == "failure"
    assert partial.termination.reason == "model_error"


def test_scripted_model_rejects_a_history_real_apis_reject() -> None:
    model = ScriptedModel(["x"])
    orphan = [Message.user("hi"), Message.assistant(tool_calls=[call("add", {}, id="1")]),
              Message.user("again")]
    from toolcycle.models.base import ModelSettings

    with pytest.raises(ProtocolViolation, match="must be answered"):
        asyncio.run(model.request(orphan, ModelSettings()))


def test_tool_from_schema_validates_and_calls_with_keywords() -> None:
    seen: list[dict[str, Any]] = []
    lookup = Tool.from_schema(
        "lookup", "Look up a city.",
        {"type": "object", "properties": {"city": {"type": "string", "enum": ["Paris", "Rome"]}},
         "required": ["city"], "additionalProperties": False},
        lambda **kw: seen.append(kw) or "found",
    )
    model = ScriptedModel(
        [call("lookup", {"city": "Oslo"}), call("lookup", {"city": "Rome"}), "ok"]
    )
    result = asyncio.run(Agent(model, tools=[lookup]).run("go"))
    assert result.tool_calls[0].error is not None and "Oslo" in result.tool_calls[0].error
    assert seen == [{"city": "Rome"}]


def test_schema_titles_stripped_but_data_and_property_names_kept() -> None:
    from toolcycle._tool_schema import strip_titles

    schema = {"title": "Args", "properties": {
        "title": {"type": "string", "title": "Title"},
        "meta": {"type": "object", "default": {"title": "kept"}, "enum": [{"title": "x"}]},
    }}
    assert strip_titles(schema) == {"properties": {
        "title": {"type": "string"},
        "meta": {"type": "object", "default": {"title": "kept"}, "enum": [{"title": "x"}]},
    }}
