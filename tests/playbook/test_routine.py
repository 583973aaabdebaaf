"""Routines: learned tool chains offered as one tool (toolcycle.playbook.routine)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolcycle import Agent, Limits, Message, tool
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import LearningTask, Playbook, learn
from toolcycle.playbook.carry import typed
from toolcycle.playbook.evidence import classify
from toolcycle.playbook.flow import chain_feeds
from toolcycle.playbook.reflector import reflect
from toolcycle.playbook.routine import (
    Feed,
    feed_example,
    induce,
    routine_name,
    routine_tool,
    stand_in,
)
from toolcycle.playbook.stats import UNTIMED
from toolcycle.playbook.strategy import Strategy

from .conftest import make_trace

COUNTRIES = {
    "Freedonia": ("Fredville", "FDK", "1.25"),
    "Sylvania": ("Sylburg", "SYK", "0.5"),
    "Ruritania": ("Strelsau", "RUK", "2.75"),
    "Oberland": ("Oberburg", "OBK", "3.5"),
    "Niederland": ("Niederburg", "NDK", "4.25"),
}


def country_info(country: str) -> str:
    """Facts about a country."""
    capital, code, _ = COUNTRIES[country]
    return f"{country}: capital {capital}, currency code {code}, calling code +99"


def exchange_rate(currency: str) -> str:
    """Value of one unit of a currency in USD."""
    rate = next(r for _, c, r in COUNTRIES.values() if c == currency)
    return f"1 {currency} = {rate} USD"


def _strategy(tools: list[str], feeds: list[list[dict[str, Any]]]) -> Strategy:
    return Strategy(id="s-x", domain="d", advice="...", kind="sequence", tools=tools,
                    support=len(feeds), feeds=feeds)


def _currency_feeds(*countries: str) -> list[list[dict[str, Any]]]:
    runs = []
    for country in countries:
        example = feed_example(country_info(country), COUNTRIES[country][1])
        assert example is not None
        runs.append([{"arg": "currency", **example}])
    return runs


# -- learning the extraction rule ------------------------------------------------------------


def test_the_rule_is_the_context_every_example_shares() -> None:
    routine = induce(_strategy(["country_info", "exchange_rate"],
                               _currency_feeds("Freedonia", "Sylvania")))
    assert routine is not None
    assert routine.name == "country_info_then_exchange_rate"
    assert routine.feeds == (Feed("currency", ", currency code ", ", calling code +99"),)
    assert routine.feeds[0].extract(country_info("Ruritania")) == "RUK"


def test_an_anchor_ending_inside_a_word_shared_by_chance_is_cut_to_the_label() -> None:
    # "Oberburg" and "Niederburg" share "rburg": that belongs to the entities, not the label
    routine = induce(_strategy(["country_info", "exchange_rate"],
                               _currency_feeds("Oberland", "Niederland")))
    assert routine is not None
    assert routine.feeds[0].left == ", currency code "
    assert routine.feeds[0].extract(country_info("Freedonia")) == "FDK"


def test_a_whole_result_fed_on_is_taken_whole() -> None:
    runs = [[{"arg": "ticker", **(feed_example(t, t) or {})}] for t in ("ACME", "GLBX")]
    routine = induce(_strategy(["find_ticker", "get_quote"], runs))
    assert routine is not None and routine.feeds == (Feed("ticker", "", ""),)
    assert routine.feeds[0].extract("  INIT\n") == "INIT"


@pytest.mark.parametrize("feeds", [
    [],  # never seen
    [[{"arg": "currency", **(feed_example(country_info("Freedonia"), "FDK") or {})}]],  # once
])
def test_too_few_examples_make_no_routine(feeds: list[list[dict[str, Any]]]) -> None:
    assert induce(_strategy(["country_info", "exchange_rate"], feeds)) is None


def test_examples_that_disagree_on_the_argument_make_no_routine() -> None:
    runs = _currency_feeds("Freedonia", "Sylvania")
    runs[1][0]["arg"] = "code"
    assert induce(_strategy(["country_info", "exchange_rate"], runs)) is None


def test_no_shared_context_makes_no_routine() -> None:
    # the value stands at different places with nothing in common around it
    a = feed_example("FDK is the code", "FDK")
    b = feed_example("the code: SYK!", "SYK")
    assert a is not None and b is not None
    runs = [[{"arg": "currency", **a}], [{"arg": "currency", **b}]]
    assert induce(_strategy(["country_info", "exchange_rate"], runs)) is None


def test_a_rule_that_cannot_find_its_own_examples_again_is_dropped() -> None:
    # the right anchor (", ") also occurs inside one value: the rule would cut it short
    a = feed_example("city: Paris, France, 1", "Paris, France")
    b = feed_example("city: Lyon, 2", "Lyon")
    assert a is not None and b is not None
    runs = [[{"arg": "city", **a}], [{"arg": "city", **b}]]
    assert induce(_strategy(["locate", "weather"], runs)) is None


def test_a_rule_that_would_read_an_earlier_occurrence_of_its_anchor_is_dropped() -> None:
    # the label also stands further back, outside the context kept around the value
    runs = []
    for old, filler, new in (("DEM", "a1 " * 15 + "zeta", "FDK"),
                             ("FRF", "b2 " * 15 + "omega", "SYK")):
        result = f"formerly currency code {old}; {filler} currency code {new}"
        example = feed_example(result, new)
        assert example is not None and "formerly" not in example["left"]
        runs.append([{"arg": "currency", **example}])
    assert induce(_strategy(["country_info", "exchange_rate"], runs)) is None


def test_a_context_cut_off_mid_word_keeps_whole_words_only() -> None:
    example = feed_example("x" * 30 + " padding padding; now currency code FDK", "FDK")
    assert example is not None
    assert example["left"] == " padding padding; now currency code "


def test_only_sequences_of_distinct_tools_become_routines() -> None:
    runs = _currency_feeds("Freedonia", "Sylvania")
    assert induce(_strategy(["country_info"], [])) is None
    assert induce(_strategy(["country_info", "country_info"], runs)) is None
    pitfall = _strategy(["country_info", "exchange_rate"], runs)
    pitfall.kind = "pitfall"
    assert induce(pitfall) is None


@pytest.mark.parametrize("text", ["no label here", "currency code", ""])
def test_extract_finds_nothing_where_the_anchors_are_missing(text: str) -> None:
    assert Feed("currency", ", currency code ", ",").extract(text) is None


def test_extract_refuses_an_empty_or_overlong_value() -> None:
    feed = Feed("x", "code ", ".")
    assert feed.extract("code .") is None
    assert feed.extract("code " + "y" * 500 + ".") is None


def test_long_chains_get_a_hashed_name_within_the_provider_limit() -> None:
    tools = [f"a_rather_long_tool_name_{i}" for i in range(4)]
    name = routine_name(tools)
    assert name.startswith("routine_") and len(name) <= 64
    assert routine_name(tools) == name


# -- the reflector records where fed values stood ---------------------------------------------


def _currency_trace(country: str, *, wasted: bool = False) -> Any:
    _capital, code, rate = COUNTRIES[country]
    iterations: list[Any] = []
    if wasted:
        iterations.append([("web_search", {"query": country}, "No results.", None)])
    iterations.append([("country_info", {"country": country}, country_info(country), None)])
    iterations.append([("exchange_rate", {"currency": code}, exchange_rate(code), None)])
    trace = make_trace(f"How many USD is the currency of {country} worth?", iterations)
    trace.output = f"{rate} USD"
    return trace


def test_a_sequence_insight_carries_the_feed_of_each_step() -> None:
    [insight] = reflect(_currency_trace("Freedonia", wasted=True), success=True, domain="d")
    assert insight.tools == ["country_info", "exchange_rate"]
    [feed] = insight.feeds
    assert feed["arg"] == "currency" and feed["value"] == "FDK"
    assert feed["left"].endswith(", currency code ")


def test_a_value_from_the_prompt_is_not_a_feed() -> None:
    iterations = [[("lookup", {"name": "ACME"}, "ACME Corp: id 7", None)],
                  [("detail", {"name": "ACME"}, "ACME: 12 units", None)]]
    trace = make_trace("Units of ACME?", iterations)
    trace.output = "12"
    chain = classify(trace)
    assert chain_feeds(chain, trace.user_prompt or "") == []


def test_a_step_fed_two_values_is_not_a_routine_step() -> None:
    iterations = [[("lookup", {"name": "Ann"}, "Ann: id 77, desk 12B", None)],
                  [("detail", {"id": "77", "desk": "12B"}, "Ann sits at 12B", None)]]
    trace = make_trace("Where does Ann sit?", iterations)
    assert chain_feeds(classify(trace), trace.user_prompt or "") == []


def test_feeds_survive_the_store_and_old_rows_without_them_load(db_location: str) -> None:
    pb = Playbook(db_location)  # SQLite, then PostgreSQL
    strategy = _strategy(["country_info", "exchange_rate"],
                         _currency_feeds("Freedonia", "Sylvania"))
    pb.store.put([strategy])
    loaded = pb.store.get(strategy.id)
    assert loaded is not None and loaded.feeds == strategy.feeds
    assert induce(loaded) == induce(strategy) is not None
    old = strategy.to_dict()
    del old["feeds"]
    assert Strategy.from_dict(old).feeds == []
    pb.close()


# -- the routine as a tool, learned from runs --------------------------------------------------


def policy(messages: list[Message], settings: ModelSettings) -> Any:
    """Calls the routine when the playbook names it, else the two tools one by one."""
    system = messages[0].text if messages[0].role == "system" else ""
    if "weather" in next(m.text for m in messages if m.role == "user"):
        return "Mild."
    country = next(m.text for m in messages if m.role == "user").split(" of ")[-1].split()[0]
    results = [p.content for m in messages if m.role == "tool" for p in m.parts]
    if "Call country_info_then_exchange_rate" in system:
        if not results:
            return call("country_info_then_exchange_rate", {"country": country})
        return f"Worth {results[-1].split(' = ')[-1]}"
    if not results:
        return call("country_info", {"country": country})
    if len(results) == 1:
        code = results[0].split("currency code ")[1].split(",")[0]
        return call("exchange_rate", {"currency": code})
    return f"Worth {results[-1].split(' = ')[-1]}"


TASKS = [LearningTask(f"t{i}", f"How many USD is the currency of {c} worth?",
                      COUNTRIES[c][2])
         for i, c in enumerate(["Freedonia", "Sylvania", "Oberland"])]


def _agent(pb: Playbook, *tools: Any) -> Agent[Any, str]:
    return Agent(ScriptedModel(policy), "Answer with the tools.",
                 list(tools or (country_info, exchange_rate)), name="money", playbook=pb)


async def _learned(routines: bool = True) -> Playbook:
    pb = Playbook(":memory:", routines=routines)
    report = await learn(TASKS, _agent(pb), playbook=pb, progress=False)
    assert report.success_rate == 1.0
    return pb


async def test_a_learned_chain_runs_as_one_call_and_the_run_is_a_turn_shorter() -> None:
    pb = await _learned()
    agent = _agent(pb)  # built after learning: offered the routine
    assert "country_info_then_exchange_rate" in agent.tools
    assert agent.tools["country_info_then_exchange_rate"].spec.description == (
        "Runs country_info, then exchange_rate with the currency from its result; returns "
        "every result. Learned from 2 runs.")  # the third learning run was offered it
    result = await agent.run("How many USD is the currency of Ruritania worth?")
    assert result.output == "Worth 2.75 USD"
    assert len(result.trace.steps) == 2  # was 3: two calls, then the answer
    system = result.messages[0].text
    assert ("Call country_info_then_exchange_rate(country) to look the answer up, then answer "
            "with what it returns. (seen in 2 successful runs)") in system
    [record] = result.trace.tool_calls
    assert record.name == "country_info_then_exchange_rate"
    assert record.result is not None
    assert record.result.startswith("Ran country_info, then exchange_rate for you (already "
                                    "called; answer from these results):\n")
    assert 'country_info({"country": "Ruritania"}) -> Ruritania: capital Strelsau' in record.result
    assert 'exchange_rate({"currency": "RUK"}) -> 1 RUK = 2.75 USD' in record.result
    # learning from it: the sequence it ran was followed (helpful), and the routine call is
    # not learned as a new one-tool sequence beside it
    assert pb.flush(30)
    [strategy] = [s for s in pb.strategies("money") if s.kind == "sequence"]
    assert strategy.tools == ["country_info", "exchange_rate"]
    assert strategy.helpful == 2  # this run and the third learning run
    assert pb.store.candidates() == []


async def test_a_run_is_offered_only_the_routines_its_advice_names() -> None:
    pb = await _learned()

    def weather(city: str) -> str:
        """Temperature in a city."""
        return f"{city}: 12 C"

    agent = _agent(pb, country_info, exchange_rate, weather)
    other = await agent.run("What is the weather in Fredville?")
    assert "country_info_then_exchange_rate" not in other.trace.tools_offered
    assert other.trace.strategies_shown == []
    currency = await agent.run("How many USD is the currency of Ruritania worth?")
    assert "country_info_then_exchange_rate" in currency.trace.tools_offered
    assert len(currency.trace.steps) == 2


async def test_the_agents_own_tool_selection_still_applies_after_the_routine_offer() -> None:
    pb = await _learned()

    class FirstTwo:
        """A selection keeping the first two tools offered to it (and the kept ones)."""

        def __init__(self) -> None:
            self.seen: list[list[str]] = []

        def select(self, task: str, tools: Any, keep: frozenset[str] = frozenset()) -> Any:
            self.seen.append([d.name for d in tools])
            return tuple(tools[:2]) + tuple(d for d in tools[2:] if d.name in keep)

    own = FirstTwo()
    agent = Agent(ScriptedModel(policy), "Answer with the tools.",
                  [country_info, exchange_rate], name="money", playbook=pb,
                  tool_selection=own)
    result = await agent.run("How many USD is the currency of Ruritania worth?")
    # the routine reached the agent's own selection, which then cut the offer to two tools
    assert own.seen == [["country_info", "exchange_rate", "country_info_then_exchange_rate"]]
    assert result.trace.tools_offered == ["country_info", "exchange_rate"]
    assert len(result.trace.steps) == 3  # no routine offered: the tools one by one


async def test_without_routines_the_agent_gets_no_extra_tool() -> None:
    pb = await _learned(routines=False)
    agent = _agent(pb)
    assert set(agent.tools) == {"country_info", "exchange_rate"}
    result = await agent.run("How many USD is the currency of Ruritania worth?")
    assert len(result.trace.steps) == 3


async def test_a_step_that_fails_or_finds_nothing_is_reported_to_the_model() -> None:
    pb = await _learned()

    @tool(name="country_info")
    def broken_info(country: str) -> str:
        """Facts about a country."""
        if country == "Ruritania":
            return "Ruritania: no data"
        if country == "Atlantis":
            return "[]"
        raise LookupError(f"unknown country {country}")

    agent = _agent(pb, broken_info, exchange_rate)
    routine = agent.tools["country_info_then_exchange_rate"]
    stopped = await routine.invoke(None, {"country": "Ruritania"})  # type: ignore[arg-type]
    assert "Ruritania: no data" in stopped
    assert "stopped: no currency for exchange_rate" in stopped
    failed = await routine.invoke(None, {"country": "Nowhere"})  # type: ignore[arg-type]
    assert "failed: LookupError: unknown country Nowhere" in failed
    empty = await routine.invoke(None, {"country": "Atlantis"})  # type: ignore[arg-type]
    assert "stopped: country_info found nothing, so exchange_rate was not called" in empty
    rejected = await routine.invoke(None, {"country": 7})  # type: ignore[arg-type]
    assert "rejected its arguments" in rejected


async def test_a_chain_with_a_tool_that_needs_approval_is_not_offered() -> None:
    pb = await _learned()

    @tool(name="exchange_rate", requires_approval=True)
    def gated_rate(currency: str) -> str:
        """Value of one unit of a currency in USD."""
        return "1 X = 1 USD"

    agent = _agent(pb, country_info, gated_rate)
    assert "country_info_then_exchange_rate" not in agent.tools


async def test_the_routine_takes_the_first_tools_parameters_and_the_unfed_rest() -> None:
    pb = await _learned()

    @tool(name="exchange_rate")
    def dated_rate(currency: str, date: str = "today") -> str:
        """Value of one unit of a currency in USD on a date."""
        return f"1 {currency} = 1.0 USD on {date}"

    agent = _agent(pb, country_info, dated_rate)
    routine = agent.tools["country_info_then_exchange_rate"]
    assert set(routine.spec.parameters["properties"]) == {"country", "date"}
    assert routine.spec.parameters["required"] == ["country"]
    out = await routine.invoke(None, {"country": "Sylvania", "date": "2026-01-02"})  # type: ignore[arg-type]
    assert "1 SYK = 1.0 USD on 2026-01-02" in out


def test_routine_tool_refuses_parameters_that_clash() -> None:
    @tool(name="exchange_rate")
    def clash(currency: str, country: str) -> str:
        """Rate."""
        return ""

    routine = induce(_strategy(["country_info", "exchange_rate"],
                               _currency_feeds("Freedonia", "Sylvania")))
    assert routine is not None
    tools = {"country_info": tool(country_info), "exchange_rate": clash}
    assert routine_tool(routine, tools) is None
    assert routine_tool(routine, {"country_info": tools["country_info"]}) is None


def test_a_value_found_ignoring_case_keeps_the_results_own_offsets() -> None:
    # "İ".lower() is two characters: offsets found in a lower-cased copy would be off by one
    example = feed_example("İstanbul office: code ab-12, floor 3", "AB-12")
    assert example is not None
    assert example["value"] == "ab-12"
    assert example["left"] == "İstanbul office: code " and example["right"] == ", floor 3"


def test_a_run_that_called_the_routine_followed_its_sequence() -> None:
    from toolcycle.playbook.outcome import RunOutcome, use_verdict

    strategy = _strategy(["country_info", "exchange_rate"], [])
    routine = "country_info_then_exchange_rate"
    ok = RunOutcome("r", True, 2, 1.0, calls=[(routine, "ok")])
    failed = RunOutcome("r", False, 2, 1.0, calls=[(routine, "ok")])
    unfit = RunOutcome("r", False, 2, 1.0, calls=[(routine, "error")])
    assert use_verdict(strategy, ok) == "helpful"
    assert use_verdict(strategy, failed) == "harmful"
    assert use_verdict(strategy, unfit) == "misfit"


_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=90)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_TEXT, _TEXT.filter(lambda v: v.strip() != ""), _TEXT),
                min_size=2, max_size=4))
def test_a_learned_rule_finds_every_value_it_was_learned_from(
        parts: list[tuple[str, str, str]]) -> None:
    runs = []
    for before, value, after in parts:
        example = feed_example(before + value + after, value)
        assert example is not None
        runs.append([{"arg": "x", **example}])
    routine = induce(_strategy(["a", "b"], runs))
    if routine is None:
        return
    [feed] = routine.feeds
    for (before, _, after), [example] in zip(parts, runs, strict=True):
        # the whole result, not only the context kept around the value
        assert feed.extract(before + example["value"] + after) == example["value"].strip()


async def test_a_step_that_times_out_ends_the_routine_with_its_timeout() -> None:
    import time as clock

    @tool(name="country_info", timeout=0.05)
    def slow_info(country: str) -> str:
        """Facts about a country."""
        clock.sleep(0.5)
        return country_info(country)

    routine = induce(_strategy(["country_info", "exchange_rate"],
                               _currency_feeds("Freedonia", "Sylvania")))
    assert routine is not None
    built = routine_tool(routine, {"country_info": slow_info, "exchange_rate": tool(exchange_rate)})
    assert built is not None
    out = await built.invoke(None, {"country": "Sylvania"})  # type: ignore[arg-type]
    assert out == 'country_info({"country": "Sylvania"}) timed out after 0.05 s'


# -- the routine standing in for its first tool ------------------------------------------------


def by_hand(messages: list[Message], settings: ModelSettings) -> Any:
    """Ignores the routine: calls country_info itself, then exchange_rate if still needed
    (what the 1.5B did with find_ticker_then_get_quote in 10 of 10 runs)."""
    prompt = next(m.text for m in messages if m.role == "user")
    results = [p.content for m in messages if m.role == "tool" for p in m.parts]
    if not results:
        return call("country_info", {"country": prompt.split(" of ")[-1].split()[0].strip("?")})
    if " = " in results[-1]:
        return f"Worth {results[-1].split(' = ')[-1].splitlines()[0]}"
    if "capital" in prompt:
        return results[-1].split(", ")[0].split("capital ")[-1]
    code = results[-1].split("currency code ")[1].split(",")[0]
    return call("exchange_rate", {"currency": code})


def _by_hand_agent(pb: Playbook, *, read_only: bool = True) -> Agent[Any, str]:
    return Agent(ScriptedModel(by_hand), "Answer with the tools.",
                 [tool(country_info, read_only=True), tool(exchange_rate, read_only=read_only)],
                 name="money", playbook=pb)


async def test_an_offered_routine_answers_a_call_of_its_first_tool() -> None:
    pb = await _learned()
    agent = _by_hand_agent(pb)
    result = await agent.run("How many USD is the currency of Ruritania worth?")
    assert result.output == "Worth 2.75 USD"
    assert len(result.trace.steps) == 2  # the model's own first call ran the whole chain
    [record] = result.trace.tool_calls
    assert record.name == "country_info"  # the call as the model made it
    assert record.result is not None and record.result.startswith(
        "Ran country_info, then exchange_rate for you")
    assert 'exchange_rate({"currency": "RUK"}) -> 1 RUK = 2.75 USD' in record.result
    # learning from it: not a new one-tool sequence "country_info, then answer", and the
    # chain's time is not booked as country_info's, though its steps count as calls
    assert pb.flush(30)
    assert pb.store.candidates() == []
    # the first two learning runs' calls, then this run's step (the third learning run's
    # call was the routine's, learned from those two and offered from the next run on:
    # Playbook.routines_learned, so its steps count too)
    stats = pb.tool_stats("money")
    assert stats["country_info"].calls == 4 and stats["country_info"].misses == 0
    untimed = [o for o in pb.store.tool_observations("money")
               if o.tool == "country_info" and o.duration_ms == UNTIMED]
    assert len(untimed) == 2  # the steps: in the calls and misses, not in the latency
    [strategy] = [s for s in pb.strategies("money") if s.kind == "sequence"]
    assert strategy.helpful == 2  # this run followed it, through the routine (and learning run 3)


async def test_the_first_tool_is_itself_where_the_routine_is_not_offered() -> None:
    pb = await _learned()
    result = await _by_hand_agent(pb).run("What is the capital of Ruritania?")
    assert "country_info_then_exchange_rate" not in (result.trace.tools_offered or [])
    assert result.output == "Strelsau"
    [record] = result.trace.tool_calls
    assert record.result == "Ruritania: capital Strelsau, currency code RUK, calling code +99"


async def test_no_stand_in_runs_a_step_that_may_change_something() -> None:
    pb = await _learned()
    agent = _by_hand_agent(pb, read_only=False)  # exchange_rate not declared read-only
    result = await agent.run("How many USD is the currency of Ruritania worth?")
    assert [c.name for c in result.trace.tool_calls] == ["country_info", "exchange_rate"]
    assert result.trace.tool_calls[0].result == (
        "Ruritania: capital Strelsau, currency code RUK, calling code +99")


def test_a_routine_with_parameters_beyond_its_first_tools_stands_in_for_nothing() -> None:
    @tool(read_only=True)
    def exchange_rate_on(currency: str, date: str) -> str:
        """Rate of a currency on a date."""
        return "1 X = 1 USD"

    routine = induce(_strategy(["country_info", "exchange_rate_on"],
                               _currency_feeds("Freedonia", "Sylvania")))
    assert routine is not None
    tools = {"country_info": tool(country_info, read_only=True),
             "exchange_rate_on": exchange_rate_on}
    built = routine_tool(routine, tools)
    assert built is not None and set(built.spec.parameters["properties"]) == {"country", "date"}
    assert stand_in(routine, built, tools) is None


async def test_a_value_fed_to_a_number_parameter_is_passed_as_a_number() -> None:
    """Found by the engine fuzzer: a routine fed the text "8" to an integer parameter, and
    the step rejected it (``"8" is not of type "integer"``)."""
    def queue_position(ticket: str) -> str:
        """Where a ticket stands in the queue."""
        return f"{ticket}: position {len(ticket)} in queue"

    def wait_minutes(position: int, fast: bool | None = None) -> str:
        """Expected wait for a queue position."""
        return f"{position * 3} minutes"

    feeds = []
    for ticket in ("T-1", "T-22"):
        example = feed_example(queue_position(ticket), str(len(ticket)))
        assert example is not None
        feeds.append([{"arg": "position", **example}])
    routine = induce(_strategy(["queue_position", "wait_minutes"], feeds))
    assert routine is not None
    built = routine_tool(routine, {"queue_position": tool(queue_position),
                                   "wait_minutes": tool(wait_minutes)})
    assert built is not None
    out = await built.invoke(None, {"ticket": "T-4444"})  # type: ignore[arg-type]
    assert out.endswith('wait_minutes({"position": 6}) -> 18 minutes')


@pytest.mark.parametrize(("value", "schema", "expected"), [
    ("8", {"type": "integer"}, 8),
    ("2.5", {"type": ["number", "null"]}, 2.5),
    ("true", {"anyOf": [{"type": "boolean"}, {"type": "null"}]}, True),
    ("8", {"type": "string"}, "8"),
    ("8", {}, "8"),
    ("eight", {"type": "integer"}, "eight"),  # left for the step's own validation to refuse
    ('"8"', {"type": "integer"}, '"8"'),
])
def test_typed_reads_json_only_where_the_schema_asks_for_it(
        value: str, schema: dict[str, Any], expected: Any) -> None:
    assert typed(value, schema) == expected


async def test_a_stand_ins_later_steps_count_against_the_runs_tool_call_limit() -> None:
    """The model's one call ran two tools: with ``max_tool_calls=1`` the second is refused and
    the routine stops saying why (the limit then ends the run), instead of running past it."""
    pb = await _learned()
    result = await _by_hand_agent(pb).run(
        "How many USD is the currency of Ruritania worth?",
        limits=Limits(max_tool_calls=1, on_limit="partial"))
    record = result.trace.tool_calls[0]
    assert record.name == "country_info" and record.result is not None
    assert "exchange_rate(" not in record.result
    assert "(stopped: The run's tool-call limit (1) is reached; `exchange_rate` was not " \
           "called.)" in record.result


# -- a toolset's tools (an MCP server's): known only when a run lists them --------------------


async def test_a_chain_learned_over_an_mcp_servers_tools_is_offered_as_a_routine() -> None:
    """The routines of an agent's own tools are made when it is built; a toolset's tools are
    known only when a run lists them, and the chains learned over them had no routine (the
    SDK's own server, over stdio)."""
    import sys
    from pathlib import Path

    from toolcycle.mcp import MCPTools

    server = MCPTools.stdio(sys.executable, str(Path(__file__).with_name(
        "money_mcp_server.py")), trust_hints=True)  # its tools say they are read-only
    pb = Playbook(":memory:", routines=True, head_start=False)  # the model's calls are the point
    async with server:
        learner = Agent(ScriptedModel(policy), "Answer with the tools.", [server], name="money",
                        playbook=pb)
        assert (await learn(TASKS, learner, playbook=pb, progress=False)).success_rate == 1.0
        agent = Agent(ScriptedModel(policy), "Answer with the tools.", [server], name="money",
                      playbook=pb)
        other = await agent.run("What is the weather in Fredville?")
        currency = await agent.run("How many USD is the currency of Ruritania worth?")
        own_calls = await Agent(ScriptedModel(by_hand), "Answer with the tools.", [server],
                                name="money", playbook=pb).run(
            "How many USD is the currency of Ruritania worth?")
    assert "country_info_then_exchange_rate" not in (other.trace.tools_offered or [])
    assert "country_info_then_exchange_rate" in (currency.trace.tools_offered or [])
    assert currency.output.startswith("Worth 2.75 USD")  # (the server's JSON around it)
    assert [c.name for c in currency.trace.tool_calls] == ["country_info_then_exchange_rate"]
    assert len(currency.trace.steps) == 2  # was 3: two calls, then the answer
    # and it stands in for a call of its first tool, as for the agent's own tools
    assert own_calls.output.startswith("Worth 2.75 USD") and len(own_calls.trace.steps) == 2
    [record] = own_calls.trace.tool_calls
    assert record.name == "country_info" and (record.result or "").startswith(
        "Ran country_info, then exchange_rate for you")
