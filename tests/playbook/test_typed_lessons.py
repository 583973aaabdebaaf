"""Issue 69: what the playbook acts on of a lesson is typed beside its advice, never read back
out of the advice's text (toolcycle/playbook/parts.py).

Reading it back broke wherever a value held a character the wording uses: an error whose
first line has a ``|`` (the old detail's separator), an argument named ``trip.date`` (not a
name the advice reader knew), an example with parentheses (the routine line's reader stopped
there). The first tests learn such lessons from traces and act on them, as a user's run would.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from toolcycle import Agent, Message, tool
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import Playbook, Strategy
from toolcycle.playbook.fallback import alternative_of, fallback_for, fell_back
from toolcycle.playbook.location import open_store
from toolcycle.playbook.offer import render_line
from toolcycle.playbook.reshape import argument_lesson, reshaped
from toolcycle.playbook.routine import routine_name

from .conftest import make_trace

#: A date error whose first line holds a ``|``: the separator the old detail split on.
BAR_ERROR = "invalid date {date!r}: expected DD.MM.YYYY | YYYY-MM-DD"
PLACES = ["Ashmoor", "Kelby", "Wrenfield"]


def fare_quote(origin: str, date: str) -> str:
    """Standard single fare from a station on a travel date."""
    if not re.fullmatch(r"\d\d\.\d\d\.\d{4}", date):
        raise ValueError(BAR_ERROR.format(date=date))
    return f'{{"origin": "{origin}", "fare_eur": 19.4}}'


def _fare_runs(pb: Playbook, argument: str = "date") -> Strategy:
    """Three fare runs whose date was refused as the task wrote it, then passed as
    DD.MM.YYYY: the argument lesson they teach."""
    for place in PLACES:
        refused = BAR_ERROR.format(date="3 November 2026")
        trace = make_trace(f"Single fare from {place} on 3 November 2026?", [
            [("fare_quote", {"origin": place, argument: "3 November 2026"}, None,
              f"Tool `fare_quote` failed: ValueError: {refused}")],
            [("fare_quote", {"origin": place, argument: "03.11.2026"}, '{"fare_eur": 19.4}',
              None)],
        ], agent="rail")
        trace.output = "19.4 EUR"
        pb.learn_from(trace, True)
    [pitfall] = [s for s in pb.strategies("rail") if s.kind == "pitfall"]
    return pitfall


async def test_an_error_holding_a_bar_keeps_its_format_lesson() -> None:
    pb = Playbook(":memory:", learn=False, routines=True)
    pitfall = _fare_runs(pb)
    lesson = argument_lesson(pitfall)
    assert lesson is not None
    assert lesson.error_class == "invalid date …: expected DD.MM.YYYY | YYYY-MM-DD"
    assert (lesson.argument, lesson.example) == ("date", "15.11.2026")

    def writes_as_task(messages: list[Message], settings: ModelSettings) -> Any:
        results = [p for m in messages if m.role == "tool" for p in m.parts]
        if not results:
            return call("fare_quote", {"origin": "Kelby", "date": "3 November 2026"})
        return "Answer: " + results[-1].content.splitlines()[-1]

    agent = Agent(ScriptedModel(writes_as_task), "Answer with the tools.",
                  [tool(fare_quote, read_only=True)], name="rail", playbook=pb)
    result = await agent.run("Single fare from Kelby on 3 November 2026?")
    [record] = result.trace.tool_calls
    assert record.result is not None and reshaped("fare_quote", record.result)
    assert result.output == 'Answer: {"origin": "Kelby", "fare_eur": 19.4}'


def test_an_argument_named_with_a_dot_keeps_its_format_lesson() -> None:
    pitfall = _fare_runs(Playbook(":memory:", learn=False), argument="trip.date")
    lesson = argument_lesson(pitfall)
    assert lesson is not None and (lesson.argument, lesson.example) == ("trip.date",
                                                                         "15.11.2026")


async def test_an_alternative_learned_from_an_error_holding_a_bar_falls_back_on_it() -> None:
    """A run not shown the pitfall falls back on the failure it was learned from alone
    (fallback.py): that failure is told by the whole error class, ``|`` and all."""
    pb = Playbook(":memory:", learn=False)
    for n, place in enumerate(PLACES):
        trace = make_trace(f"delay of the 08:1{n} from {place}", [
            [("delay_feed", {"service": f"08:1{n}"}, None,
              "Tool `delay_feed` failed: RuntimeError: feed down | retry later")],
            [("timetable_archive", {"service": f"08:1{n}"}, '{"delay_minutes": 12}', None)],
        ], agent="rail")
        trace.output = "12 minutes"
        pb.learn_from(trace, True)
    [pitfall] = [s for s in pb.strategies("rail") if s.kind == "pitfall"]
    assert alternative_of(pitfall) == ("delay_feed", "timetable_archive")

    def delay_feed(service: str) -> str:
        """Live delay of a service."""
        raise RuntimeError("feed down | retry later")

    def timetable_archive(service: str) -> str:
        """Recorded delay of a service."""
        return '{"delay_minutes": 12}'

    tools = {"delay_feed": tool(delay_feed, read_only=True),
             "timetable_archive": tool(timetable_archive, read_only=True)}
    fallback = fallback_for(pitfall, tools)
    assert fallback is not None and fallback.proven is not None
    text = await fallback.proven.invoke(None, {"service": "08:15"})  # type: ignore[arg-type]
    assert fell_back("delay_feed", text)


async def test_an_example_in_parentheses_is_named_in_the_routine_line() -> None:
    """The routine's line names its first call's arguments as the sequence's advice does."""
    pb = Playbook(":memory:", learn=False)
    for name, number in [("Ann Lee", "555 123 4567"), ("Bo Chan", "555 987 6543"),
                         ("Cy Dunn", "555 246 8101")]:
        shaped = f"({number[:3]}) {number[4:7]}-{number[8:]}"  # "(555) 123-4567"
        trace = make_trace(f"What does the customer with phone {number} owe?", [
            [("find_account", {"phone": shaped}, '{"account": "AC-1"}', None)],
            [("balance", {"account": "AC-1"}, '{"due": 42.5}', None)],
        ], agent="shop")
        trace.output = f"{name} owes 42.5"
        pb.learn_from(trace, True)
    [sequence] = [s for s in pb.strategies("shop") if s.kind == "sequence"]
    assert sequence.advice.startswith('Call find_account(phone like "(555) ')
    routine = routine_name(sequence.tools)
    line = render_line(sequence, [routine])
    assert line.startswith(f'- Call {routine}(phone like "(555) ')


