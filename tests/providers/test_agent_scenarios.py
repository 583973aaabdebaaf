"""The agent's scenarios on all three wire shapes (OpenAI tools, OpenAI legacy functions,
Anthropic), non-streaming and streaming, through the official SDKs and the checking server.

Every request of every run is validated by the server; the ``server`` fixture fails a test
whose run sent anything a real API would refuse.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from toolcycle import Agent, Cancelled, CancelToken, Limits, Output, RunContext, tool
from toolcycle.errors import ModelError, ValidationFailed
from toolcycle.models.base import Model
from toolcycle.result import RunResult

from .conftest import (
    anthropic_model,
    functions_model,
    gemini_model,
    openai_model,
    responses_model,
)
from .script import Call, Fault, Reply
from .server import ProviderServer

FACTORIES: dict[str, Callable[..., Model]] = {
    "openai": openai_model,
    "functions": functions_model,
    "anthropic": anthropic_model,
    "responses": responses_model,
    "gemini": gemini_model,
}


@pytest.fixture(params=["openai", "functions", "anthropic", "responses", "gemini"])
def wire(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=[False, True], ids=["json", "sse"])
def stream(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


@tool
def fail(reason: str) -> str:
    """A tool that always fails.

    Args:
        reason: What to complain about.
    """
    raise RuntimeError(reason)


class Report(BaseModel):
    """A short report about a company."""

    company: str
    revenue: int


def positive(report: Report, ctx: RunContext[Any]) -> None:
    if report.revenue <= 0:
        raise ValidationFailed("revenue must be positive")


async def run(agent: Agent[Any, Any], stream: bool, **options: Any) -> RunResult[Any]:
    if not stream:
        return await agent.run("go", **options)
    events = agent.stream("go", **options)
    async for _ in events:
        pass
    assert events.result is not None
    return events.result


def results_sent(server: ProviderServer) -> list[tuple[str, bool]]:
    """(content, is_error) of every tool result in the last request, in the wire's terms."""
    body = server.requests[-1].body
    out: list[tuple[str, bool]] = []
    if "contents" in body:  # Gemini: functionResponse parts, errors under "error"
        answers = [p["functionResponse"]["response"] for c in body["contents"]
                   for p in c["parts"] if "functionResponse" in p]
        return [(a.get("result", a.get("error")), "error" in a) for a in answers]
    if "input" in body:  # the Responses API: one function_call_output item per result
        items = body["input"]
        return [(i["output"], False) for i in items if i.get("type") == "function_call_output"]
    for message in body["messages"]:
        if message["role"] in ("tool", "function"):
            out.append((message["content"], False))
        elif message["role"] == "user" and isinstance(message["content"], list):
            out.extend(
                (b["content"], b.get("is_error", False))
                for b in message["content"]
                if b["type"] == "tool_result"
            )
    return out


async def test_multi_step(server: ProviderServer, wire: str, stream: bool) -> None:
    server.script(
        [
            Reply(calls=[Call("add", {"a": 1, "b": 2})]),
            Reply(text="First 3.", calls=[Call("add", {"a": 3, "b": 4})]),
            Reply(text="3 then 7"),
        ]
    )
    agent = Agent(FACTORIES[wire](server), instructions="Add things.", tools=[add])
    result = await run(agent, stream)
    assert result.output == "3 then 7"
    assert [(r.name, r.args, r.result) for r in result.tool_calls] == [
        ("add", {"a": 1, "b": 2}, "3"),
        ("add", {"a": 3, "b": 4}, "7"),
    ]
    assert result.iterations == 3 and result.usage.requests == 3
    assert results_sent(server) == [("3", False), ("7", False)]
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    assert [r.streamed for r in server.requests] == [stream] * 3


