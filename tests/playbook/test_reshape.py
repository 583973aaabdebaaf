"""Reshaped calls: a call rejected for an argument's format made again in the learned format
(toolcycle.playbook.reshape)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest

from toolcycle import Agent, Message, tool
from toolcycle.datetimes import as_the_task_names
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import Playbook
from toolcycle.playbook.evidence import Repair
from toolcycle.playbook.offer import pitfall_stand_ins
from toolcycle.playbook.reflector import pitfall_advice
from toolcycle.playbook.reshape import argument_lesson, reshape, reshaped, shown_formats
from toolcycle.playbook.strategy import Argument, Strategy

ERROR = "invalid date …: expected DD.MM.YYYY"
LEGEND = "unknown priority …: give a P-code, P1 (critical), P2 (high), P3 (medium) or P4 (low)"
FARES = {"03.11.2026": 19.4, "13.11.2026": 21.0}


def fare_quote(origin: str, date: str) -> str:
    """Standard single fare from a station on a travel date."""
    if not re.fullmatch(r"\d\d\.\d\d\.\d{4}", date):
        raise ValueError(f"invalid date {date!r}: expected DD.MM.YYYY")
    if date not in FARES:
        raise ValueError(f"no fares on {date!r}")
    return f'{{"origin": "{origin}", "fare_eur": {FARES[date]}}}'


def _pitfall(example: str = "01.05.2026", status: str = "active") -> Strategy:
    repair = Repair("argument", "fare_quote", argument="date", example=example)
    return Strategy(id="p", domain="rail", kind="pitfall", applies_when=["fare", "single"],
                    advice=pitfall_advice("fare_quote", ERROR, repair, timeout=False),
                    tools=["fare_quote"], support=3, status=status,
                    detail=f"{ERROR}|{repair.signature}",
                    error_class=ERROR, repair=repair)


def _writes(date: str) -> Any:
    """A model that writes the date its way once, then answers from whatever came back."""
    def reply(messages: list[Message], settings: ModelSettings) -> Any:
        results = [p for m in messages if m.role == "tool" for p in m.parts]
        if not results:
            return call("fare_quote", {"origin": "Pellingham", "date": date})
        return "Answer: " + results[-1].content.splitlines()[-1]
    return reply


def _agent(pb: Playbook, date: str, *, read_only: bool = True) -> Agent[Any, str]:
    return Agent(ScriptedModel(_writes(date)), "Answer with the tools.",
                 [tool(fare_quote, read_only=read_only)], name="rail", playbook=pb)


def _playbook(*strategies: Strategy, routines: bool = True) -> Playbook:
    pb = Playbook(":memory:", routines=routines)
    pb.store.put(list(strategies or [_pitfall()]))
    return pb


CLOCK = "invalid time …: expected HH:MM on the …-hour clock"
COUNTRY = "unknown destination …: give the two-letter country code, e.g. …"  # as learned


@pytest.mark.parametrize(("value", "example", "error", "fixed"), [
    ("3.11.2026", "01.05.2026", ERROR, "03.11.2026"),        # the day left unpadded
    ("3 November 2026", "01.05.2026", ERROR, "03.11.2026"),  # as the task wrote it
    ("November 3, 2026", "01.05.2026", ERROR, "03.11.2026"),
    ("3rd Nov 2026", "01.05.2026", ERROR, "03.11.2026"),
    ("2026-11-03", "01.05.2026", ERROR, "03.11.2026"),       # the year first: one reading
    ("13/11/2026", "01.05.2026", ERROR, "13.11.2026"),       # a day above 12: one reading
    ("3 November 2026", "2026-05-01", "", "2026-11-03"),
    ("11/3/2026", "01.05.2026", ERROR, None),    # November or March: never guessed
    ("3.11.2026", "2026-05-01", "", None),       # the same
    ("03.11.2026", "01.05.2026", ERROR, None),   # already in shape: the error is another's
    ("tomorrow", "01.05.2026", ERROR, None),
    ("3 November 2026", "01.05.2026", "", None),  # 01.05: day or month first? not said
    ("3.11.2026", "01.05.2026", "", "03.11.2026"),  # ... yet padding needs no order
    ("a7", "A012", "", "A007"),                  # not a date: digits padded, case matched
    ("AB-3", "ab-04", "", "ab-03"),
    ("A-7-X", "A012", "", None),                 # different groups: left alone
    ("12345", "0123", "", None),                 # longer than the example's group
    # the error's own legend gives the code (either way round), one code only
    ("high", "P4", LEGEND, "P2"),
    ("Medium", "P4", LEGEND, "P3"),
    ("high", "P4", "use one of: critical (P1), high (P2)", "P2"),
    ("urgent", "P4", LEGEND, None),             # in no entry of it
    ("high", "P4", "codes: P1 (high), P2 (high)", None),  # two codes: not certain
    ("high", "2026-05-01", LEGEND, None),       # no code of the example's shape
    # a time on the 12-hour clock with its pm (or am), in a 24-hour example's format
    ("7:30 pm", "19:00", CLOCK, "19:30"), ("6 pm", "19:00", CLOCK, "18:00"),
    ("9pm", "19:00", CLOCK, "21:00"), ("7.30 P.M.", "19:00", CLOCK, "19:30"),
    ("12 am", "19:00", CLOCK, "00:00"), ("12:15 pm", "19:00", CLOCK, "12:15"),
    ("19.30", "19:00", CLOCK, "19:30"),         # the 24-hour clock written apart
    ("6:45 pm", "19.00", CLOCK, "18.45"),       # in the example's own separator
    ("7:30", "19:00", CLOCK, "07:30"),          # no pm said: padded as written, not read
    ("half past seven", "19:00", CLOCK, None), ("amber", "19:00", CLOCK, None),
    # a country's name as its ISO 3166 code, where the error asks for a country code
    ("Denmark", "FR", COUNTRY, "DK"), ("czechia", "FR", COUNTRY, "CZ"),
    ("Denmark", "FRA", COUNTRY, "DNK"),
    ("Denmark", "fr", COUNTRY, "dk"), (" Denmark ", "FR", COUNTRY, "DK"),
    ("Holland", "FR", COUNTRY, None),           # no ISO name: not guessed
    ("Denmark", "FR", "unknown destination …: give the code, e.g. …", None),  # no country
    ("Denmark", "ZZ", COUNTRY, None),           # the example is no country's code
    ("Denmark", "F1", COUNTRY, None), ("", "FR", COUNTRY, None), ("[]", "FR", COUNTRY, None),
    ("{}", "FR", COUNTRY, None), ("null", "FR", COUNTRY, None),
    ("Denmark " * 5000, "FR", COUNTRY, None),   # too long to be a country's name
])
def test_a_value_is_reshaped_only_where_its_meaning_is_certain(
        value: str, example: str, error: str, fixed: str | None) -> None:
    assert reshape(value, example, error) == fixed


TABLE = "Which table is available for a party of six at 6 pm?"


@pytest.mark.parametrize(("value", "prompt", "fixed"), [
    ("6:00", TABLE, "18:00"),   # hotel, replayed: the task's pm settles the bare time
    ("6", TABLE, "18:00"), ("6.00", TABLE, "18:00"),
    ("6:00", "A table at 6 pm, or else at 6 am?", None),  # two fit: not certain
    ("6:00", "", "06:00"),      # the task says no pm: padded as written
    ("7:00", TABLE, "07:00"),   # not the time the task said: padded as written
    ("2026", "at 8 pm", None),  # no clock writes a year
])
def test_a_bare_time_takes_the_pm_the_task_said(value: str, prompt: str,
                                                 fixed: str | None) -> None:
    assert reshape(value, "19:00", CLOCK, prompt) == fixed


def test_the_lesson_of_an_argument_pitfall() -> None:
    lesson = argument_lesson(_pitfall())
    assert lesson is not None
    assert (lesson.tool, lesson.error_class, lesson.argument, lesson.example) == (
        "fare_quote", ERROR, "date", "01.05.2026")


@pytest.mark.parametrize("strategy", [
    _pitfall(status="retired"),
    Strategy(id="t", domain="rail", kind="pitfall", tools=["delay_feed"],
             advice="delay_feed times out. Do not wait on it: try another tool that can "
                    "answer.", detail="timed out", error_class="timed out"),
    Strategy(id="a", domain="rail", kind="pitfall", tools=["find_ticker", "get_quote"],
             advice="find_ticker fails with: unknown …. Call get_quote(company) instead.",
             detail="unknown …|alternative:get_quote::", error_class="unknown …",
             repair=Repair("alternative", "find_ticker", via="get_quote",
                           via_args=("company",))),
    Strategy(id="s", domain="rail", kind="sequence", tools=["fare_quote"],
             advice='Call fare_quote(date like "01.05.2026", origin), then answer.',
             first_args=[Argument("date", "01.05.2026"), Argument("origin")]),
    Strategy(id="x", domain="rail", kind="pitfall", tools=["fare_quote"],  # no example
             advice="fare_quote fails with: invalid date …. Pass date as the task itself "
                    "words it.", detail=f"{ERROR}|argument::date:", error_class=ERROR,
             repair=Repair("argument", "fare_quote", argument="date")),
    Strategy(id="y", domain="rail", kind="pitfall", tools=["fare_quote"],  # text alone
             advice='fare_quote fails with: invalid date …. Pass date like "01.05.2026".',
             detail=f"{ERROR}|argument::date:99.99.9999"),
])
def test_no_lesson_from_anything_else(strategy: Strategy) -> None:
    assert argument_lesson(strategy) is None


@pytest.mark.parametrize("written", ["3 November 2026", "3.11.2026"])
async def test_a_call_rejected_for_its_format_is_made_again_in_the_learned_one(
        written: str) -> None:
    pb = _playbook()
    result = await _agent(pb, written).run("How much is a single from Pellingham on 3 "
                                           "November 2026?")
    assert result.output == 'Answer: {"origin": "Pellingham", "fare_eur": 19.4}'
    assert len(result.trace.steps) == 2  # the call, the answer: no turn spent mending it
    [record] = result.trace.tool_calls
    assert record.error is None and record.args == {"origin": "Pellingham", "date": written}
    assert record.result is not None and record.result.startswith(
        f'fare_quote rejected date "{written}" ({ERROR}); called it again with date '
        '"03.11.2026", in the format earlier runs learned')
    assert reshaped("fare_quote", record.result)
    # learning from it: not the model's format, not a working call of the model's own
    assert pb.flush(30)
    assert "fare_quote" not in pb.tool_stats("rail")
    assert not any(written in str(c) for c in pb.store.candidates())
    pitfall = pb.store.get("p")
    assert pitfall is not None and pitfall.helpful == 1 and pitfall.harmful == 0


async def test_the_error_stands_where_the_value_cannot_be_read_for_certain() -> None:
    result = await _agent(_playbook(), "11/3/2026").run("A single from Pellingham?")
    [record] = result.trace.tool_calls
    assert record.error is not None and "invalid date '11/3/2026'" in record.error


async def test_a_second_failure_leaves_the_first_standing() -> None:
    result = await _agent(_playbook(), "4 November 2026").run("A single from Pellingham?")
    [record] = result.trace.tool_calls  # 04.11.2026 has no fares: the model's error shown
    assert record.error is not None and "invalid date '4 November 2026'" in record.error
    assert "no fares" not in record.error


async def test_another_error_of_the_same_tool_is_not_the_lessons() -> None:
    result = await _agent(_playbook(), "05.11.2026").run("A single from Pellingham?")
    [record] = result.trace.tool_calls
    assert record.error is not None and "no fares on '05.11.2026'" in record.error


async def test_no_second_call_of_a_tool_that_may_change_something() -> None:
    result = await _agent(_playbook(), "3.11.2026", read_only=False).run("A single?")
    assert result.trace.tool_calls[0].error is not None


async def test_without_routines_nothing_is_reshaped() -> None:
    result = await _agent(_playbook(routines=False), "3.11.2026").run("A single?")
    assert result.trace.tool_calls[0].error is not None


async def test_the_second_call_counts_against_the_runs_tool_budget() -> None:
    from toolcycle.limits import Limits

    agent = Agent(ScriptedModel(_writes("3.11.2026")), "Answer with the tools.",
                  [tool(fare_quote, read_only=True)], name="rail", playbook=_playbook(),
                  limits=Limits(max_tool_calls=1))
    result = await agent.run("A single from Pellingham?")
    first = result.trace.tool_calls[0]
    assert first.error is not None and "invalid date '3.11.2026'" in first.error


class _FareServer:
    """A toolset (an MCP server, say): its tools are known only when a run lists them."""

    def __init__(self) -> None:
        self.tools = [tool(fare_quote, read_only=True)]

    async def get_tools(self) -> list[Any]:
        return self.tools

    async def close(self) -> None:
        return None


async def test_a_toolsets_tool_is_reshaped_too() -> None:
    pb = _playbook()
    agent = Agent(ScriptedModel(_writes("3 November 2026")), "Answer with the tools.",
                  [_FareServer()], name="rail", playbook=pb)
    result = await agent.run("How much is a single from Pellingham on 3 November 2026?")
    [record] = result.trace.tool_calls
    assert record.error is None and reshaped("fare_quote", record.result)
    assert result.output == 'Answer: {"origin": "Pellingham", "fare_eur": 19.4}'


async def test_a_priority_the_errors_legend_codes_is_passed_as_its_code() -> None:
    """`helpdesk`: the 1.5B passed "high" to sla_target, which lists its codes' meanings."""

    def sla_target(priority: str, team: str) -> str:
        """The response-time target of a ticket."""
        if priority not in {"P1", "P2", "P3", "P4"}:
            raise ValueError(f"unknown priority {priority!r}: give a P-code, P1 (critical), "
                             "P2 (high), P3 (medium) or P4 (low)")
        minutes = [10, 60, 240, 1440][int(priority[1]) - 1]
        return f'{{"team": "{team}", "response_minutes": {minutes}}}'

    record = await _run_with_lesson(
        sla_target, LEGEND, "priority", "P4", {"priority": "high", "team": "network"},
        "What is the response target for a high-priority network ticket?",
        '{"team": "network", "response_minutes": 60}')
    assert 'called it again with priority "P2"' in record


