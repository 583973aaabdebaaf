"""Which first call a routines playbook names for what it shows a run (RoutineOffer.first_call):
a sequence's first tool, the one tool dead ends leave untried, a pitfall's own tool when the
pitfall says how to call it; nothing for a pitfall whose repair is another tool."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from toolcycle.playbook.dead_end import FOUND_NOTHING
from toolcycle.playbook.offer import RoutineOffer
from toolcycle.playbook.strategy import Strategy

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


def _pitfall(tools: list[str], detail: str) -> Strategy:
    return Strategy(id=f"s-{detail}", domain="rail", advice="", kind="pitfall", tools=tools,
                    detail=detail)


DATE = _pitfall(["fare_quote"], "invalid date …|argument::date:99.99.9999")
REFUSED = _pitfall(["amenities_register"], "Invalid arguments: (root): …|schema:::")
ALTERNATIVE = _pitfall(["station_info", "amenities_register"],
                       "times out|alternative:amenities_register::")
PREREQUISITE = _pitfall(["fare_quote", "find_booking"],
                        "unknown booking|prerequisite:find_booking:ref:AA-99999")
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
