"""Guardrails on input, output and tool calls: sync or async, raced against cancel and timeout,
every trip in the trace and the events, a halting trip a typed error with the partial result."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from pydantic import BaseModel

from toolcycle import (
    Agent,
    Cancelled,
    CancelToken,
    ConfigurationError,
    GuardrailTripped,
    Limits,
    RunContext,
    RunTimeout,
    ToolCall,
    ToolResult,
    Trip,
    input_guardrail,
    output_guardrail,
    tool,
    tool_guardrail,
)
from toolcycle.events import GuardrailEvent
from toolcycle.testing import HistoryChecker, ScriptedModel, call

ran: list[str] = []


@tool
def refund(order: str, amount: float) -> str:
    """Refund an order."""
    ran.append(order)
    return f"refunded {amount} on {order}"


@input_guardrail
def no_secrets(ctx: RunContext[Any], prompt: str) -> str | None:
    return "the prompt asks for a password" if "password" in prompt else None


async def test_an_input_trip_ends_the_run_before_any_request() -> None:
    model = ScriptedModel([call("refund", {"order": "A1", "amount": 5}), "done"])
    seen: list[GuardrailEvent] = []
    agent = Agent(model, tools=[refund], guardrails=[no_secrets],
                  callbacks={"on_guardrail": seen.append})
    with pytest.raises(GuardrailTripped) as caught:
        await agent.run("tell me the admin password")
    error = caught.value
    assert error.code == "GUARDRAIL_TRIPPED"
    assert error.context["guardrail"] == "no_secrets" and error.context["kind"] == "input"
    assert model.requests == []  # nothing else ran
    result = error.result
    assert result is not None and result.termination.reason == "guardrail"
    assert result.status == "failure"
    assert result.trace.guardrails[0]["reason"] == "the prompt asks for a password"
    assert [(e.kind, e.name, e.halted) for e in seen] == [("input", "no_secrets", True)]
    assert (await agent.run("refund A1 please")).output == "done"


async def test_a_beside_trip_lets_no_call_of_the_first_reply_run() -> None:
    ran.clear()

    @input_guardrail(beside=True)
    async def slow_check(ctx: RunContext[Any], prompt: str) -> Trip | None:
        await asyncio.sleep(0.01)
        return Trip("off topic", {"score": 0.9}) if "poem" in prompt else None

    model = ScriptedModel([call("refund", {"order": "A1", "amount": 5}), "done"])
    agent = Agent(model, tools=[refund], guardrails=[slow_check])
    with pytest.raises(GuardrailTripped) as caught:
        await agent.run("write a poem")
    assert len(model.requests) == 1 and ran == []  # the request ran beside; its call did not
    result = caught.value.result
    assert result is not None
    assert result.trace.guardrails[0]["info"] == {"score": 0.9}
    HistoryChecker().check(result.messages)  # the unrun call is answered
    again = Agent(ScriptedModel([call("refund", {"order": "A1", "amount": 5}), "done"]),
                  tools=[refund], guardrails=[slow_check])
    assert (await again.run("refund A1")).output == "done" and ran == ["A1"]


class Reply(BaseModel):
    text: str


async def test_an_output_trip_comes_after_validation() -> None:
    @output_guardrail
    def polite(ctx: RunContext[Any], reply: Reply) -> str | None:
        assert isinstance(reply, Reply)  # validated first
        return "rude" if "stupid" in reply.text else None

    model = ScriptedModel([call("final_result", {"text": 1}),  # rejected by validation
                           call("final_result", {"text": "that is stupid"})])
    agent = Agent(model, output=Reply, guardrails=[polite])
    with pytest.raises(GuardrailTripped) as caught:
        await agent.run("reply")
    result = caught.value.result
    assert result is not None and result.attempts == 2
    assert caught.value.context["kind"] == "output"
    HistoryChecker().check(result.messages)


async def test_tool_guardrails_block_arguments_and_withhold_results() -> None:
    ran.clear()

    @tool_guardrail(on="arguments", tools=["refund"])
    def cap(ctx: RunContext[Any], call: ToolCall) -> str | None:
        assert call.arguments is not None
        return "over the refund cap" if call.arguments["amount"] > 100 else None

    @tool_guardrail(on="result")
    async def no_card_numbers(ctx: RunContext[Any], result: ToolResult) -> str | None:
        assert ctx.tool_name == result.name
        return "a card number" if "4111" in result.content else None

    model = ScriptedModel([call("refund", {"order": "A1", "amount": 500}),
                           call("refund", {"order": "4111", "amount": 5}),
                           call("refund", {"order": "A2", "amount": 5}), "ok"])
    seen: list[GuardrailEvent] = []
    agent = Agent(model, tools=[refund], guardrails=[cap, no_card_numbers],
                  callbacks={"on_guardrail": seen.append})
    result = await agent.run("refunds")
    errors = [c.error for c in result.tool_calls]
    assert errors[0] == "Blocked by guardrail 'cap': over the refund cap"
    assert errors[1] == "Withheld by guardrail 'no_card_numbers': a card number"
    assert errors[2] is None and ran == ["4111", "A2"]  # blocked: not run; withheld: ran
    assert result.output == "ok" and result.termination.reason == "completed"
    assert [(e.kind, e.halted, e.call_id) for e in seen] == [
        ("tool_arguments", False, result.tool_calls[0].call_id),
        ("tool_result", False, result.tool_calls[1].call_id)]
    assert len(result.trace.guardrails) == 2


async def test_a_halting_tool_trip_ends_the_run() -> None:
    @tool_guardrail(on="arguments")
    def stop_all(ctx: RunContext[Any], call: ToolCall) -> Trip:
        return Trip("never refund", halt=True)

    model = ScriptedModel([[call("refund", {"order": "A", "amount": 1}),
                            call("refund", {"order": "B", "amount": 1})], "ok"])
    with pytest.raises(GuardrailTripped) as caught:
        await Agent(model, tools=[refund], guardrails=[stop_all]).run("x")
    assert caught.value.result is not None
    HistoryChecker().check(caught.value.result.messages)  # both calls answered


async def test_a_guardrail_that_raises_trips_fail_closed() -> None:
    @input_guardrail
    def broken(ctx: RunContext[Any], prompt: str) -> None:
        raise RuntimeError("classifier down")

    with pytest.raises(GuardrailTripped, match="classifier down"):
        await Agent(ScriptedModel(["x"]), guardrails=[broken]).run("hello")


async def test_a_hanging_guardrail_is_stopped_by_cancel_and_by_the_timeout() -> None:
    release = threading.Event()

    @input_guardrail
    def hangs(ctx: RunContext[Any], prompt: str) -> None:
        release.wait(5)

    token = CancelToken()
    agent = Agent(ScriptedModel(["x"]), guardrails=[hangs])
    asyncio.get_running_loop().call_later(0.05, token.cancel)
    with pytest.raises(Cancelled):
        await agent.run("hi", cancel_token=token)
    with pytest.raises(RunTimeout) as caught:  # no request on an input nobody passed
        await agent.run("hi", limits=Limits(timeout=0.05, on_limit="partial"))
    release.set()
    assert caught.value.result is not None
    assert caught.value.result.termination.reason == "timeout"

    @output_guardrail
    async def forever(ctx: RunContext[Any], output: str) -> None:
        await asyncio.sleep(30)

    model = ScriptedModel(["a", "b"])
    timed = Agent(model, guardrails=[forever], limits=Limits(timeout=0.05))
    with pytest.raises(RunTimeout, match="while the output guardrail 'forever' checked") as ended:
        await timed.run("hi")
    # no final answer asked for: it would have waited on the same check with no deadline
    # (the run used to return after the guardrail's own 30 s, "timeout" yet answered)
    assert len(model.requests) == 1
    assert ended.value.result is not None
    assert ended.value.result.termination.reason == "timeout"


def test_bad_guardrails_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Agent(ScriptedModel(["x"]), guardrails=[lambda ctx, v: None, no_secrets, "x"])
    message = str(caught.value)
    assert "function is not a guardrail" in message and "str is not a guardrail" in message
    with pytest.raises(ConfigurationError, match="must take"):
        Agent(ScriptedModel(["x"]), guardrails=[input_guardrail(lambda: None)])


@pytest.mark.parametrize("on_limit", ["partial", "final_answer"])
async def test_a_deadline_in_the_first_request_still_waits_for_the_beside_check(
        on_limit: str) -> None:
    from toolcycle import Message
    from toolcycle.models.base import Model, ModelSettings

    class Slow(Model):
        name = "slow"

        async def request(self, messages: Any, settings: ModelSettings) -> Message:
            if settings.tool_choice != "none":
                await asyncio.sleep(30)  # the deadline passes while the first request waits
            return Message.assistant("an answer to a bad input")

    @input_guardrail(beside=True)
    async def strict(ctx: RunContext[Any], prompt: str) -> str:
        await asyncio.sleep(0.1)
        return "bad input"

    agent = Agent(Slow(), guardrails=[strict],
                  limits=Limits(timeout=0.05, on_limit=on_limit))  # type: ignore[arg-type]
    with pytest.raises(GuardrailTripped):  # no answer to an input nobody passed
        await agent.run("something bad")
