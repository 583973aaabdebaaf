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

A thread cannot be interrupted, so a job whose future was cancelled while it ran (the tool
timed out, or the run was cancelled) keeps its thread until the tool returns, perhaps never.
Such a thread is *abandoned*: it stops counting against the cap at once (a queued job gets a
fresh thread in its place), so hung calls cannot starve every sync tool in the process; it
rejoins the pool if there is room when its tool returns, and exits otherwise. Abandoned
threads have their own, much higher ceiling (:data:`MAX_ABANDONED`; past it, a hung call
counts against the cap again), are counted in :attr:`ToolThreads.abandoned`, and are logged as
they pile up. A job cancelled before a thread took it never runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any, Final

#: At most this many sync tools run at the same time; further calls wait for a free thread.
MAX_THREADS = 64
#: At most this many abandoned threads (still running a tool nobody awaits) are kept off the cap.
MAX_ABANDONED = 1024
#: A warning is logged when the abandoned threads reach this many, and at each doubling.
ABANDONED_WARNING = 16

_log = logging.getLogger(__name__)

# A job's states; only changed under the pool's lock.
_QUEUED: Final = 0
_RUNNING: Final = 1
_DONE: Final = 2  # the function returned; the result is on its way to the loop
_ABANDONED: Final = 3  # the future was cancelled while the function ran


class _Job:
    """One call of a sync tool; also the done callback that notices a cancelled future."""

    __slots__ = ("context", "function", "future", "loop", "pool", "state", "watched")

    def __init__(
        self, pool: ToolThreads, loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any],
        function: Callable[[], Any],
    ) -> None:
        self.pool = pool
        self.loop = loop
        self.future = future
        self.context = contextvars.copy_context()
        self.function = function
        self.state = _QUEUED
        self.watched = False  # a done callback watches the future (ToolThreads.run)

    def give_up(self) -> None:
        """The caller stopped waiting (a timeout, a cancelled run): a queued job never runs, a
        running one's thread stops counting against the cap. Harmless once the job is done."""
        self.pool._give_up(self)

    def __call__(self, future: asyncio.Future[Any]) -> None:
        # As a done callback (see ToolThreads.run), removed before a result is set: this runs
        # only when the future was cancelled.
        self.pool._give_up(self)


class ToolThreads:
    """A small, growable pool of daemon threads that run sync tools for an event loop."""

    def __init__(
        self, max_threads: int = MAX_THREADS, name: str = "toolcycle-tool",
        max_abandoned: int = MAX_ABANDONED,
    ) -> None:
        self.max_threads = max_threads
        self.max_abandoned = max_abandoned
        self.name = name
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0  # threads that count against the cap (abandoned ones do not)
        self._abandoned = 0
        self._started = 0  # for thread names
        self._idle = 0  # threads waiting for a job that no submitted job has claimed yet
        self._backlog = 0  # queued jobs that no thread has claimed yet (the pool is at its cap)
        _forget_in_forked_children(self)

    def _forget_threads(self) -> None:
        """In a forked child: the parent's threads do not exist here, so start from none (a
        job handed to an idle thread that was not copied would wait forever)."""
        self._jobs = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = self._abandoned = self._idle = self._backlog = 0

    def run(self, function: Callable[[], Any]) -> asyncio.Future[Any]:
        """Start ``function()`` on a worker thread; the returned future resolves on the loop.

        Cancelling the future (a tool timeout, a cancelled run) is all it takes to give the
        call up: the thread cannot be stopped and its result is dropped, but it no longer
        counts against the cap (see the module docstring), and a call not yet started never
        starts.
        """
        job = self.start(function)
        job.watched = True
        job.future.add_done_callback(job)
        return job.future

    def start(self, function: Callable[[], Any]) -> _Job:
        """:meth:`run` for a caller that says itself when it stops waiting (``job.give_up()``),
        which saves registering and removing a done callback per call: the run engine's way."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        job = _Job(self, loop, future, function)
        with self._lock:
            if self._idle:
                self._idle -= 1
                start = False
            elif self._threads < self.max_threads:
                self._threads += 1
                start = True
            else:
                self._backlog += 1
                start = False
        self._jobs.put(job)
        if start:
            self._start_thread()
        return job

    @property
    def threads(self) -> int:
        """How many worker threads count against the cap now (busy or idle, not abandoned)."""
        return self._threads

    @property
    def abandoned(self) -> int:
        """How many threads still run a tool whose caller gave up (timed out or cancelled)."""
        return self._abandoned

    def _start_thread(self) -> None:
        with self._lock:
            self._started += 1
            number = self._started
        threading.Thread(target=self._work, name=f"{self.name}-{number}", daemon=True).start()

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            with self._lock:
                runs = job.state == _QUEUED  # not given up while it waited
                if runs:
                    job.state = _RUNNING
            value, error = None, None
            if runs:
                try:
                    value = job.context.run(job.function)
                except BaseException as exc:  # delivered to the awaiting run, never lost here
                    error = exc
            with self._lock:
                if job.state == _ABANDONED:
                    self._abandoned -= 1
                    if self._threads >= self.max_threads:
                        return  # a replacement holds this thread's place
                    self._threads += 1
                job.state = _DONE
                # Free before the result is delivered: the awaiting run's next call must find
                # this thread, not start another one.
                if self._backlog:
                    self._backlog -= 1  # the next queued job is this thread's
                else:
                    self._idle += 1
            if runs:
                _deliver(job, value, error)
            del job, value, error  # drop references while idle

    def _give_up(self, job: _Job) -> None:
        """The future was cancelled: forget a queued job, or take a running one off the cap."""
        with self._lock:
            if job.state == _QUEUED:
                job.state = _DONE  # the thread that takes it skips it
                return
            if job.state != _RUNNING:  # it returned meanwhile; its thread is free already
                return
            if self._abandoned >= self.max_abandoned:
                abandoned = 0  # past the ceiling the hung call keeps its place under the cap
            else:
                job.state = _ABANDONED
                self._threads -= 1
                self._abandoned = abandoned = self._abandoned + 1
                replace = self._backlog > 0  # a queued job would otherwise wait for a free thread
                if replace:
                    self._backlog -= 1
                    self._threads += 1
        if not abandoned:
            _log.warning("%d abandoned tool threads, the ceiling: another hung sync tool holds "
                         "one of the %d regular threads", self.max_abandoned, self.max_threads)
            return
        if abandoned >= ABANDONED_WARNING and abandoned & (abandoned - 1) == 0:
            _log.warning("%d sync tool calls that timed out or were cancelled still hold their "
                         "threads (a blocked tool cannot be interrupted)", abandoned)
        if replace:
            self._start_thread()


def _forget_in_forked_children(pool: ToolThreads) -> None:
    """Reset ``pool`` in every child this process forks (for as long as the pool lives)."""
    reference = weakref.ref(pool)

    def after_fork() -> None:
        alive = reference()
        if alive is not None:
            alive._forget_threads()

    os.register_at_fork(after_in_child=after_fork)


def _deliver(job: _Job, value: Any, error: BaseException | None) -> None:
    # RuntimeError: the loop was closed while the tool ran, so nobody is waiting.
    with contextlib.suppress(RuntimeError):
        job.loop.call_soon_threadsafe(_settle, job, value, error)


def _settle(job: _Job, value: Any, error: BaseException | None) -> None:
    future = job.future
    if future.cancelled():  # timed out or cancelled meanwhile: the result has no taker
        return
    if job.watched:  # a settled job is not given up; saves a scheduled call
        future.remove_done_callback(job)
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
