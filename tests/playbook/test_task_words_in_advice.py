"""A train task's own words never reach advice (issue 69): an example shows a value's format,
and a value that carries the task's words is that task's content, which other tasks copied
(reflector.shaped_values, evidence.repair_of, evidence.says_task_words)."""

from __future__ import annotations

from toolcycle.playbook import reflect
from toolcycle.playbook.evidence import says_task_words

from .conftest import make_trace

PROMPT = "How many refunds did the Harbour branch issue in week 14?"


def test_a_query_in_the_tasks_words_is_no_example_but_a_reformatted_date_is() -> None:
    trace = make_trace(PROMPT, [[
        ("search_ledger", {"query": "Harbour branch refunds week 14", "since": "2026-04-01"},
         '{"refunds": 31}', None)]])
    trace.output = "31 refunds"
    [sequence] = [i for i in reflect(trace, success=True, domain="shop") if i.kind == "sequence"]
    assert 'since like "2026-04-01"' in sequence.advice
    assert "Harbour" not in sequence.advice and "refunds week" not in sequence.advice
    assert "search_ledger(query, since" in sequence.advice


def test_an_argument_repaired_with_the_tasks_words_says_so_without_copying_them() -> None:
    trace = make_trace(PROMPT, [
        [("search_ledger", {"query": "R-77"}, None, "unknown query 'R-77'")],
        [("search_ledger", {"query": "Harbour branch refunds"}, '{"refunds": 31}', None)]])
    trace.output = "31 refunds"
    pitfalls = [i for i in reflect(trace, success=True, domain="shop") if i.kind == "pitfall"]
    assert pitfalls and all("Harbour" not in p.advice for p in pitfalls)
    assert pitfalls[0].advice.endswith("Pass query as the task itself words it.")


def test_words_are_compared_by_their_roots() -> None:
    assert says_task_words("refund for harbour", PROMPT)  # "refund" is "refunds"
    assert not says_task_words("2026-04-01", PROMPT) and not says_task_words("R-77", PROMPT)
    assert not says_task_words("Harbour", "")
