"""Regression tests for the run engine's paths that broke when tested from outside.

Each test names the defect (``../shared/repro/rel-NN-*.py``) it pins down. They import only
``toolcycle`` and ``toolcycle.models.scripted`` so that they also run against the engine before
v2, where each of them failed.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from toolcycle import (
    Agent,
    AgentError,
    Cancelled,
    CancelToken,
    Limits,
    Output,
    RunContext,
    tool,
)
from toolcycle.events import ToolCallEvent, ToolResultEvent
from toolcycle.models.scripted import ScriptedModel, call


def _store(path: Path) -> Any:
    try:
        from toolcycle.tracing.store import TraceStore
    except ImportError:  # the layout before engine v2
        from toolcycle.trace_store import TraceStore  # type: ignore[no-redef]
    return TraceStore(path)


def _tool_answers(messages: list[Any]) -> dict[str, str]:
    return {r.name: r.content for m in messages if m.role == "tool" for r in m.results}


@pytest.mark.parametrize("how", ["none", "token", "timeout"])
async def test_rel01_task_cancel_stops_the_running_tool(how: str) -> None:
    """rel-01: a cancelled run's in-flight tool is cancelled and awaited, never left running."""
    effects: list[str] = []
    started = asyncio.Event()

    @tool
    async def transfer() -> str:
        started.set()
        await asyncio.sleep(0.3)
        effects.append("transferred")
        return "done"

    agent = Agent(ScriptedModel([call("transfer"), "ok"]), tools=[transfer])
    kwargs: dict[str, Any] = {}
    if how == "token":
        kwargs["cancel_token"] = CancelToken()
    if how == "timeout":
        kwargs["limits"] = Limits(timeout=30)
    task = asyncio.ensure_future(agent.run("go", **kwargs))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.5)
    assert effects == []


async def test_rel02_a_stopped_turn_keeps_the_results_that_exist() -> None:
    """rel-02: calls that finished keep their results; only the unfinished call is answered so."""
    reached = asyncio.Event()

    @tool
    def pay(amount: int) -> str:
        return f"paid {amount}"

    @tool
    async def slow_report() -> str:
        reached.set()
        await asyncio.sleep(5)
        return "report"

    seen: list[ToolResultEvent] = []
    failures: list[Any] = []
    agent = Agent(ScriptedModel([[call("pay", {"amount": 10}), call("slow_report")], "ok"]),
                  tools=[pay, slow_report],
                  callbacks={"on_tool_result": seen.append, "on_failure": failures.append})
    task = asyncio.ensure_future(agent.run("go"))
    await reached.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    result = failures[0].result
    answers = _tool_answers(result.messages)
    assert answers["pay"] == "paid 10"
    assert "not completed" in answers["slow_report"]
    records = {r.name: (r.result, r.error) for r in result.trace.tool_calls}
    assert records["pay"] == ("paid 10", None)
    assert records["slow_report"][1] == answers["slow_report"]
    assert [e.result.content for e in seen] == [answers["pay"], answers["slow_report"]]


@pytest.mark.parametrize("where", ["caller thread", "tool thread"])
def test_rel03_cancel_from_another_thread_stops_run_sync(where: str) -> None:
    """rel-03: the only way to cancel ``run_sync`` is from another thread; it must wake the run."""
    token = CancelToken()

    @tool
    def blocker(ctx: RunContext[Any]) -> str:
        if where == "tool thread":
            ctx.cancel_token.cancel("the tool gave up")
        return "ran"

    @tool
    async def wait_long() -> str:
        await asyncio.sleep(5)
        return "late"

    script = [call("blocker"), call("wait_long"), "done"]
    agent = Agent(ScriptedModel(script), tools=[blocker, wait_long])
    if where == "caller thread":
        threading.Timer(0.1, token.cancel, args=("user",)).start()
    started = time.monotonic()
    with pytest.raises(Cancelled) as info:
        agent.run_sync("go", cancel_token=token)
    result = info.value.result
    assert result is not None
    answer = _tool_answers(result.messages)["blocker"]
    # A sync tool that cancels the run's token from its thread stops the run at once; its own
    # return value races the cancellation (docs/loop.md, "Cancellation").
    assert answer == "ran" if where == "caller thread" else answer in (
        "ran", "not completed: the run ended (CANCELLED) while it ran")
    assert time.monotonic() - started < 4


@pytest.mark.parametrize("parallel, concurrent, max_tool_calls", [
    (True, False, None), (False, True, 2), (True, True, 2)])
async def test_rel13_a_lone_concurrent_call_is_admitted_once(
    parallel: bool, concurrent: bool, max_tool_calls: int | None
) -> None:
    """rel-13: a call alone in its batch used to count twice against max_calls/max_tool_calls."""

    @tool(max_calls=2, concurrent=concurrent)
    def limited() -> str:
        return "ran"

    agent = Agent(ScriptedModel([call("limited"), call("limited"), "done"]), tools=[limited],
                  parallel_tools=parallel)
    result = await agent.run("go", limits=Limits(max_tool_calls=max_tool_calls))
    assert [r.result for r in result.trace.tool_calls] == ["ran", "ran"]


