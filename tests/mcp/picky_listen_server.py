"""A low-level SDK server (``mcp.server.lowlevel.Server``, 2026-07-28) whose
``subscriptions/listen`` honours resource subscriptions under ``notes://`` only, as the
specification lets a server acknowledge a subset of the filter it was asked for."""

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler

served = ListenHandler(InMemorySubscriptionBus())


async def listen(ctx, params):  # type: ignore[no-untyped-def]
    asked = params.notifications.resource_subscriptions or []
    params.notifications.resource_subscriptions = [
        uri for uri in asked if uri.startswith("notes://")] or None
    return await served(ctx, params)


async def list_tools(ctx, params):  # type: ignore[no-untyped-def]
    return types.ListToolsResult(tools=[])


server = Server("picky", on_subscriptions_listen=listen, on_list_tools=list_tools)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
