"""The guide: a task whose words meet no lesson is shown the domain's best sequences, with the
words they apply to, and reports none of them as shown."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle.playbook import Playbook, Strategy, estimate_tokens
from toolcycle.playbook.advice import GUIDE_HEADER, WORDS_SHOWN, guide_line
from toolcycle.playbook.advice import render_guide as render
from toolcycle.playbook.store import PlaybookStore

TOOLS = ["warehouse_ledger", "purchasing_records", "customer_lookup", "open_invoice",
         "web_search"]


def _sequence(sid: str, tools: list[str], words: list[str], helpful: int = 3,
              **kwargs: Any) -> Strategy:
    calls = ", then ".join(f"{t}(x)" for t in tools)
    return Strategy(id=sid, domain="depot", kind="sequence", tools=tools, applies_when=words,
                    advice=f"Call {calls}, then answer. Do not use web_search for this kind "
                           "of task.", helpful=helpful, support=helpful, skips=["web_search"],
                    **kwargs)


def _depot(**kwargs: Any) -> Playbook:
    pb = Playbook(":memory:", **{"guide": 4, **kwargs})
    pb.store.put([
        _sequence("s-stock", ["warehouse_ledger"], ["stock", "units", "hand"], helpful=5),
        _sequence("s-supplier", ["purchasing_records"], ["supplier", "days"], helpful=2),
        _sequence("s-invoice", ["customer_lookup", "open_invoice"], ["invoice", "owe"],
                  helpful=4),
    ])
    return pb


def test_a_task_no_lesson_names_is_shown_the_best_sequences_with_their_words() -> None:
    pb = _depot()
    text, shown = pb.instructions_for(
        "From which company do we source the Lindqvist chisel set?", "depot", TOOLS)
    assert shown == []  # no verdict, no routine: the model may rightly ignore them all
    assert pb.strategies_shown_for("From which company do we source it?", "depot", TOOLS) == []
    lines = text.splitlines()
    assert lines[0] == GUIDE_HEADER
    assert lines[1:] == [  # best evidence first
        "- Asked about stock, units, hand: Call warehouse_ledger(x), then answer.",
        "- Asked about invoice, owe: Call customer_lookup(x), then open_invoice(x), then "
        "answer.",
        "- Asked about supplier, days: Call purchasing_records(x), then answer.",
    ]
    assert "Do not use" not in text  # which tools to skip is the lesson's kind's


def test_a_task_a_lesson_names_is_shown_that_lesson_not_the_guide() -> None:
    text, shown = _depot().instructions_for("Who is the supplier of the Fenby staple gun?",
                                            "depot", TOOLS)
    assert shown == ["s-supplier"] and GUIDE_HEADER not in text


@pytest.mark.parametrize("strategies", [
    [],  # an empty playbook costs no tokens
    [Strategy(id="p", domain="depot", kind="pitfall", advice="web_search found nothing.",
              tools=["web_search"], applies_when=["stock"])],  # a pitfall is no guide
    [_sequence("s-no-words", ["warehouse_ledger"], [])],  # nothing to match by meaning
    [_sequence("s-lacks", ["freight_quote"], ["freight"])],  # a tool the agent lacks
    [_sequence("s-retired", ["warehouse_ledger"], ["stock"], status="retired")],
    [Strategy(id="s-x", domain="rail", advice="Call warehouse_ledger(x), then answer.",
              tools=["warehouse_ledger"], applies_when=["stock"])],  # another domain's
])
def test_no_guide_without_a_sequence_this_agent_can_follow(strategies: list[Strategy]) -> None:
    pb = Playbook(":memory:", guide=4)
    pb.store.put(strategies)
    assert pb.instructions_for("Anything unheard of?", "depot", TOOLS) == ("", [])


def test_guide_zero_shows_nothing_and_the_size_bounds_the_lines() -> None:
    pb = _depot()
    default, _ = Playbook(pb.store).instructions_for("Anything else?", "depot", TOOLS)
    # off by default since 2026-12-05 (on, guide=4, from 2026-12-03): docs/playbook.md
    assert default == ""
    assert _depot(guide=0).instructions_for("Anything else?", "depot", TOOLS) == ("", [])
    text, _ = _depot(guide=1).instructions_for("Anything else?", "depot", TOOLS)
    assert text.splitlines()[1:] == [
        "- Asked about stock, units, hand: Call warehouse_ledger(x), then answer."]


def test_the_guide_keeps_to_the_token_budget() -> None:
    sequences = [_sequence(f"s-{i}", ["warehouse_ledger"], [f"word{i}"]) for i in range(4)]
    header = estimate_tokens(GUIDE_HEADER)
    line = estimate_tokens(guide_line(sequences[0])) + 1
    lines, used = render(sequences, header + 2 * line)
    assert len(lines) == 3 and used <= header + 2 * line
    assert render(sequences, header + line - 1) == ([], 0)  # a header alone says nothing
    assert render([], 10_000) == ([], 0)


def test_a_line_names_at_most_a_few_of_a_lessons_words() -> None:
    many = _sequence("s", ["warehouse_ledger"], [f"w{i}" for i in range(12)])
    assert guide_line(many) == ("- Asked about " + ", ".join(f"w{i}" for i in range(
        WORDS_SHOWN)) + ": Call warehouse_ledger(x), then answer.")


def test_leading_follows_the_store_as_it_changes() -> None:
    pb = _depot()
    store = pb.store
    first = [s.id for s in store.leading("depot", "sequence", TOOLS, 2)]
    assert first == ["s-stock", "s-invoice"]
    store.put([_sequence("s-supplier", ["purchasing_records"], ["supplier"], helpful=9)])
    assert [s.id for s in store.leading("depot", "sequence", TOOLS, 2)] == [
        "s-supplier", "s-stock"]  # a cached answer is not kept past a write
    store.delete(["s-supplier"])
    assert [s.id for s in store.leading("depot", "sequence", TOOLS, 2)] == first
    assert store.leading("depot", "sequence", ["warehouse_ledger"], 4)[0].id == "s-stock"
    assert [s.id for s in store.leading("depot", "sequence", ["warehouse_ledger"], 4)] == [
        "s-stock"]
    assert store.leading("rail", "sequence", TOOLS, 4) == []
    assert store.leading("depot", "pitfall", TOOLS, 4) == []
    # the interface's own reading (for a store of another kind) agrees with the index
    assert [s.id for s in PlaybookStore.leading(store, "depot", "sequence", TOOLS, 2)] == first
