"""The union reply schema: what it admits, what it rejects, and that llama.cpp compiles it.

Compiling the grammar uses the real llama.cpp converter (cheap: no model is loaded).
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pydantic
import pytest

from toolcycle.models.base import ToolDefinition
from toolcycle.models.text.constrained import reply_schema
from toolcycle.tools import Tool

WEATHER = ToolDefinition(
    "weather",
    "Weather of a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
ADD = ToolDefinition(
    "add",
    "Add.",
    {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)


def valid(schema: dict[str, Any] | None, instance: Any) -> bool:
    assert schema is not None
    return jsonschema.Draft202012Validator(schema).is_valid(instance)


def test_auto_admits_each_tool_call_and_an_answer() -> None:
    schema = reply_schema([WEATHER, ADD], "auto")
    assert valid(schema, {"name": "weather", "arguments": {"city": "Oslo"}})
    assert valid(schema, {"name": "add", "arguments": {"a": 1, "b": 2}})
    assert valid(schema, {"answer": "sunny"})


def test_rejects_unknown_tools_wrong_arguments_and_extra_keys() -> None:
    schema = reply_schema([WEATHER, ADD], "auto")
    assert not valid(schema, {"name": "delete_all", "arguments": {}})
    assert not valid(schema, {"name": "add", "arguments": {"a": "one", "b": 2}})
    assert not valid(schema, {"name": "weather", "arguments": {"city": "Oslo", "x": 1}})
    assert not valid(schema, {"name": "weather", "arguments": {"city": "Oslo"}, "answer": "hi"})


def test_required_drops_the_answer_and_a_named_tool_keeps_only_it() -> None:
    required = reply_schema([WEATHER, ADD], "required")
    assert not valid(required, {"answer": "sunny"})
    named = reply_schema([WEATHER, ADD], "add")
    assert valid(named, {"name": "add", "arguments": {"a": 1, "b": 2}})
    assert not valid(named, {"name": "weather", "arguments": {"city": "Oslo"}})


def test_withdrawn_tools_leave_only_the_answer_and_no_tools_means_free_text() -> None:
    answer_only = reply_schema([WEATHER], "none")
    assert valid(answer_only, {"answer": "sunny"})
    assert not valid(answer_only, {"name": "weather", "arguments": {"city": "Oslo"}})
    assert reply_schema([], "auto") is None


class Point(pydantic.BaseModel):
    x: int
    y: int


def test_nested_models_keep_their_refs_resolvable() -> None:
    def move(to: Point) -> str:
        """Move to a point."""
        return "ok"

    spec = Tool.from_function(move).spec
    schema = reply_schema([ToolDefinition(spec.name, spec.description, spec.parameters)], "auto")
    assert valid(schema, {"name": "move", "arguments": {"to": {"x": 1, "y": 2}}})
    assert not valid(schema, {"name": "move", "arguments": {"to": {"x": "a", "y": 2}}})


@pytest.mark.parametrize("choice", ["auto", "required", "add"])
def test_llama_cpp_compiles_the_schema_to_a_grammar(choice: str) -> None:
    # `make test` always installs the `local` extra: a broken install must fail, not skip.
    from llama_cpp import llama_grammar
    schema = reply_schema([WEATHER, ADD], choice)
    grammar = llama_grammar.json_schema_to_gbnf(json.dumps(schema))
    literal = '"\\"{}\\""'.format  # how the grammar spells a JSON string literal
    assert (literal("weather") in grammar) == (choice != "add")
    assert literal("add") in grammar
    assert (literal("answer") in grammar) == (choice == "auto")


def _items_tool(name: str, item: type[pydantic.BaseModel]) -> ToolDefinition:
    parameters = pydantic.create_model(name, items=(list[item], ...)).model_json_schema()  # type: ignore[valid-type]
    return ToolDefinition(name, f"{name} items.", parameters)


def test_same_named_sub_models_of_two_tools_stay_apart() -> None:
    # pydantic names $defs after the class: both tools have an `Item`, with different fields.
    order_item = pydantic.create_model("Item", sku=(str, ...), qty=(int, ...))
    todo_item = pydantic.create_model("Item", title=(str, ...), done=(bool, ...))
    tools = [_items_tool("order", order_item), _items_tool("todo", todo_item)]
    schema = reply_schema(tools, "auto")
    assert valid(schema, {"name": "order", "arguments": {"items": [{"sku": "A", "qty": 2}]}})
    assert valid(schema, {"name": "todo", "arguments": {"items": [{"title": "x", "done": True}]}})
    assert not valid(schema, {"name": "order", "arguments": {"items": [{"title": "x",
                                                                          "done": True}]}})
    from llama_cpp import llama_grammar
    grammar = llama_grammar.json_schema_to_gbnf(json.dumps(schema))
    assert "sku" in grammar and "title" in grammar


def test_draft_07_definitions_refs_still_resolve() -> None:
    legacy = ToolDefinition("tag", "Tag items.", {
        "type": "object", "definitions": {"Tag": {"type": "string", "enum": ["a", "b"]}},
        "properties": {"tags": {"type": "array", "items": {"$ref": "#/definitions/Tag"}},
                       "more": {"$ref": "#/properties/tags"}},
        "required": ["tags"]})
    schema = reply_schema([legacy], "auto")
    assert valid(schema, {"name": "tag", "arguments": {"tags": ["a"], "more": ["b"]}})
    assert not valid(schema, {"name": "tag", "arguments": {"tags": ["a"], "more": [1]}})
    assert not valid(schema, {"name": "tag", "arguments": {"tags": ["c"]}})
    from llama_cpp import llama_grammar
    assert '"\\"a\\""' in llama_grammar.json_schema_to_gbnf(json.dumps(schema))


def test_parallel_makes_every_reply_a_list_of_calls_or_the_answer_and_compiles() -> None:
    schema = reply_schema([WEATHER, ADD], "auto", parallel=True)
    both = [{"name": "weather", "arguments": {"city": "Oslo"}},
            {"name": "add", "arguments": {"a": 1, "b": 2}}]
    assert valid(schema, both)
    assert valid(schema, both[:1])  # one call: a list of one
    assert valid(schema, [{"answer": "x"}])
    # A bare object is not offered: a small model given the choice always wrote one.
    assert not valid(schema, {"name": "add", "arguments": {"a": 1, "b": 2}})
    assert not valid(schema, {"answer": "x"})
    assert not valid(schema, [])
    assert not valid(schema, [*both, {"answer": "x"}])  # no answer beside calls
    assert not valid(schema, [{"answer": "x"}, {"answer": "y"}])
    assert not valid(reply_schema([WEATHER, ADD], "auto"), both)  # off unless asked for
    required = reply_schema([WEATHER, ADD], "required", parallel=True)
    assert valid(required, both) and not valid(required, [{"answer": "x"}])
    # A named tool stays one call of that tool; tools withdrawn, the answer object alone.
    assert not valid(reply_schema([WEATHER, ADD], "weather", parallel=True), both)
    assert valid(reply_schema([WEATHER, ADD], "none", parallel=True), {"answer": "x"})
    from llama_cpp import llama_grammar
    assert "root" in llama_grammar.json_schema_to_gbnf(json.dumps(schema))


class Item(pydantic.BaseModel):
    sku: str


class Order(pydantic.BaseModel):
    items: list[Item]
    note: str | None = None


def test_native_mode_answers_with_an_instance_of_the_output_schema() -> None:
    """Native output mode: the answer's value is the output itself, its sub-models filed
    apart from a tool's same-named ones, and the whole still compiles into a grammar."""
    from llama_cpp.llama_grammar import LlamaGrammar

    order = Order.model_json_schema()
    schema = reply_schema([ToolDefinition("place", "Place an order.", order)], "auto",
                          answer=order)
    answer = {"answer": {"items": [{"sku": "A-1"}]}}
    assert valid(schema, answer)
    assert valid(schema, {"name": "place", "arguments": {"items": [{"sku": "B"}]}})
    assert not valid(schema, {"answer": "a sentence"})
    assert not valid(schema, {"answer": {"items": [{"sku": "A-1"}], "extra": 1}})
    assert schema is not None and {"place__Item", "$answer__Item"} <= set(schema["$defs"])
    LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    alone = reply_schema([], "auto", answer=order)  # no tools: the answer is the only reply
    assert valid(alone, answer) and not valid(alone, {"name": "place", "arguments": {}})
    withdrawn = reply_schema([WEATHER], "none", answer=order)
    assert valid(withdrawn, answer) and not valid(withdrawn, {"answer": "sunny"})


