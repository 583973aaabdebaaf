"""An SDK server (``MCPServer``, the SDK's documented decorator style) whose tool list grows:
``grow`` adds ``late.tool`` and publishes the change, which 2026-07-28 clients receive on their
``subscriptions/listen`` stream."""

from mcp.server import MCPServer
from mcp.server.mcpserver import Context

mcp = MCPServer("Growing")


def late() -> str:
    """A tool added later."""
    return "late tool ran"


@mcp.tool()
async def grow(ctx: Context) -> str:
    """Add a tool."""
    mcp.add_tool(late, name="late.tool")
    await ctx.notify_tools_changed()
    return "grown"


if __name__ == "__main__":
    mcp.run()
