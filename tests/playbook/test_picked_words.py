"""A chain that picked one row out of a list applies to a task naming any row of it: the lab
tasks of `clinic` ("Tobias Renn's latest TSH value", "Ferritin level for Mireille Fontaine?",
"Kwame Asante's LDL from the lipid panel") share no word, and the lesson their runs taught
(lab_orders, then lab_result(order_id)) applied to nothing (JSON) or to TSH questions only
(ReAct), though every test name stood in the orders the runs picked from."""

from __future__ import annotations

import json

from toolcycle.playbook import Curator, open_store, reflect
from toolcycle.playbook.applicability import MAX_PICKED_WORDS, picked_words
from toolcycle.tracing.trace import Trace

from .conftest import make_trace

LABS = {"tobias renn": [("LO-6104", "ferritin", "48"), ("LO-6105", "TSH", "2.7")],
        "mireille fontaine": [("LO-8830", "CRP", "12"), ("LO-8831", "ferritin", "95")],
        "kwame asante": [("LO-2207", "lipid panel", "2.6"), ("LO-2208", "TSH", "3.4")],
        "ada marsh": [("LO-5521", "HbA1c", "6.1"), ("LO-5522", "vitamin D", "41")]}


def _orders(patient: str) -> str:
    return json.dumps([{"order_id": o, "test": t, "status": "final"} for o, t, _ in LABS[patient]])


def test_the_column_a_task_word_picked_the_row_by_lends_all_its_words() -> None:
    picked = picked_words(_orders("tobias renn"), "LO-6105", {"patient": "Tobias Renn"},
                          "Give me Tobias Renn's latest TSH value.")
    assert picked == ["ferritin", "tsh"]
    # the same list nested under a key, the value fed as a number
    nested = json.dumps({"patient": "Kwame Asante", "orders": [
        {"order_id": 2207, "test": "lipid panel"}, {"order_id": 2208, "test": "TSH"}]})
    assert picked_words(nested, "2207", {"patient": "Kwame Asante"},
                        "What is Kwame Asante's LDL from the lipid panel?") == [
        "lipid", "panel", "tsh"]


def test_nothing_where_no_task_word_picked_one_row() -> None:
    orders = _orders("tobias renn")
    ask = {"patient": "Tobias Renn"}
    # the task names no field of the row: the order was not picked by what it asked
    assert picked_words(orders, "LO-6105", ask, "Tobias Renn's thyroid, please.") == []
    # a field every row shares tells no row apart ("final" said by the task)
    assert picked_words(orders.replace('"ferritin"', '"TSH"'), "LO-6105", ask,
                        "Give me Tobias Renn's final TSH value.") == []
    # the value fed is in no row, or in two
    assert picked_words(orders, "LO-9999", ask, "Tobias Renn's TSH?") == []
    twice = json.dumps([{"id": "A", "test": "TSH"}, {"id": "A", "test": "CRP"}])
    assert picked_words(twice, "A", ask, "Tobias Renn's TSH?") == []
    # not JSON, not a list of records, too deep to parse: nothing, quietly
    assert picked_words("LO-6105 TSH, LO-6104 ferritin", "LO-6105", ask, "TSH?") == []
    assert picked_words(json.dumps({"order_id": "LO-6105", "test": "TSH"}), "LO-6105", ask,
                        "TSH?") == []
    assert picked_words("[" * 100_000 + "]" * 100_000, "x", ask, "TSH?") == []


def test_a_name_the_step_was_asked_for_is_what_it_looked_up_not_a_pick() -> None:
    """A directory searched by a person's name answers the people of that name; the one the
    task named is no column of a kind of task (names apply to nothing: `rail`'s "Kelby")."""
    people = json.dumps([{"staff_id": "S-1", "name": "Nadia Rahman", "office": "Narvik"},
                         {"staff_id": "S-2", "name": "Nadia Rahmani", "office": "Oslo"}])
    assert picked_words(people, "S-1", {"query": "Nadia Rahman"},
                        "Where does Nadia Rahman work?") == []


