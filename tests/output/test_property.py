"""Property test: random model behaviour in structured mode (with and without reflection) never
breaks the invariants of attempts.

After every run, success or failure: the history passes the protocol check in the strictest
shape; every tool call got exactly one ``on_tool_result``, carrying the observation that went
into the history; attempt starts and ends pair up and never exceed ``max_attempts``; a
successful output passed every validator; usage is the sum over the steps.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolcycle import AgentError, Limits, Output, RunContext, ValidationFailed
from toolcycle.agent import Agent
from toolcycle.messages import Message, Usage
from toolcycle.models.base import ModelSettings
from toolcycle.models.protocol import HistoryChecker
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.result import RunResult

from .support import BETTER, GOOD, NEGATIVE, NO_REVENUE, OUTPUT_TOOL, Recorder, Report, lookup

CALLS = st.sampled_from([
    lambda: call("lookup", {"company": "Acme"}),
    lambda: call("lookup", {"company": 3}),
    lambda: call(OUTPUT_TOOL, GOOD),
    lambda: call(OUTPUT_TOOL, BETTER),
    lambda: call(OUTPUT_TOOL, NEGATIVE),
    lambda: call(OUTPUT_TOOL, NO_REVENUE),
    lambda: call(OUTPUT_TOOL, raw="{broken"),
    lambda: call("submit"),
    lambda: call("nope", {}),
])
TURN = st.one_of(st.just("some text"), st.lists(CALLS, min_size=1, max_size=4))


def positive_revenue(report: Report, ctx: RunContext[Any]) -> None:
    if report.revenue <= 0:
        raise ValidationFailed("revenue must be positive")


async def below_1500(report: Report, ctx: RunContext[Any]) -> None:
    await asyncio.sleep(0)
    if report.revenue >= 1500:
        raise ValidationFailed("revenue must be below 1500")


def preview(report: Report, ctx: RunContext[Any]) -> str:
    if report.company == "Acme" and report.revenue == 1500:
        raise RuntimeError("cannot render 1500")
    return f"{report.company}: {report.revenue}"


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    turns=st.lists(TURN, min_size=1, max_size=10),
    reflect=st.booleans(),
    max_iterations=st.integers(1, 4),
    max_attempts=st.integers(1, 4),
    on_limit=st.sampled_from(["final_answer", "partial", "error"]),
    parallel=st.booleans(),
    streaming=st.booleans(),
)
def test_attempt_invariants_hold_under_random_behaviour(
    turns: list[Any], reflect: bool, max_iterations: int, max_attempts: int, on_limit: str,
    parallel: bool, streaming: bool,
) -> None:
    position = {"n": 0}

    def script(messages: list[Message], model_settings: ModelSettings) -> Any:
        turn = turns[position["n"] % len(turns)]
        position["n"] += 1
        if model_settings.tool_choice == OUTPUT_TOOL:
            return call(OUTPUT_TOOL, GOOD if position["n"] % 2 else NEGATIVE)
        return turn if isinstance(turn, str) else [make() for make in turn]

    recorder = Recorder()
    output = Output(Report, validators=[positive_revenue, below_1500],
                    reflect=preview if reflect else None)
    agent = Agent(ScriptedModel(script, wire="both"), tools=[lookup], output=output,
                  callbacks=recorder, parallel_tools=parallel,
                  limits=Limits(max_iterations=max_iterations, max_attempts=max_attempts,
                                on_limit=on_limit))  # type: ignore[arg-type]
    result: RunResult[Report]
    try:
        if streaming:
            result = asyncio.run(agent.stream("Report on Acme.").get_result())
        else:
            result = asyncio.run(agent.run("Report on Acme."))
    except AgentError as error:
        assert error.result is not None
        assert error.code != "AGENT_ERROR", error  # a crash, not a run failure
        result = error.result
    else:
        if not result.partial:
            assert result.output in (Report(**GOOD),)  # the only output passing both rules

    HistoryChecker("both").check([*result.messages, Message.user("next")])
    answers = {r.call_id: r for m in result.messages for r in m.results}
    calls = [c for m in result.messages for c in m.tool_calls]
    assert set(answers) == {c.id for c in calls}
    reported = {(e.call.id, e.result.content, e.result.is_error)
                for e in recorder.of("on_tool_result")}
    assert len(recorder.of("on_tool_result")) == len(calls) == len(recorder.of("on_tool_call"))
    assert reported == {(r.call_id, r.content, r.is_error) for r in answers.values()}

    starts = [e.attempt for e in recorder.of("on_attempt_start")]
    ends = [e.attempt for e in recorder.of("on_attempt_end")]
    assert starts == ends == list(range(1, len(starts) + 1))
    assert len(starts) <= max_attempts
    assert [a.attempt for a in result.trace.attempts] == starts
    assert sum(e.success for e in recorder.of("on_attempt_end")) <= 1

    total = Usage()
    for step in result.trace.steps:
        total.add(step.usage)
    assert total == result.usage
    assert result.termination is not None
