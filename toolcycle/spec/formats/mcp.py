"""MCP tool listings <-> tool specs.

A ``tools/list`` result (``{"tools": [...], "nextCursor": ...}``, or the whole JSON-RPC reply)
gives one spec per tool: ``inputSchema`` becomes the parameters and ``outputSchema`` the result
schema. ``title``, ``annotations``, ``icons`` and ``_meta`` describe how a client shows or
trusts a tool, not how it is called; they are not kept here (a live server's annotations
become tool flags only where the caller trusts them: ``MCPTools(trust_hints=True)``). MCP
allows dots in names (``math.factorial``), which OpenAI and Anthropic reject, so imported
names pass through a :class:`~toolcycle.spec.formats.names.NameMap` (OpenAI-safe by default):
keep the map to send ``tools/call`` under the server's own name.

Export writes a ``tools/list`` result. MCP requires an output schema to describe an object,
so a result schema of another type is left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...tools import ToolSpec
from ._common import export_each, field, import_all, tool_items
from .names import MCP_NAMES, NameMap


def import_mcp_tools(data: Any, names: NameMap | None = None) -> list[ToolSpec]:
    """Tool specs from an MCP tool listing (every problem reported at once)."""
    return import_all(tool_items(data, ("tools",)), _read, names, "MCP tool listing")


def _read(item: dict[str, Any], where: str) -> tuple[str, str, Any, Any]:
    name = field(item, "name", str, where)
    description = field(item, "description", str, f"tool {name!r}", "")
    parameters = field(item, "inputSchema", dict, f"tool {name!r}")
    output = item.get("outputSchema")
    if output is not None:
        output = field(item, "outputSchema", dict, f"tool {name!r}")
    return name, description, parameters, output


def export_mcp_tools(specs: Iterable[ToolSpec], names: NameMap | None = None) -> dict[str, Any]:
    """A ``tools/list`` result for ``specs``."""
    tools = []
    for spec, tool in export_each(specs, names, MCP_NAMES, "inputSchema"):
        if spec.result_schema is not None and spec.result_schema.get("type") == "object":
            tool["outputSchema"] = spec.result_schema
        tools.append(tool)
    return {"tools": tools}
