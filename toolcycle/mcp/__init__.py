"""Model Context Protocol: use any MCP server's tools, and serve toolcycle's over MCP.

Needs the ``mcp`` extra (``pip install 'toolcycle[mcp]'``, the official SDK). See docs/mcp.md.

    from toolcycle.mcp import MCPTools

    time_tools = MCPTools.stdio("python", "-m", "mcp_server_time")
    agent = Agent("openai:gpt-4o-mini", tools=[time_tools])
"""

from .connection import MCPServerError, MCPToolError
from .resources import Prompt, PromptArgument, Resource, ResourceContent
from .server_requests import ElicitationAnswer, ElicitationRequest, Sampling
from .tools import MCPTools

__all__ = [
    "ElicitationAnswer",
    "ElicitationRequest",
    "MCPServerError",
    "MCPToolError",
    "MCPTools",
    "Prompt",
    "PromptArgument",
    "Resource",
    "ResourceContent",
    "Sampling",
]
