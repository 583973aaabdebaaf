"""Sequences a task meets only through a word other kinds share (applicability.contested):
they give way to a sequence the task meets by its own words, and where none is, no run is
made to begin with one of them.

Found on the held-out `hotel` suite (JSON, at 22c2091): "room" was a word of the stay,
housekeeping and bill sequences, and "How much is Elif Demir's room bill?" was made to begin
with ``housekeeping_log`` (3 of 3 runs wrong).
"""

from __future__ import annotations

from typing import Any

from toolcycle.playbook import Playbook
from toolcycle.playbook.applicability import contested
from toolcycle.playbook.offer import RoutineOffer
from toolcycle.playbook.strategy import Strategy
from toolcycle.tracing.trace import Step, ToolCallRecord, Trace

STAY = Strategy(id="s-stay", domain="hotel", kind="sequence", tools=["guest_ledger"],
                advice="Call guest_ledger(name), then answer.", support=3,
                applies_when=["room", "nights", "due", "staying"])
HOUSEKEEPING = Strategy(id="s-hk", domain="hotel", kind="sequence",
                        tools=["housekeeping_log"], support=4,
                        advice="Call housekeeping_log(room), then answer.",
                        applies_when=["room", "housekeeping", "status", "clean", "last"])
BILL = Strategy(id="s-bill", domain="hotel", kind="sequence", tools=["guest_folios", "folio"],
                advice="Call guest_folios(guest), then folio(folio_id), then answer.",
                support=2, applies_when=["bar", "total", "spa", "room", "charges"])
TOOLS = ["concierge_search", "folio", "guest_folios", "guest_ledger", "housekeeping_log",
         "reservations_api", "room_info", "table_finder"]


def test_a_sequence_met_only_through_a_shared_word_is_contested() -> None:
    all_three = [STAY, HOUSEKEEPING, BILL]
    assert contested("How much is Elif Demir's room bill?", all_three) == {
        "s-stay", "s-hk", "s-bill"}
    # a word of its own (or of its tools' names: "folio") settles it
    assert contested("Has room 234 been cleaned? What is its status?", all_three) == {
        "s-stay", "s-bill"}
    assert contested("What is the total of Emeka Obi's bar folio?", all_three) == set()
    assert contested("How many nights is Hana Sato booked for?", all_three) == set()
    # alone, or beside a sequence of the same tools, nothing contests it
    assert contested("What room is Amara Nwosu in?", [STAY]) == set()
    twin = Strategy(**{**STAY.to_dict(), "id": "s-stay-2"})
    assert contested("What room is Amara Nwosu in?", [STAY, twin]) == set()


def test_contested_sequences_give_way_and_force_no_first_call() -> None:
    pb = Playbook(":memory:", learn=False, routines=True)
    pb.store.put([STAY, HOUSEKEEPING, BILL])
    offer = RoutineOffer(pb, "hotel", frozenset(), None)
    offered = frozenset(TOOLS)
    # met by words of its own: the others (met through "room" only) are not shown
    task = "Has room 234 been cleaned? What is its status?"
    _, shown = pb.instructions_for(task, "hotel", TOOLS)
    assert shown == ["s-hk"]
    assert offer.first_call(task, offered) == "housekeeping_log"
    # met through "room" alone: all shown, none made the run's first call
    task = "How much is Elif Demir's room bill?"
    _, shown = pb.instructions_for(task, "hotel", TOOLS)
    assert set(shown) == {"s-stay", "s-hk", "s-bill"}
    assert offer.first_call(task, offered) is None
    pb.close()


def _with_support(strategy: Strategy, support: dict[str, int]) -> Strategy:
    return Strategy(**{**strategy.to_dict(), "word_support": support})


def test_a_word_one_of_its_tasks_said_settles_it_for_that_sequence() -> None:
    """At 5954155 the bill sequence applied to "room", not "bill" (one bill task of three had
    said it): "How much is Elif Demir's room bill?" named no first call and began with
    reservations_api (4 turns, 3 of 3 runs)."""
    bill = _with_support(BILL, {"bill": 1, "spa": 1, "room": 1})
    task = "How much is Elif Demir's room bill?"
    assert contested(task, [STAY, HOUSEKEEPING, bill]) == {"s-stay", "s-hk"}
    # one task's word settles it only where no other sequence applies to that word: the
    # housekeeping sequence's "nights" (said once) does not contest the stay sequence's
    housekeeping = _with_support(HOUSEKEEPING, {"nights": 1, "room": 3})
    assert contested("How many nights is Hana Sato booked for?",
                     [STAY, housekeeping, bill]) == {"s-hk"}
    # a word said once by the tasks of two sequences settles neither against the other
    stay = _with_support(STAY, {"bill": 1})
    assert contested(task, [stay, HOUSEKEEPING, bill]) == {"s-hk"}


def test_it_never_brings_a_sequence_to_a_task() -> None:
    pb = Playbook(":memory:", learn=False, routines=True)
    pb.store.put([_with_support(BILL, {"invoice": 1}), STAY])
    _, shown = pb.instructions_for("Send me the invoice of Elif Demir.", "hotel", TOOLS)
    assert shown == []
    _, shown = pb.instructions_for("How much is Elif Demir's room invoice?", "hotel", TOOLS)
    assert shown == ["s-bill"]  # found through "room"; "invoice" settled the contest
    pb.close()


def _trace(*names: str) -> Trace:
    return Trace("r", steps=[Step(i + 1, 1, tool_calls=[ToolCallRecord(
        f"c{i}", name, {"name": "Amara Nwosu"}, i + 1, result='{"room": "416"}')])
        for i, name in enumerate(names)])


def test_among_contested_sequences_the_one_the_run_did_is_done() -> None:
    """"What room is Amara Nwosu in?" met all three through "room"; the run called
    guest_ledger and had the room, but was held to the sequence ranked first and called
    housekeeping_log too (hotel JSON at 5954155, 3 of 3 runs)."""
    pb = Playbook(":memory:", learn=False, routines=True)
    pb.store.put([STAY, HOUSEKEEPING, BILL])
    offer = RoutineOffer(pb, "hotel", frozenset(), None)
    offered = frozenset(TOOLS)
    task = "What room is Amara Nwosu in?"
    assert offer.first_call(task, offered) is None
    done: Any = offer.answer_when(task, offered, frozenset())
    for first in ("guest_ledger", "housekeeping_log"):
        assert done(_trace(first)), first
    assert not done(_trace("guest_folios")) and not done(_trace("room_info"))
    assert done(_trace("guest_folios", "folio"))
    # met by words of its own, only that sequence is done
    done = offer.answer_when("Has room 234 been cleaned?", offered, frozenset())
    assert done(_trace("housekeeping_log")) and not done(_trace("guest_ledger"))
    pb.close()
