"""A status that tells the truth (issue 64, docs/status.md): every way a run ends has its own
word, and only a run the model finished on its own, with an answer that is not a tool's error
passed through, reads ``"success"``. Before, every run below that returned said "success"."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest
from pydantic import BaseModel

from toolcycle import Agent, Limits, MaxIterationsExceeded, tool
from toolcycle.events import RunFailure, RunSuccess
from toolcycle.models.base import ModelSettings
from toolcycle.status import (
    NOT_SUCCESS,
    RUN_STATUSES,
    is_run_status,
    is_success,
    passes_tool_error,
    returned_status,
)
from toolcycle.testing import ScriptedModel, call

LOOKUP_ERROR = "Tool `lookup` failed: ValueError: no city called 'Atlantis' in the atlas"


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


@tool
def lookup(city: str) -> str:
    """Find a city's temperature."""
    if city == "Atlantis":
        raise ValueError("no city called 'Atlantis' in the atlas")
    return "21 C"


@tool
async def hang() -> str:
    """Never returns: the run's timeout is what ends it."""
    await asyncio.Event().wait()
    return "never"


class Answer(BaseModel):
    text: str


def _looping(answer: Any) -> ScriptedModel:
    """Calls tools until it is made to answer: text when tools are withdrawn, the output tool
    when it is forced."""

    def script(_messages: Any, settings: ModelSettings) -> Any:
        if settings.tool_choice == "none":
            return answer
        if settings.tool_choice == "final_result":
            return call("final_result", {"text": answer})
        return [call("ping"), call("ping")]

    return ScriptedModel(script)


#: Each limit, set so that the looping model reaches it (budgets sized to the scripted
#: model's own usage estimate: a few tokens a request).
LIMITS = {
    "max_iterations": Limits(max_iterations=2),
    "max_tool_calls": Limits(max_tool_calls=3),
    "token_budget": Limits(max_total_tokens=60),
}


@pytest.mark.parametrize("structured", [False, True], ids=["text", "structured"])
@pytest.mark.parametrize("limit", sorted(LIMITS))
async def test_a_forced_answer_is_not_a_success(limit: str, structured: bool) -> None:
    seen: list[Any] = []
    agent = Agent(_looping("made up"), tools=[ping], limits=LIMITS[limit],
                  output=Answer if structured else None,
                  callbacks={"on_success": seen.append})
    result = await agent.run("go")
    assert result.termination.action == "final_answer" and result.termination.limit == limit
    assert result.status == "forced" and not result.succeeded
    assert result.trace.status == "forced"
    assert result.output == (Answer(text="made up") if structured else "made up")
    [event] = seen  # the run-end event says it too
    assert isinstance(event, RunSuccess) and event.status == "forced"


@pytest.mark.parametrize("structured", [False, True], ids=["text", "structured"])
async def test_a_forced_answer_at_the_timeout_is_not_a_success(structured: bool) -> None:
    def script(_messages: Any, settings: ModelSettings) -> Any:
        if settings.tool_choice == "none":
            return "gave up waiting"
        if settings.tool_choice == "final_result":
            return call("final_result", {"text": "gave up waiting"})
        return call("hang")

    agent = Agent(ScriptedModel(script), tools=[hang], limits=Limits(timeout=0.2),
                  output=Answer if structured else None)
    result = await agent.run("go")
    assert result.termination.limit == "timeout"
    assert result.status == "forced" and not result.succeeded


@pytest.mark.parametrize("structured", [False, True], ids=["text", "structured"])
@pytest.mark.parametrize("limit", sorted(LIMITS))
async def test_a_partial_result_is_not_a_success(limit: str, structured: bool) -> None:
    limits = replace(LIMITS[limit], on_limit="partial")
    result = await Agent(_looping("x"), tools=[ping], limits=limits,
                         output=Answer if structured else None).run("go")
    assert result.termination.limit == limit
    assert result.partial and result.status == "partial" and not result.succeeded


async def test_a_streamed_run_ends_with_its_status() -> None:
    stream = Agent(_looping("made up"), tools=[ping], limits=LIMITS["max_iterations"]).stream(
        "go")
    events = [event async for event in stream]
    assert isinstance(events[-1], RunSuccess) and events[-1].status == "forced"
    assert stream.result is not None and stream.result.status == "forced"


async def test_an_answer_on_its_own_is_a_success() -> None:
    result = await Agent(ScriptedModel([call("ping"), "pong it is"]), tools=[ping]).run("go")
    assert result.status == "success" and result.succeeded


