"""A date kept as an example shows which number is the day (toolcycle.playbook.formats.
unmistakable): a value whose day and month could be read either way round is shown as the
same format with a day above 12, where the task it came from says which date it meant."""

from __future__ import annotations

import pytest

from toolcycle.datetimes import date_format, unmistakable
from toolcycle.playbook.reflector import reflect

from .conftest import make_trace


@pytest.mark.parametrize(("example", "prompt", "shown"), [
    ("05.01.2026", "What was it on 5 January 2026?", "17.01.2026"),   # day first
    ("01/05/2026", "On January 5, 2026, what was it?", "01/17/2026"),  # month first
    ("05.01.2026", "the figure on 1 May 2026", "05.13.2026"),         # the task settles it
    ("0501 2026", "on 5 January 2026", "0501 2026"),                   # no date format
    ("17.01.2026", "on 17 January 2026", "17.01.2026"),                # already unmistakable
    ("05.05.2026", "on 5 May 2026", "05.05.2026"),                     # both readings agree
    ("20260105", "on 5 January 2026", "20260105"),                     # the year first: one order
    ("05.01.2026", "a question with no date", "05.01.2026"),           # nothing settles it
    ("05.01.2026", "between 5 January and 1 May 2026", "05.01.2026"),  # the task names both
])
def test_an_example_date_is_shown_with_its_day_above_12_where_the_task_settles_it(
        example: str, prompt: str, shown: str) -> None:
    assert unmistakable(example, prompt) == shown


def test_the_format_of_an_unmistakable_example_is_known_to_every_reader() -> None:
    """The reshaping tool reads the format from the example too: one it could not settle
    ("05.01.2026": either order) it can once the day is above 12."""
    assert date_format("05.01.2026") is None
    assert date_format(unmistakable("05.01.2026", "on 5 January 2026")) == "%d.%m.%Y"


def test_a_learned_pitfall_shows_the_retry_that_worked_with_its_day_above_12() -> None:
    trace = make_trace("fare from Ashmoor to Kelby on 5 March 2026", [
        [("fare_quote", {"date": "2026-03-05"}, None, "invalid date '2026-03-05'")],
        [("fare_quote", {"date": "05.03.2026"}, "EUR 23.50", None)],
    ])
    insights = reflect(trace, success=True, domain="d")
    [pitfall] = [i for i in insights if i.kind == "pitfall"]
    assert pitfall.advice.endswith('Pass date like "17.03.2026".')
    assert pitfall.repair is not None and pitfall.repair.example == "17.03.2026"
    [sequence] = [i for i in insights if i.kind == "sequence"]  # its first call's format too
    assert 'fare_quote(date like "17.03.2026")' in sequence.advice