def test_a_parameter_that_only_annotates_admits_any_value_and_compiles() -> None:
    """A BFCL tool's ``{"description": "The training data for the model."}`` (valid JSON
    Schema for any value), or a hand-written ``"type": "any"``: llama.cpp's converter refused
    both with an assertion, so the request in the family's own layout failed and the JSON
    protocol's reply went silently unconstrained. Written ``{}`` they compile, and the
    properties beside them keep their types (a property named like an annotation too)."""
    from llama_cpp import llama_grammar

    from toolcycle.models.base import ModelSettings
    from toolcycle.models.text.hermes import reply_grammar

    train = ToolDefinition("train", "Train a model.", {
        "type": "object", "required": ["data"],
        "properties": {"data": {"description": "The training data for the model."},
                       "options": {"type": "any", "title": "Options"},
                       "rows": {"type": "array", "items": {"description": "a row"}},
                       "title": {"type": "string", "description": "The run's title."}}})
    schema = reply_schema([train], "auto")
    grammar = llama_grammar.json_schema_to_gbnf(json.dumps(schema))
    assert '"\\"train\\""' in grammar
    call = {"name": "train", "arguments": {"data": [1, {"x": 2}], "options": None,
                                           "rows": ["a", 3], "title": "first"}}
    assert valid(schema, call)
    assert not valid(schema, {"name": "train", "arguments": {"data": 1, "title": 7}})
    assert reply_grammar([train], ModelSettings(tools=(train,))) is not None


def test_a_schema_llama_cpp_cannot_convert_leaves_the_familys_layout_unconstrained() -> None:
    """Not a crash of the request: the reply is free and read tolerantly, as llama.cpp's own
    response_format falls back to any JSON."""
    from toolcycle.models.base import ModelSettings
    from toolcycle.models.text.hermes import reply_grammar

    odd = ToolDefinition("odd", "Odd.", {"type": "object",
                                          "properties": {"x": {"type": "tuple"}}})
    assert reply_grammar([odd], ModelSettings(tools=(odd,))) is None