async def _run_with_lesson(function: Any, error: str, argument: str, example: str,
                           arguments: dict[str, Any], task: str, answer: str) -> str:
    """A run of an agent with ``function`` and the argument lesson (``error``, pass
    ``argument`` like ``example``), whose model calls it with ``arguments`` once and then
    answers with the last line it got: asserts the call was reshaped and the run answered
    ``answer``, and gives the call's result."""
    name = function.__name__
    repair = Repair("argument", name, argument=argument, example=example)
    pitfall = Strategy(id="p", domain="test", kind="pitfall", applies_when=[argument],
                       advice=pitfall_advice(name, error, repair, timeout=False),
                       tools=[name], support=3, detail=f"{error}|{repair.signature}",
                       error_class=error, repair=repair)
    pb = Playbook(":memory:", routines=True)
    pb.store.put([pitfall])

    def model(messages: list[Message], settings: ModelSettings) -> Any:
        results = [p for m in messages if m.role == "tool" for p in m.parts]
        if not results:
            return call(name, arguments)
        return results[-1].content.splitlines()[-1]

    agent = Agent(ScriptedModel(model), "Answer with the tools.",
                  [tool(function, read_only=True)], name="test", playbook=pb)
    result = await agent.run(task)
    assert result.output == answer
    [record] = result.trace.tool_calls
    assert record.result is not None and reshaped(name, record.result)
    return record.result


