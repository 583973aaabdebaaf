"""A routine repairing failed calls of its last tool (toolcycle.playbook.routine.repair)."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle import Agent, Limits, Message, tool
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import LearningTask, Playbook, learn
from toolcycle.playbook.routine import (
    feed_example,
    induce,
    repair,
    repaired,
    routine_tool,
)
from toolcycle.playbook.strategy import Strategy
from toolcycle.tools import ToolArgumentsError

COUNTRIES = {
    "Freedonia": ("FDK", "1.25"),
    "Sylvania": ("SYK", "0.5"),
    "Ruritania": ("RUK", "2.75"),
    "Oberland": ("OBK", "3.5"),
}
CALLS: list[str] = []


def country_info(country: str) -> str:
    """Facts about a country: its currency code."""
    CALLS.append(f"country_info {country}")
    if country not in COUNTRIES:
        return "No match."
    return f"{country}: currency code {COUNTRIES[country][0]}, calling code +99"


def exchange_rate(currency: str) -> str:
    """Value of one unit of a currency in USD."""
    CALLS.append(f"exchange_rate {currency}")
    for code, rate in COUNTRIES.values():
        if code == currency:
            return f"1 {code} = {rate} USD"
    raise ValueError(f"unknown currency {currency!r}: expected a three-letter code")


def _country(messages: list[Message]) -> str:
    prompt = next(m.text for m in messages if m.role == "user")
    return prompt.split(" of ")[-1].split()[0].strip("?")


def in_order(messages: list[Message], settings: ModelSettings) -> Any:
    """Looks the code up first, then the rate (how the playbook learns the chain)."""
    results = [p.content for m in messages if m.role == "tool" for p in m.parts]
    if not results:
        return call("country_info", {"country": _country(messages)})
    if len(results) == 1:
        return call("exchange_rate", {"currency": results[0].split("code ")[1].split(",")[0]})
    return f"Worth {results[-1].split(' = ')[-1]}"


def detail_first(messages: list[Message], settings: ModelSettings) -> Any:
    """Calls exchange_rate with the country's name first (the 1.5B's habit), then goes on
    by hand after an error; answers from whatever result holds a rate."""
    results = [p.content for m in messages if m.role == "tool" for p in m.parts]
    if results and " = " in results[-1]:
        return f"Worth {results[-1].split(' = ')[-1].splitlines()[0]}"
    if not results:
        return call("exchange_rate", {"currency": _country(messages)})
    if len(results) == 1 and "unknown currency" in results[0]:
        return call("country_info", {"country": _country(messages)})
    if "code " in results[-1]:
        return call("exchange_rate", {"currency": results[-1].split("code ")[1].split(",")[0]})
    return "I could not find it."


def _agent(pb: Playbook, policy: Any, *, read_only: bool = True) -> Agent[Any, str]:
    return Agent(ScriptedModel(policy), "Answer with the tools.",
                 [tool(country_info, read_only=read_only),
                  tool(exchange_rate, read_only=read_only)],
                 name="money", playbook=pb)


async def _learned(routines: bool = True, head_start: bool = True) -> Playbook:
    pb = Playbook(":memory:", routines=routines, head_start=head_start)
    tasks = [LearningTask(f"t{i}", f"How many USD is the currency of {c} worth?",
                          COUNTRIES[c][1]) for i, c in enumerate(["Freedonia", "Sylvania",
                                                                  "Oberland"])]
    report = await learn(tasks, _agent(pb, in_order), playbook=pb, progress=False)
    assert report.success_rate == 1.0
    return pb


async def test_an_offered_routine_repairs_a_failed_call_of_its_last_tool() -> None:
    pb = await _learned(head_start=False)  # the model's own call is the point
    result = await _agent(pb, detail_first).run(
        "How many USD is the currency of Ruritania worth?")
    assert result.output == "Worth 2.75 USD"
    assert len(result.trace.steps) == 2  # was 4: the failed call, two by hand, the answer
    [record] = result.trace.tool_calls
    assert record.name == "exchange_rate"  # the call as the model made it
    assert record.args == {"currency": "Ruritania"}
    assert record.result is not None and record.result.startswith(
        "Ran country_info, then exchange_rate for you, since exchange_rate needs the result "
        "of country_info first (already called; answer from these results):\n")
    assert 'exchange_rate({"currency": "RUK"}) -> 1 RUK = 2.75 USD' in record.result
    assert repaired("exchange_rate", record.result)
    # learning from it: the chain was followed (through the routine); the repaired call is
    # no new sequence, and the statistics count the calls the routine made, as answered
    assert pb.flush(30)
    assert pb.store.candidates() == []
    stats = pb.tool_stats("money")
    # the learning runs' three, and the steps of the routine's two calls (the third learning
    # run's, offered the routine learned from the first two, and this run's)
    assert stats["exchange_rate"].calls == 5
    assert stats["exchange_rate"].misses == 0 and stats["country_info"].misses == 0
    [strategy] = [s for s in pb.strategies("money") if s.kind == "sequence"]
    assert strategy.helpful == 2  # the third learning run (promoted after two) and this one


async def test_where_the_lookup_finds_nothing_the_calls_own_failure_stands() -> None:
    pb = await _learned(head_start=False)  # the model's own call is the point
    result = await _agent(pb, detail_first).run(
        "How many USD is the currency of Atlantis worth?")
    first = result.trace.tool_calls[0]
    assert first.name == "exchange_rate" and first.result is None
    assert first.error is not None  # the tool's own error, unchanged
    assert "unknown currency 'Atlantis'" in first.error
    assert result.output == "I could not find it."


async def test_a_call_that_succeeds_is_the_tools_own() -> None:
    pb = await _learned(head_start=False)  # the model's own call is the point
    CALLS.clear()
    result = await _agent(pb, detail_first).run(
        "How many USD is the currency of RUK worth?")
    [record] = result.trace.tool_calls
    assert record.result == "1 RUK = 2.75 USD"
    assert CALLS == ["exchange_rate RUK"]  # no lookup for a call that worked


@pytest.mark.parametrize("routines", [False, True])
async def test_no_repair_without_routines_or_for_tools_that_may_change_something(
        routines: bool) -> None:
    pb = await _learned(routines=routines)
    agent = _agent(pb, detail_first, read_only=False)
    result = await agent.run("How many USD is the currency of Ruritania worth?")
    assert [c.name for c in result.trace.tool_calls] == [
        "exchange_rate", "country_info", "exchange_rate"]
    assert result.output == "Worth 2.75 USD"


def _currency_routine(**tools: Any) -> tuple[Any, Any, dict[str, Any]]:
    feeds = []
    for country in ("Freedonia", "Sylvania"):
        example = feed_example(f"{country}: currency code {COUNTRIES[country][0]}, calling",
                               COUNTRIES[country][0])
        assert example is not None
        feeds.append([{"arg": "currency", **example}])
    routine = induce(Strategy(id="s-x", domain="d", advice="...", kind="sequence",
                              tools=list(tools), support=2, feeds=feeds))
    assert routine is not None
    built = routine_tool(routine, tools)
    assert built is not None
    return routine, built, tools


def test_a_last_tool_with_parameters_beyond_the_fed_one_is_not_repaired() -> None:
    @tool(read_only=True)
    def exchange_rate_on(currency: str, date: str = "today") -> str:
        """Rate of a currency on a date."""
        return "1 X = 1 USD"

    routine, built, tools = _currency_routine(country_info=tool(country_info, read_only=True),
                                              exchange_rate_on=exchange_rate_on)
    assert repair(routine, built, tools) is None


async def test_the_models_bad_arguments_are_its_own_to_fix() -> None:
    routine, built, tools = _currency_routine(country_info=tool(country_info, read_only=True),
                                              exchange_rate=tool(exchange_rate, read_only=True))
    mending = repair(routine, built, tools)
    assert mending is not None and mending.name == "exchange_rate"
    with pytest.raises(ToolArgumentsError):
        await mending.invoke(None, {"currency": 42})  # type: ignore[arg-type]


def _limited_agent(pb: Playbook, policy: Any, *, rate_calls: int | None = None
                   ) -> Agent[Any, str]:
    return Agent(ScriptedModel(policy), "Answer with the tools.",
                 [tool(country_info, read_only=True),
                  tool(exchange_rate, read_only=True, max_calls=rate_calls)],
                 name="money", playbook=pb)


async def test_a_repairs_calls_count_against_the_tools_own_call_limit() -> None:
    """The repair calls exchange_rate a second time: with ``max_calls=1`` that call is refused,
    so the routine does not get through and the model's call keeps its own failure."""
    pb = await _learned(head_start=False)  # the model's own call is the point
    CALLS.clear()
    result = await _limited_agent(pb, detail_first, rate_calls=1).run(
        "How many USD is the currency of Ruritania worth?")
    first = result.trace.tool_calls[0]
    assert first.error is not None and "unknown currency 'Ruritania'" in first.error
    assert CALLS.count("exchange_rate Ruritania") == 1
    assert not any(c.startswith("exchange_rate RUK") for c in CALLS[:2])


async def test_a_repairs_calls_count_against_the_runs_tool_call_limit() -> None:
    pb = await _learned(head_start=False)  # the model's own call is the point
    CALLS.clear()
    result = await _agent(pb, detail_first).run(
        "How many USD is the currency of Ruritania worth?",
        limits=Limits(max_tool_calls=2, on_limit="partial"))
    # the model's call and the routine's lookup ran; the routine's rate call was refused, so
    # the call keeps its own failure, and the model's next call meets the spent limit
    assert CALLS == ["exchange_rate Ruritania", "country_info Ruritania"]
    first = result.trace.tool_calls[0]
    assert first.error is not None and "unknown currency 'Ruritania'" in first.error
    assert result.partial
