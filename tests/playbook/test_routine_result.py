"""Reading a routine's result back into the calls it made (playbook.routine_result.steps_of,
for traces read from a store), and the tool statistics the calls a stand-in noted give
(playbook.stats.step_observations)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolcycle.playbook.evidence import CallEvidence
from toolcycle.playbook.routine_result import (
    MAX_STEPS,
    StandIn,
    StepOutcome,
    completed,
    ran_whole,
    steps_of,
)
from toolcycle.playbook.stats import UNTIMED, compute_stats, step_observations
from toolcycle.tracing.trace import ToolCallRecord

TOOLS = {"guest_ledger", "folio", "country_info", "exchange_rate", "delay_feed",
         "service_history"}


def _call(name: str, result: str, duration_ms: float = 40.0) -> CallEvidence:
    record = ToolCallRecord("c1", name, {}, 1, result=result, duration_ms=duration_ms)
    return CallEvidence(0, record, "ok")


def test_a_completed_routine_reads_back_as_its_steps_in_order() -> None:
    text = completed(["guest_ledger", "folio"], [
        'guest_ledger({"guest": "Amara Nwosu"}) -> {"room": "416", "folio_id": "F-88"}',
        'folio({"folio_id": "F-88"}) -> {"total": 212.5}'])
    assert ran_whole(text)
    assert steps_of(text, TOOLS) == [
        StepOutcome("guest_ledger", {"guest": "Amara Nwosu"}, "ok",
                    '{"room": "416", "folio_id": "F-88"}'),
        StepOutcome("folio", {"folio_id": "F-88"}, "ok", '{"total": 212.5}'),
    ]


@pytest.mark.parametrize("empty", ["[]", "{}", "null", '""', "", "No results."])
def test_a_step_that_returned_nothing_is_empty(empty: str) -> None:
    text = (f'guest_ledger({{"guest": "530"}}) -> {empty}\n'
            "(stopped: guest_ledger found nothing, so folio was not called)")
    [step] = steps_of(text, TOOLS)
    assert (step.tool, step.status, step.text) == ("guest_ledger", "empty", empty)


def test_each_way_a_step_fails_is_read() -> None:
    assert [s.status for s in steps_of(
        'country_info({"country": "X"}) -> X: currency code XQ\n'
        'exchange_rate({"currency": "XQ"}) failed: LookupError: unknown XQ', TOOLS)] == [
        "ok", "error"]
    [rejected] = steps_of(
        'folio({"folio_id": 7}) rejected its arguments: folio_id: 7 is not a string', TOOLS)
    assert rejected.status == "error" and rejected.text.startswith("folio_id: 7")
    [late] = steps_of('delay_feed({"service": "RX1"}) timed out after 2.5 s', TOOLS)
    assert (late.status, late.text) == ("timeout", "2.5 s")


def test_a_result_spanning_lines_stays_one_step_and_arguments_may_hold_markers() -> None:
    text = ('country_info({"country": "a) -> b"}) -> line one\n'
            "folio is a word here, not a call\nline three\n"
            'exchange_rate({"currency": "Q"}) -> 1 Q = 2 USD')
    first, second = steps_of(text, TOOLS)
    assert first.arguments == {"country": "a) -> b"}
    assert first.text == "line one\nfolio is a word here, not a call\nline three"
    assert (second.tool, second.text) == ("exchange_rate", "1 Q = 2 USD")


def test_a_name_outside_the_tools_is_part_of_the_step_before() -> None:
    text = 'folio({"folio_id": "F"}) -> see\nnotes({"a": 1}) -> not a step'
    [step] = steps_of(text, TOOLS)
    assert step.text == 'see\nnotes({"a": 1}) -> not a step'
    assert len(steps_of(text)) == 2  # no names given: any tool's line is a step


@pytest.mark.parametrize("text", [
    None, "", "[]", "{}", "null", '""', "RX3: 7 min (live)",
    "folio(F-88) -> no JSON arguments", 'folio({"folio_id": "F"}) and nothing after',
    'folio(["F"]) -> arguments not an object', 'folio({"folio_id": ) -> broken JSON',
])
def test_any_other_text_holds_no_steps(text: str | None) -> None:
    assert steps_of(text, TOOLS) == []


def test_a_fallbacks_header_adds_the_failed_call_it_stood_in_for() -> None:
    text = ("Ran service_history for you, since delay_feed timed out after 2 s (already "
            "called; it answered such tasks in earlier runs; answer from its result):\n"
            'service_history({"service": "RX1"}) -> RX1: delay 12 min')
    assert [(s.tool, s.status) for s in steps_of(text, TOOLS)] == [
        ("delay_feed", "timeout"), ("service_history", "ok")]
    nothing = text.replace("timed out after 2 s", 'found nothing ([])')
    assert steps_of(nothing, TOOLS)[0].status == "empty"
    failed = text.replace("timed out after 2 s", "failed: RuntimeError: down")
    assert steps_of(failed, TOOLS)[0].status == "error"


def _noting(*noted: tuple[CallEvidence, StandIn]) -> None:
    """Each call's record notes what its stand-in did (as ``routine_result.note`` does)."""
    for c, act in noted:
        c.call.stand_in = act


