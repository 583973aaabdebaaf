"""A lesson is shown to tasks like the ones it came from, not to any task sharing a word
(toolcycle.playbook.neighbours).

Seen on generated suites (bench/learning_gen/shown.py): a hotel agent's playbook held one
lesson, learned from bill questions, and every task saying "room" or "EUR" was shown it; a
small model followed it to the wrong tool. Before this module, 29.9 % of the test tasks of 100
dev seeds with two train tasks per kind were shown another kind's lesson; with it, 1.9 %.
"""

from __future__ import annotations

import json
from typing import Any

from toolcycle import Agent, Message, tool
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import LearningTask, Playbook, learn
from toolcycle.playbook.location import open_store
from toolcycle.playbook.neighbours import TaskMemory, words_of
from toolcycle.playbook.store import TASKS_KEPT, SQLitePlaybookStore
from toolcycle.playbook.strategy import PROBED, Strategy

GUESTS = {"Ada Moss": "F-100", "Bo Lind": "F-200", "Cy Roe": "F-300", "Di Park": "F-400"}
BILLS = {"F-100": 310.5, "F-200": 99.0, "F-300": 120.25, "F-400": 64.0}
RATES = {"RM1234": 180.0, "RM5678": 95.5, "RM9012": 140.0}


def guest_search(name: str) -> str:
    """Find a guest by name: their folio reference."""
    return json.dumps({"name": name, "folio": GUESTS.get(name, "")})


def guest_file(folio: str) -> str:
    """A guest's file by folio reference: the bill total in EUR."""
    if folio not in BILLS:
        raise LookupError(f"unknown folio {folio!r}")
    return json.dumps({"folio": folio, "bill_eur": BILLS[folio]})


def room_rate(room: str) -> str:
    """The nightly rate of a room in EUR."""
    return json.dumps({"room": room, "rate_eur": RATES.get(room)})


def newcomer(messages: list[Message], settings: ModelSettings) -> Any:
    """Bill questions: the file first with the name (it fails), then the search and the file;
    rate questions: the rate at once. Answers with the last figure it read."""
    prompt = next(m.text for m in messages if m.role == "user")
    results = [str(p.content) for m in messages if m.role == "tool" for p in m.parts]
    if "bill" in prompt:
        name = prompt.split("guest ")[-1].rstrip("?.")
        steps = [("guest_file", {"folio": name}), ("guest_search", {"name": name})]
        if len(results) < 2:
            return call(*steps[len(results)])
        if len(results) == 2:
            return call("guest_file", {"folio": json.loads(results[1])["folio"]})
        return str(json.loads(results[-1])["bill_eur"])
    room = next(w.strip("?.") for w in prompt.split() if w.startswith("RM"))
    if not results:
        return call("room_rate", {"room": room})
    return str(json.loads(results[-1])["rate_eur"])


SYSTEM: list[str] = []


def agent(pb: Playbook) -> Agent[Any, str]:
    def reply(messages: list[Message], settings: ModelSettings) -> Any:
        SYSTEM[:] = [m.text for m in messages if m.role == "system"]
        return newcomer(messages, settings)

    return Agent(ScriptedModel(reply), "Answer hotel questions with the tools.",
                 [tool(guest_search, read_only=True), tool(guest_file, read_only=True),
                  tool(room_rate, read_only=True)], name="hotel", playbook=pb)


TRAIN = [("b1", "What is the bill total in EUR for the guest Ada Moss?", "310.5"),
         ("b2", "Tell me the bill total in EUR of the guest Bo Lind?", "99.0"),
         ("b3", "Which bill total in EUR is open for the guest Cy Roe?", "120.25"),
         ("r1", "What is the nightly rate in EUR of room RM1234?", "180.0"),
         ("r2", "Tell me the nightly rate in EUR of room RM5678.", "95.5")]


async def learned() -> Playbook:
    # advice only: the scripted newcomer reads advice, not a routine's result
    pb = Playbook(":memory:", routines=False)
    report = await learn([LearningTask(*t) for t in TRAIN], agent(pb), playbook=pb,
                         progress=False)
    assert report.success_rate == 1.0
    pb.flush()
    return Playbook(pb.store, learn=False, routines=False)


