"""Agent specs in JSON and gram: loading, lossless round trips, and errors that point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolcycle import Limits, ToolSpec
from toolcycle.spec import AgentSpec, SpecError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_SPECS = sorted(EXAMPLES.glob("hello*.gram"))

HELLO_INSTRUCTIONS = (
    "You are a friendly assistant. Have friendly conversations with the user. When the user "
    "greets you or says hello, use the `sayHello` tool to respond with a personalized greeting."
)


def test_the_hello_world_example_reads_as_the_issue_describes() -> None:
    spec = AgentSpec.load(EXAMPLES / "hello_world.gram")
    assert spec.name == "hello_world_agent"
    assert spec.instructions == HELLO_INSTRUCTIONS
    assert [t.name for t in spec.tools] == ["sayHello"]
    assert spec.tools[0].parameters == {
        "type": "object",
        "properties": {"personName": {"type": "string", "default": "world"}},
    }
    assert spec.tools[0].result_schema == {"type": "string"}


def test_the_issue_one_line_form_with_double_colons_loads() -> None:
    text = (
        '[hello_world_agent:Agent {description: "d", instruction: "i", model: "m"} | '
        '[sayHello:Tool {description: "x"} | (personName::String {default:"world"})==>(::String)]]'
    )
    spec = AgentSpec.from_gram(text)
    assert spec.model == "m" and spec.tools[0].description == "x"


def test_the_round_trip_covers_both_examples() -> None:
    # an empty glob would make the parametrized round trip below pass by running nothing
    assert [p.name for p in EXAMPLE_SPECS] == ["hello_goodbye.gram", "hello_world.gram"]


@pytest.mark.parametrize("path", EXAMPLE_SPECS, ids=lambda p: p.name)
def test_examples_round_trip_gram_json_gram(path: Path) -> None:
    spec = AgentSpec.load(path)
    as_json = spec.to_json()
    from_json = AgentSpec.from_json(as_json)
    assert from_json == spec
    as_gram = from_json.to_gram()
    assert AgentSpec.from_gram(as_gram) == spec
    # Writing is deterministic: a second trip gives the same texts.
    assert AgentSpec.from_gram(as_gram).to_gram() == as_gram
    assert AgentSpec.from_json(as_json).to_json() == as_json


def test_windows_line_endings_read_like_unix_ones() -> None:
    text = (EXAMPLES / "hello_goodbye.gram").read_text(encoding="utf-8")
    assert AgentSpec.from_gram(text.replace("\n", "\r\n")) == AgentSpec.from_gram(text)


def test_files_by_suffix(tmp_path: Path) -> None:
    spec = AgentSpec.load(EXAMPLES / "hello_goodbye.gram")
    spec.dump(tmp_path / "agent.json")
    spec.dump(tmp_path / "agent.gram")
    assert AgentSpec.load(tmp_path / "agent.json") == spec
    assert AgentSpec.load(tmp_path / "agent.gram") == spec
    with pytest.raises(SpecError, match=r"use \.gram or \.json"):
        spec.dump(tmp_path / "agent.yaml")


def test_a_rich_spec_round_trips_without_loss() -> None:
    """Schemas a signature cannot say, odd names, multi-line text, limits, output, metadata."""
    spec = AgentSpec(
        name="rich-agent.v2",
        description='quotes " and \\ backslashes',
        instructions="line one\n  indented ``` fence\nlast line `code`",
        model="anthropic:claude-sonnet-4-5",
        tools=[
            ToolSpec(
                "get_weather",
                "Get current temperature for a given location.",
                {
                    "type": "object",
                    "properties": {
                        "location": {"type": "string", "description": "City, e.g. Bogotá"},
                        "days": {"type": "integer", "minimum": 1, "maximum": 7},
                        "units": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    },
                    "required": ["location", "days", "units"],
                    "additionalProperties": False,
                },
            ),
            ToolSpec("noop"),
            ToolSpec(
                "lookup",
                "",
                {"type": "object", "properties": {"ids": {"type": "array",
                                                          "items": {"type": "integer"}}}},
                {"type": "object", "properties": {"found": {"type": "boolean"}},
                 "required": ["found"]},
            ),
        ],
        output_schema={"type": "object", "properties": {"answer": {"type": "string"},
                                                        "score": {"type": "number"}},
                       "required": ["answer"]},
        limits=Limits(max_iterations=5, on_limit="partial", timeout=2.5),
        metadata={"owner": "team-a", "tags": ["x", "y"], "ratio": 1e-7, "none": None},
    )
    gram_text = spec.to_gram()
    assert AgentSpec.from_gram(gram_text) == spec
    assert AgentSpec.from_json(spec.to_json()) == spec
    back = AgentSpec.from_gram(gram_text)
    # Property order survives too (it is the parameter order the model sees).
    assert list(back.tools[0].parameters["properties"]) == ["location", "days", "units"]
    assert "(ids::[Integer] {optional: true})==>(::Object" in gram_text
    assert "output: {type: \"Object\"" in gram_text


def test_an_output_that_needs_json_is_kept_as_json() -> None:
    spec = AgentSpec("a", output_schema={"type": "string", "minLength": 3})
    assert "output_schema:" in spec.to_gram()
    assert AgentSpec.from_gram(spec.to_gram()) == spec


@pytest.mark.parametrize(
    ("text", "position", "expected"),
    [
        ("[a:Agent {description: \"d\"} |\n  [t:Tool | (x::String)==>(::String)\n",
         (3, 1), "expected Char(']')"),
        ("[a:Agent {model: \"m\"} |\n  [t:Tool {description: \"d\"} |\n"
         "    (x::Strng)==>(::String)\n  ]\n]", (3, 9),
         "tool 't', parameter 1 'x': unknown type 'Strng'"),
        ("[a:Agent {colour: \"red\"}]", (1, 11), "unknown property 'colour'"),
        ("[a:Agent | [t:Tool {descripton: \"d\"}]]", (1, 21), "unknown property 'descripton'"),
        ("[a:Agent | [t:Tool], [t:Tool]]", (1, 22), "two tools are named 't'"),
        ("[a:Agent | (x)]", (1, 13), "expected a tool pattern"),
        ("(a:Agent) (b:Agent)", (1, 1), "expected exactly one agent pattern"),
        ("[a:Agent {limits: {max_iterations: 0}}]", (1, 11), "max_iterations must be >= 1"),
        ("[a:Agent {limits: {max_iters: 3}}]", (1, 20), "unknown limit 'max_iters'"),
        ("[a:Agent {instruction: 3}]", (1, 11), "'instruction' must be a string"),
    ],
)
def test_malformed_gram_names_line_and_column(
    text: str, position: tuple[int, int], expected: str
) -> None:
    with pytest.raises(SpecError) as caught:
        AgentSpec.from_gram(text, "agent.gram")
    assert expected in str(caught.value)
    assert (caught.value.line, caught.value.column) == position
    assert str(caught.value).startswith(f"agent.gram:{position[0]}:{position[1]}: ")


@pytest.mark.parametrize(
    ("text", "position", "expected"),
    [
        ('{\n  "name": "a",\n  "tools": [\n}', (4, 1), "Expecting value"),
        ('{"name": "a", "tool": []}', (1, 15), "unknown field 'tool'"),
        ('{\n"name": "a",\n"tools": [{"name": "t", "parameters": {"type": "string"}}]}',
         (3, 25), "parameters must be a JSON Schema of type 'object'"),
        ('{"name": "a", "tools": [{"name": "t", "parameters": {"type": 5}}]}',
         (1, 39), "parameters is not a valid JSON Schema"),
        ('{"name": ""}', (1, 2), "'name' must be a non-empty string"),
    ],
)
def test_malformed_json_names_line_and_column(
    text: str, position: tuple[int, int], expected: str
) -> None:
    with pytest.raises(SpecError) as caught:
        AgentSpec.from_json(text, "agent.json")
    assert expected in str(caught.value)
    assert (caught.value.line, caught.value.column) == position


def test_json_from_other_tools_uses_the_documented_field_names() -> None:
    data = json.loads(AgentSpec.load(EXAMPLES / "hello_world.gram").to_json())
    assert set(data) == {"spec_version", "name", "description", "instructions", "model", "tools"}
    assert set(data["tools"][0]) == {"name", "description", "parameters", "result_schema"}