async def test_parallel_calls(server: ProviderServer, wire: str, stream: bool) -> None:
    pair = [Call("add", {"a": 1, "b": 2}), Call("add", {"a": 5, "b": 5})]
    if wire == "functions":  # the legacy protocol has one call per response: one per iteration
        server.script([Reply(calls=pair[:1]), Reply(calls=pair[1:]), Reply(text="3 and 10")])
    else:
        server.script([Reply(calls=pair), Reply(text="3 and 10")])
    agent = Agent(FACTORIES[wire](server), tools=[add], parallel_tools=True)
    result = await run(agent, stream)
    assert result.output == "3 and 10"
    assert result.iterations == (3 if wire == "functions" else 2)
    assert [len(s.tool_calls) for s in result.trace.steps] == (
        [1, 1, 0] if wire == "functions" else [2, 0]
    )
    assert results_sent(server) == [("3", False), ("10", False)]
    body = server.requests[0].body
    if wire in ("openai", "responses"):  # parallel calls stay the provider's default unless set
        assert "parallel_tool_calls" not in body
    elif wire == "anthropic":
        assert "disable_parallel_tool_use" not in body["tool_choice"]


async def test_unknown_tool(server: ProviderServer, wire: str, stream: bool) -> None:
    server.script([Reply(calls=[Call("nope", {"x": 1})]), Reply(text="sorry")])
    result = await run(Agent(FACTORIES[wire](server), tools=[add]), stream)
    assert result.output == "sorry"
    assert result.tool_calls[0].error is not None
    ((content, is_error),) = results_sent(server)
    assert "nope" in content
    assert is_error == (wire in ("anthropic", "gemini"))  # the wires with a flag for it


async def test_tool_error(server: ProviderServer, wire: str, stream: bool) -> None:
    server.script([Reply(calls=[Call("fail", {"reason": "disk full"})]), Reply(text="it failed")])
    result = await run(Agent(FACTORIES[wire](server), tools=[fail]), stream)
    assert result.output == "it failed"
    assert "disk full" in (result.tool_calls[0].error or "")
    ((content, is_error),) = results_sent(server)
    assert "disk full" in content
    assert is_error == (wire in ("anthropic", "gemini"))


async def test_truncated_call_becomes_an_error_observation(
    server: ProviderServer, wire: str, stream: bool
) -> None:
    """max_tokens / length while the model wrote a call: the call is not run, the model is
    told its arguments were cut off, and the run goes on."""
    ran: list[int] = []

    @tool
    def record(n: int) -> int:
        """Record a number.

        Args:
            n: The number.
        """
        ran.append(n)
        return n

    server.script(
        [
            Reply(calls=[Call("record", {"n": 123456789})], truncate=True),
            Reply(calls=[Call("record", {"n": 7})]),
            Reply(text="recorded 7"),
        ]
    )
    result = await run(Agent(FACTORIES[wire](server), tools=[record]), stream)
    assert result.output == "recorded 7" and ran == [7]
    first = result.tool_calls[0]
    assert first.result is None and first.error is not None
    assert "token limit" in first.error or "max_tokens" in first.error
    assert "they are incomplete" in first.error
    (content, is_error), second = results_sent(server)
    assert "they are incomplete" in content and second == ("7", False)
    assert is_error == (wire in ("anthropic", "gemini"))


async def test_structured_output_with_retries(
    server: ProviderServer, wire: str, stream: bool
) -> None:
    server.script(
        [
            Reply(calls=[Call("final_result", {"company": "Acme", "revenue": -5})]),
            Reply(calls=[Call("final_result", {"company": "Acme", "revenue": 1200})]),
        ]
    )
    agent = Agent(
        FACTORIES[wire](server), tools=[add], output=Output(Report, validators=[positive])
    )
    result = await run(agent, stream)
    assert result.output == Report(company="Acme", revenue=1200)
    assert result.attempts == 2
    sent = server.requests[1].body
    if wire == "gemini":  # the retry prompt is a user turn after the functionResponse turn
        last = sent["contents"][-1]
        assert last["role"] == "user" and "revenue must be positive" in last["parts"][0]["text"]
        return
    retry_prompt = (sent["input"] if wire == "responses" else sent["messages"])[-1]
    assert retry_prompt["role"] == "user"
    if wire == "anthropic":  # the retry prompt rides in the user message with the results
        assert [b["type"] for b in retry_prompt["content"]] == ["tool_result", "text"]
        assert "revenue must be positive" in retry_prompt["content"][1]["text"]
    else:
        assert "revenue must be positive" in retry_prompt["content"]


