"""Ways a small model writes a call that failed to run, read as the call it meant (issue 68,
seen on the first-hour agents with Qwen2.5-Coder-1.5B): a call nested in another call's
argument runs first, ``//`` comments inside the JSON are dropped, and a bare value for a
one-parameter tool is that parameter's. Through the real loop
and the JSON text protocol, with a scripted inner text model."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolcycle import Agent
from toolcycle.messages import ToolCall
from toolcycle.models.scripted import ScriptedModel
from toolcycle.models.text.calls import parse_tool_calls
from toolcycle.models.text.comments import without_comments
from toolcycle.models.text.nested import call_written_as_code, unnest_calls
from toolcycle.models.text.protocol import JsonToolsModel
from toolcycle.tools import ToolDefinition

PAY = {("E-204", "2026-11"): 3245.5}


def find_employee(name: str) -> str:
    """Get an employee's id from their name."""
    return {"ana silva": "E-204"}[name.lower()]


def gross_pay(employee_id: str, month: str) -> float:
    """Gross pay in EUR of an employee for a month written YYYY-MM."""
    return PAY[(employee_id, month)]


def test_a_call_nested_in_an_argument_runs_first_and_the_outer_is_written_again() -> None:
    """Run as written, gross_pay failed on "find_employee('Ana Silva')" and the model
    answered that find_employee did not exist."""
    inner = ScriptedModel([
        '{"name": "gross_pay", "arguments": {"employee_id": "find_employee(\'Ana Silva\')", '
        '"month": "2026-11"}}',
        '{"name": "gross_pay", "arguments": {"employee_id": "E-204", "month": "2026-11"}}',
        '{"answer": "Ana Silva earned 3245.5 EUR."}'])
    agent = Agent(JsonToolsModel(inner), "Answer payroll questions.", [find_employee, gross_pay])
    result = agent.run_sync("What was Ana Silva's gross pay in November 2026?")
    assert [(c.name, c.args, c.error) for c in result.tool_calls] == [
        ("find_employee", {"name": "Ana Silva"}, None),
        ("gross_pay", {"employee_id": "E-204", "month": "2026-11"}, None)]
    assert result.status == "success" and "3245.5" in result.output


TOOLS = [ToolDefinition("find_station", "Station id of a city.",
                        {"type": "object", "properties": {"city": {"type": "string"}},
                         "required": ["city"]}),
         ToolDefinition("reading", "A station's reading.",
                        {"type": "object", "properties": {"station_id": {"type": "string"}},
                         "required": ["station_id"]})]


def _call(args: dict[str, Any], name: str = "reading") -> ToolCall:
    return ToolCall("c1", name, args)


@pytest.mark.parametrize(("value", "inner"), [
    ("find_station('Bergen')", ("find_station", {"city": "Bergen"})),
    ('find_station(city="Bergen")', ("find_station", {"city": "Bergen"})),
    (" find_station( 'Bergen' ) ", ("find_station", {"city": "Bergen"})),
])
def test_a_nested_call_to_an_offered_tool_is_read_as_that_call(
        value: str, inner: tuple[str, dict[str, Any]]) -> None:
    later = _call({"station_id": "S-1"})
    (call,) = unnest_calls([_call({"station_id": value}), later], TOOLS)
    assert (call.name, call.arguments, call.id) == (*inner, "c1")


@pytest.mark.parametrize("value", [
    "Bergen", "lookup('Bergen')",                       # no call; no offered tool
    "find_station(city)", "find_station(**x)",          # not literals
    "find_station('a', 'b')",                           # more values than parameters
    "find_station('Bergen') + 1", "find_station('" + "x" * 600 + "')",
    "find_station({1, 2})",                             # not JSON
])
def test_anything_else_is_left_as_written(value: str) -> None:
    call = _call({"station_id": value})
    assert unnest_calls([call], TOOLS) == [call]


@pytest.mark.parametrize("answer", [
    '{"answer": "find_employee(name: \'Ana Silva\')"}',  # the 0.5B's, colon and all
    "{\"answer\": \"find_employee(name='Ana Silva')\"}", "find_employee('Ana Silva')"])
def test_an_answer_that_is_only_a_call_written_as_code_is_that_call(answer: str) -> None:
    """Seen on the 0.5B (first-hour dev set): its answer was a call it meant to make, and the
    run took it as the answer and said ``success``."""
    inner = ScriptedModel([answer, '{"answer": "Her id is E-204."}'])
    agent = Agent(JsonToolsModel(inner), "Answer payroll questions.", [find_employee, gross_pay])
    result = agent.run_sync("What is Ana Silva's employee id?")
    assert [(c.name, c.args) for c in result.tool_calls] == [
        ("find_employee", {"name": "Ana Silva"})], result.trace.render()
    assert result.output == "Her id is E-204."


def test_a_colon_inside_a_value_is_the_value_s_own() -> None:
    """Only a parameter's name outside every string and bracket takes ``:`` for ``=``."""
    tools = [ToolDefinition("note_stock", "Note a stock level.", {
        "type": "object", "properties": {"sku": {"type": "string"}, "note": {"type": "string"},
                                         "extra": {"type": "object"}}})]
    call = call_written_as_code(
        "note_stock(sku: 'yoga_mat', note: 'sku: kept', extra: {'sku': 1})", tools, "c1")
    assert call is not None
    assert call.arguments == {"sku": "yoga_mat", "note": "sku: kept", "extra": {"sku": 1}}
    assert call_written_as_code("note_stock(sku: 'a", tools, "c2") is None  # unterminated


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("note_stock(sku:nt'\"{}[]),= \n\\#x1\x00"), max_size=60))
def test_any_text_is_a_call_or_nothing_never_an_error(text: str) -> None:
    tools = [ToolDefinition("note_stock", "", {"type": "object", "properties": {
        "sku": {"type": "string"}, "note": {"type": "string"}}})]
    call = call_written_as_code(text, tools, "c")
    assert call is None or isinstance(call.arguments, dict)


