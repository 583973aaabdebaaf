"""Argument formats without separators (issue 69): an error that spells "YYYYMMDD" or "HHMM"
teaches the format, and a value rejected for it is written in it where its meaning is
certain; an accepted example of bare digits is a clock only beside a value that certainly
means a time (datetimes.stated_formats, datetimes.time_format, reshape.reshape)."""

from __future__ import annotations

import pytest

from toolcycle.datetimes import in_stated_format, stated_formats, time_format
from toolcycle.playbook import reflect
from toolcycle.playbook.reshape import reshape

from .conftest import make_trace


@pytest.mark.parametrize(("error", "formats"), [
    ("invalid date: expected YYYYMMDD", ["%Y%m%d"]),
    ("pass the date as yyyyMMdd", ["%Y%m%d"]),
    ("dates are DDMMYYYY", ["%d%m%Y"]),
    ("departure must be HHMM (24-hour)", ["%H%M"]),
    ("time as HHMMSS", ["%H%M%S"]),
    ("expected DD.MM.YYYY", ["%d.%m.%Y"]),  # as before
    ("codes look like MMDD or SS", []),  # no whole date nor time
    ("see the ADDRESS field", []),  # letters inside a word are no format
])
def test_a_spelled_format_is_read_with_or_without_separators(error: str,
                                                             formats: list[str]) -> None:
    assert stated_formats(error) == formats


def test_a_value_is_written_in_the_stated_format_where_its_meaning_is_certain() -> None:
    assert in_stated_format("2026-05-01", "invalid date: expected YYYYMMDD") == "20260501"
    assert in_stated_format("1 May 2026", "invalid date: expected YYYYMMDD") == "20260501"
    assert in_stated_format("7:30 pm", "departure must be HHMM") == "1930"
    assert in_stated_format("7:30", "departure must be HHMM") is None  # morning or evening?


def test_bare_digits_are_a_clock_only_beside_a_value_that_means_a_time() -> None:
    assert time_format("1930") is None  # a year? a code?
    assert time_format("1930", "7:30 pm") == "%H%M"
    assert time_format("2026", "2025") is None
    assert reshape("7:30 pm", "1930") == "1930"
    assert reshape("2026", "1930") is None
    assert reshape("2026-05-01", "20260501") == "20260501"


def test_a_run_that_never_got_past_the_error_learns_the_example_it_states() -> None:
    trace = make_trace("Which trains leave Kelby on 1 May 2026?", [[
        ("departures", {"station": "Kelby", "date": "2026-05-01"}, None,
         "Tool `departures` failed: ValueError: invalid date '2026-05-01': expected YYYYMMDD")]],
        status="error")
    [pitfall] = [i for i in reflect(trace, success=False, domain="rail") if i.kind == "pitfall"]
    assert pitfall.advice.endswith('Pass date like "20260501".')
