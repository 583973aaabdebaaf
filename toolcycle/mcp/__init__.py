"""Model Context Protocol: use any MCP server's tools, and serve toolcycle's over MCP.

Needs the ``mcp`` extra (``pip install 'toolcycle[mcp]'``, the official SDK). See docs/mcp.md.

    from toolcycle.mcp import MCPTools

    time_tools = MCPTools.stdio("python", "-m", "mcp_server_time")
    agent = Agent("openai:gpt-4o-mini", tools=[time_tools])
"""

from .connection import MCPServerError, MCPToolError
from .tools import MCPTools

__all__ = ["MCPServerError", "MCPToolError", "MCPTools"]
