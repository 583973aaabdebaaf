"""A ``--tools`` module for ``toolcycle run``: one plain tool and an MCP server's tools.

The spec (examples/hello_world.gram) declares ``sayHello``; the time server's tools come on top,
listed when the run starts (tests/mcp/test_servers.py drives it through the CLI).
"""

import sys

from toolcycle.mcp import MCPTools


def sayHello(personName: str = "world") -> str:  # the spec's tool name, so camelCase
    """Returns a friendly greeting message for the given name."""
    return f"Hello, {personName}!"


time_server = MCPTools.stdio(sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC")