async def test_a_bare_time_is_reshaped_by_the_pm_of_the_runs_own_task() -> None:
    """The reshaping tool reads the run's prompt (RunContext.prompt) for a bare time."""
    clock_error = "invalid time …: expected HH:MM on the …-hour clock"

    def table_finder(time: str) -> str:
        """The free table at a time."""
        if not re.fullmatch(r"\d\d:\d\d", time):
            raise ValueError(f"invalid time {time!r}: expected HH:MM on the 24-hour clock")
        return '{"table": "T21"}' if time == "18:00" else '{"table": null}'

    def reply(messages: list[Message], settings: ModelSettings) -> Any:
        results = [p for m in messages if m.role == "tool" for p in m.parts]
        if not results:
            return call("table_finder", {"time": "6:00"})
        return "Answer: " + results[-1].content.splitlines()[-1]

    repair = Repair("argument", "table_finder", argument="time", example="19:00")
    pb = _playbook(Strategy(
        id="p", domain="hotel", kind="pitfall", applies_when=["table"],
        advice=pitfall_advice("table_finder", clock_error, repair, timeout=False),
        tools=["table_finder"], support=3, detail=f"{clock_error}|{repair.signature}",
        error_class=clock_error, repair=repair))
    agent = Agent(ScriptedModel(reply), "Answer with the tools.",
                  [tool(table_finder, read_only=True)], name="hotel", playbook=pb)
    result = await agent.run("Which table is free for six at 6 pm?")
    assert result.output == 'Answer: {"table": "T21"}'
    [record] = result.trace.tool_calls
    assert record.result is not None and 'called it again with time "18:00"' in record.result


