"""A streaming run's events and result (:meth:`Agent.stream <toolcycle.agent.Agent.stream>`),
and the per-thread event loop of the blocking ``run_sync``/``resume_sync``: kept apart from the
agent's configuration in :mod:`toolcycle.agent`."""

from __future__ import annotations

import asyncio
import atexit
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from ..events import Event
from ..result import RunResult
from ..run.loop import run as run_loop
from ..run.state import RunState


class AgentStream[OutputT]:
    """Events of a streaming run; ``result`` is set once iteration finishes.

    Text deltas may precede tool calls in the same response, so they are never the final
    answer by themselves: the run's output arrives in the :class:`~toolcycle.events.FinalResult`
    event. Leaving the iteration early cancels the run.
    """

    def __init__(self, state: RunState | None, queue: asyncio.Queue[Event | None],
                 prepare: Callable[[], Awaitable[RunState]] | None = None) -> None:
        self._state = state
        self._prepare = prepare  # makes the state first (an agent with toolsets connects)
        self._queue = queue
        self._task: asyncio.Task[RunResult[Any]] | None = None
        self.result: RunResult[OutputT] | None = None

    async def __aiter__(self) -> AsyncIterator[Event]:
        if self._task is not None:  # a second loop would run the finished state again
            raise RuntimeError("a stream's events can be iterated once: read .result, or "
                               "await get_result(), after the first loop")
        if self._state is None:
            assert self._prepare is not None
            self._state = await self._prepare()
        self._task = asyncio.ensure_future(run_loop(self._state))
        self._task.add_done_callback(lambda _: self._queue.put_nowait(None))
        try:
            while True:
                event = await self._queue.get()
                if event is None:
                    break
                yield event
            self.result = self._task.result()
        finally:
            if not self._task.done():
                self._task.cancel()
                await asyncio.gather(self._task, return_exceptions=True)
            elif not self._task.cancelled() and self.result is None:
                self._task.exception()  # left early: the run's error is not the caller's

    async def get_result(self) -> RunResult[OutputT]:
        """The run's result, draining the events first if nobody iterated them.

        After the events were iterated it returns that run's result (or raises its error):
        it used to iterate again, which ran the finished run's state a second time (more
        model requests, another output).
        """
        if self._task is None:
            async for _ in self:
                pass
        elif self.result is None:
            # Still running: iterated elsewhere, or left with ``break`` (the loop's generator
            # is closed a moment later, which cancels the run). Wait without taking on its
            # cancellation, then give its result, raise its error, or say it was cancelled.
            await asyncio.wait([self._task])
            if self._task.cancelled():
                raise RuntimeError("the stream was left before its run finished, which "
                                   "cancelled the run: there is no result")
            self.result = self._task.result()
        assert self.result is not None
        return self.result



_RUNNERS = threading.local()


def thread_runner() -> asyncio.Runner:
    """The calling thread's event loop for :meth:`Agent.run_sync`, made on first use."""
    runner: asyncio.Runner | None = getattr(_RUNNERS, "runner", None)
    if runner is None:
        runner = _RUNNERS.runner = asyncio.Runner()
        atexit.register(_close_at_exit, runner)
    return runner


def _close_at_exit(runner: asyncio.Runner) -> None:
    """``Runner.close()`` without joining the default executor: that needs a new thread, which
    the interpreter refuses at exit (``concurrent.futures`` joins its threads itself)."""
    loop = runner.get_loop()
    if loop.is_closed():
        return
    tasks = asyncio.all_tasks(loop)
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()
