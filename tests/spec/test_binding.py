"""Binding a spec to tool libraries: every mismatch reported at once; A/B runs of one spec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pydantic
import pytest

from toolcycle import ConfigurationError, RunContext, Tool, ToolLibrary, ToolSpec, tool
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.spec import AgentSpec
from toolcycle.spec.binding import parameter_mismatches
from toolcycle.tools import ToolArgumentsError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def spec_with(*tools: ToolSpec) -> AgentSpec:
    return AgentSpec("agent", instructions="Be brief.", tools=list(tools))


GREET = ToolSpec(
    "greet",
    "Greets someone",
    {
        "type": "object",
        "properties": {"name": {"type": "string"}, "times": {"type": "integer", "default": 1}},
        "required": ["name"],
    },
)
ADD = ToolSpec(
    "add",
    "Adds",
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
     "required": ["a", "b"]},
)
SEARCH = ToolSpec(
    "search",
    "Searches",
    {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)


def test_a_matching_library_binds_and_extra_implementations_are_fine() -> None:
    def greet(name: str, times: int = 1) -> str:
        return " ".join([f"hi {name}"] * times)

    def unrelated(x: int) -> int:
        return x

    spec = spec_with(GREET)
    assert spec.check(ToolLibrary([greet, unrelated])) == []
    agent = spec.bind(ToolLibrary([greet, unrelated]), model=ScriptedModel(["ok"]))
    assert list(agent.tools) == ["greet"]
    # The model sees the spec's schema, closed because greet takes no **kwargs.
    assert agent.tools["greet"].spec.parameters == {**GREET.parameters,
                                                    "additionalProperties": False}


def test_binding_closes_the_arguments_only_when_the_implementation_is_closed() -> None:
    def greet(name: str, times: int = 1) -> str:
        return name

    def greet_any(**kwargs: Any) -> str:
        return ""

    closed = spec_with(GREET).bind([greet], model=ScriptedModel(["ok"])).tools["greet"]
    with pytest.raises(ToolArgumentsError, match="'nmae' was unexpected"):
        closed.validate({"name": "a", "nmae": "b"})
    library = ToolLibrary()
    library.register(greet_any, "greet")
    open_tool = spec_with(GREET).bind(library, model=ScriptedModel(["ok"])).tools["greet"]
    assert open_tool.spec.parameters == GREET.parameters


def test_every_mismatch_is_reported_together() -> None:
    def greet(name: int, times: int) -> str:  # wrong type; times has no default
        return ""

    def add(a: int) -> int:  # b is missing
        return a

    def other(x: int) -> int:
        return x

    spec = spec_with(GREET, ADD, SEARCH)  # search has no implementation at all
    library = ToolLibrary([greet, add, other], name="staging")
    with pytest.raises(ConfigurationError) as caught:
        spec.bind(library, model=ScriptedModel(["ok"]))
    problems = caught.value.problems
    assert problems == [
        "tool 'greet': parameter 'name': the spec allows string but the implementation takes "
        "integer",
        "tool 'greet': parameter 'times': optional in the spec (the model may leave it out) but "
        "required by the implementation; give it a default",
        "tool 'add': parameter 'b': the spec declares it but the implementation has no such "
        "parameter",
        "tool 'search': no implementation in the tool library 'staging' (it has: add, greet, "
        "other)",
    ]
    assert spec.check(library) == problems


def test_a_required_parameter_the_spec_does_not_declare() -> None:
    def search(query: str, limit: int) -> list[str]:
        return []

    assert spec_with(SEARCH).check(ToolLibrary([search])) == [
        "tool 'search': parameter 'limit': required by the implementation but the spec does "
        "not declare it, so the model never sends it"
    ]


def test_a_missing_model_and_binding_problems_come_in_one_error() -> None:
    with pytest.raises(ConfigurationError) as caught:
        spec_with(SEARCH).bind(ToolLibrary())
    assert len(caught.value.problems) == 2
    assert caught.value.problems[1] == "model: the spec names none and none was given to bind()"


class Address(pydantic.BaseModel):
    street: str
    zip: int


def test_nested_records_and_lists_are_compared() -> None:
    spec_schema = {
        "type": "object",
        "properties": {
            "address": {"type": "object",
                        "properties": {"street": {"type": "string"}, "zip": {"type": "string"}},
                        "required": ["street", "zip"]},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["address", "tags"],
    }

    def ship(address: Address, tags: list[int]) -> str:
        return ""

    declared = Tool.from_function(ship).spec.parameters
    assert parameter_mismatches(spec_schema, declared) == [
        "parameter 'address.zip': the spec allows string but the implementation takes integer",
        "parameter 'tags[]': the spec allows string but the implementation takes integer",
    ]


def test_integers_fit_numbers_optional_fits_required_and_kwargs_take_anything() -> None:
    spec = spec_with(
        ToolSpec("scale", "", {"type": "object",
                               "properties": {"x": {"type": "integer"}, "y": {"type": "string"}},
                               "required": ["x", "y"]}),
    )

    def scale(x: float, y: str | None = None, **options: Any) -> float:
        return x

    assert spec.check(ToolLibrary([scale])) == []

    def scale_loose(**options: Any) -> float:
        return 0.0

    loose = ToolLibrary(name="loose")
    loose.register(scale_loose, "scale")
    assert spec.check(loose) == []


def test_tool_objects_keep_their_policies_and_context() -> None:
    @tool(timeout=3.0, concurrent=True)
    def search(ctx: RunContext[Any], query: str) -> str:
        return query

    bound = spec_with(SEARCH).bind(ToolLibrary([search]), model=ScriptedModel(["ok"]))
    found = bound.tools["search"]
    assert (found.timeout, found.concurrent, found.context_param) == (3.0, True, "ctx")


async def test_one_spec_two_libraries_ab_traces_compare() -> None:
    """A/B: the same spec, bound to a stable and a candidate library, run on the same script."""
    spec = AgentSpec.load(EXAMPLES / "hello_world.gram")

    def say_hello_a(personName: str = "world") -> str:
        return f"Hello, {personName}!"

    def say_hello_b(personName: str = "world") -> str:
        return f"Hi there {personName}, welcome back."

    library_a = ToolLibrary(name="stable")
    library_a.register(say_hello_a, "sayHello")
    library_b = ToolLibrary(name="candidate")
    library_b.register(say_hello_b, "sayHello")

    def script() -> ScriptedModel:
        return ScriptedModel([call("sayHello", {"personName": "Ada"}),
                              lambda messages, settings: messages[-1].results[0].content])

    results = {}
    for library in (library_a, library_b):
        agent = spec.bind(library, model=script())
        results[library.name] = await agent.run("Hello, I'm Ada")
    a, b = results["stable"], results["candidate"]
    assert [r.name for r in a.tool_calls] == [r.name for r in b.tool_calls] == ["sayHello"]
    assert [r.args for r in a.tool_calls] == [r.args for r in b.tool_calls]
    assert a.tool_calls[0].result == "Hello, Ada!"
    assert b.tool_calls[0].result == "Hi there Ada, welcome back."
    assert (a.output, b.output) == ("Hello, Ada!", "Hi there Ada, welcome back.")
    assert a.trace.agent_name == b.trace.agent_name == "hello_world_agent"
    assert len(a.trace.steps) == len(b.trace.steps) == 2


async def test_an_output_schema_in_the_spec_becomes_the_output_tool() -> None:
    spec = AgentSpec(
        "scorer",
        output_schema={"type": "object", "properties": {"score": {"type": "integer"}},
                       "required": ["score"]},
    )
    model = ScriptedModel([call("final_result", {"score": "high"}),
                           call("final_result", {"score": 7})])
    result = await spec.bind([], model=model).run("score it")
    assert result.output == {"score": 7}
    offered = model.requests[0].settings.tools
    assert [t.parameters for t in offered] == [spec.output_schema]
    rejection = next(m for m in result.messages if m.role == "tool").results[0]
    assert rejection.is_error and 'score: "high" is not of type "integer"' in rejection.content


def test_the_gram_agent_model_form_is_understood() -> None:
    from toolcycle.spec import model_string

    assert model_string("OpenAI/gpt-3.5-turbo") == "openai:gpt-3.5-turbo"
    assert model_string("Anthropic/claude-sonnet-4-5") == "anthropic:claude-sonnet-4-5"
    assert model_string("local:qwen2.5-coder-1.5b") == "local:qwen2.5-coder-1.5b"
    with pytest.raises(ConfigurationError, match="cannot resolve model 'Google/gemini'"):
        AgentSpec("a", model="Google/gemini").bind([])
