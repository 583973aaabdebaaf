"""Output modes: free text with validators, non-object types wrapped in ``{"response": ...}``,
unions, custom output tool names, and configuration errors reported at construction."""

from __future__ import annotations

from typing import Any, Literal

import jsonschema
import pytest
from pydantic import BaseModel

from toolcycle import (
    Agent,
    ConfigurationError,
    Limits,
    MaxAttemptsExceeded,
    Output,
    RunContext,
    ValidationFailed,
)
from toolcycle.models.scripted import ScriptedModel, call

from .support import GOOD, OUTPUT_TOOL, Report


def mentions_source(text: str, ctx: RunContext[Any]) -> None:
    if "[source]" not in text:
        raise ValidationFailed("cite your source with [source]")


async def test_free_text_is_validated_by_validators() -> None:
    model = ScriptedModel(["Revenue is 1200.", "Revenue is 1200 [source]."])
    result = await Agent(model, output=Output(str, validators=[mentions_source])).run("go")
    assert result.output == "Revenue is 1200 [source]."
    assert result.attempts == 2
    assert result.trace.attempts[0].validator == "mentions_source"
    assert [m.role for m in result.messages] == ["user", "assistant", "user", "assistant"]
    assert "cite your source" in result.messages[2].text
    assert model.requests[0].settings.tools == ()  # free text: no output tool


async def test_free_text_validation_exhausted() -> None:
    model = ScriptedModel(["a", "b"])
    agent = Agent(model, output=Output(str, validators=[mentions_source]),
                  limits=Limits(max_attempts=2))
    with pytest.raises(MaxAttemptsExceeded) as caught:
        await agent.run("go")
    assert caught.value.context["validator"] == "mentions_source"


@pytest.mark.parametrize(
    ("output_type", "arguments", "expected"),
    [
        (list[int], {"response": [1, 2, 3]}, [1, 2, 3]),
        (int, {"response": 42}, 42),
        (Literal["yes", "no"], {"response": "no"}, "no"),
        (Report | None, {"response": None}, None),
        (dict[str, int], {"a": 1, "b": 2}, {"a": 1, "b": 2}),  # already an object: not wrapped
    ],
    ids=["list", "int", "literal", "optional-model", "dict"],
)
async def test_non_object_outputs_are_wrapped_in_response(
    output_type: Any, arguments: dict[str, Any], expected: Any
) -> None:
    model = ScriptedModel([call(OUTPUT_TOOL, arguments)])
    agent = Agent(model, output=output_type)
    result = await agent.run("go")
    assert result.output == expected
    schema = model.requests[0].settings.tools[0].parameters
    assert schema["type"] == "object"
    if "response" in arguments:
        assert schema["required"] == ["response"] and "response" in schema["properties"]
    # The schema is usable as is: every $ref resolves from the root of the tool's parameters.
    jsonschema.validate(arguments, schema)
    assert "$defs" not in schema.get("properties", {}).get("response", {})


async def test_wrapped_outputs_are_validated_unwrapped() -> None:
    seen: list[Any] = []

    def increasing(values: list[int], ctx: RunContext[Any]) -> None:
        seen.append(values)
        if values != sorted(values):
            raise ValidationFailed("the numbers must be increasing")

    model = ScriptedModel([
        call(OUTPUT_TOOL, {"numbers": [1]}),  # no "response" key: a schema error
        call(OUTPUT_TOOL, {"response": ["x"]}),  # not integers: a schema error
        call(OUTPUT_TOOL, {"response": [3, 1]}),  # rejected by the validator
        call(OUTPUT_TOOL, {"response": [1, 3]}),
    ])
    agent = Agent(model, output=Output(list[int], validators=[increasing]),
                  limits=Limits(max_attempts=4))
    result = await agent.run("go")
    assert result.output == [1, 3]
    assert seen == [[3, 1], [1, 3]]
    assert [a.errors for a in result.trace.attempts[:3]] == [
        ["response: Field required"],
        ["response.0: Input should be a valid integer, unable to parse string as an integer; "
         "given 'x'"],
        ["the numbers must be increasing"],
    ]


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


async def test_a_union_of_models() -> None:
    model = ScriptedModel([call(OUTPUT_TOOL, {"response": {"kind": "dog", "good": True}})])
    result = await Agent(model, output=Cat | Dog).run("go")
    assert result.output == Dog(kind="dog", good=True)


async def test_custom_output_tool_name_and_description_are_what_the_model_sees() -> None:
    def script(messages: Any, settings: Any) -> Any:
        if settings.tool_choice == "emit_report":
            return call("emit_report", GOOD)
        return call("emit_report_typo", {})

    model = ScriptedModel(script)
    output = Output(Report, name="emit_report", description="Give the finished report.")
    result = await Agent(model, output=output, limits=Limits(max_iterations=1)).run("go")
    assert result.output == Report(**GOOD)
    tool = model.requests[0].settings.tools[0]
    assert (tool.name, tool.description) == ("emit_report", "Give the finished report.")
    assert "Unknown tool `emit_report_typo`" in result.messages[2].results[0].content
    assert "emit_report" in result.messages[2].results[0].content
    assert model.requests[-1].settings.tool_choice == "emit_report"


def test_configuration_errors_are_listed_together() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Output(Report, name="bad name!", validators=["not callable"],  # type: ignore[list-item]
               reflect="nope")  # type: ignore[arg-type]
    problems = caught.value.problems
    assert len(problems) == 3
    assert any("bad name!" in p for p in problems)
    assert any("not callable" in p for p in problems)
    assert any("reflect must be a callable" in p for p in problems)


def test_an_output_type_without_a_schema_is_a_configuration_error() -> None:
    class Opaque:
        pass

    with pytest.raises(ConfigurationError) as caught:
        Agent(ScriptedModel([]), output=Opaque)
    assert "has no JSON Schema" in str(caught.value)


class Tree(BaseModel):
    """A recursive type: pydantic puts it under $defs and refers to it with $ref."""

    name: str
    children: list[Tree] = []


async def test_a_recursive_model_round_trips_through_its_schema() -> None:
    arguments = {"response": {"name": "root", "children": [{"name": "leaf"}]}}
    model = ScriptedModel([call(OUTPUT_TOOL, arguments)])
    result = await Agent(model, output=Tree).run("go")
    assert result.output == Tree(name="root", children=[Tree(name="leaf")])
    schema = model.requests[0].settings.tools[0].parameters
    jsonschema.validate(arguments, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"response": {"name": "root", "children": [{"name": 1}]}}, schema)


def test_a_helper_tool_cannot_take_the_output_tool_name() -> None:
    def final_result(text: str) -> str:
        """Clashes.

        Args:
            text: Anything.
        """
        return text

    with pytest.raises(ConfigurationError) as caught:
        Agent(ScriptedModel([]), tools=[final_result], output=Report)
    assert "clashes with the output tool" in str(caught.value)
    Agent(ScriptedModel([]), tools=[final_result], output=Output(Report, name="report"))
