"""Head starts (toolcycle.playbook.sequence): every rule, with the odd values a run can hold."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle import Tool, ToolSpec, tool
from toolcycle.messages import Usage
from toolcycle.playbook.evidence import CallEvidence
from toolcycle.playbook.sequence import (
    MIN_HEAD_RUNS,
    NO_HEAD,
    head_call,
    head_param,
    learned_param,
    named_phrase,
    named_values,
    run_head,
)
from toolcycle.playbook.strategy import MAX_HEAD_RUNS, Strategy
from toolcycle.tracing.trace import ToolCallRecord

from .test_first_call import _agent
from .test_repair import _learned

# -- what a task names -----------------------------------------------------------------------


@pytest.mark.parametrize(("task", "values"), [
    ("How warm is it at the office of Ingrid Halvorsen?", ["Ingrid Halvorsen"]),
    ("What is the delivery status of order C-3019?", ["C-3019"]),
    ("Who is asset AT-42015 assigned to?", ["AT-42015"]),
    ("What is the delay of train KL644 in minutes?", ["KL644"]),
    ("Who cleaned room 1126 most recently?", ["1126"]),
    ("Is Lucia Bertolini's HbA1c high?", ["Is Lucia Bertolini", "Lucia Bertolini", "HbA1c"]),
    # an abbreviation is no name; times, dates, decimals and short numbers are no ids
    ("When is the next free slot for Dr. Abernethy?", []),
    ("Which table is free for four at 6:45 pm?", []),
    ("Trains on 2026-08-03 after 12:30?", []),
    ("Is 3.1415 more than 40 or 99?", []),
    ("", []),
    # a sentence's first word is no name by its capital alone: either reading may be meant
    ("Carraway Opticians has an open balance due; how much is it?",
     ["Carraway Opticians", "Opticians"]),
    ("Seat? Idris Falconet has a booking.", ["Idris Falconet", "Falconet"]),
    ("how much is it?", []),
])
def test_named_values(task: str, values: list[str]) -> None:
    assert named_values(task) == values


def test_named_values_of_a_long_hostile_task_are_bounded_by_what_it_holds() -> None:
    task = "Look up " + "Zed Q-1234 " * 4000
    assert named_values(task) == ["Zed", "Q-1234"]


# -- what one run teaches --------------------------------------------------------------------


@pytest.mark.parametrize(("arguments", "expected"), [
    ({"name": "Ingrid Halvorsen"}, "name"),
    ({"name": " ingrid halvorsen "}, "name"),  # without case or surrounding space
    ({"name": "Ingrid"}, NO_HEAD),  # part of it
    ({"name": "Ingrid Halvorsen", "who": "Ingrid Halvorsen"}, NO_HEAD),  # two took it
    ({"name": "Ingrid Halvorsen", "unit": "C"}, "name"),
    ({}, NO_HEAD), (None, NO_HEAD), ([], NO_HEAD),
    ({"name": None}, NO_HEAD), ({"name": ""}, NO_HEAD), ({"name": []}, NO_HEAD),
    ({"name": {}}, NO_HEAD), ({"name": True}, NO_HEAD),
])
def test_head_param(arguments: Any, expected: str) -> None:
    assert head_param(arguments, "How warm is it at the office of Ingrid Halvorsen?") == expected


def test_a_number_the_task_names_may_be_passed_as_a_number() -> None:
    assert head_param({"room": 1126}, "Who cleaned room 1126?") == "room"


def test_a_task_naming_no_value_or_two_teaches_nothing_either_way() -> None:
    assert head_param({"name": "Ada"}, "who is it?") is None
    two = "Is Ada Lovelace older than Alan Turing?"
    assert head_param({"name": "Ada Lovelace"}, two) is None
    assert run_head([_evidence("c1", 1, {"name": "Ada Lovelace"})], two) is None


@pytest.mark.parametrize(("task", "name", "phrase"), [
    ("How many Tavish shelf brackets are in stock right now?", "Tavish",
     "Tavish shelf brackets"),
    ("Who is the supplier of the Fenby staple gun?", "Fenby", "Fenby staple gun"),
    ("Stock count for the Ulster grit sander, please.", "Ulster", "Ulster grit sander"),
    ("What quantity of the Corwen ladder do we hold?", "Corwen", "Corwen ladder"),
    ("What is the balance due for Halvergate Vets?", "Halvergate Vets", "Halvergate Vets"),
    ("Is Zed a big extra long tail word here?", "Zed", "Zed"),  # "a" ends it
    ("Get Zed boxes crates tins jars", "Zed", "Zed boxes crates tins"),  # three words at most
    ("Order Zed's gear", "Zed", "Zed"),  # not across a possessive
    ("Find Zed", "Zed", "Zed"), ("Find Zed.", "Zed", "Zed"),
])
def test_named_phrase(task: str, name: str, phrase: str) -> None:
    assert named_phrase(task, name) == phrase


def test_named_phrase_of_a_name_the_task_lacks_is_the_name() -> None:
    assert named_phrase("", "Zed") == "Zed"
    assert named_phrase("Zed " + "box " * 10_000, "Zed") == "Zed box box box"


@pytest.mark.parametrize(("arguments", "expected"), [
    ({"item": "Tavish shelf brackets"}, "item+"),  # the name and the words after it
    ({"item": "tavish Shelf Brackets "}, "item+"),
    ({"item": "Tavish"}, "item"),  # the name alone
    ({"item": "Tavish shelf"}, NO_HEAD),
    ({"item": "Tavish shelf brackets", "sku": "Tavish shelf brackets"}, NO_HEAD),
    ({"item": None}, NO_HEAD), ({"item": ""}, NO_HEAD), ({"item": []}, NO_HEAD),
    ({"item": {}}, NO_HEAD), ({}, NO_HEAD),
])
def test_head_param_of_a_thing_named_in_more_words(arguments: Any, expected: str) -> None:
    task = "How many Tavish shelf brackets are in stock right now?"
    assert head_param(arguments, task) == expected


def test_a_name_with_no_words_after_it_is_never_a_phrase() -> None:
    assert head_param({"name": "Ingrid Halvorsen"}, "Where is Ingrid Halvorsen?") == "name"


def _evidence(call_id: str, iteration: int, args: dict[str, Any] | None) -> CallEvidence:
    return CallEvidence(0, ToolCallRecord(call_id, "staff", args, iteration), "ok")


def test_a_head_starts_own_call_is_no_evidence_for_it() -> None:
    task = "Where does Ingrid Halvorsen work?"
    assert run_head([_evidence("c1", 1, {"name": "Ingrid Halvorsen"})], task) == "name"
    assert run_head([_evidence("head_start_x", 0, {"name": "Ingrid Halvorsen"})], task) is None
    assert run_head([], task) is None


# -- what a sequence learned -----------------------------------------------------------------


def _sequence(heads: dict[str, int]) -> Strategy:
    return Strategy(id="s", domain="d", advice="Call staff(name), then answer.",
                    tools=["staff"], heads=[p for p, n in heads.items() for _ in range(n)])


@pytest.mark.parametrize(("heads", "param"), [
    ({}, None),
    ({"name": 1}, None),  # below MIN_HEAD_RUNS
    ({"name": MIN_HEAD_RUNS}, "name"),
    ({"name": 3, NO_HEAD: 1}, "name"),  # 3 of 4: HEAD_SHARE
    ({"name": 2, NO_HEAD: 2}, None),  # half the runs passed something else
    ({NO_HEAD: 5}, None),
    ({"name": 4, "who": 1}, "name"),
])
def test_learned_param(heads: dict[str, int], param: str | None) -> None:
    assert learned_param(_sequence(heads)) == param


def test_heads_keep_the_latest_runs_and_merge() -> None:
    strategy = _sequence({})
    for _ in range(MAX_HEAD_RUNS):
        strategy.add_head("name")
    strategy.add_head(None)  # no evidence: nothing kept
    assert strategy.heads == ["name"] * MAX_HEAD_RUNS
    strategy.add_head(NO_HEAD)  # the latest run counts, the oldest goes
    assert len(strategy.heads) == MAX_HEAD_RUNS and strategy.heads[-1] == NO_HEAD
    for _ in range(MAX_HEAD_RUNS):
        strategy.add_head(NO_HEAD)
    assert learned_param(strategy) is None  # the runs since passed something else
    other = _sequence({"who": 2})
    other.add_head(None, strategy.heads)
    assert len(other.heads) == MAX_HEAD_RUNS and other.heads.count(NO_HEAD) == MAX_HEAD_RUNS


def test_a_strategy_stored_before_heads_loads_without_them() -> None:
    data = _sequence({"name": 2}).to_dict()
    assert Strategy.from_dict(data).heads == ["name", "name"]
    del data["heads"]
    assert Strategy.from_dict(data).heads == []


# -- the call made -------------------------------------------------------------------------


def staff(name: str, unit: str = "C") -> str:
    """Where someone works."""
    return f"{name}: Oslo"


def fare(origin: str, destination: str) -> str:
    """A fare."""
    return "12 EUR"


def housekeeping(room: int) -> str:
    """A room's status."""
    return f"room {room}: clean"