async def test_reflection_with_submit(server: ProviderServer, wire: str, stream: bool) -> None:
    previews: list[Report] = []

    def preview(report: Report, ctx: RunContext[Any]) -> str:
        previews.append(report)
        return f"PREVIEW {report.company} {report.revenue}"

    server.script(
        [
            Reply(calls=[Call("final_result", {"company": "Acme", "revenue": 1})]),
            Reply(calls=[Call("final_result", {"company": "Acme", "revenue": 2})]),
            Reply(calls=[Call("submit", {})]),
        ]
    )
    agent = Agent(FACTORIES[wire](server), output=Output(Report, reflect=preview))
    result = await run(agent, stream)
    assert result.output == Report(company="Acme", revenue=2) and len(previews) == 2
    contents = [content for content, _ in results_sent(server)]
    assert contents[0].startswith("PREVIEW Acme 1") and contents[1].startswith("PREVIEW Acme 2")


def _tool_choice(body: dict[str, Any]) -> Any:
    config = (body.get("toolConfig") or {}).get("functionCallingConfig")
    if config is not None:  # Gemini: a mode, and the allowed names for a forced call
        allowed = config.get("allowedFunctionNames")
        return {"name": allowed[0]} if allowed else config["mode"].lower()
    return body.get("tool_choice", body.get("function_call"))


async def test_limit_forces_a_final_answer_without_tools(
    server: ProviderServer, wire: str, stream: bool
) -> None:
    server.script(
        [
            Reply(calls=[Call("add", {"a": 1, "b": 1})]),
            Reply(calls=[Call("add", {"a": 2, "b": 2})]),
            Reply(text="2 and 4, stopping"),
        ]
    )
    agent = Agent(FACTORIES[wire](server), tools=[add], limits=Limits(max_iterations=2))
    result = await run(agent, stream)
    assert result.output == "2 and 4, stopping" and result.forced_final_answer
    assert result.termination.limit == "max_iterations"
    assert _tool_choice(server.requests[-1].body) in ("none", {"type": "none"})


async def test_limit_forces_the_output_tool(
    server: ProviderServer, wire: str, stream: bool
) -> None:
    server.script(
        [
            Reply(calls=[Call("add", {"a": 1, "b": 1})]),
            Reply(calls=[Call("final_result", {"company": "Acme", "revenue": 2})]),
        ]
    )
    agent = Agent(
        FACTORIES[wire](server), tools=[add], output=Report, limits=Limits(max_iterations=1)
    )
    result = await run(agent, stream)
    assert result.output == Report(company="Acme", revenue=2) and result.forced_final_answer
    assert _tool_choice(server.requests[-1].body) in (
        {"type": "function", "function": {"name": "final_result"}},
        {"type": "function", "name": "final_result"},
        {"name": "final_result"},
        {"type": "tool", "name": "final_result"},
    )


async def test_cancellation_mid_request(server: ProviderServer, wire: str, stream: bool) -> None:
    token = CancelToken()
    deltas: list[Any] = []
    if stream:  # cancel after the first streamed text has arrived
        server.script([Reply(text="a slow and long answer " * 5, event_delay=0.05)])

        def first_delta(event: Any) -> None:
            deltas.append(event)
            token.cancel("enough")

        callbacks: dict[str, Any] = {"on_text_delta": first_delta}
    else:  # cancel while the server is still thinking
        server.script([Fault(delay=5.0), Reply(text="too late")])
        loop = asyncio.get_running_loop()
        callbacks = {"on_iteration_start": lambda e: loop.call_later(0.1, token.cancel, "enough")}
    agent = Agent(FACTORIES[wire](server), tools=[add], callbacks=callbacks)
    with pytest.raises(Cancelled) as caught:
        await run(agent, stream, cancel_token=token)
    assert caught.value.context["phase"] == "model_request"
    partial = caught.value.result
    assert partial is not None and partial.termination.reason == "cancelled"
    assert [m.role for m in partial.messages][-1] == "user"  # nothing half-received was kept
    if stream:  # cut mid-stream: 17 text pieces were on their way, 50 ms apart
        assert 1 <= len(deltas) < 5


