"""Limits: exhaustion under each on_limit, precedence, validation and caps, budgets."""

from __future__ import annotations

import asyncio
import itertools
import warnings
from typing import Any

import pytest

from toolcycle import (
    Agent,
    ConfigurationError,
    Limits,
    MaxIterationsExceeded,
    ModelError,
    RunTimeout,
    UsageLimitExceeded,
    tool,
)
from toolcycle.limits import CAPS, DEFAULT_LIMITS, resolve_limits
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call

_PINGS = itertools.count(1)


@tool
def ping() -> str:
    """Answer pong, counted: a loop that sees new results, which the loop guard lets run on
    until a limit stops it (tests/core/test_loop_guard.py has the loops it stops)."""
    return f"pong {next(_PINGS)}"


def looping_model() -> ScriptedModel:
    """Calls `ping` forever, but answers when tools are disabled."""

    def script(_messages: Any, settings: ModelSettings) -> Any:
        return "final words" if settings.tool_choice == "none" else call("ping")

    return ScriptedModel(script)


async def test_final_answer_at_iteration_limit_makes_one_request_without_tools() -> None:
    model = looping_model()
    result = await Agent(model, tools=[ping], limits=Limits(max_iterations=3)).run("go")
    assert result.output == "final words"
    assert result.forced_final_answer
    assert result.termination.reason == "max_iterations"
    assert result.termination.action == "final_answer"
    assert [r.settings.tool_choice for r in model.requests] == ["auto"] * 3 + ["none"]
    assert result.trace.steps[-1].forced
    assert result.iterations == 4


async def test_final_answer_when_model_ignores_tool_choice_none_keeps_history_valid() -> None:
    model = ScriptedModel(lambda _m, _s: [call("ping")])
    seen: list[str] = []
    callbacks = {"on_tool_call": lambda e: seen.append(f"call {e.call.id}"),
                 "on_tool_result": lambda e: seen.append(f"result {e.call.id}")}
    result = await Agent(model, tools=[ping], limits=Limits(max_iterations=2),
                         callbacks=callbacks).run("go")
    assert result.forced_final_answer
    assert result.output == ""
    assert result.messages[-1].role == "tool"
    assert result.messages[-1].results[0].is_error
    # trace, events and usage agree on the refused call of the forced request
    records = result.tool_calls
    assert [r.kind for r in records] == ["tool", "tool", "refused"]
    assert records[-1].error == "Tools are disabled now: answer directly."
    assert result.usage.tool_calls == len(records) == 3
    assert len(seen) == 6 and seen[-2:] == [f"call {records[-1].call_id}",
                                            f"result {records[-1].call_id}"]
    assert "instead of answering" in result.termination.detail


async def test_a_failed_final_request_names_the_limit_that_led_to_it() -> None:
    """The request made at a limit fails (a provider error): the run raises ModelError, and
    its termination and context still say which limit it was answering."""

    def script(_messages: Any, settings: ModelSettings) -> Any:
        if settings.tool_choice == "none":
            raise ConnectionError("provider down")
        return call("ping")

    agent = Agent(ScriptedModel(script), tools=[ping], limits=Limits(max_iterations=2))
    with pytest.raises(ModelError) as info:
        await agent.run("go")
    error = info.value
    assert error.context["limit"] == "max_iterations"
    assert "max_iterations=2 reached" in error.message and "provider down" in error.message
    assert isinstance(error.__cause__, ConnectionError)
    assert error.result is not None
    termination = error.result.termination
    assert (termination.reason, termination.action, termination.limit) == (
        "model_error", "raised", "max_iterations")
    assert "the final request failed" in termination.detail
    assert error.result.usage.requests == 3  # the failed request counts
    assert error.result.messages[-1].role == "tool"  # every call answered


async def test_partial_at_iteration_limit_returns_last_text() -> None:
    replies = [[call("ping")], "thinking so far", [call("ping")]] * 3
    # the text reply ends the run in free-text mode, so script text beside calls
    from toolcycle.messages import Message, TextPart

    with_text = [Message("assistant", [TextPart(f"step {i}"), call("ping")])
                 for i in range(5)]
    del replies
    result = await Agent(ScriptedModel(with_text), tools=[ping],
                         limits=Limits(max_iterations=3, on_limit="partial")).run("go")
    assert result.partial
    assert result.output == "step 2"
    assert result.termination.reason == "max_iterations"
    assert result.iterations == 3


async def test_error_at_iteration_limit_raises_with_partial_result() -> None:
    agent = Agent(looping_model(), tools=[ping], limits=Limits(max_iterations=2, on_limit="error"))
    with pytest.raises(MaxIterationsExceeded) as info:
        await agent.run("go")
    error = info.value
    assert error.code == "MAX_ITERATIONS"
    assert error.context["limit"] == "max_iterations"
    assert error.result is not None
    assert len(error.result.trace.steps) == 2
    assert error.result.termination.action == "raised"
    assert error.result.messages[-1].role == "tool"  # every call answered


