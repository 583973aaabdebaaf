"""Cancellation at every phase, callbacks (order, arguments, failures), streaming."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from toolcycle import Agent, Cancelled, CancelToken, Message, ModelError, RunContext, tool
from toolcycle.events import (
    Callbacks,
    Event,
    FinalResult,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


async def test_cancel_before_first_request() -> None:
    token = CancelToken()
    token.cancel("user left")
    model = ScriptedModel(["never"])
    with pytest.raises(Cancelled) as info:
        await Agent(model, tools=[ping]).run("go", cancel_token=token)
    assert info.value.context["phase"] == "before_model_request"
    assert model.requests == []
    assert info.value.result is not None
    assert info.value.result.trace.status == "cancelled"
    assert info.value.result.termination.reason == "cancelled"


async def test_cancel_during_tool_cancels_in_flight_and_answers_every_call() -> None:
    token = CancelToken()
    started = asyncio.Event()
    finished: list[str] = []

    @tool(concurrent=True)
    async def slow(name: str) -> str:
        started.set()
        await asyncio.sleep(5)
        finished.append(name)
        return name

    model = ScriptedModel([[call("slow", {"name": "a"}), call("slow", {"name": "b"}),
                            call("ping")], "never"])
    task = asyncio.create_task(Agent(model, tools=[slow, ping]).run("go", cancel_token=token))
    await started.wait()
    token.cancel("stop now")
    with pytest.raises(Cancelled) as info:
        await task
    assert info.value.context["phase"] == "tool_execution"
    assert finished == []
    result = info.value.result
    assert result is not None
    last = result.messages[-1]
    assert last.role == "tool"
    assert [r.is_error for r in last.results] == [True, True, True]
    assert len(model.requests) == 1


async def test_cancel_between_iterations_from_a_tool() -> None:
    @tool
    def quit_run(ctx: RunContext[None]) -> str:
        ctx.cancel_token.cancel("tool asked to stop")
        return "stopping"

    model = ScriptedModel([call("quit_run"), "never"])
    with pytest.raises(Cancelled) as info:
        await Agent(model, tools=[quit_run]).run("go")
    assert info.value.context["phase"] == "before_model_request"
    assert info.value.result is not None
    assert info.value.result.tool_calls[0].result == "stopping"


async def test_cancel_during_model_request() -> None:
    token = CancelToken()

    class Hanging(ScriptedModel):
        async def request(self, messages: Any, settings: ModelSettings) -> Message:
            token.cancel("during request")
            await asyncio.sleep(10)
            raise AssertionError("unreachable")

    with pytest.raises(Cancelled) as info:
        await Agent(Hanging(["x"]), tools=[ping]).run("go", cancel_token=token)
    assert info.value.context["phase"] == "model_request"
    assert info.value.result is not None and info.value.result.usage.requests == 1


async def test_plain_task_cancellation_propagates_and_records() -> None:
    seen: list[Any] = []
    gate = asyncio.Event()

    @tool
    async def wait_forever() -> str:
        gate.set()
        await asyncio.sleep(10)
        return "x"

    agent = Agent(ScriptedModel([call("wait_forever")]), tools=[wait_forever],
                  callbacks={"on_failure": lambda e: seen.append(e)})
    task = asyncio.create_task(agent.run("go"))
    await gate.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen and seen[0].result.trace.status == "cancelled"
    assert seen[0].result.messages[-1].role == "tool"


async def test_callbacks_order_and_arguments() -> None:
    log: list[tuple[str, Any]] = []

    class Recorder:
        def on_run_start(self, e: Any) -> None:
            log.append(("run_start", e.user_prompt))

        def on_attempt_start(self, e: Any) -> None:
            log.append(("attempt_start", e.attempt))

        def on_iteration_start(self, e: Any) -> None:
            log.append(("iteration_start", e.iteration))

        def on_model_response(self, e: Any) -> None:
            log.append(("model_response", len(e.message.tool_calls)))

        async def on_tool_call(self, e: Any) -> None:
            log.append(("tool_call", e.call.name))

        def on_tool_result(self, e: Any) -> None:
            log.append(("tool_result", (e.result.content, e.result.is_error)))

        def on_attempt_end(self, e: Any) -> None:
            log.append(("attempt_end", e.success))

        def on_success(self, e: Any) -> None:
            log.append(("success", e.result.output))

    model = ScriptedModel([[call("ping"), call("nope")], "done"])
    await Agent(model, tools=[ping], callbacks=Recorder()).run("hi")
    assert log == [
        ("run_start", "hi"),
        ("attempt_start", 1),
        ("iteration_start", 1),
        ("model_response", 2),
        ("tool_call", "ping"),
        ("tool_result", ("pong", False)),
        ("tool_call", "nope"),
        ("tool_result", ("Unknown tool `nope`. Available tools: ping.", True)),
        ("iteration_start", 2),
        ("model_response", 0),
        ("attempt_end", True),
        ("success", "done"),
    ]


async def test_raising_callback_never_breaks_the_run() -> None:
    def bad(_e: Any) -> None:
        raise ValueError("callback bug")

    async def bad_async(_e: Any) -> None:
        raise KeyError("async bug")

    result = await Agent(ScriptedModel([call("ping"), "ok"]), tools=[ping],
                         callbacks={"on_tool_result": [bad, bad_async]}).run("go")
    assert result.output == "ok"
    assert [e.hook for e in result.callback_errors] == ["on_tool_result", "on_tool_result"]
    assert "callback bug" in str(result.callback_errors[0])


async def test_on_failure_receives_error_and_partial_result() -> None:
    seen: list[Any] = []
    agent = Agent(ScriptedModel([call("ping")]), tools=[ping],
                  callbacks={"on_failure": seen.append})
    with pytest.raises(ModelError):
        await agent.run("go")
    assert seen[0].error.code == "MODEL_ERROR"
    assert seen[0].result.tool_calls[0].result == "pong"


async def test_stream_yields_typed_events_and_text_before_calls_is_not_final() -> None:
    model = ScriptedModel([
        Message("assistant", [Message.assistant("Let me check.").parts[0], call("ping")]),
        "All good: pong.",
    ], chunk_size=4)
    stream = Agent(model, tools=[ping]).stream("go")
    events: list[Event] = [e async for e in stream]
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "RunStart"
    assert kinds[-2:] == ["FinalResult", "RunSuccess"]
    deltas = [e for e in events if isinstance(e, TextDeltaEvent)]
    assert "".join(d.text for d in deltas if d.iteration == 1) == "Let me check."
    assert "".join(d.text for d in deltas if d.iteration == 2) == "All good: pong."
    final = next(e for e in events if isinstance(e, FinalResult))
    assert final.output == "All good: pong."
    first_call = kinds.index("ToolCallEvent")
    assert kinds.index("TextDeltaEvent") < first_call < kinds.index("FinalResult")
    assert stream.result is not None and stream.result.output == "All good: pong."
    assert any(isinstance(e, ToolCallEvent) for e in events)
    assert any(isinstance(e, ToolResultEvent) for e in events)


async def test_sync_tools_in_a_concurrent_batch_run_in_threads_together() -> None:
    barrier = threading.Barrier(4, timeout=5)

    @tool(concurrent=True)
    def meet(i: int) -> int:
        barrier.wait()  # deadlocks (then BrokenBarrierError) unless all 4 run at once
        return i

    model = ScriptedModel([[call("meet", {"i": i}) for i in range(4)], "met"])
    result = await Agent(model, tools=[meet]).run("go")
    assert [r.result for r in result.tool_calls] == ["0", "1", "2", "3"]


async def test_calls_run_in_emission_order_by_default() -> None:
    order: list[str] = []

    @tool
    async def step(name: str, delay: float) -> str:
        order.append(f"start {name}")
        await asyncio.sleep(delay)
        order.append(f"end {name}")
        return name

    model = ScriptedModel([[call("step", {"name": "a", "delay": 0.02}),
                            call("step", {"name": "b", "delay": 0})], "done"])
    await Agent(model, tools=[step]).run("go")
    assert order == ["start a", "end a", "start b", "end b"]
    order.clear()
    model = ScriptedModel([[call("step", {"name": "a", "delay": 0.02}),
                            call("step", {"name": "b", "delay": 0})], "done"])
    result = await Agent(model, tools=[step], parallel_tools=True).run("go")
    assert order == ["start a", "start b", "end b", "end a"]
    assert [r.result for r in result.tool_calls] == ["a", "b"]  # results still in call order


async def test_only_consecutive_concurrent_tools_batch() -> None:
    order: list[str] = []

    @tool(concurrent=True)
    async def fetch(name: str) -> str:
        order.append(f"start {name}")
        await asyncio.sleep(0.01)
        order.append(f"end {name}")
        return name

    @tool
    def barrier_tool() -> str:
        order.append("serial")
        return "s"

    model = ScriptedModel([[call("fetch", {"name": "a"}), call("fetch", {"name": "b"}),
                            call("barrier_tool"), call("fetch", {"name": "c"})], "done"])
    await Agent(model, tools=[fetch, barrier_tool]).run("go")
    assert order[:2] == ["start a", "start b"]
    assert order.index("serial") > order.index("end a")
    assert order.index("start c") > order.index("serial")


async def test_failing_trace_store_is_reported_not_fatal() -> None:
    class BrokenStore:
        def start(self, trace: Any) -> None:
            pass

        def record_step(self, trace: Any) -> None:
            raise OSError("disk full")

        def finish(self, trace: Any) -> None:
            raise OSError("disk full")

    result = await Agent(ScriptedModel([call("ping"), "ok"]), tools=[ping],
                         trace_store=BrokenStore()).run("go")
    assert result.output == "ok"
    hooks = {e.hook for e in result.callback_errors}
    assert hooks == {"trace_store.record_step", "trace_store.finish"}


async def test_tool_results_say_what_kind_of_failure_they_are() -> None:
    """``ToolResultEvent.error_type`` is set where the observation is written, for callbacks
    (and OTel's ``error.type``) that must not parse the observation's wording."""
    from pydantic import BaseModel

    from toolcycle import Limits, Output, ValidationFailed

    class Answer(BaseModel):
        value: int

    def positive(answer: Answer, _ctx: Any) -> None:
        if answer.value <= 0:
            raise ValidationFailed("value must be positive")

    @tool(max_calls=1)
    def once() -> str:
        """Runs once per run."""
        return "ok"

    @tool
    def opaque() -> object:
        """Returns something JSON cannot hold."""
        return object()

    events: list[ToolResultEvent] = []
    model = ScriptedModel([
        [call("once"), call("once"), call("opaque")],
        call("final_result", {"value": 0}),
        call("final_result", {"value": 3}),
    ])
    agent = Agent(model, tools=[once, opaque], output=Output(Answer, validators=[positive]),
                  callbacks={"on_tool_result": events.append}, limits=Limits(max_attempts=2))
    result = await agent.run("go")
    assert result.output == Answer(value=3)
    assert [(e.call.name, e.error_type) for e in events] == [
        ("once", None), ("once", "call_limit"), ("opaque", "unserializable_result"),
        ("final_result", "output_rejected"), ("final_result", None),
    ]
    assert all((e.error_type is not None) == e.result.is_error for e in events)

    refused: list[ToolResultEvent] = []
    looping = ScriptedModel(lambda _m, _s: [call("ping")])
    await Agent(looping, tools=[ping], limits=Limits(max_iterations=1),
                callbacks={"on_tool_result": refused.append}).run("go")
    assert [e.error_type for e in refused] == [None, "tools_disabled"]


async def test_a_runs_own_callbacks_join_the_agents_and_leave_them_unchanged() -> None:
    """Per-run callbacks are merged over the agent's; a run that passes none (or only limits)
    uses the agent's listeners as they are, their routes built once."""
    agent_seen: list[str] = []
    run_seen: list[str] = []
    agent = Agent(ScriptedModel(["a", "b", "c"]),
                  callbacks={"on_success": lambda e: agent_seen.append("agent")})
    await agent.run("go", callbacks={"on_success": lambda e: run_seen.append("run")})
    await agent.run("go", callbacks=[])
    await agent.run("go")
    assert agent_seen == ["agent"] * 3 and run_seen == ["run"]
    own = Callbacks.collect({"on_success": print})[0]
    assert own.merged(Callbacks()) is own
    assert own.merged(Callbacks.collect({"on_success": print})[0]) is not own
    assert len(own.by_hook["on_success"]) == 1
