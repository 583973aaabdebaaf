"""A sequence keeps the words two of its tasks said: confirmations narrow a lesson to what each
new task shares, and on `depot` (ReAct) that forgot a wording of the kind: the supplier
sequence, promoted applying to "supplies" (two of its three tasks), was narrowed to lead, time,
days by its next task, and "Who is the supplier of ...?" was never shown it."""

from __future__ import annotations

from toolcycle.playbook import Curator, Strategy, open_store, reflect
from toolcycle.playbook.applicability import confirmed_by, word_support
from toolcycle.playbook.strategy import Insight

from .conftest import supplier_trace

#: depot's train order: supplier, lead time, supplier, lead time
RUNS = [("Who supplies the Vessel caulk gun?", "vessel caulk gun", "Arnfeld Tools"),
        ("What is the lead time in days for the Hadley work light?", "hadley work light", "9"),
        ("Name the supplier of the Tollin pipe cutter.", "tollin pipe cutter", "Arnfeld Tools"),
        ("How long is the lead time for the Garrow tile saw, in days?", "garrow tile saw",
         "34")]


def test_a_confirmation_keeps_a_wording_two_of_the_tasks_said(db_location: str) -> None:
    store, curator = open_store(db_location), Curator()
    for prompt, item, answer in RUNS:
        curator.apply(store, reflect(supplier_trace(prompt, item, answer),
                                     success=True, domain="depot"))
    [sequence] = [s for s in store.strategies() if s.kind == "sequence"]
    assert sequence.support == 4
    assert {"supplies", "lead", "time", "days"} <= set(sequence.applies_when)
    assert sequence.word_support["supplies"] == 2  # "supplies" and "supplier": one root
    [(found, _)] = store.search("Who is the supplier of the Fenby staple gun?", "depot",
                                ["purchasing_records"])
    assert found.id == sequence.id


def _insight(words: list[str], kind: str = "sequence") -> Insight:
    return Insight(kind=kind, advice="Call records(item).", tools=["records"],  # type: ignore[arg-type]
                   domain="d", keywords=words)


def test_a_word_one_task_lent_stays_when_the_next_task_does_not_say_it() -> None:
    """A sequence's words passed applicability when it was promoted (common to its tasks, or
    lent by a task's tools); the next task, worded apart, narrows none of them away."""
    support = word_support([_insight(["parcel", "order", "status"]),
                            _insight(["parcel", "order", "where"])])
    words, support = confirmed_by(["parcel", "order", "status", "where"], support,
                                  _insight(["parcel", "order", "arrived"]))
    assert words == ["parcel", "order", "status", "where"]
    assert support == {"order": 3, "parcel": 3, "arrived": 1, "status": 1, "where": 1}
    words, support = confirmed_by(words, support, _insight(["parcel", "order", "arrived"]))
    assert words == ["parcel", "order", "status", "where", "arrived"]  # two tasks said it


def test_support_is_bounded_to_the_most_said_words() -> None:
    evidence = [_insight([f"w{i}x{n}" for n in range(10)] + ["kind"]) for i in range(10)]
    support = word_support(evidence)
    assert len(support) == 32 and support["kind"] == 10


def test_strategies_stored_before_word_support_load_and_pitfalls_narrow_as_before(
        db_location: str) -> None:
    old = Strategy(id="s", domain="d", advice="a", applies_when=["parcel"]).to_dict()
    del old["word_support"]
    assert Strategy.from_dict(old).word_support == {}
    store, curator = open_store(db_location), Curator(promote_after=2)
    for n, words in enumerate((["slow", "delay"], ["slow", "platform"], ["fare", "delay"])):
        pitfall = Insight(kind="pitfall", advice="feed fails with: down.", tools=["feed"],
                          domain="d", keywords=words, detail="down", run_id=f"r{n}",
                          task=f"t{n}")
        curator.apply(store, [pitfall])
    [strategy] = store.strategies()
    assert strategy.word_support == {}
    assert strategy.applies_when == ["slow"]  # as before: a task sharing too little keeps it


def test_a_full_support_makes_way_for_the_newest_task_s_words() -> None:
    old = word_support([_insight([f"old{n}" for n in range(32)])])
    support = word_support([_insight(["fresh", "old0"])], old)
    assert len(support) == 32 and support["old0"] == 2 and support["fresh"] == 1
    assert "old31" in support and "old1" not in support  # the oldest single goes


def test_a_hostile_prompt_s_long_runs_of_letters_are_not_counted() -> None:
    """Support is stored with the strategy: a prompt's 100,000-letter "word" is no word."""
    support = word_support([_insight(["x" * 100_000, "parcel"])])
    assert support == {"parcel": 1}
