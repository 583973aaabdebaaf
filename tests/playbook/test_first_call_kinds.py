"""Which first call a routines playbook names for what it shows a run (RoutineOffer.first_call):
a sequence's first tool, the one tool dead ends leave untried, a pitfall's own tool when the
pitfall says how to call it; nothing for a pitfall whose repair is another tool. And when the
run is asked for its answer after such a pitfall's tool (RoutineOffer.answer_when)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from toolcycle.playbook import Playbook
from toolcycle.playbook.dead_end import FOUND_NOTHING
from toolcycle.playbook.offer import RoutineOffer
from toolcycle.playbook.strategy import Repair, Strategy, pitfall_detail
from toolcycle.tracing.trace import Step, ToolCallRecord, Trace

OFFERED = frozenset({"fare_quote", "find_booking", "station_info", "amenities_register",
                     "web_search"})


class Shows:
    def __init__(self, shown: list[Strategy], no_call: bool = False) -> None:
        self.shown, self.no_call = shown, no_call

    def strategies_shown_for(self, task: str, agent_name: str, tool_names: Sequence[str]
                             ) -> list[Strategy]:
        return self.shown

    def answers_need_a_call(self, agent_name: str) -> bool:
        return self.no_call

    def feeds_another(self, agent_name: str, tool: str) -> bool:
        return tool == "find_booking"  # the seat sequence: find_booking > booking_detail


def _pitfall(tools: list[str], error_class: str, repair: Repair | None = None) -> Strategy:
    detail = pitfall_detail(error_class, repair)
    return Strategy(id=f"s-{detail}", domain="rail", advice="", kind="pitfall", tools=tools,
                    detail=detail, error_class=error_class, repair=repair)


DATE = _pitfall(["fare_quote"], "invalid date …",
                Repair("argument", "fare_quote", argument="date", example="01.05.2026"))
REFUSED = _pitfall(["amenities_register"], "Invalid arguments: (root): …",
                   Repair("schema", "amenities_register"))
ALTERNATIVE = _pitfall(["station_info", "amenities_register"], "times out",
                       Repair("alternative", "station_info", via="amenities_register"))
PREREQUISITE = _pitfall(["fare_quote", "find_booking"], "unknown booking",
                        Repair("prerequisite", "fare_quote", via="find_booking", argument="ref",
                               example="AB-12345"))
BARE = _pitfall(["fare_quote"], "invalid date …")
SEQUENCE = Strategy(id="s-seq", domain="rail", advice="", kind="sequence",
                    tools=["find_booking", "fare_quote"])


def _dead(tool_name: str) -> Strategy:
    return _pitfall([tool_name], FOUND_NOTHING)


@pytest.mark.parametrize(("shown", "no_call", "first"), [
    ([DATE], False, "fare_quote"),  # how to call fare_quote: start there
    ([REFUSED], True, "amenities_register"),
    ([SEQUENCE, DATE], False, "find_booking"),  # a sequence says more
    ([ALTERNATIVE], True, "required"),  # its failing tool is the one not to start with
    ([PREREQUISITE], False, None),
    ([BARE], True, "required"),  # says what failed, not how to call it
    ([_dead("station_info"), _dead("web_search"), _dead("find_booking"),
      _dead("fare_quote")], False, "amenities_register"),  # the one left untried
    ([_dead("web_search"), REFUSED], False, "amenities_register"),
    ([], False, None),
])
def test_the_first_call_follows_what_the_run_is_shown(
        shown: list[Strategy], no_call: bool, first: str | None) -> None:
    offer = RoutineOffer(Shows(shown, no_call), "rail", frozenset(), None)
    assert offer.first_call("a task", OFFERED) == first


def test_a_tool_not_offered_is_never_named() -> None:
    offer = RoutineOffer(Shows([DATE]), "rail", frozenset(), None)
    assert offer.first_call("a task", OFFERED - {"fare_quote"}) is None


def _run(*calls: tuple[str, str]) -> Trace:
    records = [ToolCallRecord(call_id=f"c{i}", name=name, args={"x": i}, iteration=1,
                              result=result) for i, (name, result) in enumerate(calls)]
    return Trace(run_id="r", agent_name="rail", user_prompt="a task",
                 steps=[Step(iteration=1, attempt=1, tool_calls=records)])


@pytest.mark.parametrize(("shown", "calls", "done"), [
    ([REFUSED], [("amenities_register", '{"parking_spaces": 260}')], True),
    ([REFUSED], [("amenities_register", "[]")], False),  # found nothing: free to go on
    ([REFUSED], [("station_info", '{"platforms": 4}')], False),
    ([DATE], [("fare_quote", '{"fare_eur": 27.6}')], True),
])
def test_a_pitfalls_own_tool_that_answered_asks_for_the_answer(
        shown: list[Strategy], calls: list[tuple[str, str]], done: bool) -> None:
    offer = RoutineOffer(Shows(shown), "rail", frozenset(), None)
    check: Any = offer.answer_when("a task", OFFERED, frozenset())
    assert check is not None and check(_run(*calls)) is done


def test_a_tool_that_feeds_a_learned_sequence_is_not_asked_to_answer() -> None:
    booking = _pitfall(["find_booking"], "unknown passenger",
                       Repair("argument", "find_booking", argument="passenger",
                              example="Ann Lee"))
    offer = RoutineOffer(Shows([booking]), "rail", frozenset(), None)
    assert offer.first_call("a task", OFFERED) == "find_booking"  # still the place to start
    assert offer.answer_when("a task", OFFERED, frozenset()) is None
    assert RoutineOffer(Shows([BARE]), "rail", frozenset(), None).answer_when(
        "a task", OFFERED, frozenset()) is None


# -- a one-tool sequence and the pitfall that says how to call its tool ---------------------

FARE_SEQUENCE = Strategy(id="s-fare", domain="rail", kind="sequence", tools=["fare_quote"],
                         advice='Call fare_quote(date like "01.05.2026", destination, origin), '
                                "then answer.", applies_when=["fare", "single"], support=3)
FARE_PITFALL = Strategy(id="s-date", domain="rail", kind="pitfall", tools=["fare_quote"],
                        advice='fare_quote fails with: invalid date …: expected DD.MM.YYYY. '
                               'Pass date like "01.05.2026".', applies_when=["fare", "single"],
                        detail="invalid date …|argument::date:99.99.9999", helpful=3,
                        error_class="invalid date …",
                        repair=Repair("argument", "fare_quote", argument="date",
                                      example="01.05.2026"))


def test_a_one_tool_sequence_is_the_tasks_lesson_and_its_pitfall_the_tools() -> None:
    """The sequence says which tool answers fare questions (in the instructions, and the run
    begins there); the date format goes with fare_quote, in its description
    (tool_lessons.py), not into the instructions beside the sequence: there, shown both,
    the 1.5B wrote the date as in the task in 2 runs of 3 (rail, JSON)."""
    pb = Playbook(":memory:", learn=False, routines=True)
    pb.store.put([FARE_SEQUENCE, FARE_PITFALL])
    task = "How much is a single fare from Pellingham to Kelby on 3 November 2026?"
    advice, shown = pb.instructions_for(task, "rail", sorted(OFFERED))
    assert shown == ["s-fare"] and "fails with" not in advice
    plan = pb.plan(task, "rail", OFFERED, gated=False)
    assert plan.first_call == "fare_quote" and plan.noted == ("s-date",)
    # (an example either way round is shown as learned: which is the day? Strategy.for_task)
    assert 'Pass date like "01.05.2026"' in plan.notes["fare_quote"]
    check: Any = plan.answer_when
    assert check(_run(("fare_quote", '{"fare_eur": 19.4}'))) is True
