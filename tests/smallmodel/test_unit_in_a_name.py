"""A unit word inside a name the request gives is no unit asked for (toolcycle/run/units.py,
``part_of_name``). Seen on the 1.5B (held-out first-hour seed 6818): "Hill Acre: what area
does this field have?", the hectares converted to acres unasked, and the conversion passed
as asked for ("acre" is in the request): a wrong answer reported ``success``. Piers here,
another domain."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle import Agent
from toolcycle.run.units import requested_units
from toolcycle.testing import ScriptedModel, call


@pytest.mark.parametrize(("request_text", "units"), [
    ("Mile Wharf: how long is this pier?", []),
    ("How long is the pier Mile Wharf, in miles?", ["mile"]),
    ("In Kilometres, how long is the pier?", ["kilometer"]),
    ("How warm is the water in Degrees Celsius?", ["degree_Celsius"]),
    ("What is the pier's length in km?", ["kilometer"]),
])
def test_the_units_a_request_asks_for(request_text: str, units: list[str]) -> None:
    assert [u.name for u in requested_units(request_text)] == units


def pier(name: str) -> dict[str, Any]:
    """A pier's record: its length in km and its owner."""
    return {"length_km": 1.9, "owner": "Ada Park"}


def km_to_miles(value: float) -> float:
    """Convert a length in kilometres to miles."""
    return round(value * 0.621371, 2)


def test_a_conversion_into_the_unit_a_name_holds_is_not_asked_for() -> None:
    agent = Agent(ScriptedModel([call("pier", {"name": "Mile Wharf"}),
                                 call("km_to_miles", {"value": 1.9}), "It is 1.18 miles long.",
                                 "It is 1.9 km long."]),
                  tools=[pier, km_to_miles], grounding=True)
    result = agent.run_sync("Mile Wharf: how long is this pier?")
    first = result.trace.attempts[0]
    assert (first.validator, first.code) == ("asked", "ANSWER_AS_GIVEN"), result.trace.render()
    assert (result.output, result.status) == ("It is 1.9 km long.", "success")
