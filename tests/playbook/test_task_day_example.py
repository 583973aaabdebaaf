"""An example of a tool's date format is shown to a run as the one day its task names (issue
69: "keep a train task's own words out of advice"): the learned example is some earlier
task's value, and a small model passes it for its own day. Written in another domain (tide
gauges) than any suite it was seen on."""

from __future__ import annotations

from datetime import date

import pytest

from toolcycle.datetimes import days_named, the_day_as
from toolcycle.playbook import Playbook
from toolcycle.playbook.strategy import Argument, Repair, Strategy

GAUGES = frozenset({"tide_daily", "gauge_find"})

PITFALL = Strategy(id="s-tide", domain="tides", kind="pitfall", tools=["tide_daily"],
                   advice='tide_daily fails with: bad reading day …: dates look like 13.11.2026. '
                          'Pass on_day like "13.11.2026".', applies_when=["tide", "gauge"],
                   detail="bad reading day …|argument::on_day:99.99.9999", helpful=3,
                   error_class="bad reading day …: dates look like 13.11.2026",
                   repair=Repair("argument", "tide_daily", argument="on_day",
                                 example="13.11.2026"))
SEQUENCE = Strategy(id="s-seq", domain="tides", kind="sequence", tools=["tide_daily"],
                    advice='Call tide_daily(gauge, on_day like "20261113"), then answer.',
                    applies_when=["tide", "high", "gauge"], support=3,
                    first_args=[Argument("gauge"), Argument("on_day", "20261113")])


@pytest.mark.parametrize(("text", "days"), [
    ("High tide at TG-4 on the 11th of January 2026?", {date(2026, 1, 11)}),
    ("On March 5, 2026, what was the low tide?", {date(2026, 3, 5)}),
    ("Readings of 2026-07-30 please", {date(2026, 7, 30)}),
    ("Compare 4 Jan 2026 with 5 Feb 2026", {date(2026, 1, 4), date(2026, 2, 5)}),
    ("on 05.01.2026", set()),  # either way round: no day
    ("on June 3", set()),  # no year: no day
    ("February 30, 2026", set()),
])
def test_the_days_a_task_names_with_their_year(text: str, days: set[date]) -> None:
    assert days_named(text) == days


def test_an_example_date_is_written_as_the_tasks_one_day_in_its_format() -> None:
    assert the_day_as("13.11.2026", "the tide on the 11th of January 2026") == "11.01.2026"
    assert the_day_as("20261113", "the tide on January 11, 2026") == "20260111"
    # the order an error states settles an example either way round
    assert the_day_as("05.01.2026", "on 2 March 2026", "expected MM.DD.YYYY") == "03.02.2026"
    assert the_day_as("05.01.2026", "on 2 March 2026") is None
    assert the_day_as("13.11.2026", "the tide on 4 Jan 2026 and 5 Feb 2026") is None
    assert the_day_as("13.11.2026", "the latest tide") is None
    assert the_day_as("TG-4", "on 4 Jan 2026") is None  # no date: nothing to write


def test_a_pitfalls_example_is_the_tasks_day_in_the_tools_note_and_the_store_keeps_its_own(
) -> None:
    pb = Playbook(":memory:", learn=False)
    pb.store.put([PITFALL])
    plan = pb.plan("What was high tide at gauge TG-4 on the 11th of January 2026?", "tides",
                   GAUGES, gated=False)
    note = plan.notes["tide_daily"]
    assert 'Pass on_day like "11.01.2026"' in note and "13.11.2026." not in note.split(
        "Pass")[1]
    stored = pb.store.get("s-tide")
    assert stored is not None and stored.advice == PITFALL.advice
    assert stored.repair is not None and stored.repair.example == "13.11.2026"
    # a task that names no day (or several) is shown the example as learned
    other = pb.plan("What is the latest high tide at TG-4?", "tides", GAUGES, gated=False)
    assert 'Pass on_day like "13.11.2026"' in other.notes["tide_daily"]


def test_a_sequences_example_is_the_tasks_day_in_the_instructions() -> None:
    shown = SEQUENCE.for_task("High tide at gauge TG-4 on March 5, 2026?")
    assert shown.advice == 'Call tide_daily(gauge, on_day like "20260305"), then answer.'
    assert shown.first_args == [Argument("gauge"), Argument("on_day", "20260305")]
    assert SEQUENCE.first_args[1].example == "20261113"  # the strategy itself is unchanged
    assert SEQUENCE.for_task("the latest high tide at TG-4") is SEQUENCE
    pb = Playbook(":memory:", learn=False)
    pb.store.put([SEQUENCE])
    advice, _ = pb.instructions_for("High tide at gauge TG-4 on March 5, 2026?", "tides",
                                    sorted(GAUGES))
    assert 'on_day like "20260305"' in advice and "20261113" not in advice


def test_an_ids_example_is_the_tasks_own_number_in_its_shape() -> None:
    from toolcycle._id_shape import the_id_as

    assert the_id_as("CX-31146", "What consumption is on contract number 77160?") == "CX-77160"
    assert the_id_as("CX-31146", "contracts 77160 and 77161") is None  # which one?
    assert the_id_as("CX-31146", "the latest contract") is None
    assert the_id_as("31146", "contract number 77160") is None  # a number alone is no id
    gauge = Strategy(id="s-gauge", domain="tides", kind="pitfall", tools=["gauge_entry"],
                     advice='gauge_entry fails with: unknown gauge …. Pass gauge like "TG-4417".',
                     applies_when=["gauge"], error_class="unknown gauge …",
                     repair=Repair("argument", "gauge_entry", argument="gauge",
                                   example="TG-4417"))
    shown = gauge.for_task("What is the level at gauge 9031?")
    assert shown.advice.endswith('Pass gauge like "TG-9031".')
    assert shown.repair is not None and shown.repair.example == "TG-9031"