def test_step_observations_count_calls_and_misses_but_not_latency() -> None:
    routine = _call("guest_ledger_then_folio", "(the routine's text is not read)")
    late = _call("delay_feed", "(nor the stand-in's)")
    late.call.call_id = "c2"
    _noting(
        (routine, StandIn("routine", "guest_ledger_then_folio", steps=(
            StepOutcome("guest_ledger", {"guest": "A"}, "ok", '{"folio_id": "F"}'),
            StepOutcome("folio", {"folio_id": "F"}, "empty", "{}")))),
        (late, StandIn("routine", "delay_feed", False, steps=(
            StepOutcome("delay_feed", {"service": "S"}, "timeout", "2.5 s", 2.5),))))
    rows = step_observations([routine, late], "hotel")
    assert [(r.tool, r.empty, r.error, r.timeout, r.duration_ms) for r in rows] == [
        ("guest_ledger", False, False, False, UNTIMED),
        ("folio", True, False, False, UNTIMED),
        ("delay_feed", False, True, True, 2500.0),
    ]
    assert all(r.domain == "hotel" for r in rows)
    stats = compute_stats(rows)
    assert (stats["folio"].calls, stats["folio"].misses, stats["folio"].p95_ms) == (1, 1, 0.0)
    assert stats["delay_feed"].p50_ms == 2500.0


def test_a_failed_step_names_the_tool_that_answered_after_it() -> None:
    fallback = _call("delay_feed", "Ran service_history for you, since ...")
    _noting((fallback, StandIn("fallback", "delay_feed", True, "service_history", steps=(
        StepOutcome("delay_feed", {}, "error", ""),
        StepOutcome("service_history", {"service": "RX1"}, "ok", "RX1: delay 12 min")))))
    first, second = step_observations([fallback], "rail")
    assert (first.tool, first.error, first.alternative) == ("delay_feed", True,
                                                             "service_history")
    assert second.alternative == ""


def test_a_call_no_stand_in_noted_has_no_steps_whatever_its_text_says() -> None:
    """Issue 69: the learner no longer reads its stand-ins' answers back from their text."""
    lookalike = _call("folio", completed(["guest_ledger", "folio"], [
        'guest_ledger({"guest": "A"}) -> {"folio_id": "F"}', 'folio({"folio_id": "F"}) -> {}']))
    assert step_observations([lookalike], "hotel") == []


def test_a_result_full_of_call_lookalikes_is_read_in_bounded_steps() -> None:
    lookalike = 'folio({"folio_id": "F"}) -> x\n' * 5000 + 'folio({"unterminated": "' * 2000
    steps = steps_of(lookalike, TOOLS)
    assert len(steps) == MAX_STEPS and steps[-1].text.endswith('"')


def test_a_tool_seen_only_inside_routines_is_not_ranked_fastest() -> None:
    from toolcycle.playbook.stats import format_table, render_stats
    from toolcycle.playbook.store import ToolObservation

    rows = [ToolObservation("slow_api", 900.0, False, False) for _ in range(3)]
    rows += [ToolObservation("folio", UNTIMED, False, False) for _ in range(3)]
    rows += [ToolObservation("flaky", 5.0, True, False) for _ in range(3)]
    stats = compute_stats(rows)
    assert (stats["folio"].timed, stats["slow_api"].timed) == (0, 3)
    advice = render_stats(stats)
    assert "prefer slow_api, folio." in advice  # timed tools by latency, then the untimed
    folio_row = next(line for line in format_table(stats).splitlines() if "folio" in line)
    assert folio_row.split()[-2:] == ["-", "-"]


_PIECES = ["folio(", "guest_ledger(", "evil(", '{"a": 1}', "{", "}", ")", " -> ", " failed: ",
           " timed out after ", "\n", "[]", '""', "(stopped: x)", "Ran folio for you, since ",
           "delay_feed ", "found nothing", "x"]


@given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=8), max_size=40))
@settings(max_examples=300, deadline=None)
def test_any_text_reads_back_as_steps_of_the_named_tools_only(pieces: list[str]) -> None:
    text = "".join(pieces)
    steps = steps_of(text, TOOLS)
    assert len(steps) <= MAX_STEPS + 1  # (a fallback header's failed call beside them)
    assert all(s.tool in TOOLS and isinstance(s.arguments, dict) for s in steps)
    assert all(s.status in ("ok", "empty", "error", "timeout") for s in steps)
