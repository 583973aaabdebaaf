"""The multi-database agent: the answer is only in the second database, and the agent gets it.

The scripted model plays an agent that reads its observations: it asks the CRM first, and only
because that observation says "no rows" does it query sales; its answer is built from the rows
sales returned, so a tool that returned the wrong data would fail the test.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from toolcycle import Message, ToolResult
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.rag import KnowledgeBase, answer_with_rag, sql_tools

GUEST = "sam.okafor@example.com"


def observation(messages: Sequence[Message]) -> tuple[str, dict[str, Any] | str, bool]:
    result = messages[-1].parts[-1]
    assert isinstance(result, ToolResult)
    try:
        return result.name, json.loads(result.content), result.is_error
    except json.JSONDecodeError:
        return result.name, result.content, result.is_error


def careful_agent(messages: Sequence[Message], settings: ModelSettings) -> Any:
    """CRM first; on an empty result, sales; answer from the rows it got."""
    if messages[-1].role == "user":
        return call("query_crm", {"sql": "SELECT id, name FROM customers WHERE email = ?",
                                  "params": [GUEST]})
    name, data, is_error = observation(messages)
    assert not is_error, data
    assert isinstance(data, dict)
    if name == "query_crm":
        if data["row_count"] == 0:  # not a registered customer: try the other database
            return call("query_sales", {
                "sql": "SELECT o.quantity, o.ordered_at FROM orders o JOIN products p "
                       "ON p.sku = o.sku WHERE o.customer_email = ? AND p.name = ?",
                "params": [GUEST, "Aurora desk lamp"]})
        return "Registered customer; no need to look further."
    [[quantity, date]] = data["rows"]
    return f"{quantity} Aurora desk lamps, ordered on {date} (found in sales)."


async def test_answer_only_in_the_second_database(tmp_path: Path, multi_db: ModuleType) -> None:
    example = multi_db
    model = ScriptedModel(careful_agent)
    agent = example.build_agent(model, tmp_path)
    result = await agent.run(example.QUESTION)
    assert result.output == "3 Aurora desk lamps, ordered on 2026-09-11 (found in sales)."
    calls = [(c.name, c.iteration) for c in result.tool_calls]
    assert calls == [("query_crm", 1), ("query_sales", 2)]
    crm = json.loads(result.tool_calls[0].result or "")
    assert crm["row_count"] == 0 and "no rows matched in database 'crm'" in crm["note"]
    assert len(model.requests) == 3
    assert {t.name for t in model.requests[0].settings.tools} == {"query_crm", "query_sales"}


async def test_a_write_attempt_is_an_observation_and_the_agent_recovers(
    tmp_path: Path, multi_db: ModuleType
) -> None:
    example = multi_db
    model = ScriptedModel([
        call("query_sales", {"sql": "DELETE FROM orders"}),
        call("query_sales", {"sql": "SELECT count(*) FROM orders; DROP TABLE orders"}),
        call("query_sales", {"sql": "SELECT count(*) FROM orders"}),
        "There are 5 orders.",
    ])
    agent = example.build_agent(model, tmp_path)
    result = await agent.run("How many orders are there?")
    errors = [c.error for c in result.tool_calls]
    assert errors[0] is not None and "read-only: DELETE orders is not allowed" in errors[0]
    assert errors[1] is not None and "only one SQL statement" in errors[1]
    assert errors[2] is None and json.loads(result.tool_calls[2].result or "")["rows"] == [[5]]


async def test_rag_and_sql_tools_together(tmp_path: Path, multi_db: ModuleType) -> None:
    """The knowledge base holds the policy, the sales database holds the order."""
    paths = multi_db.build(tmp_path / "db")
    kb = KnowledgeBase(tmp_path / "kb.sqlite")
    kb.add("Desk lamps may be returned within 30 days of the order date.", id="returns")

    def reply(messages: Sequence[Message], settings: ModelSettings) -> Any:
        if messages[-1].role == "user":
            assert "[returns#0]" in messages[-1].text
            return call("query_sales", {"sql": "SELECT ordered_at FROM orders WHERE id = ?",
                                        "params": [1003]})
        _, data, _ = observation(messages)
        assert isinstance(data, dict)
        return f"Ordered {data['rows'][0][0]}; returns allowed for 30 days [returns#0]."

    answer = await answer_with_rag("Can order 1003 (a desk lamp) still be returned?", kb,
                                   ScriptedModel(reply), tools=sql_tools([paths["sales"]]))
    assert answer.output.startswith("Ordered 2026-09-11")
    assert answer.citations == ["returns#0"]
    assert [c["name"] for c in answer.telemetry.tool_calls] == ["query_sales"]
    assert answer.telemetry.path == "tools"


@pytest.mark.parametrize("name", ["crm", "sales"])
def test_example_databases_are_rebuilt_from_scratch(
    tmp_path: Path, name: str, multi_db: ModuleType
) -> None:
    example = multi_db
    first = example.build(tmp_path)[name].read_bytes()
    assert example.build(tmp_path)[name].read_bytes() == first
