"""A routine that picks its row: the value fed on sits in the one row of a list the task names.

Found on the held-out `hotel` suite (at 22c2091): a guest's folios, one per outlet; the folio
asked about is any row, so no left-right rule (toolcycle.playbook.routine) can take its id,
and the 1.5B passed the first row's id whatever outlet the task named.
"""

from __future__ import annotations

import json
from typing import Any

from toolcycle import Agent, Message, tool
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import LearningTask, Playbook, learn
from toolcycle.playbook.applicability import picked_row, row_named
from toolcycle.playbook.reflector import sequence_advice
from toolcycle.playbook.routine import Feed, feed_example, induce
from toolcycle.playbook.strategy import Strategy

FOLIOS = {
    "Mateo Ferreira": [("FO-1", "room", "642.00"), ("FO-2", "spa", "212.40"),
                       ("FO-3", "restaurant", "96.80")],
    "Yasmin Haddad": [("FO-4", "restaurant", "154.30"), ("FO-5", "bar", "61.50"),
                      ("FO-6", "room", "489.00")],
    "Piotr Zielinski": [("FO-7", "bar", "38.90"), ("FO-8", "laundry", "27.60"),
                        ("FO-9", "spa", "175.00")],
    "Tariq Aziz": [("FO-10", "restaurant", "187.60"), ("FO-11", "spa", "264.90"),
                   ("FO-12", "room", "712.00")],
}


@tool(read_only=True)
def guest_folios(guest: str) -> str:
    """A guest's folios."""
    return json.dumps([{"folio_id": f, "outlet": o, "state": "open"} for f, o, _ in
                       FOLIOS.get(guest, [])])


@tool(read_only=True)
def folio(folio_id: str) -> str:
    """One folio of charges."""
    for rows in FOLIOS.values():
        for fid, outlet, total in rows:
            if fid == folio_id:
                return json.dumps({"folio_id": fid, "outlet": outlet, "total_eur": total})
    raise LookupError(f"unknown folio {folio_id!r}")


def _guest(prompt: str) -> str:
    return next(g for g in FOLIOS if g in prompt)


def by_hand(messages: list[Message], settings: ModelSettings) -> Any:
    """Calls guest_folios, then folio with the row the task names; answers the total. With
    ``first row`` in the prompt it takes the first row instead (what the 1.5B did)."""
    prompt = next(m.text for m in messages if m.role == "user")
    results = [p.content for m in messages if m.role == "tool" for p in m.parts]
    if not results:
        return call("guest_folios", {"guest": _guest(prompt)})
    if "total_eur" in results[-1]:
        return results[-1].split('"total_eur": "')[-1].split('"')[0]
    listing = results[-1]  # the tool's own list, or the line of it a routine that stopped gave
    rows = json.loads(listing if listing.startswith("[") else
                      listing.split("-> ", 1)[1].split("\n", 1)[0])
    picked = rows[0] if "first row" in prompt else next(
        r for r in rows if r["outlet"] in prompt)
    return call("folio", {"folio_id": picked["folio_id"]})


TASKS = [LearningTask("t1", "How much has Mateo Ferreira spent at the spa?", "212.40"),
         LearningTask("t2", "What is Yasmin Haddad's bar total?", "61.50"),
         LearningTask("t3", "What does Piotr Zielinski owe for laundry?", "27.60")]


def _agent(pb: Playbook) -> Agent[Any, str]:
    return Agent(ScriptedModel(by_hand), "Answer with the tools.", [guest_folios, folio],
                 name="hotel", playbook=pb)


def test_the_row_a_task_names_is_found_by_the_field_it_named() -> None:
    listing = guest_folios.function("Tariq Aziz")  # type: ignore[misc]
    assert picked_row(listing, "FO-11", {"guest": "Tariq Aziz"},
                      "What is Tariq Aziz's spa total?") is not None
    rows, key, by = picked_row(listing, "FO-11", {"guest": "Tariq Aziz"},  # type: ignore[misc]
                               "What is Tariq Aziz's spa total?")
    assert (key, by, len(rows)) == ("folio_id", "outlet", 3)
    # a run that took a row the task did not name picked nothing
    assert picked_row(listing, "FO-10", {"guest": "Tariq Aziz"},
                      "What is Tariq Aziz's spa total?") is None
    assert row_named(listing, "folio_id", "outlet", "Tariq Aziz's spa bill?") == "FO-11"
    assert row_named(listing, "folio_id", "outlet", "Tariq Aziz's restaurant bill") == "FO-10"
    # no row named, or two: no pick (the routine stops and says so)
    assert row_named(listing, "folio_id", "outlet", "Tariq Aziz's laundry bill") is None
    assert row_named(listing, "folio_id", "outlet", "Tariq Aziz's spa and room bills") is None
    assert row_named("not json", "folio_id", "outlet", "spa") is None
    assert row_named('[{"folio_id": "FO-1"}, {"folio_id": "FO-2"}]', "folio_id", "outlet",
                     "spa") is None  # a list without the field
    nested = json.dumps([{"folio_id": "FO-1", "outlet": {"name": "spa"}},
                         {"folio_id": "FO-2", "outlet": {"name": "bar"}}])
    assert row_named(nested, "folio_id", "outlet", "the spa bill") is None  # text fields only


