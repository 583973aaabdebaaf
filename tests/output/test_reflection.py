"""Reflection: the output tool returns a preview, the model refines, ``submit`` ends the
attempt; schema errors skip the handler; handler errors are observations; ``submit`` before
any output costs an attempt."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle import (
    Agent,
    ConfigurationError,
    Limits,
    Output,
    RunContext,
    SubmitBeforeOutput,
    ValidationFailed,
)
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.output import SUBMIT_DESCRIPTION

from .support import BETTER, GOOD, NEGATIVE, NO_REVENUE, OUTPUT_TOOL, Report, lookup


class Previews:
    """A reflection handler that remembers what it rendered."""

    def __init__(self) -> None:
        self.seen: list[tuple[Report, int]] = []

    def __call__(self, report: Report, ctx: RunContext[Any]) -> str:
        self.seen.append((report, ctx.attempt))
        return f"PREVIEW {report.company}: {report.revenue} EUR, risks={len(report.risks)}"


def positive_revenue(report: Report, ctx: RunContext[Any]) -> None:
    if report.revenue <= 0:
        raise ValidationFailed("revenue must be positive")


async def test_several_output_calls_with_previews_then_submit() -> None:
    handler = Previews()
    model = ScriptedModel([
        call(OUTPUT_TOOL, GOOD),
        call(OUTPUT_TOOL, BETTER),
        call("submit"),
    ])
    result = await Agent(model, output=Output(Report, reflect=handler)).run("go")

    assert result.output == Report(**BETTER)  # the last output before submit
    assert handler.seen == [(Report(**GOOD), 1), (Report(**BETTER), 1)]
    assert result.attempts == 1 and result.iterations == 3
    first = result.messages[2].results[0]
    assert first.content.startswith("PREVIEW Acme: 1200 EUR, risks=1")
    assert "call `submit`" in first.content and not first.is_error
    assert result.messages[-1].results[0].name == "submit"
    assert result.messages[-1].results[0].content == "Output accepted."
    assert [r.kind for r in result.tool_calls] == ["output", "output", "submit"]
    # The submit tool is injected with the documented name, description and no parameters.
    tools = {t.name: t for t in model.requests[0].settings.tools}
    assert set(tools) == {OUTPUT_TOOL, "submit"}
    assert tools["submit"].description == SUBMIT_DESCRIPTION
    assert tools["submit"].parameters == {"type": "object", "properties": {}}


async def test_preview_and_submit_in_the_same_turn() -> None:
    handler = Previews()
    model = ScriptedModel([[call("lookup", {"company": "Acme"}), call(OUTPUT_TOOL, GOOD),
                            call("submit")]])
    agent = Agent(model, tools=[lookup], output=Output(Report, reflect=handler))
    result = await agent.run("go")
    assert result.output == Report(**GOOD)
    assert len(handler.seen) == 1
    assert [r.content.split()[0] for r in result.messages[-1].results] == [
        "Acme:", "PREVIEW", "Output",
    ]


async def test_submitted_output_is_validated_and_rejection_needs_a_new_output() -> None:
    handler = Previews()
    model = ScriptedModel([
        call(OUTPUT_TOOL, NEGATIVE), call("submit"),   # attempt 1: rejected by the validator
        call(OUTPUT_TOOL, GOOD), call("submit"),       # attempt 2: accepted
    ])
    agent = Agent(model, output=Output(Report, validators=[positive_revenue], reflect=handler))
    result = await agent.run("go")
    assert result.output == Report(**GOOD)
    assert [(a.attempt, a.success, a.validator) for a in result.trace.attempts] == [
        (1, False, "positive_revenue"), (2, True, None),
    ]
    assert handler.seen == [(Report(**NEGATIVE), 1), (Report(**GOOD), 2)]
    rejected = result.messages[4].results[0]
    assert rejected.name == "submit" and rejected.is_error
    assert "revenue must be positive" in rejected.content


async def test_submit_before_any_output_costs_an_attempt() -> None:
    handler = Previews()
    model = ScriptedModel([call("submit"), call(OUTPUT_TOOL, GOOD), call("submit")])
    result = await Agent(model, output=Output(Report, reflect=handler)).run("go")
    assert result.output == Report(**GOOD)
    assert result.attempts == 2
    slip = result.trace.attempts[0]
    assert (slip.success, slip.code) == (False, "SUBMIT_BEFORE_OUTPUT")
    answer = result.messages[2].results[0]
    assert answer.is_error and f"`{OUTPUT_TOOL}` first" in answer.content


async def test_a_new_attempt_needs_a_new_output_before_submit() -> None:
    """The rejected output of attempt 1 cannot be resubmitted unchanged in attempt 2."""
    model = ScriptedModel([call(OUTPUT_TOOL, NEGATIVE), call("submit"), call("submit")])
    output = Output(Report, validators=[positive_revenue], reflect=Previews())
    with pytest.raises(SubmitBeforeOutput):
        await Agent(model, output=output, limits=Limits(max_attempts=2)).run("go")


async def test_submit_before_output_until_attempts_run_out_fails_with_that_code() -> None:
    model = ScriptedModel([call("submit")] * 3)
    agent = Agent(model, output=Output(Report, reflect=Previews()))
    with pytest.raises(SubmitBeforeOutput) as caught:
        await agent.run("go")
    error = caught.value
    assert error.code == "SUBMIT_BEFORE_OUTPUT"
    assert error.context["attempt"] == 3
    assert error.result is not None
    assert [a.code for a in error.result.trace.attempts] == ["SUBMIT_BEFORE_OUTPUT"] * 3
    assert error.result.messages[-1].role == "tool"  # the last submit is answered too


async def test_schema_error_in_reflection_mode_skips_the_handler() -> None:
    handler = Previews()
    model = ScriptedModel([call(OUTPUT_TOOL, NO_REVENUE), call(OUTPUT_TOOL, GOOD),
                           call("submit")])
    result = await Agent(model, output=Output(Report, reflect=handler)).run("go")
    assert handler.seen == [(Report(**GOOD), 1)]
    schema_answer = result.messages[2].results[0]
    assert schema_answer.is_error
    assert "does not match the schema" in schema_answer.content
    assert "revenue: Field required" in schema_answer.content
    assert result.attempts == 1  # a schema error while previewing is feedback, not an attempt
    assert result.output == Report(**GOOD)


async def test_submit_after_only_schema_errors_is_a_submit_before_output() -> None:
    handler = Previews()
    model = ScriptedModel([call(OUTPUT_TOOL, NO_REVENUE), call("submit"),
                           call(OUTPUT_TOOL, GOOD), call("submit")])
    result = await Agent(model, output=Output(Report, reflect=handler)).run("go")
    assert result.trace.attempts[0].code == "SUBMIT_BEFORE_OUTPUT"
    assert result.output == Report(**GOOD)


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
async def test_a_handler_that_raises_is_an_error_observation_and_the_run_goes_on(
    asynchronous: bool,
) -> None:
    calls: list[Report] = []

    def render(report: Report) -> str:
        calls.append(report)
        if len(calls) == 1:
            raise RuntimeError("template missing")
        return "fine"

    async def arender(report: Report, ctx: RunContext[Any]) -> str:
        return render(report)

    handler = arender if asynchronous else (lambda report, ctx: render(report))
    model = ScriptedModel([call(OUTPUT_TOOL, GOOD), call(OUTPUT_TOOL, BETTER), call("submit")])
    result = await Agent(model, output=Output(Report, reflect=handler)).run("go")
    failed = result.messages[2].results[0]
    assert failed.is_error
    assert "RuntimeError: template missing" in failed.content
    assert result.messages[4].results[0].content.startswith("fine")
    assert result.output == Report(**BETTER)
    assert result.tool_calls[0].error is not None and "template missing" in (
        result.tool_calls[0].error
    )


async def test_reflection_comes_back_after_a_forced_attempt() -> None:
    handler = Previews()
    model = ScriptedModel([
        call("lookup", {"company": "Acme"}),
        call("lookup", {"company": "Acme"}),
        call(OUTPUT_TOOL, NEGATIVE),  # the forced request at max_iterations: no preview
        call(OUTPUT_TOOL, GOOD),  # attempt 2: previewed again
        call("submit"),
    ])
    output = Output(Report, validators=[positive_revenue], reflect=handler)
    agent = Agent(model, tools=[lookup], output=output, limits=Limits(max_iterations=2))
    result = await agent.run("go")
    assert result.output == Report(**GOOD)
    assert [r.settings.tool_choice for r in model.requests] == [
        "required", "required", OUTPUT_TOOL, "required", "required",
    ]
    assert handler.seen == [(Report(**GOOD), 2)]
    assert [r.kind for r in result.tool_calls] == ["tool", "tool", "output", "output", "submit"]


def test_reflection_cannot_be_configured_half_way() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Output(str, reflect=lambda output, ctx: str(output))
    assert "reflection needs a structured output type" in str(caught.value)
    with pytest.raises(ConfigurationError) as caught:
        Output(Report, name="submit")
    assert "reserved" in str(caught.value)
    with pytest.raises(ConfigurationError) as caught:
        Agent(ScriptedModel([]), tools=[_submit_tool()], output=Output(Report, reflect=Previews()))
    assert "clashes with the submit tool" in str(caught.value)
    # Without reflection there is no submit tool, so a user tool may take the name.
    agent = Agent(ScriptedModel([]), tools=[_submit_tool()], output=Report)
    assert "submit" in agent.tools


def _submit_tool() -> Any:
    def submit(text: str) -> str:
        """Submit a form.

        Args:
            text: What to submit.
        """
        return text

    return submit
