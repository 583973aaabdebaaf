"""Worker threads for sync tools: the hop from the event loop to a thread and back, made cheap.

A sync tool may block (a database query, ``time.sleep``), so it runs off the event loop; that
keeps concurrent runs, timeouts and cancellation working while it runs. The hop is on the hot
path of every iteration that calls a sync tool, so it is kept to the two cross-thread wake-ups
it cannot avoid: the job goes in through a ``queue.SimpleQueue`` and the result comes back
with ``loop.call_soon_threadsafe``. ``loop.run_in_executor`` adds a ``concurrent.futures``
future (with its lock and condition) chained to an asyncio future; measured on the 2-core test
host, its round trip cost ~69 µs of CPU against ~34 µs here (see docs/benchmarks.md).

Threads start on demand, so a turn with n blocking calls gets n threads, and stay for reuse,
up to a cap; past the cap, jobs wait for a free thread. The tool runs in a copy of the
caller's ``contextvars`` context (as with ``asyncio.to_thread``), so tracing context and user
context variables reach it. The threads are daemons: a tool that hangs after its timeout
fired cannot keep the interpreter from exiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any

#: At most this many sync tools run at the same time; further calls wait for a free thread.
MAX_THREADS = 64

_Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", contextvars.Context,
             Callable[[], Any]]


class ToolThreads:
    """A small, growable pool of daemon threads that run sync tools for an event loop."""

    def __init__(self, max_threads: int = MAX_THREADS, name: str = "toolcycle-tool") -> None:
        self.max_threads = max_threads
        self.name = name
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0  # threads waiting for a job that no submitted job has claimed yet

    def run(self, function: Callable[[], Any]) -> asyncio.Future[Any]:
        """Start ``function()`` on a worker thread; the returned future resolves on the loop.

        Cancelling the future (a tool timeout, a cancelled run) does not stop the thread, which
        cannot be interrupted; its result is then dropped.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        # Past the cap a job waits in the queue and the thread that takes it counts itself idle
        # when done, so ``_idle`` may then run ahead of the truth; harmless, because at the cap
        # no thread would be started anyway (threads never exit).
        with self._lock:
            if self._idle:
                self._idle -= 1
                number = 0
            elif self._threads < self.max_threads:
                self._threads += 1
                number = self._threads
            else:
                number = 0
        self._jobs.put((loop, future, contextvars.copy_context(), function))
        if number:
            threading.Thread(target=self._work, name=f"{self.name}-{number}", daemon=True).start()
        return future

    @property
    def threads(self) -> int:
        """How many worker threads exist now."""
        return self._threads

    def _work(self) -> None:
        while True:
            loop, future, context, function = self._jobs.get()
            value, error = None, None
            try:
                value = context.run(function)
            except BaseException as exc:  # delivered to the awaiting run, never lost here
                error = exc
            # Idle before the result is delivered: the awaiting run's next call must find
            # this thread, not start another one.
            with self._lock:
                self._idle += 1
            _deliver(loop, future, value, error)
            del loop, future, context, function, value, error  # drop references while idle


def _deliver(
    loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], value: Any,
    error: BaseException | None,
) -> None:
    # RuntimeError: the loop was closed while the tool ran, so nobody is waiting.
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(_settle, future, value, error)


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.cancelled():  # timed out or cancelled meanwhile: the result has no taker
        return
    if isinstance(error, StopIteration):  # asyncio futures refuse it; it would hang the run
        wrapped = RuntimeError(f"the tool raised StopIteration: {error!r}")
        wrapped.__cause__ = error
        error = wrapped
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


#: The process-wide pool that :mod:`toolcycle.run.calls` runs sync tools on.
TOOL_THREADS = ToolThreads()
