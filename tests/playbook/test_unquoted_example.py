"""An example a tool's error writes without quotes ("dates look like 05.01.2026") stays in the
pitfall's advice and becomes its argument repair (pitfall.shown_error, evidence.unquoted_example,
formats.example_kind): masked as numbers, the one part of the error that showed the format
was "….…", and the model kept failing (issue 69, bench/learning_gen's arg_format kind)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest

from toolcycle import Agent, Message, tool
from toolcycle.datetimes import names_date
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import LearningTask, Playbook, learn
from toolcycle.playbook.formats import example_kind
from toolcycle.playbook.pitfall import normalise_error, shown_error
from toolcycle.playbook.reflector import reflect

from .conftest import make_trace

ARGS = {"code": "ACME7", "on_date": "2026-05-16"}
PROMPT = "What was the closing stock of ACME7 on 16 May 2026?"


@pytest.mark.parametrize("example", [
    "05.01.2026", "20260105", "01/05/2026", "2026/01/05", "2026-01-05", "AB-00000", "HX-100",
])
def test_an_unquoted_example_of_a_format_is_shown(example: str) -> None:
    error = f"invalid on_date '2026-05-16': dates look like {example}."
    assert shown_error(error, ARGS, PROMPT) == (
        f"invalid on_date …: dates look like {example}.")
    # the class, which identifies the pitfall across tasks, still masks it
    assert example not in normalise_error(error)


@pytest.mark.parametrize(("error", "shown"), [
    # a task's figure: no format, or not presented as an example
    ("balance 1234.50 is too low", "balance … is too low"),
    ("only 17 left, e.g. 17", "only … left, e.g. …"),
    ("no rates for 2026-01-05", "no rates for …-…-…"),  # not offered as an example
    ("numbers look like +44 20 7946 0000", "numbers look like +… … … …"),  # no one run
    ("times look like 19:00", "times look like …:…"),  # a time: the stated format reads it
    # the call's own value, and the task's date in the tool's writing
    ("invalid on_date 2026-05-16: dates look like 2026-05-16",
     "invalid on_date …: dates look like …"),
    ("invalid on_date: dates look like 16.05.2026", "invalid on_date: dates look like …"),
    ("invalid on_date: dates look like 20260516", "invalid on_date: dates look like …"),
    # a code the call passed (a part of it), or one the task says
    ("unknown code 'ACME7X', e.g. ACME7", "unknown code …, e.g. …"),
])
def test_what_the_task_supplied_or_no_format_stays_masked(error: str, shown: str) -> None:
    assert shown_error(error, ARGS, PROMPT) == shown


def test_only_a_value_presented_as_an_example_and_within_reach_is_read() -> None:
    assert shown_error("unlike 05.01.2026", {}) == "unlike ….…"  # "like" inside a word
    assert shown_error("format: 20260105", {}) == "format: 20260105"
    # a stranger's error line is read only as far as the advice can show it
    far = "invalid on_date '16 May 2026': " + " ".join(["a1"] * 100) + " like 05.01.2026"
    trace = make_trace(PROMPT, [[("stock_daily", {"on_date": "16 May 2026"}, None, far)]],
                       status="error")
    [pitfall] = [i for i in reflect(trace, success=False, domain="stock")
                 if i.kind == "pitfall"]
    assert pitfall.repair is None and "05.01.2026" not in pitfall.advice


def test_a_code_is_the_tools_only_where_the_task_did_not_say_it() -> None:
    assert shown_error("unknown code, e.g. XQ-9", ARGS, PROMPT) == "unknown code, e.g. XQ-9"
    assert shown_error("unknown code, e.g. XQ-9", ARGS, "Stock of XQ-9?") == (
        "unknown code, e.g. …")


def test_the_format_reader_names_what_an_example_shows() -> None:
    assert [example_kind(v) for v in ("05.01.2026", "20260105", "AB-00000", "1234.50",
                                      "17", "2026", "19:00", "+44")] == [
        "date", "date", "code", None, None, None, None, None]
    day = dt.date(2026, 5, 16)
    assert names_date("on 16 May 2026", day) and names_date("May 16th", day)
    assert names_date("the 16th of May", day) and names_date("16.5.2026", day)
    assert not names_date("on 15 May 2026", day) and not names_date("", day)


def test_a_pitfall_learned_from_such_an_error_carries_it_as_its_repair() -> None:
    trace = make_trace(PROMPT, [[("stock_daily", ARGS, None,
                                  "Tool `stock_daily` failed: ValueError: invalid on_date "
                                  "'2026-05-16': dates look like 05.01.2026")]],
                       status="error")
    [pitfall] = [i for i in reflect(trace, success=False, domain="stock")
                 if i.kind == "pitfall"]
    assert pitfall.advice == ("stock_daily fails with: invalid on_date …: dates look like "
                              '05.01.2026. Pass on_date like "05.01.2026".')
    assert pitfall.repair is not None and pitfall.repair.example == "05.01.2026"
    assert pitfall.error_class == "invalid on_date …: dates look like ….…"


# -- learned, then used ----------------------------------------------------------------------

STOCK = {"2026-05-16": 41, "2026-03-02": 17, "2026-07-21": 8, "2026-09-30": 63}


def stock_daily(code: str, on_date: str) -> str:
    """The closing stock of an item on a given day."""
    try:
        day = dt.datetime.strptime(on_date, "%Y%m%d").date()
    except ValueError:
        raise ValueError(f"invalid on_date {on_date!r}: dates look like 20260105") from None
    return f'{{"code": "{code}", "stock": {STOCK.get(day.isoformat(), 0)}}}'


#: The tool descriptions each request offered (where a lesson about a tool is shown).
OFFERED: list[str] = []


def _iso_writer(messages: list[Message], settings: ModelSettings) -> Any:
    """Writes the task's date as ISO, once; answers from what came back, and gives up on an
    error (what the 1.5B did on the generated suite)."""
    OFFERED.append(" ".join(t.description for t in settings.tools))
    prompt = next(m.text for m in messages if m.role == "user")
    results = [str(getattr(p, "content", "")) for m in messages if m.role == "tool"
               for p in m.parts]
    if not results:
        said = re.search(r"on (\d{1,2} \w+ \d{4})", prompt)
        day = dt.datetime.strptime(said[1], "%d %B %Y").date() if said else dt.date.today()
        return call("stock_daily", {"code": "ACME7", "on_date": day.isoformat()})
    stock = re.search(r'"stock": (\d+)', results[-1])
    return stock[1] if stock else "I could not read the stock."


def _agent(pb: Playbook) -> Agent[Any, str]:
    return Agent(ScriptedModel(_iso_writer), "Answer with the tools.",
                 [tool(stock_daily, read_only=True)], name="stock", playbook=pb)


async def test_the_advice_carries_the_example_and_the_call_is_mended() -> None:
    # learned without stand-ins, so every train run meets the error (with them, the
    # sequence the first two runs' probes teach mends the third: test_stated_format.py)
    pb = Playbook(":memory:", routines=False)
    train = [("t1", "What was the closing stock of ACME7 on 2 March 2026?", "17"),
             ("t2", "What was the closing stock of ACME7 on 21 July 2026?", "8"),
             ("t3", "What was the closing stock of ACME7 on 30 September 2026?", "63")]
    report = await learn([LearningTask(*t) for t in train], _agent(pb), playbook=pb,
                         progress=False)
    assert report.success_rate == 0.0  # no run got past the error
    [pitfall] = [s for s in pb.store.strategies("stock") if s.kind == "pitfall"]
    assert pitfall.status == "active"
    assert "dates look like 20260105" in pitfall.advice
    assert pitfall.advice.endswith('Pass on_date like "20260105".')
    for day in ("0302", "0721", "0930"):  # no train task's own date went into it
        assert day not in pitfall.advice
    pb = Playbook(pb.store, learn=False)  # the defaults: reshaped calls of read-only tools
    OFFERED.clear()
    result = await _agent(pb).run(PROMPT)
    # shown to this run as its own day (16 May) in the learned format (Strategy.for_task)
    assert 'dates look like 20260105. Pass on_date like "20260516".' in OFFERED[0]
    assert result.output == "41"
    [record] = result.trace.tool_calls
    assert record.result is not None and 'again with on_date "20260516"' in record.result