async def test_a_countrys_name_is_passed_as_its_code() -> None:
    """`depot` (JSON): the 1.5B passed "Denmark" to freight_quote, which wants 'FR'-style
    codes, and explained the error instead of calling again."""

    def freight_quote(destination: str, weight_kg: float) -> str:
        """Freight rate to a destination for a shipment's weight."""
        if destination not in {"DK", "FR"}:
            raise ValueError(f"unknown destination {destination!r}: give the two-letter "
                             "country code, e.g. 'FR'")
        return f'{{"destination": "{destination}", "total_eur": {weight_kg * 2.41:.1f}}}'

    await _run_with_lesson(
        freight_quote, COUNTRY, "destination", "FR", {"destination": "Denmark", "weight_kg": 60},
        "How much does it cost to send 60 kg to Denmark?",
        '{"destination": "DK", "total_eur": 144.6}')


def _sequence(example: str = "10.09.2026", status: str = "active") -> Strategy:
    """A sequence promoted with the format its first call passed (no pitfall learned yet: a
    pitfall waits for three runs, a sequence two that found the answer)."""
    return Strategy(id="s", domain="rail", kind="sequence", applies_when=["fare", "single"],
                    advice=f'Call fare_quote(origin, date like "{example}"), then answer.',
                    tools=["fare_quote"], support=2, status=status,
                    first_args=[Argument("origin"), Argument("date", example)])