async def test_rate_limit_inside_a_run_is_retried(
    server: ProviderServer, wire: str, stream: bool
) -> None:
    server.script(
        [
            Reply(calls=[Call("add", {"a": 1, "b": 2})]),
            Fault(status=429, retry_after="0.01"),
            Reply(text="3"),
        ]
    )
    result = await run(Agent(FACTORIES[wire](server), tools=[add]), stream)
    assert result.output == "3" and result.usage.requests == 2
    assert [r.status for r in server.requests] == [200, 429, 200]


async def test_server_errors_exhaust_retries_and_keep_the_partial_result(
    server: ProviderServer, wire: str, stream: bool
) -> None:
    server.script([Reply(calls=[Call("add", {"a": 1, "b": 2})])])
    server.script([Fault(status=500, message="upstream exploded")] * 4)
    with pytest.raises(ModelError) as caught:
        await run(Agent(FACTORIES[wire](server), tools=[add]), stream)
    error = caught.value
    assert error.context["status"] == 500 and error.context["tries"] == 4
    assert "upstream exploded" in str(error)
    partial = error.result
    assert partial is not None and partial.termination.reason == "model_error"
    assert [r.result for r in partial.tool_calls] == ["3"]
    assert partial.messages[-1].role == "tool" and partial.usage.requests >= 1


async def test_anthropic_thinking_survives_the_loop(server: ProviderServer, stream: bool) -> None:
    server.script(
        [
            Reply(thinking="Add first.", calls=[Call("add", {"a": 1, "b": 2})]),
            Reply(thinking="Then report.", calls=[Call("add", {"a": 3, "b": 0})]),
            Reply(calls=[Call("final_result", {"company": "Acme", "revenue": 3})]),
        ]
    )
    model = anthropic_model(server, thinking_budget=1024)
    agent = Agent(model, tools=[add], output=Report, limits=Limits(max_iterations=2))
    result = await run(agent, stream)
    assert result.output == Report(company="Acme", revenue=3) and result.forced_final_answer
    assert [s.thinking for s in result.trace.steps] == ["Add first.", "Then report.", ""]
    # The server checked every signature and the thinking-first rule on each request; the
    # forced request (output tool named) went without thinking, as the API demands.
    assert ["thinking" in r.body for r in server.requests] == [True, True, False]


async def test_token_budget_is_estimated_before_sending(
    server: ProviderServer, wire: str, stream: bool
) -> None:
    """The loop estimates the next request's input tokens before sending it: with a budget
    that the first request's reported usage nearly fills, the second is never sent."""
    script = [Reply(calls=[Call("add", {"a": 1, "b": 2})]), Reply(text="3")]
    server.script(script)
    unlimited = await run(Agent(FACTORIES[wire](server), tools=[add]), stream)
    first_request = unlimited.trace.steps[0].usage.input_tokens
    assert unlimited.usage.requests == 2 and first_request > 0
    sent_before = len(server.requests)

    server.script(script)
    budget = Limits(max_input_tokens=first_request + 5, on_limit="partial")
    result = await run(Agent(FACTORIES[wire](server), tools=[add], limits=budget), stream)
    assert len(server.requests) - sent_before == 1  # the second request never left
    assert server.remaining == 1
    server.reset()  # the unsent reply
    assert result.partial and result.termination.reason == "token_budget"
    assert result.usage.input_tokens == first_request
    assert [r.result for r in result.tool_calls] == ["3"]


async def test_anthropic_pause_turn_inside_a_run(server: ProviderServer, stream: bool) -> None:
    server.script(
        [
            Reply(text="Searching first.", pause=True),
            Reply(text="Found it.", calls=[Call("add", {"a": 1, "b": 2})]),
            Reply(text="3"),
        ]
    )
    result = await run(Agent(anthropic_model(server), tools=[add]), stream)
    assert result.output == "3" and result.iterations == 2
    assert result.usage.requests == 3  # the continuation is a request of iteration 1
    assert [r.result for r in result.tool_calls] == ["3"]
    # Iteration 2 sends the whole turn back as one assistant message.
    turn = server.requests[2].body["messages"][1]
    assert turn["role"] == "assistant"
    assert [b["type"] for b in turn["content"]] == ["text", "text", "tool_use"]
