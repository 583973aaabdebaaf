"""The loop guard (``Limits.max_repeats``): identical calls without progress get a nudge, then
a refusal, then the run ends with a stated reason; polling that sees new results never trips."""

from __future__ import annotations

import itertools

import pytest
from pydantic import BaseModel

from toolcycle import Agent, ConfigurationError, Limits, tool
from toolcycle.errors import RepeatedCalls
from toolcycle.events import LoopGuardEvent
from toolcycle.testing import HistoryChecker, ScriptedModel, call


@tool
def lookup(city: str) -> str:
    """Weather of a city."""
    return f"{city}: sunny"


def _stuck(n: int, answer: str = "It is sunny.") -> ScriptedModel:
    return ScriptedModel([call("lookup", {"city": "Paris"})] * n + [answer])


async def test_a_nudge_then_a_refusal_then_the_run_ends_with_the_best_answer() -> None:
    seen: list[LoopGuardEvent] = []
    agent = Agent(_stuck(5), tools=[lookup], callbacks={"on_loop_guard": seen.append},
                  limits=Limits(max_iterations=20))
    result = await agent.run("weather in Paris?")
    observations = [c.result or c.error or "" for c in result.tool_calls]
    assert observations[:2] == ["Paris: sunny"] * 2
    assert "[loop guard]" in observations[2] and observations[2].startswith("Paris: sunny")
    assert "Refused" in observations[3] and "ends the run" in observations[3]
    assert "the run ends now" in observations[4]
    assert [e.action for e in seen] == ["nudge", "refuse", "stop"]
    # the run ended at the limit with one more request without tools: the best valid output
    assert result.termination.reason == "repeated_calls"
    assert result.forced_final_answer
    assert "loop guard ended the run" in result.termination.detail
    assert result.output == "It is sunny."
    assert result.trace.loop_guard == {"nudge": 1, "refuse": 1, "stop": 1}
    assert "loop guard: nudge 1, refuse 1, stop 1" in result.trace.render()
    HistoryChecker().check(result.messages)


async def test_on_limit_error_raises_a_typed_error() -> None:
    agent = Agent(_stuck(6), tools=[lookup], limits=Limits(max_iterations=20, on_limit="error"))
    with pytest.raises(RepeatedCalls) as caught:
        await agent.run("weather?")
    assert caught.value.code == "REPEATED_CALLS"
    assert caught.value.result is not None
    assert caught.value.result.termination.reason == "repeated_calls"


async def test_polling_that_sees_new_results_never_trips_it() -> None:
    ticks = itertools.count()

    @tool
    def job_status(job: str) -> str:
        """Where a job is."""
        return f"{job}: {next(ticks) * 10}% done"

    model = ScriptedModel([call("job_status", {"job": "j1"})] * 12 + ["done"])
    result = await Agent(model, tools=[job_status], limits=Limits(max_iterations=20)).run("wait")
    assert result.output == "done" and result.termination.reason == "completed"
    assert result.trace.loop_guard == {}
    assert all("[loop guard]" not in (c.result or "") for c in result.tool_calls)


async def test_repeated_lookups_with_new_results_and_other_arguments_never_trip_it() -> None:
    cities = ["Paris", "Rome", "Paris", "Rome", "Paris", "Rome", "Oslo"]
    model = ScriptedModel([call("lookup", {"city": c}) for c in cities] + ["all sunny"])
    result = await Agent(model, tools=[lookup], limits=Limits(max_iterations=20)).run("all")
    assert result.termination.reason == "completed"  # alternating: each its own count
    # Paris and Rome each returned the same a third time: nudged, never refused
    assert result.trace.loop_guard == {"nudge": 2}


async def test_arguments_in_another_order_are_the_same_call() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    calls = [call("add", {"a": 1, "b": 2}), call("add", {"b": 2, "a": 1})] * 3
    result = await Agent(ScriptedModel([*calls, "3"]), tools=[add],
                         limits=Limits(max_iterations=20)).run("add")
    assert result.termination.reason == "repeated_calls"


async def test_a_changed_result_starts_the_count_again() -> None:
    values = iter(["a", "a", "b", "b", "c", "c", "c"])

    @tool
    def poll() -> str:
        """Poll."""
        return next(values)

    model = ScriptedModel([call("poll")] * 7 + ["ok"])
    result = await Agent(model, tools=[poll], limits=Limits(max_iterations=20)).run("p")
    assert result.termination.reason == "completed"
    assert result.trace.loop_guard == {"nudge": 1}  # only c came a third time in a row


async def test_structured_output_ends_with_the_output_forced() -> None:
    class City(BaseModel):
        name: str

    model = ScriptedModel([call("lookup", {"city": "Paris"})] * 5
                          + [call("final_result", {"name": "Paris"})])
    result = await Agent(model, tools=[lookup], output=City,
                         limits=Limits(max_iterations=20)).run("which?")
    assert result.output == City(name="Paris")
    assert result.termination.reason == "repeated_calls"


async def test_it_can_be_turned_off_and_tuned() -> None:
    off = await Agent(_stuck(6), tools=[lookup],
                      limits=Limits(max_iterations=20, max_repeats=0)).run("w")
    assert off.termination.reason == "completed" and off.trace.loop_guard == {}
    tight = await Agent(_stuck(3), tools=[lookup],
                        limits=Limits(max_iterations=20, max_repeats=1)).run("w")
    assert tight.termination.reason == "repeated_calls"
    assert tight.trace.loop_guard == {"nudge": 1, "refuse": 1, "stop": 1}
    with pytest.raises(ConfigurationError):
        Limits(max_repeats=-1)


@pytest.mark.parametrize("grounding", [False, True])
async def test_an_answer_that_is_the_loop_guards_note_is_not_a_success(grounding: bool) -> None:
    """Seen on the 0.5B (first-hour dev set, its family's own layout): after the nudge, the
    model answered with the note itself, and the run said ``success``. The note is the loop's
    text on a result, not an answer: passed through, it is a ``tool_error`` like a tool's."""
    note = "[loop guard] `lookup` returned this same result 3 times for these same arguments."
    agent = Agent(_stuck(3, note), tools=[lookup], grounding=grounding)
    result = await agent.run("weather in Paris?")
    assert result.output == note and result.status == "tool_error", result.trace.render()
    again = await Agent(_stuck(3), tools=[lookup], grounding=grounding).run("weather in Paris?")
    assert again.status == "success"  # an answer after the nudge is an answer