@pytest.mark.parametrize(("advice", "repair", "pair"), [
    # the words say "call the other tool"; the lesson's repair is a prerequisite
    ("get_quote fails with: unknown ticker …. Call find_ticker(company) instead.",
     {"kind": "prerequisite", "tool": "get_quote", "via": "find_ticker",
      "argument": "ticker"}, None),
    # advice reworded (another language): the repair is still the other tool
    ("get_quote antwortet nicht: frag find_ticker(company).",
     {"kind": "alternative", "tool": "get_quote", "via": "find_ticker"},
     ("get_quote", "find_ticker")),
])
def test_the_fallback_follows_the_typed_repair_not_the_advices_words(
        advice: str, repair: dict[str, Any], pair: tuple[str, str] | None) -> None:
    strategy = Strategy.from_dict({"id": "s", "domain": "d", "kind": "pitfall",
                                   "advice": advice, "tools": ["get_quote", "find_ticker"],
                                   "error_class": "unknown ticker …", "repair": repair})
    assert alternative_of(strategy) == pair


# -- stored parts ------------------------------------------------------------------------


def test_the_typed_parts_round_trip_through_the_store(db_location: str) -> None:
    pb = Playbook(db_location, learn=False)
    try:
        pitfall = _fare_runs(pb)
        again = open_store(db_location)
        try:
            stored = again.get(pitfall.id)
        finally:
            again.close()
        assert stored is not None and stored == pitfall
        assert stored.repair is not None and stored.repair.example == "15.11.2026"
    finally:
        pb.close()


@pytest.mark.parametrize(("part", "damaged", "read"), [
    ("repair", "alternative:find_ticker::", None),  # text where an object was
    ("repair", {"kind": "teleport", "tool": "get_quote"}, None),  # no such kind
    ("repair", {"kind": "alternative", "tool": "get_quote", "via_args": [1]}, None),
    ("error_class", ["unknown"], ""),
    ("first_args", [{"name": "company"}, {"name": 7}], []),  # one bad argument: none kept
    ("first_args", "company", []),
    ("skips", [None], []),
])
def test_a_damaged_part_drops_only_itself(db_location: str, part: str, damaged: Any,
                                          read: Any) -> None:
    """A hand-edited or corrupted row loses the damaged part, not the lesson (nor does it
    raise a TypeError where the store reads it)."""
    store = open_store(db_location)
    try:
        data = Strategy(id="s-1", domain="d", kind="pitfall", advice="get_quote fails.",
                        tools=["get_quote"], error_class="unknown ticker …",
                        support=3).to_dict()
        data[part] = damaged
        with store.transaction() as conn:
            conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'version'")
            conn.execute("INSERT INTO strategies(id, domain, status, updated_at, version, data)"
                         " VALUES (?, ?, ?, ?, ?, ?)",
                         ("s-1", "d", "active", 1.0, 10**6, json.dumps(data)))
        stored = store.get("s-1")
        assert stored is not None and getattr(stored, part) == read
        assert stored.advice == "get_quote fails." and stored.support == 3
        assert [s.id for s in store.strategies("d")] == ["s-1"]
    finally:
        store.close()
