"""Import and export of OpenAI, Anthropic and MCP tool definitions, from the providers' docs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pydantic
import pytest
from anthropic.types import ToolParam
from openai.types.chat import ChatCompletionToolParam
from openai.types.responses import FunctionToolParam

from toolcycle import ConfigurationError, ToolSpec
from toolcycle.spec import AgentSpec
from toolcycle.spec.formats import (
    MCP_NAMES,
    OPENAI_NAMES,
    NameMap,
    export_anthropic_tools,
    export_mcp_tools,
    export_openai_tools,
    import_anthropic_tools,
    import_mcp_tools,
    import_openai_tools,
)

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return data


def sdk_valid(type_: Any, value: Any) -> Any:
    """Validate against the official SDK's request type (a TypedDict) with pydantic."""
    return pydantic.TypeAdapter(type_).validate_python(value, strict=True)


def test_openai_chat_tools_import_and_export_back() -> None:
    data = fixture("openai_chat_tools.json")
    (spec,) = import_openai_tools(data)
    assert spec.name == "get_weather"
    assert spec.description == "Get current temperature for a given location."
    assert spec.parameters["required"] == ["location"]
    exported = export_openai_tools([spec], strict=True)
    assert exported == data["tools"]
    sdk_valid(ChatCompletionToolParam, exported[0])


def test_openai_responses_tools_import_and_export_back() -> None:
    data = fixture("openai_responses_tools.json")
    specs = import_openai_tools(data)
    exported = export_openai_tools(specs, style="responses", strict=True)
    assert exported == data["tools"]
    sdk_valid(FunctionToolParam, exported[0])
    # Without strict the Responses API still needs the field: it is written as false.
    assert export_openai_tools(specs, style="responses")[0]["strict"] is False


def test_openai_legacy_functions_import_and_export_back() -> None:
    data = fixture("openai_legacy_functions.json")
    specs = import_openai_tools(data)
    assert [s.name for s in specs] == ["get_current_weather"]
    assert export_openai_tools(specs, style="functions") == data["functions"]


def test_anthropic_tools_import_and_export_back() -> None:
    data = fixture("anthropic_tools.json")
    specs = import_anthropic_tools(data)
    assert [s.name for s in specs] == ["get_stock_price"]
    exported = export_anthropic_tools(specs)
    assert exported == data["tools"]
    sdk_valid(ToolParam, exported[0])


def test_mcp_listing_imports_from_the_json_rpc_reply_and_exports_back() -> None:
    response = fixture("mcp_tools_list.json")["response"]
    (spec,) = import_mcp_tools(response)
    assert spec == ToolSpec(
        "get_weather",
        "Get current weather information for a location",
        response["result"]["tools"][0]["inputSchema"],
    )
    exported = export_mcp_tools([spec])
    original = response["result"]["tools"][0]
    # title is display information, not part of a spec; everything else comes back.
    assert exported == {"tools": [{k: v for k, v in original.items() if k != "title"}]}


def test_mcp_output_schema_becomes_the_result_schema() -> None:
    tool = fixture("mcp_output_schema_tool.json")["tool"]
    (spec,) = import_mcp_tools([tool])
    assert spec.result_schema == tool["outputSchema"]
    assert export_mcp_tools([spec])["tools"][0]["outputSchema"] == tool["outputSchema"]
    # Only the Responses API carries it on the OpenAI side.
    (responses,) = export_openai_tools([spec], style="responses")
    assert responses["output_schema"] == tool["outputSchema"]
    assert "output_schema" not in export_openai_tools([spec])[0]["function"]


def test_a_tool_travels_across_all_providers_unchanged() -> None:
    (start,) = import_mcp_tools([fixture("mcp_output_schema_tool.json")["tool"]])
    via_openai = import_openai_tools(export_openai_tools([start], style="responses"))
    via_anthropic = import_anthropic_tools(export_anthropic_tools(via_openai))
    (back,) = import_mcp_tools(export_mcp_tools(via_anthropic))
    # Anthropic has no result schema: everything else survives the whole trip.
    assert (back.name, back.description, back.parameters) == (
        start.name, start.description, start.parameters
    )
    assert back.result_schema is None