@pytest.mark.parametrize("hook", ["on_run_start", "on_success"])
async def test_rel14_cancel_inside_a_callback_still_finishes_the_stored_trace(
    hook: str, tmp_path: Path
) -> None:
    """rel-14: the stored trace was left "running" when a cancel landed in a callback; and
    r2-16: in ``on_success`` it says cancelled, as the caller that got CancelledError sees it."""
    store = _store(tmp_path / "t.db")

    async def slow(event: Any) -> None:
        await asyncio.sleep(0.3)

    agent = Agent(ScriptedModel(["answer"]), trace_store=store, callbacks={hook: slow})
    task = asyncio.ensure_future(agent.run("go", run_id=hook))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert store.get(hook).status == "cancelled"


def test_rel17_a_token_outlives_its_event_loop() -> None:
    """rel-17: a token used on one loop made the next run on another fail with LimitHit."""
    token = CancelToken()

    class SlowModel(ScriptedModel):
        async def request(self, messages: Any, settings: Any) -> Any:
            await asyncio.sleep(0.05)  # the run waits on the token meanwhile
            return await super().request(messages, settings)

    agent = Agent(SlowModel(["first", "second"]))
    assert asyncio.run(agent.run("a", cancel_token=token)).output == "first"
    assert asyncio.run(agent.run("b", cancel_token=token)).output == "second"


class Report(BaseModel):
    a: int


async def _slow_validator(report: Report, ctx: Any) -> None:
    await asyncio.sleep(2)


async def test_rel19_a_slow_validator_is_cancelled() -> None:
    """rel-19: validators were not raced against the cancel token."""
    agent = Agent(ScriptedModel([call("final_result", {"a": 1})]),
                  output=Output(Report, validators=[_slow_validator]))
    token = CancelToken()
    asyncio.get_running_loop().call_later(0.1, token.cancel, "user")
    started = time.monotonic()
    with pytest.raises(Cancelled) as info:
        await agent.run("go", cancel_token=token)
    assert time.monotonic() - started < 1.5
    assert info.value.context["phase"] == "validation"
    result = info.value.result
    assert result is not None
    assert "not validated" in _tool_answers(result.messages)["final_result"]


async def test_rel19_a_slow_validator_is_bounded_by_the_timeout() -> None:
    """rel-19: ``Limits(timeout)`` did not bound a validator; now it is the timeout limit."""
    agent = Agent(ScriptedModel([call("final_result", {"a": 1})]),
                  output=Output(Report, validators=[_slow_validator]))
    with pytest.raises(AgentError) as info:
        await agent.run("go", limits=Limits(timeout=0.1, on_limit="error"))
    assert info.value.code == "TIMEOUT"
    assert info.value.result is not None
    assert info.value.result.termination.reason == "timeout"


async def test_rel23_the_running_call_is_in_the_stored_trace(tmp_path: Path) -> None:
    """rel-23 (a): a run that dies while a tool runs still shows the call in its stored trace."""
    store = _store(tmp_path / "t.db")
    running = threading.Event()
    release = threading.Event()

    @tool
    def native_convert(path: str) -> str:
        running.set()
        release.wait(5)
        return "converted"

    agent = Agent(ScriptedModel([call("native_convert", {"path": "x.pdf"}), "ok"]),
                  tools=[native_convert], trace_store=store)
    task = asyncio.ensure_future(agent.run("go", run_id="r1"))
    while not running.is_set():
        await asyncio.sleep(0.01)
    stored = store.get("r1")  # what a crash at this moment would leave
    release.set()
    await task
    assert [(c.name, c.args) for c in stored.tool_calls] == [("native_convert",
                                                              {"path": "x.pdf"})]


async def test_rel23_a_cancelled_request_keeps_its_step() -> None:
    """rel-23 (b): a request cancelled in flight still counts and has a step."""

    class SlowModel(ScriptedModel):
        async def request(self, messages: Any, settings: Any) -> Any:
            await asyncio.sleep(5)

    failures: list[Any] = []
    agent = Agent(SlowModel(["never"]), callbacks={"on_failure": failures.append})
    task = asyncio.ensure_future(agent.run("go"))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    result = failures[0].result
    assert len(result.trace.steps) == 1
    assert result.usage.requests == 1


async def test_rel25_a_tool_raising_cancelled_error_is_an_observation() -> None:
    """rel-25: a tool whose own await was cancelled ended the whole run."""

    @tool
    async def fetch() -> str:
        raise asyncio.CancelledError

    @tool
    def other() -> str:
        return "fine"

    calls: list[ToolCallEvent] = []
    agent = Agent(ScriptedModel([[call("fetch"), call("other")], "done"]),
                  tools=[fetch, other], callbacks={"on_tool_call": calls.append})
    result = await agent.run("go")
    assert result.output == "done"
    answers = _tool_answers(result.messages)
    assert "CancelledError" in answers["fetch"]
    assert answers["other"] == "fine"