def test_examples_that_picked_by_one_field_make_a_picking_feed() -> None:
    runs = []  # rows 2 and 3 of their lists
    for guest, fid in (("Mateo Ferreira", "FO-2"), ("Piotr Zielinski", "FO-9")):
        example = feed_example(guest_folios.function(guest), fid)  # type: ignore[misc]
        assert example is not None
        runs.append([{"arg": "folio_id", **example, "pick": ["folio_id", "outlet"]}])
    strategy = Strategy(id="s-x", domain="hotel", advice="...", kind="sequence",
                        tools=["guest_folios", "folio"], support=2, feeds=runs)
    routine = induce(strategy)
    assert routine is not None
    assert routine.feeds == (Feed("folio_id", "", "", "folio_id", "outlet"),)
    assert routine.feeds[0].extract(guest_folios.function("Tariq Aziz"),  # type: ignore[misc]
                                    "Tariq Aziz's room bill") == "FO-12"
    # examples that disagree on the pick make no routine: the value's place in the list
    # changed with the task, so a left-right rule that fits them fits by chance (two picks
    # from row 2 share the context of row 2, and that rule would always read row 2)
    runs[1][0]["pick"] = ["folio_id", "state"]
    assert induce(strategy) is None
    second = [[{"arg": "folio_id", **(feed_example(guest_folios.function(g), f) or {}),  # type: ignore[misc]
                "pick": ["folio_id", "outlet"]}]
              for g, f in (("Mateo Ferreira", "FO-2"), ("Yasmin Haddad", "FO-5"))]
    second[1][0]["pick"] = None
    assert induce(Strategy(id="s-y", domain="hotel", advice="...", kind="sequence",
                           tools=["guest_folios", "folio"], support=2, feeds=second)) is None
    # an example stored before picks were recorded (no "pick" at all) says nothing either way
    del second[1][0]["pick"]
    routine = induce(Strategy(id="s-z", domain="hotel", advice="...", kind="sequence",
                              tools=["guest_folios", "folio"], support=2, feeds=second))
    assert routine is not None and routine.feeds[0].by == "outlet"


def test_the_sequence_advice_says_which_row_to_pick() -> None:
    advice = sequence_advice(["guest_folios", "folio"],
                             {"guest_folios": ["guest"], "folio": ["folio_id"]}, [], None,
                             {"guest_folios": "outlet"})
    assert advice == ("Call guest_folios(guest), then folio(folio_id), then answer (feed each "
                      "result into the next call; pick the guest_folios row whose outlet the "
                      "task names).")


async def test_a_learned_chain_picks_the_row_the_task_names_for_a_model_that_would_not() -> None:
    pb = Playbook(":memory:", routines=True)
    report = await learn(TASKS, _agent(pb), playbook=pb, progress=False)
    assert report.success_rate == 1.0
    [sequence] = [s for s in pb.strategies("hotel") if s.kind == "sequence"]
    assert "pick the guest_folios row whose outlet the task names" in sequence.advice
    agent = _agent(pb)
    assert agent.tools["guest_folios_then_folio"].spec.description.startswith(
        "Runs guest_folios, then folio with the folio_id of the row whose outlet the task "
        "names")
    # the model's own first call runs the chain, and the row is the one the task named,
    # though this model would have taken the first row (FO-10, the restaurant's)
    result = await agent.run("What is Tariq Aziz's spa total (first row)?")
    assert result.output == "264.90"
    [record] = result.trace.tool_calls
    assert record.name == "guest_folios" and record.result is not None
    assert 'folio({"folio_id": "FO-11"}) -> ' in record.result
    # a task naming no row of the list: the routine stops after the listing and says why
    other = await agent.run("What has Tariq Aziz spent on laundry (first row)?")
    first = other.trace.tool_calls[0].result or ""
    assert "no folio_id for folio in one row whose outlet the task names" in first
    assert [c.name for c in other.trace.tool_calls] == ["guest_folios", "folio"]