def test_imported_tools_read_as_gram_signatures() -> None:
    (tool,) = import_mcp_tools([fixture("mcp_output_schema_tool.json")["tool"]])
    spec = AgentSpec("weather_agent", tools=[tool])
    text = spec.to_gram()
    assert '(location::String {description: "City name or zip code"})==>(::Object {fields: [' in (
        text
    )
    assert AgentSpec.from_gram(text) == spec
    # OpenAI's strict example has additionalProperties, which a signature cannot say: it is
    # kept as JSON in the gram file and still round-trips.
    openai_spec = AgentSpec("a", tools=import_openai_tools(fixture("openai_chat_tools.json")))
    assert "parameters: ```" in openai_spec.to_gram()
    assert AgentSpec.from_gram(openai_spec.to_gram()) == openai_spec


def test_names_outside_a_providers_pattern_map_to_safe_names_and_back() -> None:
    listing = {"tools": [
        {"name": "math.factorial", "inputSchema": {"type": "object", "properties": {}}},
        {"name": "math_factorial", "inputSchema": {"type": "object", "properties": {}}},
        {"name": "files/read file", "inputSchema": {"type": "object", "properties": {}}},
    ]}
    names = NameMap(OPENAI_NAMES)
    specs = import_mcp_tools(listing, names=names)
    safe = [s.name for s in specs]
    # The allowed name keeps itself; the dotted one gets a distinct safe name.
    assert safe[1] == "math_factorial"
    assert safe[0].startswith("math_factorial_") and safe[0] != safe[1]
    assert safe[2] == "files_read_file"
    assert all(OPENAI_NAMES.allows(n) for n in safe)
    assert [names.original(n) for n in safe] == [t["name"] for t in listing["tools"]]
    # A model's call under a safe name maps back to the server's name for tools/call.
    assert names.original(safe[0]) == "math.factorial"
    assert names.original("unknown_tool") == "unknown_tool"
    # The map survives storage.
    assert NameMap.from_dict(json.loads(json.dumps(names.to_dict()))).original(safe[0]) == (
        "math.factorial"
    )


def test_export_maps_unsafe_spec_names_per_provider() -> None:
    specs = [ToolSpec("math.factorial"), ToolSpec("x" * 70)]
    names = NameMap(OPENAI_NAMES)
    exported = export_openai_tools(specs, names=names)
    sent = [t["function"]["name"] for t in exported]
    assert sent[0] == "math_factorial" and len(sent[1]) == 64
    assert [names.original(n) for n in sent] == ["math.factorial", "x" * 70]
    # MCP allows dots: the same spec keeps its name there.
    assert export_mcp_tools(specs[:1], names=NameMap(MCP_NAMES))["tools"][0]["name"] == (
        "math.factorial"
    )


def test_every_import_problem_is_reported_at_once() -> None:
    with pytest.raises(ConfigurationError) as caught:
        import_openai_tools([
            {"type": "web_search_preview"},
            {"type": "function", "function": {"description": "no name"}},
            {"type": "function", "function": {"name": "f", "parameters": {"type": "array"}}},
        ])
    assert caught.value.problems == [
        "tool 0: a built-in 'web_search_preview' tool has no function definition to import",
        "tool 1: 'name' is missing",
        "tool 'f': the parameters schema must be of type 'object'",
    ]
    with pytest.raises(ConfigurationError) as caught:
        import_anthropic_tools({"tools": [{"type": "bash_20250124", "name": "bash"},
                                          {"name": "g"}]})
    assert caught.value.problems == [
        "tool 0: the server tool 'bash_20250124' runs at Anthropic and has no schema",
        "tool 'g': 'input_schema' is missing",
    ]


def test_openai_parameters_may_be_omitted() -> None:
    (spec,) = import_openai_tools({"type": "function", "function": {"name": "ping"}})
    assert spec.parameters == {"type": "object", "properties": {}}
