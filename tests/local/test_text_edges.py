"""Text replies whose arguments Python's json refuses (rel-11) or that are Python literals
without a JSON form (rel-15): each becomes a call with a parse error, never an exception."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle import Agent, tool
from toolcycle.models.base import ToolDefinition
from toolcycle.models.text.calls import decode_lenient, parse_tool_calls
from toolcycle.models.text.protocol import JsonToolsModel
from toolcycle.models.text.react import ReActModel, parse_react
from toolcycle.testing import ScriptedModel

BIG_INT = '{"x": ' + "1" * 5000 + "}"
DEEP = '{"x": ' + "[" * 5000 + "]" * 5000 + "}"
LOOKUP = ToolDefinition("lookup", "Look a customer up.",
                        {"type": "object", "properties": {"name": {"type": "string"},
                                                          "tags": {"type": "array"}}})


@pytest.mark.parametrize("raw", [BIG_INT, DEEP, "{" * 3000 + "}" * 3000],
                         ids=["5000 digits", "5000 deep", "doubled braces 3000 deep"])
def test_decode_lenient_gives_none_instead_of_raising(raw: str) -> None:
    assert decode_lenient(raw) is None


@pytest.mark.parametrize("raw", [BIG_INT, DEEP], ids=["5000 digits", "5000 deep"])
@pytest.mark.parametrize("form", ["<tool_call>{call}</tool_call>", "```json\n{call}\n```",
                                  "Sure: {call}"], ids=["tagged", "fenced", "bare"])
def test_calls_python_cannot_read_become_parse_errors(raw: str, form: str) -> None:
    text = form.format(call='{"name": "lookup", "arguments": ' + raw + "}")
    (made,) = parse_tool_calls(text, "t", {"lookup"}).calls
    assert made.name == "lookup" and made.arguments is None and made.parse_error


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('<tool_call>{"name": "lookup", "arguments": {"name": {"Ann"}}}</tool_call>',
         "arguments hold a set value ({'Ann'}) at name, which has no JSON form"),
        ("<tool_call>{'name': 'lookup', 'arguments': {'name': b'Ann'}}</tool_call>",
         "arguments hold a bytes value (b'Ann') at name, which has no JSON form"),
        ("<tool_call>{'name': 'lookup', 'arguments': {1j, 2}}</tool_call>",
         "arguments hold a set value"),
        ("<tool_call>{'name': 'lookup', 'name2': 3j}</tool_call>",
         "arguments hold a complex value (3j) at name2"),
    ],
)
def test_python_literals_without_json_form_become_parse_errors(text: str, problem: str) -> None:
    (made,) = parse_tool_calls(text, "t").calls
    assert made.arguments is None
    assert made.parse_error is not None and problem in made.parse_error


def test_python_tuples_become_lists() -> None:
    text = "<tool_call>{'name': 'lookup', 'arguments': {'tags': ('a', 'b')}}</tool_call>"
    (made,) = parse_tool_calls(text, "t").calls
    assert made.arguments == {"tags": ["a", "b"]} and made.parse_error is None
    assert made.raw_arguments == '{"tags": ["a", "b"]}'


def test_an_answer_that_is_a_python_set_is_shown_as_text() -> None:
    assert parse_tool_calls('{"answer": {1, 2}}', "t").answer == "{1, 2}"


@pytest.mark.parametrize("text", [
    'Action: lookup\nAction Input: {"name": {"Ann", "Bob"}}',
    'Action: lookup\nAction Input: {"name": b"Ann"}',
    "Action: lookup\nAction Input: " + BIG_INT,
    "Action: lookup\nAction Input: " + DEEP,
])
def test_react_actions_without_json_form_become_parse_errors(text: str) -> None:
    parts = parse_react(text, [LOOKUP], "t")
    (made,) = [p for p in parts if getattr(p, "kind", "") == "tool_call"]
    assert made.arguments is None and made.parse_error  # type: ignore[union-attr]


@tool
def lookup(name: str) -> str:
    """Look a customer up."""
    return f"customer {name}"


@pytest.mark.parametrize(
    ("wrapper", "text"),
    [
        (ReActModel, 'Action: lookup\nAction Input: {"name": {"Ann", "Bob"}}'),
        (ReActModel, 'Action: lookup\nAction Input: {"name": b"Ann"}'),
        (JsonToolsModel,
         '<tool_call>{"name": "lookup", "arguments": {"name": {"Ann"}}}</tool_call>'),
        (JsonToolsModel, '<tool_call>{"name": "lookup", "arguments": ' + BIG_INT + "}</tool_call>"),
    ],
    ids=["react set", "react bytes", "json set", "json big int"],
)
async def test_the_run_answers_the_call_and_goes_on(wrapper: Any, text: str) -> None:
    model = wrapper(ScriptedModel([text, "Final Answer: done"]))
    result = await Agent(model, "t", [lookup]).run("find Ann")
    assert result.termination.reason == "completed"
    (record,) = result.tool_calls
    assert record.error is not None and record.error.startswith("Could not parse the arguments")