async def test_a_sequences_shown_format_mends_a_call_refused_for_that_argument() -> None:
    pb = _playbook(_sequence())
    result = await _agent(pb, "2026-11-03").run("A single from Pellingham on 3 November?")
    [record] = result.trace.tool_calls
    assert record.error is None and record.result is not None
    assert record.result.startswith(
        'fare_quote rejected date "2026-11-03" (invalid date …: expected DD.MM.YYYY); called '
        'it again with date "03.11.2026", in the format earlier runs learned')
    assert result.output == 'Answer: {"origin": "Pellingham", "fare_eur": 19.4}'


@pytest.mark.parametrize(("strategy", "written"), [
    (_sequence(), "05.11.2026"),            # refused for something else: "no fares on ..."
    (_sequence(status="candidate"), "2026-11-03"),  # not promoted: nothing is known yet
])
async def test_a_sequences_format_mends_nothing_else(strategy: Strategy, written: str) -> None:
    result = await _agent(_playbook(strategy), written).run("A single from Pellingham?")
    assert result.trace.tool_calls[0].error is not None


def test_a_sequences_format_is_a_lesson_with_no_error_class_of_its_own() -> None:
    assert shown_formats(_pitfall()) == [] and [
        (a.argument, a.example, a.error_class) for a in shown_formats(_sequence())] == [
        ("date", "10.09.2026", "")]


async def test_a_pitfalls_lesson_comes_before_a_sequences_format() -> None:
    """One reshaping call per tool: the pitfall's (DD.MM.YYYY, what the tool takes) wins
    over a sequence showing another writing, whichever the store lists first."""
    tools = {"fare_quote": tool(fare_quote, read_only=True)}
    _, reshapes = pitfall_stand_ins([_sequence("2026-09-10"), _pitfall()], tools)
    assert list(reshapes) == ["fare_quote"]
    result = await _agent(_playbook(_sequence("2026-09-10"), _pitfall()), "3 November 2026"
                          ).run("A single from Pellingham on 3 November 2026?")
    [record] = result.trace.tool_calls
    assert record.result is not None and 'again with date "03.11.2026"' in record.result


