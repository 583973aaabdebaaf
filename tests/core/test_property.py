"""Property test: random model behaviour must never break the loop's invariants.

After every run (success or failure): the history passes the protocol check, termination is
set, usage equals the sum over the trace's steps, and there is one step per model request.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolcycle import Agent, AgentError, CancelToken, Limits, Message, Usage, tool
from toolcycle.models.base import ModelSettings
from toolcycle.models.protocol import HistoryChecker
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.result import RunResult


@tool
def ok(x: int = 0) -> int:
    """Return x."""
    return x


@tool
def fails() -> str:
    """Always raises."""
    raise RuntimeError("nope")


@tool(timeout=0.001)
async def hangs() -> str:
    """Times out."""
    await asyncio.sleep(1)
    return "late"


@tool(concurrent=True)
async def conc(x: int = 0) -> int:
    """Concurrent-safe."""
    await asyncio.sleep(0)
    return x


CALLS = st.sampled_from([
    lambda: call("ok", {"x": 1}),
    lambda: call("ok", {"x": "bad"}),
    lambda: call("fails"),
    lambda: call("hangs"),
    lambda: call("conc", {"x": 2}),
    lambda: call("missing_tool", {}),
    lambda: call("ok", raw="{broken"),
])
TURN = st.one_of(
    st.just("final answer"),
    st.lists(CALLS, min_size=1, max_size=4),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    turns=st.lists(TURN, min_size=1, max_size=8),
    max_iterations=st.integers(1, 5),
    on_limit=st.sampled_from(["final_answer", "partial", "error"]),
    parallel=st.booleans(),
    cancel_at=st.one_of(st.none(), st.integers(1, 6)),
    max_tool_calls=st.one_of(st.none(), st.integers(1, 6)),
)
def test_loop_invariants_hold_under_random_behaviour(
    turns: list[Any], max_iterations: int, on_limit: str, parallel: bool,
    cancel_at: int | None, max_tool_calls: int | None,
) -> None:
    token = CancelToken()
    position = {"n": 0}

    def script(_messages: list[Message], model_settings: ModelSettings) -> Any:
        position["n"] += 1
        if cancel_at is not None and position["n"] >= cancel_at:
            token.cancel("random cancel point")
        if model_settings.tool_choice == "none":
            return "forced final answer"
        turn = turns[min(position["n"] - 1, len(turns) - 1)]
        return turn if isinstance(turn, str) else [make() for make in turn]

    model = ScriptedModel(script, wire="both")
    agent = Agent(model, "test", [ok, fails, hangs, conc], parallel_tools=parallel,
                  limits=Limits(max_iterations=max_iterations, on_limit=on_limit,  # type: ignore[arg-type]
                                max_tool_calls=max_tool_calls))
    result: RunResult[Any] | None
    try:
        result = asyncio.run(agent.run("go", cancel_token=token))
    except AgentError as error:
        result = error.result
    assert result is not None
    HistoryChecker("both").check(result.messages)
    assert result.termination is not None and result.termination.reason
    total = Usage()
    for step in result.trace.steps:
        total.add(step.usage)
    assert total == result.usage
    assert len(result.trace.steps) == result.usage.requests
    # every call the model made has exactly one result, in the message right after it
    for index, message in enumerate(result.messages):
        if message.role == "assistant" and message.tool_calls:
            answered = result.messages[index + 1]
            assert [r.call_id for r in answered.results] == [c.id for c in message.tool_calls]
