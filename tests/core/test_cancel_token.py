"""CancelToken across threads and event loops (rel-03, rel-17), and its callbacks.

The token is cancelled from where the run is not: a UI thread stopping a blocking ``run_sync``,
a sync tool on a worker thread; and one token may serve runs on different event loops.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Sequence

import pytest

from toolcycle import Agent, Cancelled, CancelToken, Message, RunContext, tool
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call


class SlowModel(ScriptedModel):
    """Each request takes ``delay`` seconds: long enough that only a cancel can end it early."""

    def __init__(self, script: list[object], delay: float) -> None:
        super().__init__(script)  # type: ignore[arg-type]
        self.delay = delay

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        await asyncio.sleep(self.delay)
        return await super().request(messages, settings)


def test_cancel_from_another_thread_stops_run_sync() -> None:  # rel-03
    token = CancelToken()
    agent = Agent(SlowModel(["the answer"], delay=10.0), "t")
    timer = threading.Timer(0.05, token.cancel, args=("stop",))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(Cancelled) as info:
            agent.run_sync("go", cancel_token=token)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 5.0  # generous: the model alone would take 10 s
    assert info.value.context["phase"] == "model_request"


async def test_a_sync_tool_cancelling_through_its_context_stops_the_run() -> None:  # rel-03
    release = threading.Event()

    @tool
    def stop_and_block(ctx: RunContext[None]) -> str:
        """Cancels the run, then keeps its worker thread busy."""
        ctx.cancel_token.cancel("tool said stop")
        release.wait(10)
        return "late"

    token = CancelToken()
    agent = Agent(ScriptedModel([call("stop_and_block"), "done"]), tools=[stop_and_block])
    try:
        with pytest.raises(Cancelled) as info:
            await asyncio.wait_for(agent.run("go", cancel_token=token), timeout=5)
    finally:
        release.set()
    assert info.value.context["phase"] == "tool_execution"
    assert token.reason == "tool said stop"


def test_one_token_serves_runs_on_two_event_loops() -> None:  # rel-17
    token = CancelToken()
    agent = Agent(SlowModel(["first", "second"], delay=0.02), "t")
    assert asyncio.run(agent.run("go", cancel_token=token)).output == "first"
    assert asyncio.run(agent.run("go", cancel_token=token)).output == "second"


def test_wait_works_on_a_second_loop_after_waiting_on_a_first() -> None:  # rel-17
    token = CancelToken()

    async def wait_briefly() -> bool:
        try:
            await asyncio.wait_for(token.wait(), timeout=0.02)
        except TimeoutError:
            return False
        return True

    assert asyncio.run(wait_briefly()) is False

    async def wait_until_cancelled() -> bool:
        threading.Timer(0.02, token.cancel).start()
        await asyncio.wait_for(token.wait(), timeout=5)
        return token.cancelled

    assert asyncio.run(wait_until_cancelled()) is True


def test_one_cancel_wakes_waiters_on_every_loop() -> None:
    token = CancelToken()
    waiting = threading.Barrier(4, timeout=5)
    woken: list[str] = []

    def waiter(name: str) -> None:
        async def main() -> None:
            tasks = [asyncio.ensure_future(token.wait()) for _ in range(2)]
            await asyncio.sleep(0)  # both are now registered
            waiting.wait()
            await asyncio.wait_for(asyncio.gather(*tasks), timeout=5)
            woken.append(name)

        asyncio.run(main())

    threads = [threading.Thread(target=waiter, args=(f"loop-{i}",)) for i in range(3)]
    for thread in threads:
        thread.start()
    waiting.wait()
    assert token.cancel("everyone stop") is True
    for thread in threads:
        thread.join(5)
    assert sorted(woken) == ["loop-0", "loop-1", "loop-2"]


async def test_wait_returns_at_once_when_already_cancelled() -> None:
    token = CancelToken()
    token.cancel()
    await asyncio.wait_for(token.wait(), timeout=1)
    assert token.reason == "cancelled by caller"


def test_cancel_is_idempotent_and_the_first_reason_wins() -> None:
    token = CancelToken()
    assert (token.cancelled, token.reason) == (False, None)
    results = []
    threads = [threading.Thread(target=lambda i=i: results.append(token.cancel(f"r{i}")))
               for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count(True) == 1
    assert token.cancelled
    assert token.reason in {f"r{i}" for i in range(8)}
    assert token.cancel("later") is False
    assert token.reason != "later"


def test_callbacks_run_once_and_can_be_removed() -> None:
    token = CancelToken()
    calls: list[str] = []
    token.add_callback(lambda: calls.append("a"))
    removed = token.add_callback(lambda: calls.append("removed"))
    assert token.remove_callback(removed) is True
    token.cancel()
    token.cancel()
    assert calls == ["a"]
    token.add_callback(lambda: calls.append("late"))  # already cancelled: runs at once
    assert calls == ["a", "late"]
    assert token.remove_callback(removed) is False


def test_a_raising_callback_is_logged_and_the_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    token = CancelToken()
    calls: list[str] = []

    def broken() -> None:
        raise RuntimeError("waiter bug")

    token.add_callback(broken)
    token.add_callback(lambda: calls.append("ok"))
    with caplog.at_level(logging.ERROR, logger="toolcycle.context"):
        assert token.cancel() is True
    assert calls == ["ok"]
    assert "CancelToken callback raised" in caplog.text


def test_cancel_after_the_waiting_loop_was_closed_does_not_raise() -> None:
    token = CancelToken()
    loop = asyncio.new_event_loop()
    task = loop.create_task(token.wait())
    loop.run_until_complete(asyncio.sleep(0))  # the wait is registered
    loop.close()
    token.cancel()  # the loop is gone; the wake-up is dropped, the canceller is unharmed
    assert token.cancelled
    del task
