"""Events of structured runs: the order of the attempt callbacks, tool events for the output
tool and ``submit`` (carrying the observation the model really sees), and streaming."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle import (
    Agent,
    Limits,
    MaxAttemptsExceeded,
    MaxIterationsExceeded,
    Output,
    RunContext,
    ValidationFailed,
)
from toolcycle.events import (
    AttemptEnd,
    AttemptStart,
    FinalResult,
    RunSuccess,
    ToolCallEvent,
    ToolResultEvent,
    ValidationFailure,
)
from toolcycle.models.scripted import ScriptedModel, call

from .support import BETTER, GOOD, NEGATIVE, NO_REVENUE, OUTPUT_TOOL, Recorder, Report, lookup

ATTEMPT_HOOKS = ("on_attempt_start", "on_validation_failure", "on_attempt_end", "on_success",
                 "on_failure", "on_final_result")


def positive_revenue(report: Report, ctx: RunContext[Any]) -> None:
    if report.revenue <= 0:
        raise ValidationFailed("revenue must be positive")


def _summary(recorder: Recorder) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for hook, event in recorder.events:
        if isinstance(event, AttemptStart):
            out.append((hook, event.attempt))
        elif isinstance(event, AttemptEnd):
            out.append((hook, event.attempt, event.success))
        elif isinstance(event, ValidationFailure):
            out.append((hook, event.attempt, event.validator, event.code))
        elif isinstance(event, ToolCallEvent):
            out.append((hook, event.call.name))
        elif isinstance(event, ToolResultEvent):
            out.append((hook, event.call.name, event.result.is_error))
        elif hook in ("on_final_result", "on_success", "on_failure", "on_run_start"):
            out.append((hook,))
    return out


async def test_callbacks_order_across_attempts() -> None:
    recorder = Recorder()
    model = ScriptedModel([
        call(OUTPUT_TOOL, NO_REVENUE),
        [call("lookup", {"company": "Acme"}), call(OUTPUT_TOOL, NEGATIVE)],
        call(OUTPUT_TOOL, GOOD),
    ])
    agent = Agent(model, tools=[lookup], callbacks=recorder,
                  output=Output(Report, validators=[positive_revenue]))
    result = await agent.run("go")
    assert result.output == Report(**GOOD)
    assert result.callback_errors == []

    assert _summary(recorder) == [
        ("on_run_start",),
        ("on_attempt_start", 1),
        ("on_tool_call", OUTPUT_TOOL),
        ("on_tool_result", OUTPUT_TOOL, True),
        ("on_validation_failure", 1, "schema", "VALIDATION"),
        ("on_attempt_end", 1, False),
        ("on_attempt_start", 2),
        ("on_tool_call", "lookup"),
        ("on_tool_result", "lookup", False),
        ("on_tool_call", OUTPUT_TOOL),
        ("on_tool_result", OUTPUT_TOOL, True),
        ("on_validation_failure", 2, "positive_revenue", "VALIDATION"),
        ("on_attempt_end", 2, False),
        ("on_attempt_start", 3),
        ("on_tool_call", OUTPUT_TOOL),
        ("on_tool_result", OUTPUT_TOOL, False),
        ("on_attempt_end", 3, True),
        ("on_final_result",),
        ("on_success",),
    ]
    failures = recorder.of("on_validation_failure")
    assert failures[0].errors == ["revenue: Field required (expected an integer)"]
    assert failures[1].errors == ["revenue must be positive"]
    success = recorder.of("on_success")[0]
    assert isinstance(success, RunSuccess) and success.result.output == Report(**GOOD)
    final = recorder.of("on_final_result")[0]
    assert isinstance(final, FinalResult) and final.output == Report(**GOOD)


async def test_tool_results_of_the_output_tool_carry_what_the_model_sees() -> None:
    """``on_tool_result`` reports the observation that went into the conversation, so traces
    and spans built from callbacks agree with the history."""
    recorder = Recorder()
    model = ScriptedModel([
        [call(OUTPUT_TOOL, GOOD), call(OUTPUT_TOOL, NEGATIVE)],
        call(OUTPUT_TOOL, GOOD),
    ])
    agent = Agent(model, callbacks=recorder, output=Output(Report, validators=[positive_revenue]))
    result = await agent.run("go")

    seen = {(e.call.id, e.result.content, e.result.is_error)
            for e in recorder.of("on_tool_result")}
    sent = {(r.call_id, r.content, r.is_error) for m in result.messages for r in m.results}
    assert seen == sent
    assert len(recorder.of("on_tool_result")) == len(recorder.of("on_tool_call")) == 3


async def test_tool_events_fire_for_the_preview_and_submit() -> None:
    recorder = Recorder()
    model = ScriptedModel([call(OUTPUT_TOOL, NEGATIVE), call("submit"),
                           call(OUTPUT_TOOL, GOOD), call("submit")])
    output = Output(Report, validators=[positive_revenue],
                    reflect=lambda report, ctx: f"revenue {report.revenue}")
    await Agent(model, callbacks=recorder, output=output).run("go")
    results = [(e.call.name, e.result.content.splitlines()[0], e.result.is_error)
               for e in recorder.of("on_tool_result")]
    assert results == [
        (OUTPUT_TOOL, "revenue -5", False),
        ("submit", "Rejected:", True),
        (OUTPUT_TOOL, "revenue 1200", False),
        ("submit", "Output accepted.", False),
    ]
    assert [e.call.name for e in recorder.of("on_tool_call")] == [
        OUTPUT_TOOL, "submit", OUTPUT_TOOL, "submit",
    ]
    # The rejected submit is reported before the validation failure it caused.
    order = recorder.hooks("on_tool_result", "on_validation_failure", "on_attempt_end")
    assert order[:4] == ["on_tool_result", "on_tool_result", "on_validation_failure",
                         "on_attempt_end"]


async def test_callbacks_on_a_failed_run_end_with_on_failure() -> None:
    recorder = Recorder()
    model = ScriptedModel([call(OUTPUT_TOOL, NEGATIVE)] * 2)
    agent = Agent(model, callbacks=recorder, output=Output(Report, validators=[positive_revenue]))
    with pytest.raises(MaxAttemptsExceeded):
        await agent.run("go", limits=Limits(max_attempts=2))
    assert recorder.hooks(*ATTEMPT_HOOKS) == [
        "on_attempt_start", "on_validation_failure", "on_attempt_end",
        "on_attempt_start", "on_validation_failure", "on_attempt_end",
        "on_failure",
    ]
    assert [e.success for e in recorder.of("on_attempt_end")] == [False, False]
    failure = recorder.of("on_failure")[0]
    assert isinstance(failure.error, MaxAttemptsExceeded)
    assert failure.result.usage.requests == 2


async def test_streaming_yields_attempt_and_validation_events() -> None:
    model = ScriptedModel([
        "I will think first.",
        call(OUTPUT_TOOL, NEGATIVE),
        [call(OUTPUT_TOOL, BETTER)],
    ])
    agent = Agent(model, output=Output(Report, validators=[positive_revenue]))
    stream = agent.stream("go")
    kinds: list[tuple[Any, ...]] = []
    async for event in stream:
        if isinstance(event, AttemptStart):
            kinds.append(("start", event.attempt))
        elif isinstance(event, ValidationFailure):
            kinds.append(("failure", event.attempt, event.code))
        elif isinstance(event, AttemptEnd):
            kinds.append(("end", event.attempt, event.success))
        elif isinstance(event, FinalResult):
            kinds.append(("final", event.output))
    assert kinds == [
        ("start", 1), ("failure", 1, "INVALID_RESPONSE"), ("end", 1, False),
        ("start", 2), ("failure", 2, "VALIDATION"), ("end", 2, False),
        ("start", 3), ("end", 3, True),
        ("final", Report(**BETTER)),
    ]
    assert stream.result is not None and stream.result.output == Report(**BETTER)


async def test_every_attempt_start_is_paired_with_an_end_even_when_the_run_fails_inside() -> None:
    recorder = Recorder()
    model = ScriptedModel([call(OUTPUT_TOOL, NEGATIVE), call("lookup", {"company": "Acme"})])
    agent = Agent(model, tools=[lookup], callbacks=recorder,
                  output=Output(Report, validators=[positive_revenue]),
                  limits=Limits(max_iterations=1, on_limit="error"))
    with pytest.raises(MaxIterationsExceeded) as caught:
        await agent.run("go")
    assert recorder.hooks(*ATTEMPT_HOOKS) == [
        "on_attempt_start", "on_validation_failure", "on_attempt_end",
        "on_attempt_start", "on_attempt_end",
        "on_failure",
    ]
    assert [e.success for e in recorder.of("on_attempt_end")] == [False, False]
    partial = caught.value.result
    assert partial is not None
    assert [(a.attempt, a.success, a.code) for a in partial.trace.attempts] == [
        (1, False, "VALIDATION"), (2, False, "MAX_ITERATIONS"),
    ]


async def test_a_partial_attempt_is_recorded_in_the_trace() -> None:
    recorder = Recorder()
    model = ScriptedModel([call("lookup", {"company": "Acme"})])
    agent = Agent(model, tools=[lookup], output=Report, callbacks=recorder,
                  limits=Limits(max_iterations=1, on_limit="partial"))
    result = await agent.run("go")
    assert result.partial
    assert [(a.attempt, a.success) for a in result.trace.attempts] == [(1, False)]
    assert recorder.hooks("on_attempt_start", "on_attempt_end", "on_success") == [
        "on_attempt_start", "on_attempt_end", "on_success",
    ]
