"""A probe makes the call the error asked for (toolcycle.playbook.probe): a failed run's date
refused in another format is passed again, rewritten as the error says, and where that call's
result holds the expected answer it is the repair, and the sequence with its format.

Seen on generated suites (bench/learning_gen/shown.py, two train tasks per kind, every train
task given up after its first call, as the 1.5B often does after "invalid date"): the
argument-format kind taught nothing, because the pitfall read from the error waits for three
runs and no probe had checked the call it asks for.
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from toolcycle import Agent, Message, tool
from toolcycle.datetimes import example_readings, in_example_readings
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import Playbook, learn
from toolcycle.playbook.evidence import CallEvidence
from toolcycle.playbook.pitfall import pitfall_advice
from toolcycle.playbook.probe import Probe, probe_repairs
from toolcycle.tracing.trace import ToolCallRecord

SHIPPED = {("AR0589", date(2026, 11, 23)): 412, ("WT8327", date(2026, 10, 7)): 95,
           ("SK0409", date(2026, 3, 19)): 17}
CALLS: list[dict[str, str]] = []


def daybook(article: str, day: str) -> str:
    """Units shipped of an article on one day."""
    CALLS.append({"article": article, "day": day})
    if len(day) != 8 or not day.isdigit():
        raise ValueError(f"invalid day {day!r}: expected YYYYMMDD")
    when = date(int(day[:4]), int(day[4:6]), int(day[6:]))
    return json.dumps({"article": article, "units_shipped": SHIPPED.get((article, when))})


TASKS = [
    {"id": "t1", "prompt": "How many units of article AR0589 were shipped on 23 November 2026?",
     "expected": "412"},
    {"id": "t2", "prompt": "Article WT8327: how many units were shipped on October 7, 2026?",
     "expected": "95"},
]


def gives_up(messages: list[Message], settings: ModelSettings) -> Any:
    """Passes the day as ISO, and answers that the date is invalid once refused."""
    prompt = next(m.text for m in messages if m.role == "user")
    if not any(m.role == "tool" for m in messages):
        article = next(w.strip(":?") for w in prompt.split() if w[:2].isupper() and
                       any(ch.isdigit() for ch in w))
        day = "2026-11-23" if "November" in prompt else "2026-10-07"
        return call("daybook", {"article": article, "day": day})
    return "The date seems to be invalid."


async def test_two_given_up_runs_teach_the_call_with_the_format_the_error_asked() -> None:
    pb = Playbook(":memory:")
    agent = Agent(ScriptedModel(gives_up), "Answer with the tools.",
                  [tool(daybook, read_only=True)], name="shipping", playbook=pb)
    CALLS.clear()
    report = await learn(TASKS, agent, playbook=pb, progress=False)
    assert report.success_rate == 0.0
    assert pb.flush(30)
    # each run's refused call was made again as the error asked, and answered
    assert {"article": "AR0589", "day": "20261123"} in CALLS
    assert {"article": "WT8327", "day": "20261007"} in CALLS
    [sequence] = [s for s in pb.strategies("shipping") if s.kind == "sequence"]
    assert sequence.probed == 2
    assert sequence.advice.startswith('Call daybook(article, day like "2026')
    text, shown = pb.instructions_for(
        "How many units of article SK0409 were shipped on 19 March 2026?", "shipping",
        ["daybook"])
    assert sequence.id in shown and 'day like "2026' in text


def _miss(args: dict[str, Any], error: str) -> CallEvidence:
    record = ToolCallRecord(call_id="c1", name="daybook", args=args, iteration=1,
                            error=error, error_type="tool_error")
    return CallEvidence(index=0, call=record, status="error")


async def test_the_rewritten_call_is_made_only_where_its_value_is_certain() -> None:
    """A value read either way round ("05/01/2026") is not rewritten: which day it meant
    is the model's guess, and a guess that happened to answer would teach nothing true."""
    probe = Probe({"daybook": tool(daybook, read_only=True)}, lambda text: "412" in text)
    CALLS.clear()
    found = await probe_repairs(
        [_miss({"article": "AR0589", "day": "05/01/2026"},
               "invalid day '05/01/2026': expected YYYYMMDD")], {}, probe)
    assert found == {} and CALLS == []
    found = await probe_repairs(
        [_miss({"article": "AR0589", "day": "2026-11-23"},
               "invalid day '2026-11-23': expected YYYYMMDD")], {}, probe)
    [repair] = found.values()
    assert (repair.kind, repair.argument, repair.example) == ("argument", "day", "20261123")
    assert CALLS == [{"article": "AR0589", "day": "20261123"}]


async def test_no_rewritten_call_of_a_tool_that_may_change_something() -> None:
    probe = Probe({"daybook": tool(daybook)}, lambda text: "412" in text)  # not read_only
    CALLS.clear()
    found = await probe_repairs(
        [_miss({"article": "AR0589", "day": "2026-11-23"},
               "invalid day '2026-11-23': expected YYYYMMDD")], {}, probe)
    assert found == {} and CALLS == []