async def test_a_task_like_the_lessons_own_is_shown_it() -> None:
    pb = await learned()
    # each run learned from left its task's words, as a new task's are read
    remembered = set(pb.store.observed_tasks("hotel").values())
    assert remembered == {words_of(prompt) for _, prompt, _ in TRAIN}
    [sequence] = [s for s in pb.strategies("hotel") if s.kind == "sequence"
                  and s.tools[0] == "guest_search"]
    assert sequence.tools == ["guest_search", "guest_file"]
    result = await agent(pb).run("Give me the bill total in EUR for the guest Di Park.")
    assert sequence.id in result.trace.strategies_shown
    assert "Call guest_search(name), then guest_file(folio)" in "\n".join(SYSTEM)


async def test_a_task_of_another_kind_is_not_shown_a_lesson_through_a_shared_word() -> None:
    pb = await learned()
    # "EUR" is one of the bill sequence's words; the rate tasks say it too (and taught a
    # lesson of their own: two answered by room_rate, probe.answers_agree)
    assert "eur" in {w.lower() for s in pb.strategies("hotel") for w in s.applies_when}
    [sequence] = [s for s in pb.strategies("hotel") if s.kind == "sequence"
                  and s.tools[0] == "guest_search"]
    result = await agent(pb).run("What is the nightly rate in EUR of room RM9012?")
    assert sequence.id not in result.trace.strategies_shown
    assert "guest_search" not in "\n".join(SYSTEM).split("Playbook")[-1]
    assert result.output == "140.0"


def test_each_task_learned_from_is_remembered_with_its_words(db_location: str) -> None:
    """On SQLite and on a real PostgreSQL (the same statements, another dialect)."""
    store = open_store(db_location)
    assert store.mark_observed("run-1", "hotel", sorted(words_of("Which bill is due?")))
    assert not store.mark_observed("run-1", "hotel", ["other"])  # never learned from twice
    assert store.mark_observed("run-2", "hotel")  # no words: nothing remembered
    assert store.observed_tasks("hotel") == {"run-1": words_of("Which bill is due?")}
    assert store.observed_tasks("clinic") == {}
    with store.transaction() as conn:  # a damaged row teaches nothing; the rest still apply
        conn.execute("INSERT INTO task_words VALUES ('bad', 'hotel', 0, 'not json')")
    assert set(store.observed_tasks("hotel")) == {"run-1"}
    store.close()


def test_a_domain_keeps_only_its_newest_tasks(tmp_path: Any) -> None:
    store = SQLitePlaybookStore(tmp_path / "p.db")
    for i in range(TASKS_KEPT + 3):
        store.mark_observed(f"run-{i}", "hotel", ["bill"])
    kept = store.observed_tasks("hotel")
    assert len(kept) == TASKS_KEPT and "run-0" not in kept
    assert store._conn().execute("SELECT COUNT(*) FROM task_words").fetchone()[0] == TASKS_KEPT
    store.close()


def test_a_run_that_ignored_a_lesson_does_not_join_its_provenance() -> None:
    strategy = Strategy(id="s", domain="hotel", advice="Call a, then b.", tools=["a", "b"])
    strategy.record_use("ignored-run", True, 2, 1.0, verdict="ignored")
    strategy.record_use("misfit-run", False, 2, 1.0, verdict="misfit")
    strategy.record_use("followed-run", True, 2, 1.0, verdict="helpful")
    assert strategy.provenance == ["followed-run"]


