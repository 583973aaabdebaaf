"""A format the error states: read, and learned as a pitfall's example where no run got past the
error (toolcycle.playbook.formats, evidence.stated_repair, the reflector and the reshaping
tool together)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from toolcycle import Agent, Message, tool
from toolcycle.datetimes import in_stated_format, stated_formats
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import LearningTask, Playbook, learn
from toolcycle.playbook.evidence import CallEvidence, stated_repair
from toolcycle.playbook.formats import legend, legend_code
from toolcycle.playbook.reflector import reflect
from toolcycle.tracing.trace import Step, ToolCallRecord, Trace

CLOCK = "invalid time '{}': expected HH:MM on the 24-hour clock"


@pytest.mark.parametrize(("error", "formats"), [
    ("invalid time '7:30 pm': expected HH:MM on the 24-hour clock", ["%H:%M"]),
    ("invalid date '3 November 2026': expected DD.MM.YYYY", ["%d.%m.%Y"]),
    ("dates look like YYYY-MM-DD", ["%Y-%m-%d"]),
    ("give MM/DD/YYYY", ["%m/%d/%Y"]),
    ("start must be hh:mm:ss", ["%H:%M:%S"]),
    ("time as HH.MM", ["%H.%M"]),
    ("expected an ISO 8601 date", ["%Y-%m-%d"]),
    ("a date (ISO 8601) is required", ["%Y-%m-%d"]),
    ("MM/DD/YYYY or DD.MM.YYYY", ["%m/%d/%Y", "%d.%m.%Y"]),  # two: neither is learned
    # what datetime.strptime raises, and pydantic's date error
    ("time data '7 pm' does not match format '%H:%M'", ["%H:%M"]),
    ("time data '3 May' does not match format '%d.%m.%Y'", ["%d.%m.%Y"]),
    ("Input should be a valid date in the format YYYY-MM-DD, invalid character in year",
     ["%Y-%m-%d"]),
    ("does not match format '%Y-%m'", []),
    ("does not match format '%d %B %Y'", []),  # a month's name: not a numeric format
    # no whole date or time, or not a date at all
    ("use an ISO 8601 duration like 'PT45M'", []),
    ("expected an ISO-8601 datetime", []),
    ("card expiry MM/YY", []),
    ("YYYY alone", []),
    ("HH:MM:DD", []),
    ("MM.DD", []),
    ("expected THE DD.MM.YYYYY form", []),
    ("", []),
])
def test_the_formats_an_error_spells_out(error: str, formats: list[str]) -> None:
    assert stated_formats(error) == formats


@pytest.mark.parametrize(("value", "error", "prompt", "written"), [
    ("7:30 pm", CLOCK, "", "19:30"),
    ("8 p.m.", CLOCK, "", "20:00"),
    ("19.30", CLOCK, "", "19:30"),
    ("6:00", CLOCK, "A table at 6 pm, please.", "18:00"),  # bare: the task's pm
    ("6:00", CLOCK, "A table at 6, please.", None),        # bare, said bare: not certain
    ("6:00", CLOCK, "At 6 pm or 6 am?", None),             # two readings
    ("19:30", CLOCK, "", None),                            # already so: not the format's fault
    ("3 November 2026", "expected DD.MM.YYYY", "", "03.11.2026"),
    ("2026-11-03", "expected DD.MM.YYYY", "", "03.11.2026"),
    ("11/3/2026", "expected DD.MM.YYYY", "", None),        # November or March: never guessed
    ("13/11/2026", "expected DD.MM.YYYY", "", "13.11.2026"),
    ("Nov 3rd 2026", "an ISO 8601 date", "", "2026-11-03"),
    ("November 3, 2026", "an ISO 8601 date", "", "2026-11-03"),
    ("tomorrow", "expected DD.MM.YYYY", "", None),
    ("3 November 2026", "MM/DD/YYYY or DD.MM.YYYY", "", None),  # which one? not said
    ("3 November 2026", "invalid date", "", None),                 # no format stated
    ("3 November 2026", "time data {!r} does not match format '%Y-%m-%d'", "", "2026-11-03"),
])
def test_a_value_is_written_in_the_stated_format_only_where_certain(
        value: str, error: str, prompt: str, written: str | None) -> None:
    assert in_stated_format(value, error.format(value), prompt) == written


def _evidence(args: dict[str, Any], error: str | None, status: str = "error") -> CallEvidence:
    record = ToolCallRecord(call_id="c0", name="table_finder", args=args, iteration=1,
                            error=error, result=None if error else "{}")
    return CallEvidence(0, record, status)  # type: ignore[arg-type]


@pytest.mark.parametrize(("args", "error", "example"), [
    ({"time": "7:30 pm", "party_size": 6}, CLOCK.format("7:30 pm"), ("time", "19:30")),
    # the error names the argument, not its value
    ({"time": "7:30 pm", "room": "Aster"}, "time must be HH:MM", ("time", "19:30")),
    # it quotes the value under another name
    ({"at": "9 pm"}, "could not read '9 pm': use HH:MM", ("at", "21:00")),
    # Python's own strptime error quotes the value
    ({"day": "3 May 2026"}, "ValueError: time data '3 May 2026' does not match format "
     "'%d.%m.%Y'", ("day", "03.05.2026")),
    # nothing ties the error to the argument: not learned
    ({"at": "9 pm"}, "use HH:MM", None),
    # two arguments it could mean: not learned
    ({"start": "9 pm", "end": "10 pm"}, "start '9 pm' and end '10 pm' must be HH:MM", None),
    # the only date-like value is not the one the error is about
    ({"time": "19:30", "note": "7 pm"}, "time must be HH:MM", None),
    # no format, but a legend that gives one code for the value (formats.legend_code)
    ({"priority": "low", "team": "desktop"}, "unknown priority 'low': give a P-code, "
     "P1 (critical), P2 (high), P3 (medium) or P4 (low)", ("priority", "P4")),
    ({"level": "high"}, "unknown level: use high (L2) or low (L4)", ("level", "L2")),
    ({"priority": "urgent"}, "unknown priority 'urgent': give P1 (critical) or P2 (high)",
     None),  # a word the legend has no code for
    ({"room": "Aster"}, "unknown room 'Aster': Birch (east wing), Cedar (garden)", None),
    # no format, but the error's own example of a valid value (evidence._stated_example)
    ({"destination": "Denmark", "weight_kg": 60},
     "unknown destination 'Denmark': give the two-letter country code, e.g. 'FR'",
     ("destination", "FR")),
    ({"sku": "claw hammer"}, 'unknown sku: give an SKU like "HX-100"', ("sku", "HX-100")),
    # the model's value is in the example's shape already: the example teaches nothing
    ({"destination": "DK"}, "unknown destination 'DK': give a country code, e.g. 'FR'", None),
    # no example, an example in no quotes, or two arguments it could be for
    ({"destination": "Denmark"}, "unknown destination 'Denmark'", None),
    ({"destination": "Denmark"}, "unknown destination 'Denmark', e.g. FR", None),
    ({"origin": "Paris", "destination": "Denmark"},
     "unknown origin 'Paris' or destination 'Denmark', e.g. 'FR'", None),
    ({"destination": "Denmark"}, "unknown destination 'Denmark', e.g. ''", None),
])
def test_the_repair_an_error_states(args: dict[str, Any], error: str,
                                    example: tuple[str, str] | None) -> None:
    repair = stated_repair(_evidence(args, error))
    found = None if repair is None else (repair.argument, repair.example)
    assert found == example
    if repair is not None:
        assert repair.kind == "argument" and repair.tool == "table_finder"


@pytest.mark.parametrize(("error", "pairs"), [
    ("give a P-code, P1 (critical), P2 (high), P3 (medium) or P4 (low)",
     [("P1", "critical"), ("P2", "high"), ("P3", "medium"), ("P4", "low")]),
    ("use high (L2) or low (L4)", [("L2", "high"), ("L4", "low")]),
    ("Birch (east wing), Cedar (garden)", []),  # words on both sides: no codes
    ("P1 (P2)", []),  # codes on both sides
    ("", []), ("[]", []), ("{}", []), ("null", []), ('""', []),
])
def test_the_codes_an_errors_legend_gives(error: str, pairs: list[tuple[str, str]]) -> None:
    assert legend(error) == pairs


def test_a_legend_code_is_given_only_where_it_is_one() -> None:
    error = "P1 (critical), P2 (high), X2 (high)"
    assert legend_code("critical", error) == "P1"
    assert legend_code(" Critical ", error) == "P1"
    assert legend_code("high", error) is None  # two codes for it
    assert legend_code("P1", error) is None  # a code is no meaning


def test_no_stated_repair_for_a_call_that_did_not_fail() -> None:
    assert stated_repair(_evidence({"time": "7:30 pm"}, None, "empty")) is None


def _failed_trace(value: str, prompt: str) -> Trace:
    record = ToolCallRecord(call_id="c0", name="table_finder", args={"time": value},
                            iteration=1, error=CLOCK.format(value))
    return Trace(run_id="r", agent_name="hotel", user_prompt=prompt,
                 steps=[Step(iteration=1, attempt=1, tool_calls=[record])],
                 termination={"reason": "completed", "action": "answered"})


def test_a_pitfall_the_run_never_got_past_carries_the_errors_own_format() -> None:
    [pitfall] = [i for i in reflect(_failed_trace("7:30 pm", "Free table at 7:30 pm?"),
                                    success=False, domain="hotel") if i.kind == "pitfall"]
    assert pitfall.advice.endswith('. Pass time like "19:30".')
    assert "|argument::time:" in pitfall.detail


def test_a_pitfall_carries_the_example_its_error_gives() -> None:
    record = ToolCallRecord(call_id="c0", name="freight_quote",
                            args={"destination": "Denmark", "weight_kg": 60}, iteration=1,
                            error="ValueError: unknown destination 'Denmark': give the "
                                  "two-letter country code, e.g. 'FR'")
    trace = Trace(run_id="r", agent_name="depot", user_prompt="Send 60 kg to Denmark: cost?",
                  steps=[Step(iteration=1, attempt=1, tool_calls=[record])],
                  termination={"reason": "completed", "action": "answered"})
    [pitfall] = [i for i in reflect(trace, success=False, domain="depot")
                 if i.kind == "pitfall"]
    assert pitfall.advice.endswith('. Pass destination like "FR".')
    assert "earlier tools" not in pitfall.advice


def test_a_pitfall_carries_the_code_its_errors_legend_gives() -> None:
    """`helpdesk` (JSON, at e84149c): no train run got past the legend, so the pitfall said
    "check the arguments" and no reshaped call mended "low" in the test runs."""
    record = ToolCallRecord(call_id="c0", name="sla_target",
                            args={"priority": "low", "team": "desktop"}, iteration=1,
                            error="ValueError: unknown priority 'low': give a P-code, "
                                  "P1 (critical), P2 (high), P3 (medium) or P4 (low)")
    trace = Trace(run_id="r", agent_name="helpdesk", user_prompt="Target for a low desktop "
                  "ticket?", steps=[Step(iteration=1, attempt=1, tool_calls=[record])],
                  termination={"reason": "completed", "action": "answered"})
    [pitfall] = [i for i in reflect(trace, success=False, domain="helpdesk")
                 if i.kind == "pitfall"]
    assert pitfall.advice.endswith('. Pass priority like "P4".')
    assert pitfall.detail.endswith("|argument::priority:A9")


def test_without_a_certain_reading_the_pitfall_says_only_what_failed() -> None:
    [pitfall] = [i for i in reflect(_failed_trace("half seven", "Table at half seven?"),
                                    success=False, domain="hotel") if i.kind == "pitfall"]
    assert "|" not in pitfall.detail and "Pass time" not in pitfall.advice


# -- learned, then used ----------------------------------------------------------------------

TABLES = {"19:30": "T4", "20:00": "T9", "18:00": "T2", "21:00": "T7"}


def table_finder(time: str) -> str:
    """The free table at a restaurant sitting."""
    if not re.fullmatch(r"\d\d:\d\d", time):
        raise ValueError(CLOCK.format(time))
    return f'{{"table": "{TABLES.get(time)}"}}'


def _as_said(messages: list[Message], settings: ModelSettings) -> Any:
    """Passes the time as the task said it ("at 8 pm"), once; answers from what came back,
    and gives up on an error (the 1.5B in JSON mode on `hotel`)."""
    prompt = next(m.text for m in messages if m.role == "user")
    results = [str(getattr(p, "content", "")) for m in messages if m.role == "tool"
               for p in m.parts]
    if not results:
        said = re.search(r"at (\d{1,2}(?::\d\d)? ?pm)", prompt)
        return call("table_finder", {"time": said[1] if said else "now"})
    table = re.search(r'"table": "(\w+)"', results[-1])
    return table[1] if table else "No table is free."


def _agent(pb: Playbook) -> Agent[Any, str]:
    return Agent(ScriptedModel(_as_said), "Find tables with the tools.",
                 [tool(table_finder, read_only=True)], name="hotel", playbook=pb)


async def test_a_format_no_train_run_got_past_mends_the_test_runs_call() -> None:
    pb = Playbook(":memory:", routines=True)
    train = [("t1", "Which table is free at 7:30 pm for a party of four?", "T4"),
             ("t2", "Any free table at 6 pm for two?", "T2"),
             ("t3", "Find us a table at 9 pm, party of five.", "T7")]
    report = await learn([LearningTask(*t) for t in train], _agent(pb), playbook=pb,
                         progress=False)
    # neither of the first two runs got past the error; their probes found the call that
    # does, so the sequence they teach shows its format, and that mends the third run's call
    assert [report.outcomes[f"0:{t}"]["success"] for t in ("t1", "t2", "t3")] == [
        False, False, True]
    # (the third run's error was mended, so its pitfall has two runs: the sequence teaches)
    [sequence] = [s for s in pb.store.strategies("hotel") if s.kind == "sequence"]
    assert sequence.status == "active" and 'time like "' in sequence.advice
    pb.learn = False
    result = await _agent(pb).run("A table at 8 pm for three?")
    assert result.output == "T9"
    [record] = result.trace.tool_calls
    assert record.result is not None and 'called it again with time "20:00"' in record.result


async def test_one_agent_uses_a_lesson_it_learned_mid_life_from_its_next_run() -> None:
    """The stand-ins (reshaped calls, fallbacks) of a lesson promoted while the agent lives
    are offered from the next run on: bench/learning.py builds one agent per epoch, and its
    later train runs were offered none of what the epoch had taught."""
    pb = Playbook(":memory:", routines=True)
    agent = _agent(pb)  # built before any lesson exists
    train = [("t1", "Which table is free at 7:30 pm for a party of four?", "T4"),
             ("t2", "Any free table at 6 pm for two?", "T2"),
             ("t3", "Find us a table at 9 pm, party of five.", "T7"),
             ("t4", "A table at 8 pm for three?", "T9")]
    report = await learn([LearningTask(*t) for t in train], agent, playbook=pb,
                         progress=False)
    # the sequence two runs' probes taught mends the third run's call already
    assert [report.outcomes[f"0:{t}"]["success"] for t in ("t1", "t2", "t3", "t4")] == [
        False, False, True, True]


async def test_a_retired_lessons_stand_in_goes_with_it() -> None:
    pb = Playbook(":memory:", routines=True)
    agent = _agent(pb)
    await learn([LearningTask(*t) for t in [
        ("t1", "Which table is free at 7:30 pm for a party of four?", "T4"),
        ("t2", "Any free table at 6 pm for two?", "T2"),
        ("t3", "Find us a table at 9 pm, party of five.", "T7")]], agent, playbook=pb,
        progress=False)
    # every lesson that knows the format (the pitfall, and the sequence that shows it)
    taught = [s for s in pb.store.strategies("hotel") if s.kind in ("pitfall", "sequence")]
    assert "sequence" in {s.kind for s in taught}
    for lesson in taught:
        lesson.status = "retired"
    pb.store.put(taught)
    pb._agents["hotel"].relearn(pb.store.strategies("hotel"))  # as learn_from does
    pb.learn = False
    result = await agent.run("A table at 8 pm for three?")
    assert result.output == "No table is free."  # the model's own failure, unmended
