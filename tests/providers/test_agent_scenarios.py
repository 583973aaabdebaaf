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

from .conftest import anthropic_model, functions_model, openai_model
from .script import Call, Fault, Reply
from .server import ProviderServer

FACTORIES: dict[str, Callable[..., Model]] = {
    "openai": openai_model,
    "functions": functions_model,
    "anthropic": anthropic_model,
}


@pytest.fixture(params=["openai", "functions", "anthropic"])
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
    assert [bool(r.body.get("stream")) for r in server.requests] == [stream] * 3


@pytest.mark.parametrize("wire", ["openai", "anthropic"])  # legacy functions: one call a turn
async def test_parallel_calls(server: ProviderServer, wire: str, stream: bool) -> None:
    server.script(
        [
            Reply(calls=[Call("add", {"a": 1, "b": 2}), Call("add", {"a": 5, "b": 5})]),
            Reply(text="3 and 10"),
        ]
    )
    agent = Agent(FACTORIES[wire](server), tools=[add], parallel_tools=True)
    result = await run(agent, stream)
    assert result.output == "3 and 10" and result.iterations == 2
    assert results_sent(server) == [("3", False), ("10", False)]


async def test_unknown_tool(server: ProviderServer, wire: str, stream: bool) -> None:
    server.script([Reply(calls=[Call("nope", {"x": 1})]), Reply(text="sorry")])
    result = await run(Agent(FACTORIES[wire](server), tools=[add]), stream)
    assert result.output == "sorry"
    assert result.tool_calls[0].error is not None
    ((content, is_error),) = results_sent(server)
    assert "nope" in content
    assert is_error == (wire == "anthropic")  # only Anthropic has a wire flag for it


async def test_tool_error(server: ProviderServer, wire: str, stream: bool) -> None:
    server.script([Reply(calls=[Call("fail", {"reason": "disk full"})]), Reply(text="it failed")])
    result = await run(Agent(FACTORIES[wire](server), tools=[fail]), stream)
    assert result.output == "it failed"
    ((content, _),) = results_sent(server)
    assert "disk full" in content


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
    retry_prompt = server.requests[1].body["messages"][-1]
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
        {"name": "final_result"},
        {"type": "tool", "name": "final_result"},
    )


async def test_cancellation_mid_request(server: ProviderServer, wire: str, stream: bool) -> None:
    token = CancelToken()
    if stream:  # cancel after the first streamed text has arrived
        server.script([Reply(text="a slow and long answer " * 5, event_delay=0.05)])
        callbacks: dict[str, Any] = {"on_text_delta": lambda event: token.cancel("enough")}
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