LEARNED = _sequence({"name": 3})
TASK = "Where does Ingrid Halvorsen work?"


def test_head_call_passes_the_one_value_to_the_learned_argument() -> None:
    assert head_call(LEARNED, tool(staff, read_only=True), TASK) == {"name": "Ingrid Halvorsen"}
    typed = _sequence({"room": 2})
    assert head_call(typed, tool(housekeeping, read_only=True), "Is room 1126 clean?") == {
        "room": 1126}


def ledger(item: str) -> str:
    """Units on hand."""
    return f"{item}: 12"


def test_a_head_start_learned_as_a_phrase_passes_the_name_and_the_words_after_it() -> None:
    made = tool(ledger, read_only=True)
    learned = _sequence({"item+": 3, NO_HEAD: 1})
    task = "What quantity of the Corwen ladder do we hold?"
    assert head_call(learned, made, task) == {"item": "Corwen ladder"}
    assert head_call(_sequence({"item": 3}), made, task) == {"item": "Corwen"}
    long = "Stock of Zed " + "x" * 200 + "?"
    assert head_call(learned, made, long) is None  # over MAX_VALUE_CHARS


def test_a_parameter_whose_own_name_ends_with_the_phrase_mark_is_itself() -> None:
    def odd(**kwargs: Any) -> str:
        return "x"
    made = Tool(ToolSpec("odd", "An odd tool.", {
        "type": "object", "properties": {"item+": {"type": "string"}},
        "required": ["item+"]}), odd, read_only=True)
    task = "What quantity of the Corwen ladder do we hold?"
    assert head_call(_sequence({"item+": 3}), made, task) == {"item+": "Corwen"}