@pytest.mark.parametrize("answer", [
    LOOKUP_ERROR,  # verbatim
    f"  {LOOKUP_ERROR}\n",  # whitespace aside
    f"Sorry: {LOOKUP_ERROR}.",  # wrapped, but mostly the error
    "ValueError: no city called 'Atlantis' in the atlas",  # a stretch cut out of it
])
async def test_a_tool_error_passed_through_is_not_a_success(answer: str) -> None:
    model = ScriptedModel([call("lookup", {"city": "Atlantis"}), answer])
    result = await Agent(model, tools=[lookup]).run("weather in Atlantis?")
    assert result.tool_calls[0].error == LOOKUP_ERROR  # the text compared is the observation
    assert result.status == "tool_error" and not result.succeeded


async def test_a_structured_answer_holding_a_tool_error_is_not_a_success() -> None:
    model = ScriptedModel([call("lookup", {"city": "Atlantis"}),
                           call("final_result", {"text": LOOKUP_ERROR})])
    result = await Agent(model, tools=[lookup], output=Answer).run("weather in Atlantis?")
    assert result.output == Answer(text=LOOKUP_ERROR)
    assert result.status == "tool_error"


@pytest.mark.parametrize("answer", [
    "The lookup failed for Atlantis, so I checked Paris instead: 21 C.",  # mentions a failure
    "Error handling aside, it is 21 C in Paris.",  # says "error"
    "21 C",
])
async def test_an_answer_that_mentions_an_error_is_still_a_success(answer: str) -> None:
    model = ScriptedModel([[call("lookup", {"city": "Atlantis"}),
                            call("lookup", {"city": "Paris"})], answer])
    result = await Agent(model, tools=[lookup]).run("weather?")
    assert result.status == "success" and result.succeeded


async def test_our_own_validation_feedback_is_not_a_tool_error() -> None:
    """The output tool's rejection is the run's own feedback: an answer quoting it later is
    not a tool's error passed through."""
    model = ScriptedModel([call("final_result", {"wrong": 1}),
                           call("final_result", {"text": "fixed"})])
    result = await Agent(model, output=Answer).run("go")
    assert result.tool_calls[0].error is not None
    assert result.trace.error_observations() == []
    assert result.status == "success"


async def test_a_failed_run_carries_failure_on_its_error_and_event() -> None:
    seen: list[Any] = []
    agent = Agent(_looping("x"), tools=[ping], callbacks={"on_failure": seen.append},
                  limits=Limits(max_iterations=1, on_limit="error"))
    with pytest.raises(MaxIterationsExceeded) as info:
        await agent.run("go")
    assert info.value.result is not None and info.value.result.status == "failure"
    assert not info.value.result.succeeded
    [event] = seen
    assert isinstance(event, RunFailure) and event.status == "failure"


def test_the_vocabulary() -> None:
    assert set(RUN_STATUSES) == NOT_SUCCESS | {"success", "running"}
    assert [s for s in RUN_STATUSES if is_success(s)] == ["success"]
    assert is_run_status("forced") and not is_run_status("ok") and not is_run_status(3)
    # how the run ended comes before what its answer says
    assert returned_status("final_answer", LOOKUP_ERROR, [LOOKUP_ERROR]) == "forced"
    assert returned_status("partial", None, []) == "partial"
    assert returned_status("answered", LOOKUP_ERROR, [LOOKUP_ERROR]) == "tool_error"
    assert returned_status("answered", "fine", [LOOKUP_ERROR]) == "success"


def test_a_short_error_quoted_in_a_longer_answer_is_not_a_pass_through() -> None:
    assert not passes_tool_error("The order was not found, but order O-1 shipped Monday.",
                                 ["not found"])
    # a name the error also holds is not the error
    assert not passes_tool_error("The order O-7781 shipped",
                                 ["Tool `track` failed: order O-7781 not found"])
    assert not passes_tool_error("21 C", ["Tool `t` failed: ValueError: sensor 21 offline"])
    # the answer the error offered as a choice is an answer, not the error
    assert not passes_tool_error("Paris, France", [
        "Tool `geo` failed: ValueError: ambiguous city: Paris, France or Paris, Texas"])
    assert not passes_tool_error("", ["not found"]) and not passes_tool_error("x", [])
    loop: dict[str, Any] = {}
    loop["self"] = loop  # an output that refers to itself is read as its text, no crash
    assert not passes_tool_error(loop, ["not found"])


@pytest.mark.parametrize("answer", ["not found", "Not found.", "Error: boom", "`ValueError: boom`"])
def test_a_bare_stretch_of_the_error_is_a_pass_through(answer: str) -> None:
    assert passes_tool_error(answer, ["Tool `x` failed: ValueError: boom", "not found"])


def test_the_pass_through_search_stays_bounded() -> None:
    """A long answer and long errors: decided at once (containment only past 4,000 chars)."""
    errors = ["e" * 50_000 + f" {n}" for n in range(50)]
    assert not passes_tool_error("word " * 2_000, errors)
    assert passes_tool_error("Sorry: " + errors[7], errors)
