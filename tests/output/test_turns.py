"""What a turn may hold in structured mode: helpers beside the output tool, several output
calls, no tool call at all; the forced output request at the iteration limit; usage over
iterations and attempts."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle import (
    Agent,
    InvalidResponse,
    Limits,
    MaxAttemptsExceeded,
    Message,
    Output,
    RunContext,
    Usage,
    UsageLimitExceeded,
    ValidationFailed,
)
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call

from . import support
from .support import BETTER, GOOD, NEGATIVE, OUTPUT_TOOL, Recorder, Report, lookup


def positive_revenue(report: Report, ctx: RunContext[Any]) -> None:
    if report.revenue <= 0:
        raise ValidationFailed("revenue must be positive")


async def test_output_and_helpers_in_one_turn_the_last_output_wins() -> None:
    support.LOOKUPS.clear()
    turn = [
        call("lookup", {"company": "Acme"}),
        call(OUTPUT_TOOL, GOOD),
        call("lookup", {"company": "Globex"}),
        call(OUTPUT_TOOL, BETTER),
        call("lookup", {"company": "Initech"}),
    ]
    model = ScriptedModel([turn])
    result = await Agent(model, tools=[lookup], output=Report).run("Report on Acme.")

    assert result.output == Report(**BETTER)  # the last output call wins
    assert support.LOOKUPS == ["Acme", "Globex", "Initech"]  # helpers ran, in call order
    answers = result.messages[-1]
    assert answers.role == "tool"
    assert [r.call_id for r in answers.results] == [c.id for c in result.messages[-2].tool_calls]
    contents = [(r.name, r.content, r.is_error) for r in answers.results]
    assert contents == [
        ("lookup", "Acme: revenue 1200 EUR", False),
        (OUTPUT_TOOL, "Superseded by a later call in the same turn.", False),
        ("lookup", "Globex: revenue 1200 EUR", False),
        (OUTPUT_TOOL, "Output accepted.", False),
        ("lookup", "Initech: revenue 1200 EUR", False),
    ]
    records = [(r.name, r.kind, r.result) for r in result.tool_calls]
    assert records[0] == ("lookup", "tool", "Acme: revenue 1200 EUR")
    assert records[3] == (OUTPUT_TOOL, "output", "Output accepted.")
    assert result.iterations == 1


async def test_the_last_output_call_is_the_one_validated() -> None:
    """An earlier valid output does not rescue a later invalid one in the same turn."""
    model = ScriptedModel([
        [call(OUTPUT_TOOL, GOOD), call(OUTPUT_TOOL, NEGATIVE)],
        call(OUTPUT_TOOL, GOOD),
    ])
    agent = Agent(model, output=Output(Report, validators=[positive_revenue]))
    result = await agent.run("go")
    assert result.attempts == 2
    first_answers = result.messages[2].results
    assert [(r.content.splitlines()[0], r.is_error) for r in first_answers] == [
        ("Superseded by a later call in the same turn.", False),
        ("Rejected:", True),
    ]


async def test_helpers_before_the_output_feed_the_next_iteration() -> None:
    def script(messages: list[Message], settings: ModelSettings) -> Any:
        if messages[-1].role == "user":
            return call("lookup", {"company": "Acme"})
        revenue = int(messages[-1].results[0].content.split()[2])
        return call(OUTPUT_TOOL, {"company": "Acme", "revenue": revenue})

    result = await Agent(ScriptedModel(script), tools=[lookup], output=Report).run("go")
    assert result.output == Report(company="Acme", revenue=1200)
    assert result.iterations == 2 and result.attempts == 1


async def test_a_reply_without_tool_calls_costs_an_attempt() -> None:
    model = ScriptedModel(["The revenue is 1200.", call(OUTPUT_TOOL, GOOD)])
    result = await Agent(model, output=Report).run("go")

    assert result.output == Report(**GOOD)
    assert result.attempts == 2
    slip = result.trace.attempts[0]
    assert (slip.success, slip.code, slip.validator) == (False, "INVALID_RESPONSE", "protocol")
    assert f"`{OUTPUT_TOOL}`" in slip.errors[0]
    feedback = result.messages[2]
    assert feedback.role == "user" and OUTPUT_TOOL in feedback.text


async def test_replies_without_tool_calls_until_attempts_run_out_fail_with_invalid_response(
) -> None:
    model = ScriptedModel(["one", "two"])
    agent = Agent(model, output=Report, limits=Limits(max_attempts=2))
    with pytest.raises(InvalidResponse) as caught:
        await agent.run("go")
    assert caught.value.code == "INVALID_RESPONSE"
    assert caught.value.context["attempt"] == 2
    assert caught.value.result is not None
    assert caught.value.result.termination.reason == "max_attempts"
    assert [a.code for a in caught.value.result.trace.attempts] == ["INVALID_RESPONSE"] * 2


def _lookup_forever_then_output(messages: list[Message], settings: ModelSettings) -> Any:
    if settings.tool_choice == OUTPUT_TOOL:
        return call(OUTPUT_TOOL, GOOD)
    return call("lookup", {"company": "Acme"})


async def test_forced_output_at_the_iteration_limit() -> None:
    model = ScriptedModel(_lookup_forever_then_output)
    agent = Agent(model, tools=[lookup], output=Report, limits=Limits(max_iterations=2))
    result = await agent.run("go")

    assert result.output == Report(**GOOD)
    assert [r.settings.tool_choice for r in model.requests] == ["required", "required", OUTPUT_TOOL]
    assert model.requests[-1].settings.tools  # the tools are still declared, one is forced
    assert result.termination.reason == "max_iterations"
    assert result.termination.action == "final_answer"
    assert result.forced_final_answer
    assert [s.forced for s in result.trace.steps] == [False, False, True]


async def test_forced_output_with_reflection_skips_the_preview() -> None:
    previews: list[Report] = []

    def handler(report: Report, ctx: RunContext[Any]) -> str:
        previews.append(report)
        return "preview"

    model = ScriptedModel(_lookup_forever_then_output)
    agent = Agent(model, tools=[lookup], output=Output(Report, reflect=handler),
                  limits=Limits(max_iterations=1))
    result = await agent.run("go")
    assert result.output == Report(**GOOD)
    assert previews == []
    assert model.requests[-1].settings.tool_choice == OUTPUT_TOOL
    assert result.messages[-1].results[0].content == "Output accepted."


async def test_a_forced_output_that_fails_validation_starts_the_next_attempt() -> None:
    """``max_iterations`` bounds one attempt: a rejected forced output leaves the rest."""
    outputs = iter([NEGATIVE, GOOD])

    def script(messages: list[Message], settings: ModelSettings) -> Any:
        if settings.tool_choice == OUTPUT_TOOL:
            return call(OUTPUT_TOOL, next(outputs))
        return call("lookup", {"company": "Acme"})

    model = ScriptedModel(script)
    agent = Agent(model, tools=[lookup], output=Output(Report, validators=[positive_revenue]),
                  limits=Limits(max_iterations=1, max_attempts=2))
    result = await agent.run("go")
    assert result.output == Report(**GOOD)
    assert result.attempts == 2
    assert [r.settings.tool_choice for r in model.requests] == [
        "required", OUTPUT_TOOL, "required", OUTPUT_TOOL,
    ]


async def test_a_forced_output_rejected_on_the_last_attempt_raises() -> None:
    model = ScriptedModel(lambda m, s: call(
        OUTPUT_TOOL if s.tool_choice == OUTPUT_TOOL else "lookup",
        NEGATIVE if s.tool_choice == OUTPUT_TOOL else {"company": "Acme"},
    ))
    agent = Agent(model, tools=[lookup], output=Output(Report, validators=[positive_revenue]),
                  limits=Limits(max_iterations=1, max_attempts=2))
    with pytest.raises(MaxAttemptsExceeded) as caught:
        await agent.run("go")
    assert caught.value.context["attempt"] == 2
    assert len(model.requests) == 4


async def test_tokens_add_up_over_iterations_and_attempts() -> None:
    recorder = Recorder()
    model = ScriptedModel([
        call("lookup", {"company": "Acme"}),
        call(OUTPUT_TOOL, NEGATIVE),
        call("lookup", {"company": "Acme"}),
        call(OUTPUT_TOOL, GOOD),
    ])
    agent = Agent(model, tools=[lookup], output=Output(Report, validators=[positive_revenue]),
                  callbacks=recorder)
    result = await agent.run("go")

    assert result.attempts == 2 and result.iterations == 4
    reported = Usage()
    for event in recorder.of("on_model_response"):
        reported.add(event.usage)
    assert reported.requests == 4
    assert result.usage.input_tokens == reported.input_tokens > 0
    assert result.usage.output_tokens == reported.output_tokens > 0
    assert result.usage.requests == 4
    assert result.usage.tool_calls == 4
    steps = result.trace.steps
    assert sum(s.usage.input_tokens for s in steps) == result.usage.input_tokens
    assert [s.attempt for s in steps] == [1, 1, 2, 2]
    # Each request re-sends the growing history, so input tokens grow step after step.
    inputs = [s.usage.input_tokens for s in steps]
    assert inputs == sorted(inputs) and len(set(inputs)) == 4
    assert result.trace.usage == result.usage


async def test_usage_of_a_failed_run_covers_every_attempt() -> None:
    model = ScriptedModel([call(OUTPUT_TOOL, NEGATIVE)] * 2)
    agent = Agent(model, output=Output(Report, validators=[positive_revenue]),
                  limits=Limits(max_attempts=2))
    with pytest.raises(MaxAttemptsExceeded) as caught:
        await agent.run("go")
    partial = caught.value.result
    assert partial is not None
    assert partial.usage.requests == 2
    assert partial.usage.input_tokens == sum(s.usage.input_tokens for s in partial.trace.steps)


async def test_with_parallel_tools_the_output_call_keeps_its_place() -> None:
    turn = [call("lookup", {"company": "A"}), call("lookup", {"company": "B"}),
            call(OUTPUT_TOOL, GOOD), call("lookup", {"company": "C"})]
    model = ScriptedModel([turn])
    agent = Agent(model, tools=[lookup], output=Report, parallel_tools=True)
    result = await agent.run("go")
    assert result.output == Report(**GOOD)
    answers = result.messages[-1].results
    assert [r.call_id for r in answers] == [c.id for c in result.messages[-2].tool_calls]
    assert [r.content for r in answers] == [
        "A: revenue 1200 EUR", "B: revenue 1200 EUR", "Output accepted.", "C: revenue 1200 EUR",
    ]


async def test_malformed_output_arguments_are_feedback_not_an_attempt() -> None:
    model = ScriptedModel([call(OUTPUT_TOOL, raw='{"company": "Acme", '), call(OUTPUT_TOOL, GOOD)])
    result = await Agent(model, output=Report).run("go")
    assert result.output == Report(**GOOD)
    assert result.attempts == 1 and result.iterations == 2
    answer = result.messages[2].results[0]
    assert answer.is_error and "not valid JSON" in answer.content


async def test_partial_at_the_limit_returns_the_last_schema_valid_output_flagged() -> None:
    model = ScriptedModel([
        call(OUTPUT_TOOL, NEGATIVE),  # attempt 1: rejected by the validator
        call("lookup", {"company": "Acme"}),  # attempt 2: the limit stops it
    ])
    agent = Agent(model, tools=[lookup], output=Output(Report, validators=[positive_revenue]),
                  limits=Limits(max_iterations=1, on_limit="partial"))
    result = await agent.run("go")
    assert result.partial
    assert result.termination.reason == "max_iterations"
    assert result.output == Report(**NEGATIVE)  # what exists, not a validated output
    assert result.messages[-1].role == "tool"


async def test_partial_before_any_output_is_none() -> None:
    model = ScriptedModel([call("lookup", {"company": "Acme"})])
    agent = Agent(model, tools=[lookup], output=Report,
                  limits=Limits(max_iterations=1, on_limit="partial"))
    result = await agent.run("go")
    assert result.partial and result.output is None


async def test_a_forced_output_rejected_at_a_run_wide_limit_raises_that_limit() -> None:
    """After a run-wide limit (here max_tool_calls) no attempt can follow: the run fails with
    the limit's error, which also names the validator and its errors."""
    model = ScriptedModel(_lookup_forever_then_output_negative)
    agent = Agent(model, tools=[lookup], output=Output(Report, validators=[positive_revenue]),
                  limits=Limits(max_tool_calls=1, max_attempts=3))
    with pytest.raises(UsageLimitExceeded) as caught:
        await agent.run("go")
    error = caught.value
    assert error.context["limit"] == "max_tool_calls"
    assert error.context["validator"] == "positive_revenue"
    assert error.context["errors"] == ["revenue must be positive"]
    assert error.result is not None
    assert error.result.termination.reason == "max_tool_calls"
    assert [r.settings.tool_choice for r in model.requests] == ["required", OUTPUT_TOOL]


def _lookup_forever_then_output_negative(messages: list[Message], settings: ModelSettings) -> Any:
    if settings.tool_choice == OUTPUT_TOOL:
        return call(OUTPUT_TOOL, NEGATIVE)
    return call("lookup", {"company": "Acme"})
