"""A date kept as an example shows which number is the day (toolcycle.playbook.formats.
unmistakable): a value whose day and month could be read either way round is shown as the
same format with a day above 12, where the task it came from says which date it meant."""

from __future__ import annotations

import pytest

from toolcycle.datetimes import date_format, unmistakable


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


# A learned pitfall and sequence show the retry's date this way: tests/playbook/test_evidence.py,
# test_a_pitfall_carries_the_argument_shape_that_worked_next (05.03.2026 for 5 March -> 17.03.2026).