def test_wording_does_not_make_a_neighbour() -> None:
    """Tasks are compared in the words lessons apply to: "how large" and "nothing else",
    which one earlier task said, do not make it the only neighbour of a task saying them."""
    memory = TaskMemory({"a": words_of("How large is the balance due for Ann?"),
                         "b": words_of("Tell me the balance due for Bo and nothing else."),
                         "c": words_of("What is the phone extension of Cy?")})
    lesson = Strategy(id="s", domain="d", advice="Call ledger(name).", tools=["ledger"],
                      applies_when=["balance", "due"], provenance=["b"])
    other = Strategy(id="t", domain="d", advice="Call roster(name).", tools=["roster"],
                     applies_when=["phone", "extension"], provenance=["c"])
    assert memory.shown([lesson, other], "How large is the balance due for Di?") == {"s"}
    assert memory.shown([lesson, other], "Which phone extension has Di?") == {"t"}


def test_a_lesson_whose_runs_left_no_words_is_judged_by_retrieval_alone() -> None:
    memory = TaskMemory({"a": words_of("What is the bill total?"),
                         "b": words_of("What is the nightly rate?")})
    old = Strategy(id="old", domain="d", advice="x", tools=["t"], applies_when=["bill"],
                   provenance=["written-before"])
    assert memory.shown([old], "What is the nightly rate?") == {"old"}
    assert TaskMemory({}).shown([old], "anything") == {"old"}  # nothing remembered yet


def test_a_lesson_a_probe_found_is_the_probed_runs_and_shown_as_its_tasks_lesson() -> None:
    """A probe's finding carries the probed run's id with ``#probe`` after it
    (strategy.PROBED), while the run's task is remembered under the run's own id. Compared
    as they were, the lesson of a probed credit-limit task was shown neither to the task it
    came from nor to others of its kind, and one found only by probes was judged by retrieval
    alone, shown to any task sharing a word (seen on the 1.5B, JSON, dev seed 501; offline,
    ``bench/learning_gen/shown.py --seeds 100-139 --train 3 --kinds all --gives-up 1.0``:
    tasks shown another kind's lesson 41.9 % -> 0.4 %)."""
    memory = TaskMemory({"run-a": words_of("Ann asks about her account: what is the credit limit?"),
                         "run-b": words_of("What is the open balance of Bo's account?"),
                         "run-c": words_of("How many units of article SK12 were shipped?")})
    probed = Strategy(id="s", domain="d", advice="Call locate(name), then file(ref).",
                      tools=["locate", "file"], applies_when=["account", "credit", "limit"],
                      provenance=["run-a" + PROBED])
    assert memory.shown([probed], "Cy asks about his account: what is the credit limit?") == {"s"}
    # a task like another remembered task, though it shares a word with the lesson
    assert memory.shown([probed], "What is the open balance of Di's account?") == set()


def test_tasks_are_compared_in_every_word_a_lessons_tasks_said() -> None:
    """A lesson applies to the words two of its tasks shared; a word one of them said alone
    ("turnaround") is in its ``word_support``. Compared without it, the turnaround task looked
    exactly like another kind's ("what does lab order X cost for 2 litres"), and that kind was
    shown the lesson: with every train task given up and probed, seeds 100-199 (``shown.py
    --train 3 --gives-up 1.0``), 24.2 % of test tasks were shown another kind's lesson, 1.0 %
    with the whole vocabulary."""
    memory = TaskMemory({
        "r1": words_of("What is the result value of lab order LX1?"),
        "r2": words_of("Lab order LX2: what is its result value?"),
        "t1": words_of("What is the turnaround in hours of lab order LX3?"),
        "u1": words_of("How much does lab order LB4 cost for 2 litres?"),
        "u2": words_of("What is the charge for lab order LB5 with 0.5 litres?"),
    })
    lesson = Strategy(id="s", domain="d", advice="Call ward_history(order), then answer.",
                      tools=["ward_history"], applies_when=["lab", "order", "result", "value"],
                      provenance=[f"{r}{PROBED}" for r in ("r1", "r2", "t1")])
    lesson.word_support = {"lab": 3, "order": 3, "result": 2, "value": 2, "turnaround": 1,
                           "hours": 1}
    assert memory.shown([lesson], "How much does lab order LB6 cost for 1.25 litres?") == set()
    assert memory.shown([lesson], "What is the turnaround in hours of lab order LX7?") == {"s"}
    assert memory.shown([lesson], "Tell me the result value of lab order LX8.") == {"s"}
