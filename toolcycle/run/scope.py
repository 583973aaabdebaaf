"""Interrupting the run's awaited work when the caller cancels or the deadline passes.

A model request, a tool, a validator or a reflection preview is awaited through
:meth:`Interrupts.guard`. With neither a caller's cancel token nor a timeout, the guard is a
plain ``await`` (the hot path). Otherwise it arms two triggers for the duration of the await:
the token's callback and a timer at the deadline. A trigger cancels the run's own task, as
``asyncio.timeout`` does, so the awaited work is cancelled where it stands (an HTTP request is
aborted, an async tool gets ``CancelledError``, a sync tool's thread is left to finish and its
result dropped) and awaited before the guard returns; no task is left running. The guard then
turns the cancellation into :class:`~toolcycle.errors.Cancelled` or :class:`LimitHit`, and
``task.uncancel()`` keeps a cancellation from outside (``task.cancel()`` by the caller)
distinct from ours: that one propagates as ``CancelledError``.

Outside a guard (the engine's own bookkeeping, callbacks), a trigger only marks itself; the
loop checks the token and the deadline before each model request and between tool calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable
from typing import Literal

from ..context import CancelToken
from ..models.paid import carried

Trigger = Literal["cancel", "timeout"]


class LimitHit(Exception):
    """Internal: the run's deadline passed while its work was awaited."""

    def __init__(self, limit: Literal["timeout"] = "timeout") -> None:
        super().__init__(limit)
        self.limit: Literal["timeout"] = limit


class CancelledByToken(Exception):
    """Internal: the caller's cancel token fired while the run's work was awaited."""


class Interrupts:
    """The cancel token and the deadline of one run, armed only while work is awaited."""

    __slots__ = ("_armed", "_fired", "_handle", "_loop", "_suspended", "_task", "_thread",
                 "deadline", "token", "watching_token")

    def __init__(self, token: CancelToken, watching_token: bool) -> None:
        self.token = token
        #: Whether the caller gave a token (the run's own token only stops it from inside).
        self.watching_token = watching_token
        self.deadline: float | None = None  # time.monotonic(); None while suspended
        self._suspended: float | None = None
        self._task: asyncio.Task[object] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = 0
        self._handle: int | None = None
        self._armed = False
        self._fired: Trigger | None = None

    def open(self, timeout: float | None) -> None:
        """Start watching: called once, from the run's task, when the run starts."""
        if timeout is not None:
            self.deadline = time.monotonic() + timeout
        self._task = asyncio.current_task()
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        if self.watching_token:
            self._handle = self.token.add_callback(self._token_fired)

    def close(self) -> None:
        if self._handle is not None:
            self.token.remove_callback(self._handle)
            self._handle = None

    def _token_fired(self) -> None:
        """Runs in the cancelling thread. On the run's loop, from a timer or another task: act
        at once (a hop would let the run start a request first). From inside the run's own
        task (a callback, an async tool): once the task next waits, because cancelling a task
        that is running only marks it, and the mark would outlive a guard that then returns
        normally. From another thread: hop onto the loop."""
        loop = self._loop
        if loop is None:
            return
        if threading.get_ident() == self._thread:
            if asyncio.current_task() is self._task:
                loop.call_soon(self._fire, "cancel")
            else:
                self._fire("cancel")
        elif not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed since the check
                loop.call_soon_threadsafe(self._fire, "cancel")

    def _fire(self, trigger: Trigger) -> None:
        if self._armed and self._fired is None and self._task is not None:
            self._fired = trigger
            self._task.cancel()

    def suspend_deadline(self) -> None:
        """The final request at a limit gets its answer even after the timeout."""
        if self.deadline is not None:
            self._suspended, self.deadline = self.deadline, None

    def resume_deadline(self) -> None:
        """A rejected forced output starts another attempt: the deadline is back."""
        if self._suspended is not None:
            self.deadline, self._suspended = self._suspended, None

    def deadline_passed(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def guard[T](self, awaitable: Awaitable[T]) -> Awaitable[T]:
        """``awaitable``, guarded: awaiting the result raises :class:`CancelledByToken` or
        :class:`LimitHit` if a trigger fires first (the work is cancelled and awaited before
        that). With nothing to watch, ``awaitable`` itself comes back: the hot path gets no
        extra coroutine (the run's own token, cancelled by a tool, is checked before each
        request)."""
        if self.deadline is None and not self.watching_token:
            return awaitable
        return self._guarded(awaitable)

    async def _guarded[T](self, awaitable: Awaitable[T]) -> T:
        if self.token.cancelled or self.deadline_passed():
            _discard(awaitable)
            if self.token.cancelled:
                raise CancelledByToken
            raise LimitHit
        task = self._task
        assert task is not None and self._loop is not None, "Interrupts.open() was not called"
        base = task.cancelling()
        timer = None
        if self.deadline is not None:
            timer = self._loop.call_later(max(0.0, self.deadline - time.monotonic()),
                                          self._fire, "timeout")
        self._armed = True
        try:
            return await awaitable
        except asyncio.CancelledError as exc:
            fired = self._fired
            if fired is not None:
                self._fired = None
                if task.uncancel() <= base:  # ours alone: no cancellation from outside
                    # (with what the cut-off work had paid: toolcycle.models.paid)
                    if fired == "cancel":
                        raise carried(exc, CancelledByToken()) from None
                    raise carried(exc, LimitHit()) from None
            raise
        finally:
            self._armed = False
            if timer is not None:
                timer.cancel()
            if self._fired is not None:  # fired, but the work swallowed the cancellation
                self._fired = None
                task.uncancel()


def _discard(awaitable: Awaitable[object]) -> None:
    """Close a coroutine that will never be awaited (no 'never awaited' warning)."""
    close = getattr(awaitable, "close", None)
    if close is not None and asyncio.iscoroutine(awaitable):
        close()
    elif isinstance(awaitable, asyncio.Future):
        awaitable.cancel()
