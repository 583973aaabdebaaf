"""bench/learning.py's reading of learning runs: which tools answered for each kind, with a
routine's steps counted as calls (bench/learning_report.tool_preference_by_kind)."""

from __future__ import annotations

from typing import Any

from toolcycle import Agent, Message, tool
from toolcycle.models.scripted import ScriptedModel, call

from .test_learning_suite import bench
from .test_repair import country_info, exchange_rate, in_order

report = bench.report


def _row(kind: str, *calls: tuple[str, str, float]) -> dict[str, Any]:
    return {"kind": kind, "success": True, "call_outcomes": [list(c) for c in calls]}


SEQ = {"id": "s1", "kind": "sequence", "tools": ["guest_ledger"]}


def test_a_sequence_is_judged_against_the_tools_its_own_kind_tried() -> None:
    rows = [_row("stay", ("reservations_api", "miss", 3.0), ("guest_ledger", "ok", 2.0)),
            _row("stay", ("guest_ledger", "ok", 4.0)),
            # another kind's runs: guest_ledger misses there, housekeeping_log answers
            _row("housekeeping", ("guest_ledger", "miss", 1.0), ("housekeeping_log", "ok", 1.0))]
    [line] = report.tool_preference_by_kind(rows, [[], [SEQ], [SEQ]])
    assert line == ("- kind stay: recommends guest_ledger (miss 0 % of 2, p50 3 ms); its runs "
                    "also called reservations_api (miss 100 % of 1, p50 3 ms): more reliable")


def test_a_recommended_tool_missing_more_than_another_is_not_more_reliable() -> None:
    rows = [_row("stay", ("guest_ledger", "miss", -1.0), ("room_info", "ok", 1.0))]
    [line] = report.tool_preference_by_kind(rows, [[SEQ]])
    assert "guest_ledger (miss 100 % of 1, untimed)" in line
    assert line.endswith("NOT more reliable")


def test_a_saved_run_without_outcomes_says_so() -> None:
    [line] = report.tool_preference_by_kind([{"kind": "stay", "success": True}], [[SEQ]])
    assert "no call outcomes recorded" in line


async def test_a_routines_steps_are_the_calls_outcomes() -> None:
    from toolcycle.playbook import Playbook
    from toolcycle.playbook.routine_result import completed

    def money_routine(country: str) -> str:
        """Runs country_info, then exchange_rate."""
        return completed(["country_info", "exchange_rate"], [
            f'country_info({{"country": "{country}"}}) -> {country}: currency code RUK',
            'exchange_rate({"currency": "RUK"}) -> []'])

    agent = Agent(ScriptedModel(in_order), "Answer with the tools.",
                  [tool(country_info, read_only=True), tool(exchange_rate, read_only=True)],
                  name="money", playbook=Playbook(":memory:"))
    result = await agent.run("How many USD is the currency of Ruritania worth?")
    assert bench.call_outcomes(result.trace) == [
        ("country_info", "ok", result.trace.tool_calls[0].duration_ms),
        ("exchange_rate", "ok", result.trace.tool_calls[1].duration_ms)]
    def routine_once(messages: list[Message], *_: Any) -> Any:
        if any(m.role == "tool" for m in messages):
            return "done"
        return call("money_routine", {"country": "Ruritania"})

    routine = Agent(ScriptedModel(routine_once), "Answer.", [tool(money_routine, read_only=True)],
                    name="m2")
    traced = (await routine.run("Ruritania?")).trace
    assert bench.call_outcomes(traced) == [("country_info", "ok", -1.0),
                                           ("exchange_rate", "miss", -1.0)]