async def test_a_tool_cancelling_its_run_stops_the_rest_of_the_turn() -> None:
    """Without a caller token the run's own token is not raced in flight, but a tool that
    cancels through ``ctx.cancel_token`` still stops the calls after it (docs/loop.md)."""
    ran: list[str] = []

    @tool
    def stop(ctx: RunContext[Any]) -> str:
        ran.append("stop")
        ctx.cancel_token.cancel("the tool gave up")
        return "stopping"

    @tool
    def after() -> str:
        ran.append("after")
        return "ran"

    agent = Agent(ScriptedModel([[call("stop"), call("after")], "never"]), tools=[stop, after])
    with pytest.raises(Cancelled) as info:
        await agent.run("go")
    assert ran == ["stop"]
    result = info.value.result
    assert result is not None
    answers = _tool_answers(result.messages)
    assert answers["stop"] == "stopping" and answers["after"].startswith("not executed")


class _Answer(BaseModel):
    value: int


def _cancel_own_task() -> None:
    """``task.cancel()`` on the run's task from inside a callback, as a caller's would land."""
    task = asyncio.current_task()
    assert task is not None
    task.cancel()


async def test_a_cancel_while_a_superseded_output_call_is_reported_keeps_its_answer() -> None:
    """Fuzz seed 210780: two output calls in one turn; a cancel lands in the callback that
    reports the first one "superseded". The history said "not validated" while the trace and
    the event said "superseded"; now all three say what the event said."""
    seen: list[ToolResultEvent] = []
    failures: list[Any] = []

    async def on_result(event: ToolResultEvent) -> None:
        seen.append(event)
        _cancel_own_task()
        await asyncio.sleep(0)

    model = ScriptedModel([[call("final_result", {"value": 1}),
                            call("final_result", {"value": 2})]])
    agent = Agent(model, output=Output(_Answer),
                  callbacks={"on_tool_result": on_result, "on_failure": failures.append})
    with pytest.raises(asyncio.CancelledError):
        await agent.run("go")
    result = failures[0].result
    history = [r.content for m in result.messages if m.role == "tool" for r in m.results]
    records = [r.result if r.error is None else r.error for r in result.trace.tool_calls]
    assert history[0] == "Superseded by a later call in the same turn."
    assert records[0] == history[0] == seen[0].result.content
    assert history[1].startswith("not validated")


async def test_a_cancel_while_a_denied_call_is_announced_keeps_the_denial() -> None:
    """Fuzz seed 216482: a cancel inside ``on_tool_call`` of a denied call answered it "not
    completed ... while it ran", though it never ran; the denial's reason is its answer."""
    from toolcycle import Deny

    @tool(requires_approval=True)
    def wipe() -> str:
        return "wiped"

    async def on_call(event: ToolCallEvent) -> None:
        _cancel_own_task()
        await asyncio.sleep(0)

    seen: list[ToolResultEvent] = []
    failures: list[Any] = []
    agent = Agent(ScriptedModel([call("wipe"), "never"]), tools=[wipe],
                  approval=lambda request, ctx: Deny("not on my watch"),
                  callbacks={"on_tool_call": on_call, "on_tool_result": seen.append,
                             "on_failure": failures.append})
    with pytest.raises(asyncio.CancelledError):
        await agent.run("go")
    result = failures[0].result
    assert _tool_answers(result.messages)["wipe"] == "not on my watch"
    assert [e.result.content for e in seen] == ["not on my watch"]
    assert [r.error for r in result.trace.tool_calls] == ["not on my watch"]


async def test_a_cancel_while_a_refused_call_is_announced_keeps_the_refusal() -> None:
    """Same path as the denial: a call refused because tools are withdrawn (the forced final
    answer) keeps its refusal when a cancel lands in its ``on_tool_call`` callback."""

    @tool
    def look() -> str:
        return "seen"

    async def on_call(event: ToolCallEvent) -> None:
        if event.kind == "refused":
            _cancel_own_task()
            await asyncio.sleep(0)

    failures: list[Any] = []
    agent = Agent(ScriptedModel([call("look"), [call("look")]]), tools=[look],
                  limits=Limits(max_iterations=1, on_limit="final_answer"),
                  callbacks={"on_tool_call": on_call, "on_failure": failures.append})
    with pytest.raises(asyncio.CancelledError):
        await agent.run("go")
    result = failures[0].result
    refused = [r for m in result.messages if m.role == "tool" for r in m.results][-1]
    assert refused.content == "Tools are disabled now: answer directly."
    assert result.trace.tool_calls[-1].error == refused.content
