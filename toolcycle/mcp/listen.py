"""Resource subscriptions on servers of the 2026-07-28 protocol: one ``subscriptions/listen``
stream.

From 2026-07-28 on, ``resources/subscribe`` and ``resources/unsubscribe`` are gone. A client
opens a ``subscriptions/listen`` request whose ``notifications`` filter names what it wants
(``resourceSubscriptions``: the URIs); the server acknowledges it with
``notifications/subscriptions/acknowledged``, carrying the subset it honours, and then sends
``notifications/resources/updated`` on that request's stream until the client ends it. A
filter cannot be changed in place, and there is no replay: a new set of URIs is a new stream.

The updates reach ``on_resource_updated`` through the connection's message handler, as on
older servers: the SDK hands every notification of a listen stream to it too. The stream's
own iterator is only drained (the SDK bounds its backlog, and a full one ends the stream).

So :class:`ResourceStream` keeps the URIs subscribed on one connection and, when the set
changes, opens a stream for the new set, waits for its acknowledgment, and only then closes
the old one: an update that comes meanwhile reaches the caller on one stream or the other
(twice at worst: updates are "read it again" signals, so a repeat costs a read, a gap would
cost a missed change). A URI the server does not acknowledge is an error for the
``subscribe`` that asked for it, not a subscription that silently never fires.

A restarted server has forgotten every stream, as older servers forget their subscriptions:
the URIs are dropped with the old client, and the caller subscribes again.
"""

from __future__ import annotations

import asyncio
from typing import Any

#: The protocol version from which resource updates come on a listen stream only.
LISTEN_ONLY = "2026-07-28"


def listens(client: Any) -> bool:
    """Whether ``client`` negotiated a protocol whose resource updates need a listen stream."""
    return str(client.protocol_version) >= LISTEN_ONLY


class ResourceStream:
    """The resource subscriptions of one connection (see the module docstring)."""

    def __init__(self) -> None:
        self._client: Any = None
        self._uris: frozenset[str] = frozenset()
        self._task: asyncio.Task[None] | None = None

    def uris(self, client: Any) -> frozenset[str]:
        """The URIs subscribed on ``client`` (none on a client that replaced the one they
        were subscribed on: a restarted server forgot them)."""
        return self._uris if client is self._client else frozenset()

    async def follow(self, client: Any, uris: frozenset[str]) -> frozenset[str]:
        """Listen for updates of exactly ``uris`` on ``client``; returns the URIs the server
        acknowledged. The previous stream is closed once the new one is acknowledged (or at
        once, when ``uris`` is empty)."""
        if not uris:
            await self.close()
            self._client = client
            return frozenset()
        acknowledged: asyncio.Future[frozenset[str]] = (
            asyncio.get_running_loop().create_future())
        task = asyncio.create_task(self._listen(client, uris, acknowledged),
                                   name="MCP subscriptions/listen")
        try:
            honoured = await asyncio.shield(acknowledged)
        except BaseException:
            acknowledged.cancel()  # nobody is left to read it
            task.cancel()
            await asyncio.wait({task})
            raise
        previous, self._task = self._task, task
        self._client, self._uris = client, uris
        await _stop(previous)
        return honoured

    async def close(self) -> None:
        task, self._task, self._uris = self._task, None, frozenset()
        await _stop(task)

    async def _listen(self, client: Any, uris: frozenset[str],
                      acknowledged: asyncio.Future[frozenset[str]]) -> None:
        """One stream: enter it (the SDK returns once the server acknowledged), report what
        was honoured, then drain it until it ends (the updates go to the message handler)."""
        try:
            async with client.listen(resource_subscriptions=sorted(uris)) as subscription:
                honoured = subscription.honored.resource_subscriptions or ()
                if not acknowledged.done():
                    acknowledged.set_result(frozenset(str(uri) for uri in honoured))
                async for _ in subscription:
                    pass
        except Exception as exc:  # refused, or the stream was lost (the server restarted)
            if not acknowledged.done():
                acknowledged.set_exception(exc)


async def _stop(task: asyncio.Task[None] | None) -> None:
    if task is None or task.done():
        return
    if task.get_loop() is not asyncio.get_running_loop():  # died with its event loop
        return
    task.cancel()
    await asyncio.wait({task})  # the stream's exit tells the server, before this returns
