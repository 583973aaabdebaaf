"""Words are matched by their roots: the tasks of one kind are worded apart ("Who supplies the
Vessel caulk gun?", "Who is the supplier of the Fenby staple gun?"; `depot`), and a lesson
learned from one form of a word met none of the other's."""

from __future__ import annotations

import threading

from toolcycle.playbook import Curator, Strategy, open_store
from toolcycle.playbook.applicability import (
    applicability,
    confirmed,
    described_words,
    description_words,
)
from toolcycle.playbook.strategy import Insight
from toolcycle.words import _stem, root


def test_forms_of_a_word_share_a_root_and_other_words_keep_theirs() -> None:
    assert len({root(w) for w in ("supplier", "suppliers", "supplies", "supplied", "supply")}
               ) == 1
    assert root("booking") == root("books") == root("book")
    assert root("shipped") == root("shipping") == root("ship")
    assert root("carrier") == root("carries")
    # Snowball leaves "-er" alone: these are words of their own, not "ord", "numb", "weath"
    assert root("order") == root("orders") != root("or")
    assert root("number") not in {root("numb"), root("numbing")}
    assert root("weather") != root("weath")
    assert root("cashier") != root("cash")  # only a root the verb also has loses its "-ier"


def test_roots_are_the_same_from_many_threads() -> None:
    """A Snowball stemmer keeps state between words; a playbook is read from many threads."""
    words = [f"{w}{n}" for n in range(300) for w in ("supplies", "shipping", "booking")]
    expected = {w: root(w) for w in words}
    _stem.cache_clear()
    seen: list[dict[str, str]] = []

    def stem_all() -> None:
        seen.append({w: root(w) for w in words})

    threads = [threading.Thread(target=stem_all) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(found == expected for found in seen)


def test_a_long_run_of_letters_is_its_own_root() -> None:
    """A hostile prompt's words are not each stemmed and cached at any length."""
    word = "supplies" * 1000
    assert root(word) == word
    assert root("internationalisations") == root("internationalisation")  # words are stemmed


def test_a_strategy_stored_with_one_form_is_found_by_another(db_location: str) -> None:
    """Strategies stored before roots keep their words as written; the index roots them."""
    store = open_store(db_location)
    store.put([Strategy(id="s1", domain="shop", advice="Call bookings_api(date).",
                          kind="sequence", tools=["bookings_api"],
                          applies_when=["bookings", "cancelled"])])
    [(found, _)] = store.search("Cancel my booking for Friday", "shop", ["bookings_api"])
    assert found.id == "s1"
    assert store.search("What is the weather?", "shop", ["bookings_api"]) == []


def _insight(prompt_words: list[str], tool_words: list[str] | None = None) -> Insight:
    return Insight(kind="sequence", advice="Call records(item).", tools=["records"],
                   domain="d", keywords=prompt_words, tool_words=tool_words or [])


def test_applicability_counts_forms_of_a_word_once_as_first_written() -> None:
    evidence = [_insight(["supplies", "vessel"]), _insight(["supplier", "tollin"]),
                _insight(["supplied", "garrow"])]
    assert applicability(evidence) == ["supplies"]


def test_confirmation_keeps_a_word_the_new_task_says_in_another_form() -> None:
    words = confirmed(["supplies", "lead", "items"], _insight(["supplier", "item", "fenby"],
                                                              ["suppliers"]))
    assert words == ["supplies", "items"]  # not narrowed to nothing, no second "supplier"


def test_a_task_word_meets_its_tools_description_in_another_form() -> None:
    descriptions = description_words({"records": "Purchasing records: the item's suppliers."})
    assert described_words(["supplier", "purchase", "fenby"], ["records"], descriptions) == [
        "supplier", "purchase"]


def test_a_sequence_from_runs_worded_in_other_forms_is_promoted_with_a_shared_word(
        db_location: str) -> None:
    store, curator = open_store(db_location), Curator(promote_after=2)
    for n, word in enumerate(("shipping", "shipped")):
        insight = _insight([word, "parcel", f"order{n}"])
        insight.run_id, insight.task = f"r{n}", f"task {n}"
        curator.apply(store, [insight])
    [sequence] = store.strategies()
    assert set(sequence.applies_when) == {"shipping", "parcel"}  # both runs said both


def test_a_description_word_sharing_a_root_with_a_template_word_stays() -> None:
    """"timed" is a template word ("… timed out"), "time" in "lead time" is not."""
    descriptions = description_words({"records": "Lead time of an item, timed out rarely."})
    assert described_words(["lead", "time", "item"], ["records"], descriptions) == [
        "lead", "time", "item"]


def test_folded_strategies_keep_one_form_of_each_word() -> None:
    """Two near-duplicate sequences merged: "shipping" and "shipped" are one word."""
    from toolcycle.playbook.curator import _fold

    keep = Strategy(id="a", domain="d", advice="Call t(x).", tools=["t"],
                    applies_when=["shipping", "parcel"], word_support={"shipping": 2})
    drop = Strategy(id="b", domain="d", advice="Call t(x).", tools=["t"],
                    applies_when=["shipped", "order"], word_support={"shipped": 3})
    _fold(keep, drop)
    assert keep.applies_when == ["shipping", "parcel", "order"]
    assert keep.word_support == {"shipping": 5}
