"""A server's tool listing read tool by tool: one tool the SDK would reject does not cost the
others.

The SDK validates a ``tools/list`` reply as a whole: one tool whose ``inputSchema`` is not an
object (``{"type": "string"}``) fails the reply, and the server's other tools with it (the
run then ended with ``ToolsUnavailable``, and a server listed before could never be listed
again). :func:`screened` sits between the transport and the SDK's session, sees which
requests are listings, and takes out of each listing reply the tools that break the schema of
the negotiated protocol, one by one, the way the SDK itself validates them. What it took out
is in :attr:`ListingScreen.rejected`, which :class:`~toolcycle.mcp.MCPTools` reports in its
``problems``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio

#: The protocol version a reply is checked against before the handshake said which (the SDK's).
_DEFAULT_VERSION = "2025-11-25"
_CLOSED = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)


class ListingScreen:
    """Takes the tools that break the protocol's schema out of listing replies."""

    def __init__(self) -> None:
        self.version = _DEFAULT_VERSION
        #: Tools taken out of the listings, by name: why, in one line.
        self.rejected: dict[str, str] = {}
        self._listings: set[str | int] = set()
        self._handshakes: set[str | int] = set()

    def outgoing(self, message: Any) -> None:
        from mcp.types import JSONRPCRequest

        request = message.message
        if isinstance(request, JSONRPCRequest):
            if request.method == "tools/list":
                self._listings.add(request.id)
            elif request.method == "initialize":
                self._handshakes.add(request.id)

    def incoming(self, message: Any) -> Any:
        from mcp.shared.message import SessionMessage
        from mcp.types import JSONRPCResponse

        if not isinstance(message, SessionMessage) or not isinstance(
                message.message, JSONRPCResponse):
            return message  # a parse error, a request, a notification, an error reply
        reply = message.message
        if reply.id in self._handshakes:
            self._handshakes.discard(reply.id)
            version = reply.result.get("protocolVersion")
            if isinstance(version, str):
                self.version = version
            return message
        if reply.id not in self._listings:
            return message
        self._listings.discard(reply.id)
        tools = reply.result.get("tools")
        if not isinstance(tools, list):
            return message  # the reply as a whole is broken: the SDK says so, for the call
        kept = [t for t in tools if self._usable(t)]
        if len(kept) == len(tools):
            return message
        result = {**reply.result, "tools": kept}
        return SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=reply.id, result=result),
                              metadata=message.metadata)

    def _usable(self, listed: object) -> bool:
        from mcp_types.methods import validate_server_result
        from pydantic import ValidationError

        try:
            try:
                validate_server_result("tools/list", self.version, {"tools": [listed]})
            except (KeyError, ValueError) as exc:
                if isinstance(exc, ValidationError):
                    raise
                validate_server_result("tools/list", _DEFAULT_VERSION, {"tools": [listed]})
        except ValidationError as exc:
            name = listed.get("name") if isinstance(listed, dict) else None
            label = name if isinstance(name, str) else repr(listed)[:80]
            first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": str(exc)}
            where = ".".join(str(p) for p in first["loc"][2:]) or "the tool"
            self.rejected[label] = (f"tool {label!r} left out: its listing breaks the MCP "
                                    f"schema ({where}: {first['msg']})")
            return False
        return True


@asynccontextmanager
async def screened(transport: AbstractAsyncContextManager[Any], screen: ListingScreen
                   ) -> AsyncIterator[Any]:
    """``transport``'s (read, write) streams with ``screen`` applied to what passes."""
    from mcp.shared.message import SessionMessage

    async with transport as (read, write):
        to_session, session_read = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        session_write, from_session = anyio.create_memory_object_stream[SessionMessage](0)

        async def inward() -> None:
            async with to_session:
                with contextlib.suppress(*_CLOSED):
                    async for item in read:
                        await to_session.send(screen.incoming(item))

        async def outward() -> None:
            async with from_session:
                with contextlib.suppress(*_CLOSED):
                    async for item in from_session:
                        screen.outgoing(item)
                        await write.send(item)
            with contextlib.suppress(*_CLOSED):
                await write.aclose()

        async with anyio.create_task_group() as pumps:
            pumps.start_soon(inward)
            pumps.start_soon(outward)
            try:
                yield session_read, session_write
            finally:
                pumps.cancel_scope.cancel()