async def test_a_refused_call_made_twice_is_made_again_once() -> None:
    """A small model often repeats the refused call word for word; the probe's budget is
    spent on a question once, as for the other tools' probes."""
    probe = Probe({"daybook": tool(daybook, read_only=True)}, lambda text: "412" in text)
    CALLS.clear()
    error = "invalid day '2026-11-23': expected YYYYMMDD"
    twice = [_miss({"article": "AR0589", "day": "2026-11-23"}, error),
             CallEvidence(index=1, call=_miss({"article": "AR0589", "day": "2026-11-23"},
                                               error).call, status="error")]
    found = await probe_repairs(twice, {}, probe)
    assert sorted(found) == [0, 1] and CALLS == [{"article": "AR0589", "day": "20261123"}]


def slashed_daybook(article: str, day: str) -> str:
    """Units shipped of an article on one day (month first, as the example cannot say)."""
    CALLS.append({"article": article, "day": day})
    try:
        m, d, y = (int(p) for p in day.split("/"))
        when = date(y, m, d)
    except ValueError:
        raise ValueError(f"invalid day {day!r}: dates look like 01/05/2026") from None
    return json.dumps({"article": article, "units_shipped": SHIPPED.get((article, when))})


async def test_an_example_read_either_way_round_is_asked_both_ways() -> None:
    """"dates look like 01/05/2026" cannot say which is the day; asked with each reading,
    the tool says: the one that answers is the repair, shown with its day above 12."""
    probe = Probe({"daybook": tool(slashed_daybook, name="daybook", read_only=True)},
                  lambda text: "17" in text)
    CALLS.clear()
    found = await probe_repairs(
        [_miss({"article": "SK0409", "day": "2026-03-19"},
               "invalid day '2026-03-19': dates look like 01/05/2026")], {}, probe)
    [repair] = found.values()
    assert (repair.kind, repair.argument, repair.example) == ("argument", "day", "03/19/2026")
    assert CALLS == [{"article": "SK0409", "day": "19/03/2026"},   # day first: refused
                     {"article": "SK0409", "day": "03/19/2026"}]


def test_the_readings_of_a_dates_example() -> None:
    assert example_readings("dates look like 01/05/2026") == ["%d/%m/%Y", "%m/%d/%Y"]
    assert example_readings("dates look like 17/05/2026") == ["%d/%m/%Y"]
    assert example_readings("expected DD/MM/YYYY, e.g. 01/05/2026") == ["%d/%m/%Y"]
    assert example_readings("no date here") == []
    assert in_example_readings("2026-03-19", "dates look like 01/05/2026") == [
        "19/03/2026", "03/19/2026"]
    assert in_example_readings("19 March", "dates look like 01/05/2026") == []  # no year


ENTRIES = {"LX-77160": 318}


def ledger_entry(number: str) -> str:
    """A ledger entry by its number."""
    if not number.startswith("LX-"):
        raise ValueError(f"unknown ledger number {number!r} (numbers look like LX-00000)")
    return json.dumps({"number": number, "kwh": ENTRIES.get(number)})


async def test_an_id_refused_for_its_shape_is_asked_again_in_the_shape_the_error_shows() -> None:
    """The id's digits were the task's; the error showed the prefix by example ("numbers
    look like LX-00000"), and a small model answers "no such entry" instead of writing it
    so (first generated suites, the argument-format kind's prefixed ids)."""
    probe = Probe({"ledger_entry": tool(ledger_entry, read_only=True)},
                  lambda text: "318" in text)
    record = ToolCallRecord(call_id="c1", name="ledger_entry", args={"number": "77160"},
                            iteration=1, error="unknown ledger number '77160' (numbers look "
                            "like LX-00000)", error_type="tool_error")
    found = await probe_repairs([CallEvidence(index=0, call=record, status="error")], {}, probe,
                                prompt="What consumption is on ledger number 77160?")
    [repair] = found.values()
    assert (repair.kind, repair.argument) == ("argument", "number")
    assert repair.example.startswith("LX-")


def usage_search(number: str) -> str:
    """Search usage records by number."""
    return "[]"


async def test_another_tool_that_refuses_the_value_for_its_shape_is_asked_in_that_shape() -> None:
    """The model's lookup found nothing for the task's number; the tool that holds the answer
    takes it only with its prefix, and says so by example when the probe asks it."""
    probe = Probe({"usage_search": tool(usage_search, read_only=True),
                   "ledger_entry": tool(ledger_entry, read_only=True)},
                  lambda text: "318" in text)
    record = ToolCallRecord(call_id="c1", name="usage_search", args={"number": "77160"},
                            iteration=1, result="[]")
    found = await probe_repairs([CallEvidence(index=0, call=record, status="empty")], {}, probe,
                                prompt="What consumption is on contract number 77160?")
    [repair] = found.values()
    assert (repair.kind, repair.via, repair.argument, repair.example) == (
        "alternative", "ledger_entry", "number", "LX-77160")
    assert pitfall_advice("usage_search", "unknown number", repair, False).endswith(
        'Call ledger_entry(number like "LX-77160") instead.')