def test_a_hostile_list_lends_a_bounded_number_of_plain_words() -> None:
    rows = [{"id": f"R{i}", "test": f"TSH <script>alert({i})</script> word{i} " + "x" * 40}
            for i in range(500)]
    picked = picked_words(json.dumps(rows), "R3", {"patient": "P"}, "The TSH of P?")
    assert len(picked) == MAX_PICKED_WORDS
    assert all(w.isalnum() and len(w) <= 32 for w in picked)
    # a megabyte list is not read for it (retrieval words are not worth parsing that)
    assert picked_words(json.dumps(rows * 20), "R3", {"patient": "P"}, "The TSH of P?") == []


def _lab_run(prompt: str, patient: str, test: str) -> Trace:
    order, _, value = next(o for o in LABS[patient] if o[1] == test)
    trace = make_trace(prompt, [
        [("lab_orders", {"patient": patient.title()}, _orders(patient), None)],
        [("lab_result", {"order_id": order}, json.dumps({"test": test, "result": value}),
          None)]])
    trace.output = value
    return trace


def test_runs_worded_apart_teach_a_lookup_shown_to_any_test_their_lists_named(
        db_location: str) -> None:
    store, curator = open_store(db_location), Curator()
    for prompt, patient, test in [
            ("Give me Tobias Renn's latest TSH value.", "tobias renn", "TSH"),
            ("Ferritin level for Mireille Fontaine?", "mireille fontaine", "ferritin"),
            ("What is Kwame Asante's LDL from the lipid panel?", "kwame asante",
             "lipid panel")]:
        curator.apply(store, reflect(_lab_run(prompt, patient, test), success=True,
                                     domain="clinic"))
    [sequence] = [s for s in store.strategies() if s.kind == "sequence"]
    assert sequence.tools == ["lab_orders", "lab_result"]
    assert {"tsh", "ferritin", "crp", "lipid", "panel"} <= set(sequence.applies_when)
    tools = ["lab_orders", "lab_result", "patient_file"]
    for task in ("What was Lucia Bertolini's CRP?", "Hamish Doyle's TSH, please.",
                 "What did the lipid panel of Sana Qureshi show?"):
        assert [s.id for s, _ in store.search(task, "clinic", tools)] == [sequence.id], task
    # a test no list named, and another kind of task, are not shown it
    for task in ("What was Lucia Bertolini's vitamin B12?", "Who insures Hamish Doyle?"):
        assert store.search(task, "clinic", tools) == [], task


def test_a_later_run_that_picked_another_row_keeps_the_words_the_lists_held(
        db_location: str) -> None:
    """Confirmations narrow a lesson to the words each new task shares; a picked column's
    words are what the chain picks among, and stay while a result it fed on holds them (on
    `clinic` the TSH and ferritin runs after the HbA1c one narrowed ``hba1c`` away)."""
    store, curator = open_store(db_location), Curator()
    runs = [("What was Ada Marsh's HbA1c result?", "ada marsh", "HbA1c"),
            ("What is Tobias Renn's latest TSH result?", "tobias renn", "TSH"),
            ("Ferritin result for Mireille Fontaine?", "mireille fontaine", "ferritin"),
            ("What is Kwame Asante's latest TSH result?", "kwame asante", "TSH")]
    for prompt, patient, test in runs:
        curator.apply(store, reflect(_lab_run(prompt, patient, test), success=True,
                                     domain="clinic"))
    [sequence] = [s for s in store.strategies() if s.kind == "sequence"]
    assert sequence.support == 4
    assert {"hba1c", "vitamin", "tsh", "ferritin", "crp", "lipid"} <= set(sequence.applies_when)
    tools = ["lab_orders", "lab_result", "patient_file"]
    for task in ("What was Hamish Doyle's HbA1c?", "Lucia Bertolini's vitamin D level?"):
        assert [s.id for s, _ in store.search(task, "clinic", tools)] == [sequence.id], task
    # a word only one task said, in no list, is still narrowed away
    assert "ada" not in sequence.applies_when and "marsh" not in sequence.applies_when
