"""Where the answer was found when a first-choice tool finds nothing, learned from the trace
alone, without probes (issue 69: with no ``read_only`` tool no probe runs, and the empty
first-choice source taught nothing but its dead end): a run that got its answer from another
tool's result after the empty call repairs the dead end (dead_end.found_elsewhere)."""

from __future__ import annotations

from toolcycle.playbook import Playbook, reflect
from toolcycle.tracing.trace import Trace

from .conftest import make_trace

TOOLS = ["crm_search", "ticket_archive"]


def _failed(who: str) -> Trace:
    trace = make_trace(f"How many open tickets does {who} have?",
                       [[("crm_search", {"name": who}, "[]", None)]], status="error")
    trace.output = "No tickets found."
    return trace


def _answered(who: str, count: int) -> Trace:
    trace = make_trace(f"How many open tickets does {who} have?", [
        [("crm_search", {"name": who}, "[]", None)],
        [("ticket_archive", {"owner": who}, f'{{"open": {count}}}', None)]])
    trace.output = f"{who} has {count} open tickets."
    return trace


def test_a_successful_run_shows_where_the_answer_is() -> None:
    insights = reflect(_answered("Cy Ray", 23), success=True, domain="support",
                       dead_ends={"crm_search"})
    [found] = [i for i in insights if i.kind == "pitfall"]
    assert found.tools == ["crm_search", "ticket_archive"]
    assert found.advice == ("crm_search found nothing for this kind of task. "
                            "Call ticket_archive(owner) instead.")


def test_an_empty_call_of_a_tool_no_run_found_empty_is_a_detour_not_a_lesson() -> None:
    """Its run's sequence already says to skip it ("Do not use crm_search ...")."""
    insights = reflect(_answered("Cy Ray", 23), success=True, domain="support")
    assert [i.kind for i in insights] == ["sequence"]


def test_failed_runs_and_one_that_found_it_teach_where_to_look_without_probes() -> None:
    pb = Playbook(":memory:")
    for who in ("Ada King", "Bo Lee"):
        pb.learn_from(_failed(who), False)
    pb.learn_from(_answered("Cy Ray", 23), True)
    text, shown = pb.instructions_for("How many open tickets does Di Fox have?", "support",
                                      TOOLS)
    assert "crm_search found nothing for this kind of task. Call ticket_archive(owner)" in text
    assert shown


def test_a_tool_that_also_answered_in_the_run_is_no_dead_end() -> None:
    trace = make_trace("How many open tickets does Cy Ray have?", [
        [("crm_search", {"name": "Cy"}, "[]", None)],
        [("crm_search", {"name": "Cy Ray"}, '{"id": 7}', None)],
        [("ticket_archive", {"owner": "7"}, '{"open": 23}', None)]])
    trace.output = "23 open tickets."
    insights = reflect(trace, success=True, domain="support", dead_ends={"crm_search"})
    assert not [i for i in insights if i.kind == "pitfall" and "found nothing" in i.advice]
