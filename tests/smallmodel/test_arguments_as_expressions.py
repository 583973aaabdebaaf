"""Arguments a small model writes as an expression, not JSON (issue 68, seen on the 1.5B over
the first-hour agents: ``"value": 766.4 + 40.3`` four times in one run, and
``add([get_farm("Mesa")["output"], ...])``): the observation says what would work, in the
model's terms. Through the real loop and the JSON text protocol, with a scripted inner text
model; a bakery's orders, a domain no first-hour agent has."""

from __future__ import annotations

from collections.abc import Sequence

from toolcycle import Agent
from toolcycle.messages import Message
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel
from toolcycle.models.text.protocol import JsonToolsModel
from toolcycle.run.unreadable_arguments import unreadable_advice
from toolcycle.tools import ToolDefinition

ORDERS = {"rye loaves": 12.5, "croissants": 7.25}


def order_cost(item: str) -> float:
    """Cost in EUR of today's order of an item."""
    return ORDERS[item.lower()]


def add(numbers: list[float]) -> float:
    """Add a list of numbers."""
    return round(sum(numbers), 2)


def record_spend(amount: float) -> str:
    """Record today's spend in EUR."""
    return f"recorded {amount} EUR"


def _tools(*names: str) -> list[ToolDefinition]:
    """Tools by name; those whose name says they add take a list of numbers."""
    figures = {"type": "object", "properties": {
        "numbers": {"type": "array", "items": {"type": "number"}}}}
    return [ToolDefinition(n, "", figures if n in ("add", "sum_numbers", "order_total")
                           else {"type": "object", "properties": {}}) for n in names]


def test_arithmetic_in_an_argument_is_told_to_go_through_the_adding_tool() -> None:
    seen: list[str] = []

    def add_next(messages: Sequence[Message], settings: ModelSettings) -> str:
        seen.extend(m.text for m in messages)
        return '{"name": "add", "arguments": {"numbers": [12.5, 7.25]}}'

    inner = ScriptedModel([
        '{"name": "order_cost", "arguments": {"item": "rye loaves"}}',
        '{"name": "order_cost", "arguments": {"item": "croissants"}}',
        '{"name": "record_spend", "arguments": {"amount": 12.5 + 7.25}}',
        add_next,
        '{"name": "record_spend", "arguments": {"amount": 19.75}}',
        '{"answer": "Recorded 19.75 EUR."}'])
    agent = Agent(JsonToolsModel(inner), "Keep the bakery's books.",
                  [order_cost, add, record_spend])
    result = agent.run_sync("Record today's spend on rye loaves and croissants.")
    told = result.tool_calls[2].error or ""
    assert told.startswith("Could not parse the arguments of `record_spend`"), told
    assert ("What would work:\n- a JSON value is one figure, not arithmetic (`12.5 + 7.25`): "
            "call `add` with the figures first, then call `record_spend` with the result as "
            "one number") in told, told
    assert result.status == "success" and "19.75" in result.output
    # the history shows the call back as it was written, not as a string holding it
    assert '{"name": "record_spend", "arguments": {"amount": 12.5 + 7.25}}' in seen, seen


def test_a_call_inside_the_arguments_is_told_to_be_made_first() -> None:
    said = unreadable_advice(
        "add", '{"numbers": [order_cost("rye loaves"), order_cost("croissants")]}',
        _tools("order_cost", "add"))
    assert said == ("\nWhat would work:\n- arguments hold values, not calls: call "
                    "`order_cost` on its own first, then call `add` with the value it returns")


def test_strings_are_values_and_no_adder_or_two_means_work_it_out() -> None:
    assert unreadable_advice("log", '{"day": "2026-12-07", "note": "order_cost(x) + 1"',
                             _tools("order_cost", "log")) == ""
    for tools in (_tools("log"), _tools("log", "add", "sum_numbers")):
        said = unreadable_advice("log", '{"amount": 3 * 4}', tools)
        assert "(`3 * 4`): work it out first, then call `log`" in said, said
    assert unreadable_advice("log", "{'amount': 5,}", _tools("log", "add")) == ""
    huge = unreadable_advice("log", '{"amount": ' + "9" * 3000 + " + 1}", _tools("log"))
    assert "arithmetic (`" + "9" * 60 + "…`)" in huge and len(huge) < 300, huge
    for date in ("2026-12-07", "12/07/2026"):  # unquoted: wants quotes, not working out
        assert unreadable_advice("log", f'{{"day": {date}}}', _tools("log", "add")) == ""


def test_a_tool_named_total_that_takes_no_figures_is_no_adding_tool() -> None:
    takes_id = ToolDefinition("order_total", "", {"type": "object", "properties": {
        "order_id": {"type": "string"}}})
    said = unreadable_advice("log", '{"amount": 3 + 4}', [takes_id, *_tools("log")])
    assert "(`3 + 4`): work it out first" in said, said
    plus = ToolDefinition("plus", "", {"type": "object", "properties": {
        "a": {"type": "number"}, "b": {"type": "number"}}})
    said = unreadable_advice("log", '{"amount": 3 + 4}', [takes_id, plus, *_tools("log")])
    assert "call `plus` with the figures first" in said, said
