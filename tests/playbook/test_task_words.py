"""Names stay out of where a lesson applies: a station, a person or an id says which thing a
task is about, not what kind of task it is (rail, ReAct: three failed fare runs shared the
station "Kelby", and the dead end they taught applied to ['kelby', 'standard'])."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle.playbook.curator import Curator
from toolcycle.playbook.dead_end import FOUND_NOTHING
from toolcycle.playbook.reflector import reflect
from toolcycle.playbook.store import SQLitePlaybookStore
from toolcycle.tracing.trace import Step, ToolCallRecord, Trace
from toolcycle.words import keywords, names, task_words


@pytest.mark.parametrize(("text", "named", "words"), [
    ("What is the standard single fare from Ashmoor to Kelby on 5 March 2026?",
     {"ashmoor", "kelby", "march"}, ["standard", "single", "fare"]),
    # the first word of a sentence is capitalised by grammar, not because it is a name
    ("Standard fare Kelby to Carrick Vale? Which fare is cheaper.",
     {"kelby", "carrick", "vale"}, ["standard", "fare", "cheaper"]),
    # ids mix capitals and digits, wherever they stand
    ("KL318: what is the delay of RX2041?", {"kl318", "rx2041"}, ["delay"]),
    # acronyms are content words; a word also written in lower case is no name
    ("Convert the PDF to USD. Reading lamps, reading glasses.", set(),
     ["convert", "pdf", "usd", "reading", "lamps", "glasses"]),
    # inner capitals make a name even at the start; possessives keep the name a name
    ("GitHub stars of the repo where Aiko Tanaka's team works?", {"github", "aiko", "tanaka"},
     ["stars", "repo", "team", "works"]),
    ("", set(), []),
    ("Go to Kelby?", {"kelby"}, ["kelby"]),  # nothing but names: they are kept
])
def test_names_are_capitalised_words_inside_a_sentence_and_ids(
        text: str, named: set[str], words: list[str]) -> None:
    assert names(text) == named
    assert task_words(text) == words
    assert set(task_words(text)) <= set(keywords(text))  # retrieval still sees every word


def test_names_in_a_long_text() -> None:
    """Each word's sentence start is read from the gap before it, not by rescanning the text
    from its start (tests never assert on time; this only checks the long case answers)."""
    text = "Hello World. " * 20_000
    assert names(text) == {"world"}


def _failed_fare_run(prompt: str) -> Trace:
    record = ToolCallRecord(call_id="c1", name="web_search", args={"query": prompt},
                            iteration=1, result="No results.")
    return Trace(run_id=prompt, agent_name="rail", user_prompt=prompt,
                 steps=[Step(iteration=1, attempt=1, tool_calls=[record])],
                 termination={"reason": "completed", "action": "answered"})


def test_a_dead_end_learned_from_runs_about_one_station_does_not_apply_by_its_name(
        tmp_path: Any) -> None:
    store, curator = SQLitePlaybookStore(tmp_path / "p.db"), Curator()
    for prompt in ("What is the standard single fare from Ashmoor to Kelby on 5 March 2026?",
                   "Standard fare Kelby to Carrick Vale on 30 September 2026?",
                   "How much is a standard fare from Kelby to Ostenby on 2 May 2026?"):
        curator.apply(store, reflect(_failed_fare_run(prompt), success=False, domain="rail"))
    [dead_end] = store.strategies("rail")
    assert dead_end.detail == FOUND_NOTHING
    assert set(dead_end.applies_when) == {"standard", "fare"}
    assert "kelby" not in dead_end.section