@pytest.mark.parametrize("why", ["not read-only", "approval", "other required", "no param",
                                 "no value", "two values", "too long", "no tool", "unlearned"])
def test_no_head_call(why: str) -> None:
    made = tool(staff, read_only=True)
    strategy, task = LEARNED, TASK
    if why == "not read-only":
        made = tool(staff)
    elif why == "approval":
        made = tool(staff, read_only=True, requires_approval=True)
    elif why == "other required":
        made, strategy = tool(fare, read_only=True), _sequence({"origin": 3})
    elif why == "no param":
        strategy = _sequence({"person": 3})
    elif why == "no value":
        task = "where does everyone work?"
    elif why == "two values":
        task = "Do Ingrid Halvorsen and Rahul Mehta work in Oslo?"
    elif why == "too long":
        task = "Where does " + " ".join(["Zed"] * 40) + " work?"
    elif why == "unlearned":
        strategy = _sequence({"name": 1, NO_HEAD: 3})
    assert head_call(strategy, None if why == "no tool" else made, task) is None


# -- learned from runs, end to end ---------------------------------------------------------


async def test_runs_that_passed_the_named_value_teach_it_and_a_frozen_playbook_uses_it() -> None:
    pb = await _learned()  # three runs: country_info(country=<the task's country>), then ...
    [sequence] = [s for s in pb.strategies() if s.kind == "sequence"]
    assert sequence.heads.count("country") >= MIN_HEAD_RUNS
    result = await _agent(pb).run("How many USD is the currency of Ruritania worth?")
    assert result.iterations == 1 and result.tool_calls[0].iteration == 0
    assert result.usage == Usage(result.usage.input_tokens, result.usage.output_tokens,
                                 requests=1, tool_calls=1)


async def test_head_start_false_makes_none() -> None:
    pb = await _learned(head_start=False)
    result = await _agent(pb).run("How many USD is the currency of Ruritania worth?")
    assert result.tool_calls[0].iteration == 1 and result.iterations == 2
