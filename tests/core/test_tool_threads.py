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


async def _cancelled(future: asyncio.Future[object]) -> None:
    """Give a call up as the engine does on a timeout or a cancelled run."""
    future.cancel()
    await asyncio.sleep(0)  # the done callback runs on the loop
    await asyncio.sleep(0)


async def test_timed_out_calls_do_not_starve_the_pool() -> None:  # rel-24
    pool = ToolThreads(max_threads=2)
    release = threading.Event()
    try:
        hung = [pool.run(lambda: release.wait(10)) for _ in range(2)]
        for future in hung:
            await _cancelled(future)
        assert (pool.threads, pool.abandoned) == (0, 2)
        assert await asyncio.wait_for(pool.run(lambda: "quick"), timeout=5) == "quick"
        assert pool.threads == 1
    finally:
        release.set()


async def test_a_queued_call_gets_a_thread_when_the_running_one_is_given_up() -> None:
    pool = ToolThreads(max_threads=1)
    release = threading.Event()
    started = threading.Event()

    def hang() -> None:
        started.set()
        release.wait(10)

    try:
        hung = pool.run(hang)
        assert await asyncio.to_thread(started.wait, 5)
        waiting = pool.run(lambda: "ran")  # at the cap: queued
        await _cancelled(hung)
        assert await asyncio.wait_for(waiting, timeout=5) == "ran"
    finally:
        release.set()


async def test_a_call_given_up_before_it_started_never_runs() -> None:
    pool = ToolThreads(max_threads=1)
    release = threading.Event()
    ran: list[str] = []
    try:
        first = pool.run(lambda: release.wait(10))
        queued = pool.run(lambda: ran.append("queued"))
        await _cancelled(queued)
        release.set()
        assert await asyncio.wait_for(first, timeout=5) is True
        assert await asyncio.wait_for(pool.run(lambda: "next"), timeout=5) == "next"
    finally:
        release.set()
    assert ran == []
    assert (pool.threads, pool.abandoned) == (1, 0)


async def test_an_abandoned_thread_rejoins_the_pool_when_its_tool_returns() -> None:
    pool = ToolThreads(max_threads=2)
    release = threading.Event()
    started = threading.Event()

    def hang() -> None:
        started.set()
        release.wait(10)

    hung = pool.run(hang)
    assert await asyncio.to_thread(started.wait, 5)
    await _cancelled(hung)
    assert (pool.threads, pool.abandoned) == (0, 1)
    release.set()
    for _ in range(500):  # the thread notices its job returned, then comes back idle
        if pool.abandoned == 0:
            break
        await asyncio.sleep(0.01)
    assert (pool.threads, pool.abandoned) == (1, 0)
    await pool.run(lambda: None)
    assert pool.threads == 1  # reused, not a new thread


async def test_past_the_abandoned_ceiling_a_hung_call_counts_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pool = ToolThreads(max_threads=2, max_abandoned=1)
    release = threading.Event()
    try:
        both_running = threading.Barrier(3, timeout=5)

        def hang() -> None:
            both_running.wait()
            release.wait(10)

        first, second = pool.run(hang), pool.run(hang)
        await asyncio.to_thread(both_running.wait)  # a queued job given up is simply dropped
        await _cancelled(first)
        with caplog.at_level("WARNING", logger="toolcycle.run.threads"):
            await _cancelled(second)
        assert (pool.threads, pool.abandoned) == (1, 1)
        assert "the ceiling" in caplog.text
    finally:
        release.set()


async def test_an_engine_timeout_leaves_the_pool_to_other_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # rel-24, through a run: the engine only cancels the future
    import toolcycle.run.calls as calls

    monkeypatch.setattr(calls, "TOOL_THREADS", ToolThreads(max_threads=2))
    release = threading.Event()

    @tool(timeout=0.05)
    def stuck() -> str:
        """A library call that blocks."""
        release.wait(10)
        return "late"

    @tool
    def quick() -> str:
        """Instant."""
        return "quick"

    try:
        hung = ScriptedModel([[ToolCall.from_args(f"c{i}", "stuck", {}) for i in range(2)],
                              "done"])
        await Agent(hung, tools=[stuck], parallel_tools=True).run("go")
        model = ScriptedModel([ToolCall.from_args("q", "quick", {}), "done"])
        result = await asyncio.wait_for(Agent(model, tools=[quick]).run("go"), timeout=5)
        assert result.tool_calls[0].error is None
    finally:
        release.set()


def test_a_forked_child_runs_sync_tools_on_threads_of_its_own() -> None:
    """The parent's idle thread is not copied into a fork: the child must not hand it a job
    (that job would wait forever, as in a batch forked by the kill fuzz)."""
    import os

    pool = ToolThreads()

    async def call(answer: str) -> str:
        return str(await asyncio.wait_for(pool.run(lambda: answer), timeout=10))

    assert asyncio.run(call("warm")) == "warm"  # one idle thread, in the parent only
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # the child: one call on a fresh loop, its answer down the pipe
        code = 1
        try:
            os.write(writer, asyncio.run(call("child")).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(writer)
    _, status = os.waitpid(child, 0)
    assert os.read(reader, 100) == b"child" and os.waitstatus_to_exitcode(status) == 0
    os.close(reader)
    assert pool.threads == 1  # the parent's pool is as it was