async def test_precedence_system_then_agent_then_run() -> None:
    assert DEFAULT_LIMITS.max_iterations == 10 and DEFAULT_LIMITS.max_attempts == 3
    model = looping_model()
    agent = Agent(model, tools=[ping], limits=Limits(max_iterations=4, on_limit="partial"))
    result = await agent.run("go")
    assert result.iterations == 4
    result = await Agent(looping_model(), tools=[ping],
                         limits=Limits(max_iterations=4, on_limit="partial")).run(
        "go", limits=Limits(max_iterations=2)
    )
    assert result.iterations == 2 and result.partial  # run wins, on_limit inherited
    result = await Agent(looping_model(), tools=[ping]).run(
        "go", limits=Limits(on_limit="partial"))
    assert result.iterations == 10  # system default
    resolved = resolve_limits(Limits(max_iterations=5, timeout=3), Limits(timeout=1))
    assert (resolved.max_iterations, resolved.timeout, resolved.max_attempts) == (5, 1, 3)


def test_invalid_limits_list_every_problem() -> None:
    with pytest.raises(ConfigurationError) as info:
        Limits(max_iterations=0, max_attempts=-1, timeout=-2,
               on_limit="explode", max_tool_calls=2.5)  # type: ignore[arg-type]
    problems = info.value.problems
    assert len(problems) == 5
    text = str(info.value)
    for word in ("max_iterations", "max_attempts", "timeout", "on_limit", "max_tool_calls"):
        assert word in text


def test_limits_above_cap_are_clamped_with_a_warning() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        limits = Limits(max_iterations=10**9)
    assert limits.max_iterations == CAPS["max_iterations"]
    assert "clamped" in str(caught[0].message)


def test_agent_configuration_errors_are_listed_together() -> None:
    def bad_name() -> None: ...

    with pytest.raises(ConfigurationError) as info:
        Agent("nonsense-model", 42, [ping, ping], output=int, parallel_tools="yes",  # type: ignore[arg-type]
              callbacks={"on_nothing": print})
    problems = info.value.problems
    assert any("model" in p for p in problems)
    assert any("instructions" in p for p in problems)
    assert any("two tools are named 'ping'" in p for p in problems)
    assert any("parallel_tools" in p for p in problems)
    assert any("on_nothing" in p for p in problems)


async def test_max_tool_calls_refuses_extra_calls_then_final_answer() -> None:
    model = ScriptedModel([[call("ping"), call("ping"), call("ping")], "after limit"])
    result = await Agent(model, tools=[ping], limits=Limits(max_tool_calls=2)).run("go")
    errors = [r.error for r in result.tool_calls]
    assert errors[:2] == [None, None]
    assert errors[2] is not None and "tool-call limit (2)" in errors[2]
    assert result.termination.reason == "max_tool_calls"
    assert result.output == "after limit"
    assert model.requests[-1].settings.tool_choice == "none"


async def test_per_tool_max_calls() -> None:
    @tool(max_calls=1)
    def once() -> str:
        return "ok"

    model = ScriptedModel([call("once"), call("once"), "done"])
    result = await Agent(model, tools=[once]).run("go")
    assert result.tool_calls[0].result == "ok"
    assert "at most 1 time" in (result.tool_calls[1].error or "")


async def test_output_token_budget_raises_usage_limit() -> None:
    agent = Agent(looping_model(), tools=[ping],
                  limits=Limits(max_output_tokens=5, on_limit="error"))
    with pytest.raises(UsageLimitExceeded) as info:
        await agent.run("go")
    assert info.value.context["limit"] == "token_budget"
    assert info.value.result is not None
    assert info.value.result.usage.output_tokens >= 5


async def test_input_token_budget_stops_before_sending() -> None:
    model = looping_model()
    agent = Agent(model, "x" * 400, tools=[ping],
                  limits=Limits(max_input_tokens=50, on_limit="partial"))
    result = await agent.run("go")
    assert result.partial
    assert result.termination.reason == "token_budget"
    assert model.requests == []  # the estimate (~100 tokens) stopped the first request


async def test_wall_clock_timeout_during_slow_model() -> None:
    class SlowModel(ScriptedModel):
        async def request(self, messages: Any, settings: ModelSettings) -> Any:
            if settings.tool_choice != "none":
                await asyncio.sleep(10)
            return await super().request(messages, settings)

    model = SlowModel(lambda _m, _s: "final")
    result = await Agent(model, tools=[ping], limits=Limits(timeout=0.05)).run("go")
    assert result.termination.reason == "timeout"
    assert result.forced_final_answer
    with pytest.raises(RunTimeout) as info:
        await Agent(SlowModel(lambda _m, _s: "x"), tools=[ping],
                    limits=Limits(timeout=0.05, on_limit="error")).run("go")
    assert info.value.result is not None
    assert info.value.result.usage.requests == 1
