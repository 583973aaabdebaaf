"""An MCP server (the `mcp` SDK's own ``MCPServer``, over stdio) whose live stock tool is down:
it reports that as the SDK documents, a ``ToolError`` the SDK sends as an ``isError`` result
(any other exception's message the SDK hides: "Error executing tool inventory_live")."""

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

DOWN = "inventory service unreachable: 503 Service Unavailable"
server = MCPServer("inventory")
LOOKUP = ToolAnnotations(read_only_hint=True)


@server.tool(annotations=LOOKUP)
def inventory_live(item: str) -> str:
    """Live stock of an item."""
    if item == "gone":
        raise ToolError(f"no item {item!r}")
    raise ToolError(DOWN)


@server.tool(annotations=LOOKUP)
def warehouse_ledger(item: str) -> str:
    """The ledger's count of an item."""
    return f"{item}: 42 units"


if __name__ == "__main__":
    server.run()