@pytest.mark.parametrize("answer", [
    "Call find_employee('Ana Silva') first.", "lookup(name='Ana')",  # more than a call; unknown
    "find_employee(nickname: 'Ana')", "find_employee(name)"])       # not its parameter; no literal
def test_an_answer_that_is_more_or_other_than_a_call_stays_the_answer(answer: str) -> None:
    inner = ScriptedModel([answer])
    agent = Agent(JsonToolsModel(inner), "", [find_employee, gross_pay], grounding=False)
    result = agent.run_sync("What is Ana Silva's employee id?")
    assert result.tool_calls == [] and result.output == answer


def test_comments_inside_the_json_are_dropped_not_string_content() -> None:
    reply = ('{"name": "add", "arguments": {"numbers": [\n  10000, // October gross pay\n'
             '  12000 /* November */\n], "note": "http://x.org // kept"}}')
    (call,) = parse_tool_calls(reply, "c", {"add"}).calls
    assert call.arguments == {"numbers": [10000, 12000], "note": "http://x.org // kept"}
    assert without_comments('{"a": "// no comment here"}') is None
    assert without_comments("{'a': 1} // it's fine") == "{'a': 1} "


def find_farm(name: str) -> str:
    """Find a solar farm's id by its name."""
    return {"Mesa Panels": "SF-1", "Lark Park": "SF-2"}[name]


def add(numbers: list[float]) -> float:
    """Add a list of numbers."""
    return sum(numbers)


@pytest.mark.parametrize(("written", "tool", "args"), [
    ('{"name": "add", "arguments": [1000, 1500]}', "add", {"numbers": [1000, 1500]}),
    ('{"name": "find_farm", "arguments": "Mesa Panels"}', "find_farm", {"name": "Mesa Panels"}),
    ('{"name": "find_farm", "arguments": "\\"Lark Park\\""}', "find_farm", {"name": "Lark Park"}),
])
def test_a_bare_value_for_a_one_parameter_tool_is_that_parameter(
        written: str, tool: str, args: dict[str, Any]) -> None:
    """Refused as "arguments must be a JSON object, got list", the 1.5B wrote the same call
    until the run failed (held-out agent h03, 33 iterations)."""
    inner = ScriptedModel([written, '{"answer": "done"}'])
    result = Agent(JsonToolsModel(inner), "", [find_farm, add]).run_sync("go")
    (record,) = result.tool_calls
    assert (record.name, record.args, record.error) == (tool, args, None)


@pytest.mark.parametrize(("written", "tools"), [
    ('{"name": "gross_pay", "arguments": "E-204"}', [gross_pay]),       # several parameters
    ('{"name": "find_farm", "arguments": "{\\"name\\": \\"Ada\\",, }"}', [find_farm]),
])
def test_no_value_is_guessed_for_several_parameters_or_from_broken_json(
        written: str, tools: list[Any]) -> None:
    inner = ScriptedModel([written, '{"answer": "x"}'])
    result = Agent(JsonToolsModel(inner), "", tools).run_sync("go")
    assert "Could not parse the arguments" in (result.tool_calls[0].error or "")


@pytest.mark.parametrize("reply", [
    '{"name": "gross_pay", "arguments": "{\\"employee_id\\": \\"E-204\\", \\"month\\": '
    '\\"2026-11\\"}}"}',
    '<tool_call>\n{"name": "gross_pay", "arguments": {"employee_id": "E-204", '
    '"month": "2026-11"}}}\n</tool_call>',
    '```json\n{"name": "gross_pay", "arguments": {"employee_id": "E-204", '
    '"month": "2026-11"}}]}\n```'])
def test_surplus_closing_brackets_after_a_whole_call_are_dropped(reply: str) -> None:
    """Seen on the first-hour held-out agents (seed 6806): a sum whose arguments carried one
    ``}`` too many was refused three times, and the model answered one figure instead."""
    calls = parse_tool_calls(reply, tool_names=["gross_pay"]).calls
    assert [(c.name, c.arguments, c.parse_error) for c in calls] == [
        ("gross_pay", {"employee_id": "E-204", "month": "2026-11"}, None)]


def test_more_than_closing_brackets_after_the_arguments_is_still_an_error() -> None:
    reply = ('{"name": "gross_pay", "arguments": "{\\"employee_id\\": \\"E-204\\"} and '
             '\\"month\\": 1"}')
    [call] = parse_tool_calls(reply, tool_names=["gross_pay"]).calls
    assert call.arguments is None and call.parse_error is not None


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.text(alphabet="}] \n", max_size=6))
def test_surplus_closings_are_read_from_any_text(text: str, closings: str) -> None:
    """Any reply, with any run of closing brackets after it: never an error, and where the
    brackets were needed to read it, the value read is an object or a list."""
    from toolcycle.models.text.calls import decode_lenient

    value = decode_lenient(text + closings)
    if value is not None and decode_lenient(text) is None and closings.strip():
        assert isinstance(value, dict | list)
    parse_tool_calls(text + closings, tool_names=["gross_pay"])