async def test_a_swapped_date_the_tool_refuses_leaves_the_models_own_call() -> None:
    """The task's date in the lesson's format is refused (a schema that allows only the
    model's writing here): the model's call is made as it wrote it, not failed for a value
    it never passed."""
    strict = tool(day_stats, read_only=True)
    strict.spec.parameters["properties"]["on_date"]["enum"] = ["11/08/2026"]
    result = await _swapped_date_run(strict)
    [record] = result.trace.tool_calls
    assert record.error is None and record.result == '{"line": "MS1673", "dropped": []}'


async def _swapped_date_run(day_stats_tool: Any) -> Any:
    """A run shown a sequence whose format writes the month first ("12/14/2026"), of a model
    that writes 11 August 2026 day first ("11/08/2026"), then answers with the last result."""
    sequence = Strategy(id="s", domain="telecom", kind="sequence", applies_when=["dropped"],
                        advice='Call day_stats(line, on_date like "12/14/2026"), then answer.',
                        tools=["day_stats"], support=2, status="active",
                        first_args=[Argument("line"), Argument("on_date", "12/14/2026")])
    pb = Playbook(":memory:")
    pb.store.put([sequence])

    def writes(messages: list[Message], settings: ModelSettings) -> Any:
        results = [p for m in messages if m.role == "tool" for p in m.parts]
        if not results:
            return call("day_stats", {"line": "MS1673", "on_date": "11/08/2026"})
        return "Answer: " + results[-1].content.splitlines()[-1]

    agent = Agent(ScriptedModel(writes), "Answer with the tools.", [day_stats_tool],
                  name="telecom", playbook=pb)
    return await agent.run("Give me line MS1673's dropped calls on 11 August 2026.")


def day_stats(line: str, on_date: str) -> str:
    """Dropped calls of a line on a day (month first; either order parses, as many do)."""
    m, d, _year = (int(p) for p in on_date.split("/"))
    dropped = {(8, 11): 4}.get((m, d))  # 11 August
    return f'{{"line": "{line}", "dropped": {dropped if dropped is not None else "[]"}}}'


def test_a_date_is_read_as_the_task_names_it() -> None:
    task = "Give me line MS1673's dropped calls on 11 August 2026."
    assert as_the_task_names("11/08/2026", "%m/%d/%Y", task) == (dt.date(2026, 11, 8),
                                                                 "08/11/2026")
    assert as_the_task_names("08/11/2026", "%m/%d/%Y", task) is None   # as the task says
    assert as_the_task_names("11/08/2026", "%m/%d/%Y", "Dropped calls today?") is None
    both = "Compare 11 August 2026 with 8 November 2026."
    assert as_the_task_names("11/08/2026", "%m/%d/%Y", both) is None   # either was meant


async def test_a_date_written_the_other_way_round_is_passed_as_the_tasks() -> None:
    result = await _swapped_date_run(tool(day_stats, read_only=True))
    assert result.output == 'Answer: {"line": "MS1673", "dropped": 4}'
    [record] = result.trace.tool_calls
    assert record.result is not None and record.result.startswith(
        'day_stats: on_date "11/08/2026" in the format earlier runs learned ("12/14/2026") '
        'is 2026-11-08, a date the task does not name; called it with on_date "08/11/2026"')


async def test_a_reshaping_tool_called_outside_a_run_still_reshapes() -> None:
    """Without a run there is no context (and no task to read a date from): the lesson's
    format still mends the refused call, as a fallback called so still falls back."""
    from toolcycle.playbook.reshape import ArgumentLesson, reshaping_tool

    def day_total(day: str) -> str:
        """Units on a day."""
        if day != "03.11.2026":
            raise ValueError(f"invalid day {day!r}: expected DD.MM.YYYY")
        return "7"

    reshaping = reshaping_tool(tool(day_total, read_only=True),
                               ArgumentLesson("day_total", "", "day", "03.11.2026"))
    assert reshaping is not None
    text = await reshaping.invoke(None, {"day": "2026-11-03"})  # type: ignore[arg-type]
    assert text.endswith('again with day "03.11.2026", in the format earlier runs learned '
                         "(already called; answer from its result):\n7")
