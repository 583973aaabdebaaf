"""What :class:`~toolcycle.mcp.MCPTools` offers besides tools: resources and prompts.

A mixin, so ``MCPTools`` keeps one connection per server for everything: the server started
for its tools is the one whose resources are read, and a listing that must start the server
is bounded by ``startup_timeout`` like the tool list. Every failure is one
:class:`~toolcycle.mcp.MCPServerError` (see :mod:`toolcycle.mcp.connection`).
"""

from __future__ import annotations

import warnings
from typing import Any

from ..messages import Message
from ..tools import Tool
from .connection import Connection, MCPServerError
from .listen import listens
from .resources import (
    Prompt,
    Resource,
    ResourceContent,
    list_prompts,
    list_resources,
    prompt_messages,
    read_resource,
    resource_text,
    resource_tools,
)


class MCPExtras:
    """Resources and prompts of the server behind ``self._connection``."""

    _connection: Connection
    prefix: str
    call_timeout: float | None
    problems: list[str]

    async def list_resources(self) -> list[Resource]:
        """The resources the server lists (every page)."""
        return await self._connection.request("resources/list", list_resources,
                                              timeout=self._connection.startup_timeout)

    async def read_resource(self, uri: str) -> list[ResourceContent]:
        """Read one resource: its contents (text, or decoded bytes for a blob)."""
        if not isinstance(uri, str) or not uri:
            raise ValueError(f"uri must be a non-empty string, got {uri!r}")
        return await self._connection.request(
            f"resources/read <{uri}>", lambda client: read_resource(client, uri),
            timeout=self.call_timeout)

    async def resource_text(self, uri: str) -> str:
        """A resource as text to attach to a prompt: its text under a header naming the URI
        and MIME type (binary content is described, not inlined)."""
        return resource_text(await self.read_resource(uri))

    async def subscribe(self, uri: str) -> None:
        """Ask the server for ``notifications/resources/updated`` about ``uri``; each one
        calls ``on_resource_updated(uri)``. On a 2026-07-28 server this (re)opens the
        connection's ``subscriptions/listen`` stream and returns once the server acknowledged
        ``uri`` (:mod:`toolcycle.mcp.listen`). A restarted server has forgotten the
        subscription: subscribe again after a restart."""
        await self._subscription("subscribe", uri)

    async def unsubscribe(self, uri: str) -> None:
        await self._subscription("unsubscribe", uri)

    async def _subscription(self, verb: str, uri: str) -> None:
        if not isinstance(uri, str) or not uri:
            raise ValueError(f"uri must be a non-empty string, got {uri!r}")

        async def send(client: Any) -> Any:
            if listens(client):
                return await self._listen_for(client, verb, uri)
            with warnings.catch_warnings():  # deprecated in the SDK for the newest protocol
                warnings.simplefilter("ignore")
                method = (client.subscribe_resource if verb == "subscribe"
                          else client.unsubscribe_resource)
                return await method(uri)

        await self._connection.request(f"resources/{verb} <{uri}>", send,
                                       timeout=self.call_timeout)

    async def _listen_for(self, client: Any, verb: str, uri: str) -> None:
        """A 2026-07-28 server: the listen stream for the subscribed URIs with ``uri`` added
        or taken out; a URI the server does not acknowledge is an error, and the stream goes
        back to the URIs it had."""
        stream = self._connection.resources
        before = stream.uris(client)
        wanted = before | {uri} if verb == "subscribe" else before - {uri}
        if wanted == before:
            return
        honoured = await stream.follow(client, wanted)
        if verb == "subscribe" and uri not in honoured:
            await stream.follow(client, before)
            raise MCPServerError(
                f"the server did not acknowledge a subscription to <{uri}> on its "
                f"subscriptions/listen stream (it does not offer resource subscriptions, or "
                f"not for this resource)")

    async def list_prompts(self) -> list[Prompt]:
        """The prompt templates the server lists (every page)."""
        return await self._connection.request("prompts/list", list_prompts,
                                              timeout=self._connection.startup_timeout)

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None
                         ) -> list[Message]:
        """One prompt filled in with ``arguments``, as messages (``message_history=``)."""
        if arguments is not None and not (isinstance(arguments, dict) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in arguments.items())):
            raise ValueError("prompt arguments must be a dict of strings to strings")
        result: Any = await self._connection.request(
            f"prompts/get {name!r}", lambda client: client.get_prompt(name, arguments),
            timeout=self.call_timeout)
        return prompt_messages(result)

    def _resource_tools(self, offered: list[Tool[Any]]) -> list[Tool[Any]]:
        """``list_resources`` and ``read_resource`` for the model, unless the server has
        tools of those names (its own are kept, and the clash is said in ``problems``)."""
        taken = {tool.name for tool in offered}
        tools = []
        for tool in resource_tools(self.prefix, self.list_resources, self.read_resource,
                                   self.call_timeout):
            if tool.name in taken:
                self.problems.append(f"resource tool {tool.name!r} left out: the server has "
                                     f"a tool of that name")
            else:
                tools.append(tool)
        return tools
