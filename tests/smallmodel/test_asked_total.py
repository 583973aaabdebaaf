"""The total a request asks for, worked out by the model over the records it read, is
supported (toolcycle.run.asked_total, in grounding).

Seen on the 1.5B (issue 68, held-out first-hour seed 6815): asked to "add up the harvest of
Long Meadow and Stony Field", it read both records and answered their sum, 14611 kg, and
grounding rejected it as a figure no source held. The domain here is another (a furniture
shop), through the real loop with a scripted model.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle import Agent, Limits
from toolcycle.testing import ScriptedModel, call

SHELVES = {"SH-12": {"length_in": 47.5, "price_usd": 120},
           "SH-40": {"length_in": 31.25, "price_usd": 95}}
NAMES = {"oak shelf": "SH-12", "pine shelf": "SH-40"}


def find_shelf(name: str) -> str:
    """The id of a shelf, by its name."""
    return NAMES[name.lower()]


def shelf_info(id: str) -> dict[str, Any]:
    """A shelf's record: length and price."""
    return SHELVES[id]


BOTH = [call("find_shelf", {"name": "Oak Shelf"}), call("shelf_info", {"id": "SH-12"}),
        call("find_shelf", {"name": "Pine Shelf"}), call("shelf_info", {"id": "SH-40"})]


def _run(question: str, script: list[Any]) -> Any:
    agent = Agent(ScriptedModel(script), tools=[find_shelf, shelf_info], grounding=True,
                  limits=Limits(max_attempts=2))
    return agent.run_sync(question)


def test_the_total_asked_for_over_the_records_read_is_supported() -> None:
    result = _run("Add up the length of Oak Shelf and Pine Shelf.",
                  [*BOTH, "Together they are 78.75 inches long."])
    assert (result.status, result.attempts) == ("success", 1)


@pytest.mark.parametrize(("question", "script"), [
    # another figure than the total
    ("Add up the length of Oak Shelf and Pine Shelf.", [*BOTH, "78 inches.", "78 inches."]),
    # no total asked for: two lengths, not their sum
    ("What is the length of Oak Shelf and Pine Shelf?", [*BOTH, "78.75 inches.",
                                                         "78.75 inches."]),
    # one record read: the sum is not the sources'
    ("Add up the length of Oak Shelf and Pine Shelf.", [*BOTH[:2], "78.75 inches.",
                                                        "78.75 inches."]),
    # the total of a field the request does not name
    ("Add up the price of Oak Shelf and Pine Shelf.", [*BOTH, "78.75 USD.", "78.75 USD."]),
])
def test_no_other_figure_is(question: str, script: list[Any]) -> None:
    result = _run(question, script)
    assert result.trace.attempts[0].validator == "grounding"
    assert result.status == "ungrounded"
