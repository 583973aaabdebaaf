"""Run-scoped context handed to tools, validators and reflection handlers, and the cancel token.

A tool asks for the context by annotating one parameter as :class:`RunContext`; that parameter is
injected by the loop and left out of the tool's JSON Schema.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .messages import Message, Usage
from .pricing import Price

if TYPE_CHECKING:  # the trace's types import nothing of the run's context
    from .tracing.stand_in import StandIn

_log = logging.getLogger(__name__)
_handles = itertools.count(1)  # callback handles, unique per process (next() is atomic in CPython)


class CancelToken:
    """Cooperative cancellation shared by the caller, the loop and the tools, across threads.

    The loop checks it before every model request and between tool batches and races it
    against in-flight requests and tools. It is bound to no thread and no event loop, because
    it is cancelled from where the run is not: a UI or request-handler thread cancelling a
    blocking ``run_sync``, or a sync tool on a worker thread calling ``ctx.cancel_token.cancel``;
    and one token may be kept and passed to runs on different event loops (``asyncio.run``
    twice). An ``asyncio.Event`` could do neither: its ``set()`` does not wake a loop from
    another thread, and it binds to the first loop that waits on it.

    The API:

    - :meth:`cancel` — from any thread; idempotent (the first reason wins); returns whether this
      call was the one that cancelled.
    - :attr:`cancelled`, :attr:`reason` — readable anywhere; a plain attribute read, so polling
      it on the hot path costs nothing.
    - ``await`` :meth:`wait` — on whichever event loop is running; woken through
      ``loop.call_soon_threadsafe`` (a closed loop is skipped).
    - :meth:`add_callback` / :meth:`remove_callback` — how an engine is told without a task per
      wait: ``fn()`` runs once, synchronously, in the thread that calls :meth:`cancel` (or at
      once, in the caller's thread, if the token is already cancelled). Callbacks must be quick
      and must not block; one that touches an event loop must hop with
      ``loop.call_soon_threadsafe``. An exception from a callback is logged, never raised into
      the cancelling thread, and does not stop the other callbacks.
    """

    __slots__ = ("_callbacks", "_cancelled", "_lock", "_reason")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._reason: str | None = None
        self._callbacks: dict[int, Callable[[], object]] = {}

    def cancel(self, reason: str = "cancelled by caller") -> bool:
        """Cancel, from any thread; ``False`` (and nothing changes) if already cancelled."""
        with self._lock:
            if self._cancelled:
                return False
            self._reason = reason
            self._cancelled = True  # after the reason: whoever sees True also sees the reason
            callbacks, self._callbacks = self._callbacks, {}
        for callback in callbacks.values():  # outside the lock: a callback may use the token
            _call_logged(callback)
        return True

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    @property
    def reason(self) -> str | None:
        """Why the token was cancelled (the first :meth:`cancel`'s reason); ``None`` until then."""
        return self._reason

    def add_callback(self, callback: Callable[[], object]) -> int:
        """Run ``callback()`` once on cancel; returns a handle for :meth:`remove_callback`.

        If the token is already cancelled, ``callback`` runs now, in this thread.
        """
        handle = next(_handles)
        with self._lock:
            if not self._cancelled:
                self._callbacks[handle] = callback
                return handle
        _call_logged(callback)
        return handle

    def remove_callback(self, handle: int) -> bool:
        """Forget a callback; ``True`` if it was still waiting (it will now never run)."""
        with self._lock:
            return self._callbacks.pop(handle, None) is not None

    async def wait(self) -> None:
        """Return once the token is cancelled; works on whichever event loop is running."""
        if self._cancelled:
            return
        loop = asyncio.get_running_loop()
        woken: asyncio.Future[None] = loop.create_future()
        handle = self.add_callback(lambda: _wake_threadsafe(loop, woken))
        try:
            await woken
        finally:
            self.remove_callback(handle)


def _call_logged(callback: Callable[[], object]) -> None:
    try:
        callback()
    except Exception:  # the cancelling thread (a UI, a tool) must not fail for a waiter's bug
        _log.exception("a CancelToken callback raised")


def _wake_threadsafe(loop: asyncio.AbstractEventLoop, woken: asyncio.Future[None]) -> None:
    with contextlib.suppress(RuntimeError):  # the loop was closed: nobody is waiting
        loop.call_soon_threadsafe(_wake, woken)


def _wake(woken: asyncio.Future[None]) -> None:
    if not woken.done():
        woken.set_result(None)


class CountedTool(Protocol):
    """What :attr:`RunContext.admit_call` needs of a tool (a :class:`~toolcycle.tools.Tool` is
    one): its name and its per-run call limit. A protocol, so this module imports no tools."""

    @property
    def name(self) -> str: ...

    @property
    def max_calls(self) -> int | None: ...


class RunModel(Protocol):
    """What a tool may use of its run's model: :class:`toolcycle.models.Model`, seen
    structurally (this module sits below the models, which import it)."""

    name: str

    def request(self, messages: Sequence[Message], settings: Any, /) -> Awaitable[Message]: ...

    def pricing(self, answered_by: str | None = None, /) -> Price | None:
        """What its replies cost (:meth:`toolcycle.models.Model.pricing`)."""
        ...


@dataclass(frozen=True, slots=True)
class SampledRequest:
    """A model request made on the run's behalf while one of its tool calls waited: an MCP
    server's sampling request served by the run's model (:mod:`toolcycle.mcp`). The trace
    records it as a step nested under that call (``ToolCallRecord.sampling``)."""

    #: Who asked (``MCP server `...```).
    source: str
    #: The model that answered.
    model: str
    usage: Usage
    duration_ms: float
    #: The reply's text (what the server received).
    text: str
    finish_reason: str | None = None


@dataclass(slots=True)
class RunContext[DepsT]:
    """What a tool, validator or handler may know about the run it is part of.

    ``run_state`` lives for the whole run; ``attempt_state`` is cleared when a new attempt
    starts (so an attempt's scratch data does not leak into the retry).
    """

    deps: DepsT
    usage: Usage
    cancel_token: CancelToken
    run_id: str = ""
    agent_name: str = "agent"
    iteration: int = 0
    attempt: int = 1
    run_state: dict[str, Any] = field(default_factory=dict)
    attempt_state: dict[str, Any] = field(default_factory=dict)
    tool_call_id: str | None = None
    tool_name: str | None = None
    #: The run's validated ``input=`` (``Agent(input_type=...)``); ``None`` without one.
    input: Any = None
    #: The run's user prompt, the task as it was written (``None`` for a run without one, as
    #: a resumed conversation may be): what a tool acting for the model may read the user's
    #: own words from (a learned fallback passes names as the task spelled them).
    prompt: str | None = None
    #: For a tool that calls other tools of the run itself (a learned routine, a fallback):
    #: ``admit_call(tool)`` counts one such call against the run's budgets (the tool's
    #: ``max_calls``, ``Limits(max_tool_calls=...)``) and returns why it is refused, or
    #: ``None``. The first call of the tool's own name is the call the loop already counted.
    #: Set by the loop for each call; ``None`` outside a run. Call it on the event loop.
    admit_call: Callable[[CountedTool], str | None] | None = None
    #: The run's model, for a tool that asks a model on the run's behalf (an MCP server's
    #: sampling request, served by the model of the run whose call it answers, its tokens
    #: added to ``usage``); ``None`` outside a run.
    model: RunModel | None = None
    #: For a tool whose server asks the run's model on the run's behalf (MCP sampling):
    #: ``record_sampling(request)`` counts the request's usage in the run once and records
    #: it in the trace under the call. Set by the loop for each call; ``None`` outside a run.
    record_sampling: Callable[[SampledRequest], None] | None = None
    #: For a tool that calls other tools of the run for the model (a learned routine, a
    #: fallback): ``record_stand_in(what)`` keeps what it did, typed, on this call's record in
    #: the trace (``ToolCallRecord.stand_in``; the last record of a call wins). Set by the
    #: loop for each call; ``None`` outside a run. Call it on the event loop (the trace is
    #: the loop's; the playbook's stand-ins are async tools).
    record_stand_in: Callable[[StandIn], None] | None = None
