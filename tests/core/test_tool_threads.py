"""The worker threads that run sync tools: results, errors, context, reuse, cap, timeouts."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time

import pytest

from toolcycle import Agent, tool
from toolcycle.messages import ToolCall
from toolcycle.models.scripted import ScriptedModel
from toolcycle.run.threads import ToolThreads

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="unset")


async def test_result_and_exception_come_back_to_the_awaiting_task() -> None:
    pool = ToolThreads()
    assert await pool.run(lambda: threading.current_thread().name) == "toolcycle-tool-1"

    def fail() -> None:
        raise ValueError("broken tool")

    with pytest.raises(ValueError, match="broken tool"):
        await pool.run(fail)


async def test_stop_iteration_is_wrapped_instead_of_hanging_the_future() -> None:
    def exhausted() -> int:
        return next(iter([]))

    with pytest.raises(RuntimeError, match="StopIteration") as info:
        await asyncio.wait_for(ToolThreads().run(exhausted), timeout=5)
    assert isinstance(info.value.__cause__, StopIteration)


async def test_the_tool_sees_the_callers_context_variables() -> None:
    pool = ToolThreads()
    request_id.set("r-42")
    assert await pool.run(request_id.get) == "r-42"
    request_id.set("r-43")  # a reused thread gets the new caller's context, not a stale one
    assert await pool.run(request_id.get) == "r-43"
    assert pool.threads == 1


async def test_threads_are_reused_and_grow_only_for_simultaneous_calls() -> None:
    pool = ToolThreads()
    for _ in range(20):
        await pool.run(lambda: None)
    assert pool.threads == 1
    barrier = threading.Barrier(3, timeout=5)
    await asyncio.gather(*(pool.run(barrier.wait) for _ in range(3)))
    assert pool.threads == 3


async def test_calls_past_the_cap_wait_for_a_free_thread() -> None:
    pool = ToolThreads(max_threads=2)
    running = 0
    peak = 0
    lock = threading.Lock()

    def work() -> None:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.02)
        with lock:
            running -= 1

    await asyncio.gather(*(pool.run(work) for _ in range(6)))
    assert (pool.threads, peak) == (2, 2)


async def test_a_timed_out_sync_tool_is_answered_and_its_late_result_dropped() -> None:
    release = threading.Event()
    finished = threading.Event()

    @tool(timeout=0.05)
    def slow() -> str:
        """Blocks until released."""
        release.wait(5)
        finished.set()
        return "late"

    @tool
    def fast() -> str:
        """Answers at once."""
        return "fast"

    model = ScriptedModel([
        [ToolCall.from_args("a", "slow", {}), ToolCall.from_args("b", "fast", {})],
        "done",
    ])
    result = await Agent(model, tools=[slow, fast]).run("go")
    release.set()
    records = result.tool_calls
    assert [(r.name, r.error is not None) for r in records] == [("slow", True), ("fast", False)]
    assert "timed out" in (records[0].error or "")
    # The blocked thread finishes later; its result has no taker and breaks nothing.
    assert await asyncio.to_thread(finished.wait, 5)
    await asyncio.sleep(0.01)
    assert result.output == "done"
