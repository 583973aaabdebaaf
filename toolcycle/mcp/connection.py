"""One connection to one MCP server, owned by a task of its own.

The SDK's transports are anyio context managers: the task that enters one must exit it. A
run's task is the wrong owner (the connection outlives the run, and a cancelled run would tear
it down), so the SDK's :class:`mcp.Client` lives inside a dedicated task that enters it,
hands it over, waits to be told to stop, and exits it. Calls are made from the runs' tasks,
which the SDK allows (requests are multiplexed over one JSON-RPC stream).

What can go wrong becomes :class:`MCPServerError`, raised for the one call it concerns:

- the server does not start (or connect) within ``startup_timeout``: the starting task is
  cancelled, which makes the SDK stop the process (stdin closed, then SIGTERM, then SIGKILL);
- the server exits or drops the connection mid-call: the SDK wakes the waiting request at
  once (end of stdout), the connection is marked lost and the next call starts a new one, at
  most ``max_restarts`` times;
- the server sends a line that is not JSON-RPC (or the HTTP transport fails): the SDK hands
  that to the message handler, not to the request waiting for a reply, so calls race a
  "broken" signal and fail at once instead of waiting for the call's timeout;
- an error reply or a result that breaks the protocol.

- a streamable-HTTP session the server has expired (HTTP 404 on a request that carries the
  session id): the connection is started again (a new ``initialize``) and the request sent
  once more, once; the server never ran a request it answered 404;
- no answer within the request's bound (a listing's is ``startup_timeout``).

Cancelling a call (the run is cancelled, or the tool's timeout passes) cancels the SDK's
request, which sends ``notifications/cancelled`` to the server. Every future this module makes
is awaited or has its outcome read: a starter that gives up cancels the hand-over future, so
the owner task has nobody to report to and no "exception was never retrieved" is logged.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

from ..errors import ToolcycleError
from .listen import ResourceStream
from .stdio import StderrTail

ClientOpener = Callable[[Mapping[str, Any]], AbstractAsyncContextManager[Any]]
"""Enters a connected, initialized :class:`mcp.Client` (the transport inside it), given the
client's hooks as keyword arguments of :class:`mcp.Client`: ``message_handler`` always, and
``elicitation_callback`` / ``sampling_callback`` when the caller offers them (a server sees at
the handshake which are offered)."""

#: How long a stopping connection may take before its task is cancelled (the SDK's own stdio
#: shutdown is bounded by about 6 s: stdin closed, SIGTERM, SIGKILL).
_STOP_GRACE = 10.0


class MCPServerError(ToolcycleError, RuntimeError):
    """The MCP server could not be started or reached, or answered outside the protocol."""


class MCPToolError(ToolcycleError, RuntimeError):
    """The MCP server ran the tool and reported an error (a result with ``isError``)."""


class SessionWatch:
    """Told by the HTTP client when the server answered 404 to a request that carried the
    session id: the server expired the session (the SDK reports it to the call only as an
    error reply)."""

    def __init__(self) -> None:
        #: How many requests the server answered 404 for their session (a request compares
        #: the count before and after it: concurrent requests do not reset each other's).
        self.expirations = 0

    def saw_response(self, status: int, carried_session: bool) -> None:
        if status == 404 and carried_session:
            self.expirations += 1


class Connection:
    """A lazily started connection to one server, restarted after it is lost."""

    def __init__(
        self,
        opener: ClientOpener,
        *,
        describe: str,
        startup_timeout: float,
        max_restarts: int,
        on_tools_changed: Callable[[], None],
        stderr: StderrTail | None = None,
        session: SessionWatch | None = None,
        hooks: Mapping[str, Any] | None = None,
        on_resource_updated: Callable[[str], None] | None = None,
    ) -> None:
        self._opener = opener
        self._hooks = dict(hooks or {})  # elicitation and sampling callbacks, if offered
        self._on_resource_updated = on_resource_updated
        #: Resource subscriptions on a 2026-07-28 server (a listen stream; older ones are
        #: told with resources/subscribe and answer through :meth:`_handle`).
        self.resources = ResourceStream()
        self.describe = describe
        self.startup_timeout = startup_timeout
        self.max_restarts = max_restarts
        self._on_tools_changed = on_tools_changed
        self._stderr = stderr  # the end of the server's stderr (stdio), quoted when it fails
        self._session = session  # HTTP: whether the server expired the session
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._broken: asyncio.Future[str] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock: asyncio.Lock | None = None
        self._lost = False
        self.starts = 0
        #: Starts that renewed an HTTP session the server expired: no loss, so they do not
        #: count against ``max_restarts`` (a long-lived agent renews one every idle hour).
        self._renewals = 0
        self.closed = False

    # -- lifecycle --------------------------------------------------------------------------

    async def client(self) -> Any:
        """The connected client, started (or restarted) now if need be."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a new event loop: the old one's task died with it
            self._client, self._task, self._lock, self._loop = None, None, asyncio.Lock(), loop
        assert self._lock is not None
        async with self._lock:
            if self._client is not None and not self._lost:
                return self._client
            if self.closed:
                raise MCPServerError(f"{self.describe}: the connection was closed")
            if (lost := self.starts - self._renewals) > self.max_restarts:
                raise MCPServerError(
                    f"{self.describe}: the server was lost {lost} time(s); it is not "
                    f"restarted again (max_restarts={self.max_restarts}); do not call its tools")
            restarting = self.starts > 0
            await self._stop_task()
            self.starts += 1
            try:
                self._client = await self._start()
            except MCPServerError as exc:
                if restarting:
                    raise MCPServerError(f"{exc} (restarting after the server was lost)") from exc
                raise
            self._lost = False
            return self._client

    async def _start(self) -> Any:
        ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        self._broken = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._own(ready, self._stop), name=self.describe)
        try:
            return await asyncio.wait_for(asyncio.shield(ready), self.startup_timeout)
        except TimeoutError:
            ready.cancel()  # the owner task then reports to nobody (nothing left unretrieved)
            await self._stop_task(cancel=True)
            raise MCPServerError(f"{self.describe}: did not start within {self.startup_timeout} s"
                                 f"{self.stderr_tail()}") from None
        except BaseException as exc:
            ready.cancel()
            await self._stop_task(cancel=True)
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise MCPServerError(f"{self.describe}: could not start or connect: {_describe(exc)}"
                                 f"{self.stderr_tail()}") from exc

    async def _own(self, ready: asyncio.Future[Any], stop: asyncio.Event) -> None:
        """The owner task: enter the client, hand it over, wait for the stop, exit it."""
        try:
            async with self._opener({**self._hooks, "message_handler": self._handle}) as client:
                if ready.done():  # the starter gave up meanwhile
                    return
                ready.set_result(client)
                listener = asyncio.create_task(self._listen(client))
                try:
                    await stop.wait()
                finally:
                    listener.cancel()
                    await asyncio.wait({listener})
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else
                                    MCPServerError("the connection task was cancelled"))
            if not isinstance(exc, Exception):
                raise
        finally:
            self._lost = True

    async def _listen(self, client: Any) -> None:
        """Servers on the 2026-07-28 protocol announce list changes only on a
        ``subscriptions/listen`` stream; older ones send the notification unasked (see
        :meth:`_handle`). Without either, the list is read again after a restart only."""
        with contextlib.suppress(Exception):
            async with client.listen(tools_list_changed=True) as subscription:
                async for _ in subscription:
                    self._on_tools_changed()

    async def _stop_task(self, cancel: bool = False) -> None:
        task, self._task, self._client = self._task, None, None
        if task is None or task.done():
            return
        if self._stop is not None:
            self._stop.set()
        if cancel:
            task.cancel()
        done, _ = await asyncio.wait({task}, timeout=_STOP_GRACE)
        if not done:
            task.cancel()
            await asyncio.wait({task})

    async def close(self) -> None:
        """Stop the server (its process ends before this returns); idempotent."""
        self.closed = True
        if self._loop is asyncio.get_running_loop():
            await self.resources.close()
            await self._stop_task()
        self._client = self._task = None

    @property
    def running(self) -> bool:
        return self._client is not None and not self._lost and self._task is not None

    # -- calls --------------------------------------------------------------------------------

    async def request[T](self, what: str, send: Callable[[Any], Any],
                         timeout: float | None = None) -> T:
        """``send(client)``'s result; every failure as one :class:`MCPServerError`.

        ``timeout`` bounds the wait for the answer (the request is cancelled on the server
        after it). A request the server refused because it expired the HTTP session is sent
        once more over a new session."""
        try:
            return await self._request_once(what, send, timeout)
        except _SessionExpired as expired:
            self._lost = True  # the next client() starts a new session (initialize again)
            self._renewals += 1
            try:
                return await self._request_once(what, send, timeout)
            except _SessionExpired:
                raise MCPServerError(f"{self.describe}: {what}: the server expired the "
                                     f"session again at once (HTTP 404)") from expired

    async def _request_once[T](self, what: str, send: Callable[[Any], Any],
                               timeout: float | None) -> T:
        client = await self.client()
        broken = self._broken
        assert broken is not None
        if broken.done():  # garbage that came while no call waited is not this call's failure
            broken = self._broken = asyncio.get_running_loop().create_future()
        expirations = 0 if self._session is None else self._session.expirations
        call = asyncio.ensure_future(send(client))
        timed_out = False
        try:
            done, _ = await asyncio.wait({call, broken}, timeout=timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
            timed_out = not done
        finally:
            if not call.done():  # cancelled, timed out, or the server broke the protocol
                call.cancel()
                await asyncio.wait({call})
        if not call.cancelled() and call.exception() is None:
            result: T = call.result()
            return result
        if broken.done():
            if self._broken is broken:
                self._broken = asyncio.get_running_loop().create_future()
            raise MCPServerError(f"{self.describe}: {what}: the server's reply could not be read "
                                 f"(not valid JSON-RPC, or the transport failed): "
                                 f"{broken.result()}")
        if timed_out:
            raise MCPServerError(f"{self.describe}: {what}: no answer within {timeout} s")
        if call.cancelled():  # by the SDK itself, not by this task's caller
            raise MCPServerError(f"{self.describe}: {what}: the request was cancelled")
        exc = call.exception()
        assert exc is not None
        if self._session is not None and self._session.expirations != expirations:
            raise _SessionExpired from exc
        if _connection_closed(exc) or self._lost:
            self._lost = True
            raise MCPServerError(
                f"{self.describe}: {what}: the server closed the connection (it exited or "
                f"crashed){self.stderr_tail()}; it is restarted on the next call") from exc
        raise MCPServerError(f"{self.describe}: {what}: {_describe(exc)}") from exc

    async def _handle(self, message: Any) -> None:
        import mcp.types as types

        if isinstance(message, types.ToolListChangedNotification):
            self._on_tools_changed()
        elif isinstance(message, types.ResourceUpdatedNotification):
            if self._on_resource_updated is not None:
                self._on_resource_updated(str(message.params.uri))
        elif isinstance(message, Exception):
            broken = self._broken
            if broken is not None and not broken.done():
                broken.set_result(_describe(message)[:500])

    def stderr_tail(self, chars: int = 600) -> str:
        """The end of the server's stderr, to quote in an error (stdio servers only)."""
        text = "" if self._stderr is None else self._stderr.text(chars)
        return f"; its stderr ends with: {text}" if text else ""


class _SessionExpired(Exception):
    """Internal: the server answered 404 for the session (see :class:`SessionWatch`)."""


def _connection_closed(exc: BaseException) -> bool:
    from mcp import MCPError
    from mcp.types import CONNECTION_CLOSED

    return isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED


def _describe(exc: BaseException) -> str:
    """One line for an exception, the first of an exception group's if it is one."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip() or type(exc).__name__
    name = type(exc).__name__
    return text if name == "MCPError" else f"{name}: {text}"
