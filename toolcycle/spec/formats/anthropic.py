"""Anthropic tool definitions <-> tool specs.

Client tools are ``{"name", "description", "input_schema"}`` (``type: "custom"`` and
``cache_control`` are accepted; caching is a request option, not part of the spec). Server
tools (``web_search_20250305``, ``bash_20250124``, ...) run at Anthropic and have no spec to
import; they are reported. Anthropic has no result schema, so ``result_schema`` is not
exported. Names outside ``[a-zA-Z0-9_-]{1,64}`` go through a
:class:`~toolcycle.spec.formats.names.NameMap`; pass your own to map ``tool_use`` blocks back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...tools import ToolSpec
from ._common import export_each, field, import_all, problem, tool_items
from .names import ANTHROPIC_NAMES, NameMap


def import_anthropic_tools(data: Any, names: NameMap | None = None) -> list[ToolSpec]:
    """Tool specs from Anthropic tool definitions (every problem reported at once)."""
    return import_all(tool_items(data, ("tools",)), _read, names, "Anthropic tool definitions")


def _read(item: dict[str, Any], where: str) -> tuple[str, str, Any, Any]:
    kind = item.get("type", "custom")
    if kind != "custom":
        raise problem(f"{where}: the server tool {kind!r} runs at Anthropic and has no schema")
    name = field(item, "name", str, where)
    description = field(item, "description", str, f"tool {name!r}", "")
    parameters = field(item, "input_schema", dict, f"tool {name!r}")
    return name, description, parameters, None


def export_anthropic_tools(
    specs: Iterable[ToolSpec], names: NameMap | None = None
) -> list[dict[str, Any]]:
    """Anthropic ``tools`` entries for ``specs``."""
    return [tool for _, tool in export_each(specs, names, ANTHROPIC_NAMES, "input_schema")]
