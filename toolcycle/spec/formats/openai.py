"""OpenAI tool definitions <-> tool specs.

Three shapes are read: Chat Completions tools (``{"type": "function", "function": {...}}``),
Responses API tools (``{"type": "function", "name": ..., "parameters": ...}``) and the legacy
``functions`` list (``{"name": ..., "parameters": ...}``); a list, or a request-like record
with ``tools`` or ``functions``. Built-in tools (``web_search``, ``file_search``, ...) have no
spec and are reported. ``strict`` is accepted and not kept: it is a request option whose
schema rules (every property required, ``additionalProperties: false``) the spec's schema
either meets already or does not; export writes it when asked. The Responses API's
``output_schema`` becomes the result schema.

Export writes any of the three shapes; only the Responses API has a result schema
(``output_schema``), the other two leave ``result_schema`` out. Names outside
``[a-zA-Z0-9_-]{1,64}`` go through a :class:`~toolcycle.spec.formats.names.NameMap`; pass your own
to map the model's calls back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from ...tools import ToolSpec
from ._common import EMPTY_PARAMETERS, export_each, field, import_all, problem, tool_items
from .names import OPENAI_NAMES, NameMap

OpenAIStyle = Literal["chat", "responses", "functions"]


def import_openai_tools(data: Any, names: NameMap | None = None) -> list[ToolSpec]:
    """Tool specs from OpenAI tool or function definitions (every problem reported at once)."""
    return import_all(
        tool_items(data, ("tools", "functions")), _read, names, "OpenAI tool definitions"
    )


def _read(item: dict[str, Any], where: str) -> tuple[str, str, Any, Any]:
    kind = item.get("type", "function")
    if kind != "function":
        raise problem(f"{where}: a built-in {kind!r} tool has no function definition to import")
    function = item["function"] if isinstance(item.get("function"), dict) else item
    name = field(function, "name", str, where)
    description = field(function, "description", str, f"tool {name!r}", "")
    parameters = field(function, "parameters", dict, f"tool {name!r}", dict(EMPTY_PARAMETERS))
    output = function.get("output_schema")  # Responses API only
    if output is not None:
        output = field(function, "output_schema", dict, f"tool {name!r}")
    return name, description, parameters, output


def export_openai_tools(
    specs: Iterable[ToolSpec],
    style: OpenAIStyle = "chat",
    names: NameMap | None = None,
    strict: bool = False,
) -> list[dict[str, Any]]:
    """OpenAI definitions for ``specs`` in the given ``style``.

    ``strict`` is written as given (the Responses API requires the field; the others get it
    only when true); it is the caller's promise that the schemas meet OpenAI's strict rules.
    The Responses API alone carries a result schema (``output_schema``).
    """
    exported = []
    for spec, function in export_each(specs, names, OPENAI_NAMES, "parameters"):
        if strict or style == "responses":
            function["strict"] = strict
        if style == "chat":
            exported.append({"type": "function", "function": function})
        elif style == "responses":
            if spec.result_schema is not None:
                function["output_schema"] = spec.result_schema
            exported.append({"type": "function", **function})
        else:
            exported.append(function)
    return exported
