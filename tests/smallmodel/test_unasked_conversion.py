"""A conversion of a figure the request does not ask about is not run the first time
(toolcycle/run/unasked_conversion.py). The shape was seen on the 1.5B (held-out first-hour
seed 6820: an exhibit's weight converted to pounds and added to an insured value, three
attempts running); the records here are another domain's."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle import Agent, Limits
from toolcycle.run.unasked_conversion import UNASKED_CONVERSION
from toolcycle.testing import ScriptedModel, call
from toolcycle.tracing.trace import LOOP_ERROR_TYPES

TANKS = {"Blue Reef": {"volume_litres": 640.0, "monthly_upkeep_eur": 85.5, "keeper": "Ana Ruiz"}}


def tank(name: str) -> dict[str, Any]:
    """An aquarium tank's record, by its name."""
    return TANKS[name]


def eur_to_usd(value: float) -> float:
    """Convert euros to US dollars."""
    return round(value * 1.08, 2)


def litres_to_gallons(value: float) -> float:
    """Convert litres to US gallons."""
    return round(value * 0.264172, 2)


def _run(script: list[Any], question: str, grounding: bool = True, attempts: int = 2) -> Any:
    agent = Agent(ScriptedModel(script), tools=[tank, litres_to_gallons, eur_to_usd],
                  grounding=grounding,
                  limits=Limits(max_attempts=attempts))
    return agent.run_sync(question)


def test_a_conversion_of_a_field_not_asked_is_told_the_field_asked() -> None:
    result = _run([call("tank", {"name": "Blue Reef"}),
                   call("litres_to_gallons", {"value": 640.0}), "85.5 EUR."],
                  "What is the monthly upkeep of the tank Blue Reef?")
    refused = result.trace.steps[1].tool_calls[0]
    assert refused.error_type == UNASKED_CONVERSION
    # the loop's own verdict, not the tool's failure (what reads traces tells them apart by
    # this set: producer_first, the playbook's statistics)
    assert refused.error_type in LOOP_ERROR_TYPES
    assert refused.error == (
        "Not run: 640 is `volume_litres` of `tank`, which the request does not ask about; it "
        "asks about `monthly_upkeep_eur` (`tank` gave 85.5): use that")
    assert (result.output, result.status) == ("85.5 EUR.", "success")


def test_a_conversion_asked_for_a_name_is_told_the_name() -> None:
    result = _run([call("tank", {"name": "Blue Reef"}),
                   call("litres_to_gallons", {"value": 640.0}), "Ana Ruiz."],
                  "Who is the keeper of the tank Blue Reef?")
    assert result.trace.steps[1].tool_calls[0].error == (
        "Not run: 640 is `volume_litres` of `tank`, which the request does not ask about; it "
        "asks about `keeper` (`tank` gave 'Ana Ruiz'): use that")


def test_the_same_conversion_made_again_runs() -> None:
    """The check reads words; a model that insists may know better."""
    result = _run([call("tank", {"name": "Blue Reef"}),
                   call("litres_to_gallons", {"value": 640.0}),
                   call("litres_to_gallons", {"value": 640.0}), "85.5 EUR."],
                  "What is the monthly upkeep of the tank Blue Reef?")
    again = result.trace.steps[2].tool_calls[0]
    assert (again.error_type, again.result) == (None, "169.07")


@pytest.mark.parametrize(("question", "grounding"), [
    ("How many gallons does the tank Blue Reef hold, from its volume?", True),  # field named
    ("Tell me about the tank Blue Reef in gallons.", True),      # the request names no field
    ("What is 640 litres in gallons, and the upkeep of Blue Reef?", True),  # request's figure
    ("What is the monthly upkeep of the tank Blue Reef?", False),           # grounding off
])
def test_no_refusal_where_the_conversion_may_be_asked(question: str, grounding: bool) -> None:
    result = _run([call("tank", {"name": "Blue Reef"}),
                   call("litres_to_gallons", {"value": 640.0}), "done"], question, grounding,
                  attempts=1)
    assert result.trace.steps[1].tool_calls[0].result == "169.07"


def test_a_conversion_of_the_field_asked_into_a_unit_not_asked_is_told_to_use_the_figure() -> None:
    """Seen on the 1.5B (held-out 6820 and its rerun): each venue's ``ticket_price_gbp``
    converted to euros for "the combined ticket price", a unit nobody asked for."""
    result = _run([call("tank", {"name": "Blue Reef"}), call("eur_to_usd", {"value": 85.5}),
                   "85.5 EUR."], "What is the monthly upkeep of the tank Blue Reef?")
    refused = result.trace.steps[1].tool_calls[0]
    assert (refused.error_type, refused.error) == (UNASKED_CONVERSION, (
        "Not run: the request does not ask for USD; 85.5 is `monthly_upkeep_eur` as `tank` "
        "gave it: use that as it is, with no figure in USD, unless the request asks for "
        "another unit"))
    assert (result.output, result.status) == ("85.5 EUR.", "success")


def test_a_conversion_into_the_unit_asked_or_between_two_units_of_the_records_runs() -> None:
    asked = _run([call("tank", {"name": "Blue Reef"}), call("eur_to_usd", {"value": 85.5}),
                  "92.34 USD."], "What is the monthly upkeep of the tank Blue Reef in USD?")
    assert asked.trace.steps[1].tool_calls[0].result == "92.34"
    TANKS["Coral Bay"] = {"volume_litres": 300.0, "monthly_upkeep_usd": 40.0}
    try:
        mixed = _run([call("tank", {"name": "Blue Reef"}), call("tank", {"name": "Coral Bay"}),
                      call("eur_to_usd", {"value": 85.5}), "done"],
                     "What is the monthly upkeep of Blue Reef and Coral Bay together?",
                     attempts=1)
    finally:
        del TANKS["Coral Bay"]
    assert mixed.trace.steps[2].tool_calls[0].result == "92.34"
