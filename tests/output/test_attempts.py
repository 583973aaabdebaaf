"""Structured output over bounded attempts: the schema layer, custom validators (sync and
async, in order, fail fast), attempts running out, and ``max_attempts`` precedence."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from toolcycle import (
    Agent,
    Limits,
    MaxAttemptsExceeded,
    Message,
    Output,
    RunContext,
    ValidationFailed,
)
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call

from .support import BETTER, GOOD, NEGATIVE, NO_REVENUE, OUTPUT_TOOL, Report


def positive_revenue(report: Report, ctx: RunContext[Any]) -> None:
    if report.revenue <= 0:
        raise ValidationFailed(f"revenue must be positive, got {report.revenue}")


async def test_output_on_the_first_try() -> None:
    model = ScriptedModel([call(OUTPUT_TOOL, GOOD)])
    result = await Agent(model, output=Report).run("Report on Acme.")

    assert result.output == Report(**GOOD)
    assert isinstance(result.output, Report)
    assert result.attempts == 1 and result.iterations == 1
    assert result.termination.reason == "completed"
    assert [(a.attempt, a.success) for a in result.trace.attempts] == [(1, True)]
    # The model was offered the output tool, with the output type's schema as parameters.
    offered = {t.name: t for t in model.requests[0].settings.tools}
    assert set(offered) == {OUTPUT_TOOL}
    assert offered[OUTPUT_TOOL].parameters["required"] == ["company", "revenue"]
    assert "short report about a company" in offered[OUTPUT_TOOL].description
    # The output call is answered, so the history can continue.
    assert result.messages[-1].results[0].content == "Output accepted."


async def test_schema_failure_then_success() -> None:
    model = ScriptedModel([call(OUTPUT_TOOL, NO_REVENUE), call(OUTPUT_TOOL, GOOD)])
    result = await Agent(model, output=Report).run("Report on Acme.")

    assert result.output == Report(**GOOD)
    assert result.attempts == 2
    failed = result.trace.attempts[0]
    assert (failed.success, failed.validator, failed.code) == (False, "schema", "VALIDATION")
    assert failed.errors == ["revenue: Field required (expected an integer)"]
    # The failed call got an is_error result naming the problem, then the retry prompt.
    rejected = result.messages[2]
    assert rejected.role == "tool" and rejected.results[0].is_error
    assert "revenue: Field required" in rejected.results[0].content
    retry = result.messages[3]
    assert retry.role == "user" and "revenue: Field required" in retry.text
    assert "attempt 1" in retry.text


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
async def test_custom_validator_failure_then_success(asynchronous: bool) -> None:
    seen: list[tuple[Report, Any, int, str]] = []

    def check(report: Report, ctx: RunContext[Any]) -> None:
        seen.append((report, ctx.deps, ctx.attempt, ctx.run_id))
        if report.revenue <= 0:
            raise ValidationFailed("revenue must be positive")

    async def acheck(report: Report, ctx: RunContext[Any]) -> None:
        await asyncio.sleep(0)
        check(report, ctx)

    validator = acheck if asynchronous else check
    model = ScriptedModel([call(OUTPUT_TOOL, NEGATIVE), call(OUTPUT_TOOL, GOOD)])
    agent = Agent(model, output=Output(Report, validators=[validator]))
    result = await agent.run("Report on Acme.", deps={"tenant": 7}, run_id="run-1")

    assert result.output == Report(**GOOD)
    # The validator got the typed output and the run context, on each attempt.
    assert seen == [
        (Report(**NEGATIVE), {"tenant": 7}, 1, "run-1"),
        (Report(**GOOD), {"tenant": 7}, 2, "run-1"),
    ]
    failed = result.trace.attempts[0]
    assert failed.validator == validator.__name__
    assert failed.errors == ["revenue must be positive"]
    assert "revenue must be positive" in result.messages[2].results[0].content


async def test_validators_run_in_order_and_stop_at_the_first_failure() -> None:
    calls: list[str] = []

    def first(report: Report, ctx: RunContext[Any]) -> None:
        calls.append("first")

    async def second(report: Report, ctx: RunContext[Any]) -> None:
        calls.append("second")
        if report.revenue < 1500:
            raise ValidationFailed("revenue below 1500")

    def third(report: Report, ctx: RunContext[Any]) -> None:
        calls.append("third")

    model = ScriptedModel([call(OUTPUT_TOOL, GOOD), call(OUTPUT_TOOL, BETTER)])
    output = Output(Report, validators=[first, second, third])
    result = await Agent(model, output=output).run("Report on Acme.")

    assert calls == ["first", "second", "first", "second", "third"]
    assert result.trace.attempts[0].validator == "second"
    assert result.output == Report(**BETTER)


async def test_schema_errors_stop_before_the_custom_validators() -> None:
    calls: list[Report] = []

    def record(report: Report, ctx: RunContext[Any]) -> None:
        calls.append(report)

    model = ScriptedModel([call(OUTPUT_TOOL, NO_REVENUE), call(OUTPUT_TOOL, GOOD)])
    await Agent(model, output=Output(Report, validators=[record])).run("go")
    assert calls == [Report(**GOOD)]


async def test_attempts_exhausted_names_validator_count_errors_and_keeps_the_partial_result(
) -> None:
    model = ScriptedModel([call(OUTPUT_TOOL, NEGATIVE)] * 3)
    agent = Agent(model, "Write reports.", output=Output(Report, validators=[positive_revenue]))
    with pytest.raises(MaxAttemptsExceeded) as caught:
        await agent.run("Report on Acme.")

    error = caught.value
    assert error.code == "MAX_ATTEMPTS"
    assert error.context["attempt"] == 3
    assert error.context["validator"] == "positive_revenue"
    assert error.context["errors"] == ["revenue must be positive, got -5"]
    text = str(error)
    assert "3 attempt(s)" in text and "positive_revenue" in text and "got -5" in text

    partial = error.result
    assert partial is not None and partial.output is None
    assert partial.termination.reason == "max_attempts"
    assert partial.termination.action == "raised"
    assert len(partial.trace.steps) == 3
    assert [s.attempt for s in partial.trace.steps] == [1, 2, 3]
    assert [(a.attempt, a.success, a.validator) for a in partial.trace.attempts] == [
        (1, False, "positive_revenue"), (2, False, "positive_revenue"),
        (3, False, "positive_revenue"),
    ]
    assert partial.trace.status == "failure"
    assert partial.trace.error is not None and partial.trace.error["code"] == "MAX_ATTEMPTS"
    assert partial.usage.requests == 3 and partial.usage.input_tokens > 0
    # The last output call is answered too: the history can be continued by a later run.
    assert partial.messages[-1].role == "tool" and partial.messages[-1].results[0].is_error
    follow_up = ScriptedModel([call(OUTPUT_TOOL, GOOD)], wire="both")
    again = Agent(follow_up, output=Report)
    result = await again.run("Try once more.", message_history=partial.messages)
    assert result.output == Report(**GOOD)


def _always_negative(messages: list[Message], settings: ModelSettings) -> Any:
    return call(OUTPUT_TOOL, NEGATIVE)


@pytest.mark.parametrize(
    ("agent_limits", "run_limits", "expected"),
    [
        (None, None, 3),  # the system default
        (Limits(max_attempts=2), None, 2),  # the agent overrides the system
        (Limits(max_attempts=2), Limits(max_attempts=4), 4),  # the run overrides the agent
        (Limits(max_attempts=5), Limits(max_iterations=3), 5),  # unset at run level: inherited
        (None, Limits(max_attempts=1), 1),
    ],
)
async def test_max_attempts_precedence(
    agent_limits: Limits | None, run_limits: Limits | None, expected: int
) -> None:
    model = ScriptedModel(_always_negative)
    agent = Agent(model, output=Output(Report, validators=[positive_revenue]),
                  limits=agent_limits)
    with pytest.raises(MaxAttemptsExceeded) as caught:
        await agent.run("go", limits=run_limits)
    assert caught.value.context["attempt"] == expected
    assert len(model.requests) == expected


async def test_custom_error_prompt_starts_the_next_attempt() -> None:
    def prompt(errors: list[str], attempt: int) -> str:
        return f"Attempt {attempt} failed because: {' | '.join(errors)}. Try again."

    model = ScriptedModel([call(OUTPUT_TOOL, NEGATIVE), call(OUTPUT_TOOL, GOOD)])
    output = Output(Report, validators=[positive_revenue], error_prompt=prompt)
    result = await Agent(model, output=output).run("go")
    assert result.messages[3].role == "user"
    assert result.messages[3].text == (
        "Attempt 1 failed because: revenue must be positive, got -5. Try again."
    )


async def test_a_validator_that_crashes_fails_the_run_with_the_history_intact() -> None:
    """A bug in a validator is not a rejection: the run fails, but stays well-formed."""

    def broken(report: Report, ctx: RunContext[Any]) -> None:
        raise KeyError("oops")

    model = ScriptedModel([call(OUTPUT_TOOL, GOOD)])
    agent = Agent(model, output=Output(Report, validators=[broken]))
    with pytest.raises(Exception) as caught:
        await agent.run("go")
    partial = getattr(caught.value, "result", None)
    assert partial is not None
    assert "KeyError" in str(caught.value)
    assert partial.messages[-1].role == "tool"
    assert [r.call_id for r in partial.messages[-1].results] == ["call_1"]


class MinimumRevenue:
    """A validator object (a callable instance) with an async ``__call__``."""

    def __init__(self, minimum: int) -> None:
        self.minimum = minimum

    async def __call__(self, report: Report, ctx: RunContext[Any]) -> None:
        if report.revenue < self.minimum:
            raise ValidationFailed(f"revenue must be at least {self.minimum}")


async def test_the_trace_shows_attempts_and_their_validation_errors() -> None:
    model = ScriptedModel([call(OUTPUT_TOOL, NEGATIVE), call(OUTPUT_TOOL, GOOD),
                           call(OUTPUT_TOOL, BETTER)])
    output = Output(Report, validators=[positive_revenue, MinimumRevenue(1500)])
    result = await Agent(model, output=output).run("go")
    assert result.output == Report(**BETTER)
    trace = result.trace
    assert [(a.attempt, a.success, a.validator) for a in trace.attempts] == [
        (1, False, "positive_revenue"), (2, False, "MinimumRevenue"), (3, True, None),
    ]
    text = trace.render()
    assert "attempt 1 failed validation (positive_revenue): revenue must be positive" in text
    assert "attempt 2 failed validation (MinimumRevenue): revenue must be at least 1500" in text
    # The output calls' records carry the final observations, as the model saw them.
    assert [r.error is not None for r in result.tool_calls] == [True, True, False]
    assert result.tool_calls[-1].result == "Output accepted."
    again = type(trace).from_json(trace.to_json())
    assert again.attempts == trace.attempts
    assert again.output == {"company": "Acme", "revenue": 1500, "risks": ["currency", "supply"]}
