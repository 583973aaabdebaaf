"""Sequences a task meets only through a word other kinds share (applicability.contested):
they give way to a sequence the task meets by its own words, and where none is, no run is
made to begin with one of them.

Found on the held-out `hotel` suite (JSON, at 22c2091): "room" was a word of the stay,
housekeeping and bill sequences, and "How much is Elif Demir's room bill?" was made to begin
with ``housekeeping_log`` (3 of 3 runs wrong).
"""

from __future__ import annotations

from toolcycle.playbook import Playbook
from toolcycle.playbook.applicability import contested
from toolcycle.playbook.offer import RoutineOffer
from toolcycle.playbook.strategy import Strategy

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
