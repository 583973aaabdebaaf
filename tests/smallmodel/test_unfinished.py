"""A computation the model began on figures from nowhere and never did on the figures it then
found (toolcycle/run/unfinished.py): asked once, then ``mismatched``. The shapes were seen on
the 1.5B (first-hour held-out agents: ``add`` called first on made-up capacities, then both
records read and one capacity, or both side by side, answered as ``success``; 1000 litres
converted to gallons before the tank's volume was read, and the gallons of the 1000 given);
the records here are another domain's."""

from __future__ import annotations

from typing import Any

from toolcycle import Agent, Limits
from toolcycle.run.provenance import Call
from toolcycle.run.unfinished import unfinished
from toolcycle.testing import ScriptedModel, call

GREENHOUSES = {"North": "GH-1", "South": "GH-2"}
RECORDS = {"GH-1": {"plants": 420, "area_m2": 96, "harvest_kg": 310},
           "GH-2": {"plants": 385, "area_m2": 120, "harvest_kg": 275}}


def greenhouse_id(name: str) -> str:
    """The id of a greenhouse, by its name."""
    return GREENHOUSES[name]


def greenhouse(greenhouse_id: str) -> dict[str, Any]:
    """A greenhouse's record: its plants, its floor area and its harvest."""
    return RECORDS[greenhouse_id]


def add(numbers: list[float]) -> float:
    """Add a list of numbers."""
    return sum(numbers)


def kg_to_lb(value: float) -> float:
    """Convert a weight in kilograms to pounds."""
    return round(value * 2.20462, 2)


ASKED = "How many plants do the North and South greenhouses hold together?"
MADE_UP = [call("add", {"numbers": [10, 20]}), "30 plants."]
LOOKED_UP = [call("greenhouse_id", {"name": "North"}),
             call("greenhouse", {"greenhouse_id": "GH-1"}),
             call("greenhouse_id", {"name": "South"}),
             call("greenhouse", {"greenhouse_id": "GH-2"})]


def _run(script: list[Any], attempts: int = 3) -> Any:
    agent = Agent(ScriptedModel(script), tools=[greenhouse_id, greenhouse, add], grounding=True,
                  limits=Limits(max_attempts=attempts))
    return agent.run_sync(ASKED)


def test_the_model_is_asked_to_add_what_it_found_and_then_succeeds() -> None:
    result = _run([*MADE_UP, *LOOKED_UP, "North holds 420 plants and South 385.",
                   call("add", {"numbers": [420, 385]}), "805 plants."])
    first, second = result.trace.attempts[:2]
    assert first.validator == "grounding"
    assert (second.validator, second.code) == ("asked", "MISMATCHED")
    assert ("you called `add` on 10, 20, which no tool gave, and added nothing up since; the "
            "tools have given `plants` 420 and 385 (`greenhouse`)") in second.errors[0]
    assert "area_m2" not in second.errors[0]  # the field the request names, alone
    assert (result.output, result.status) == ("805 plants.", "success")


def test_on_the_last_attempt_the_answer_stands_as_mismatched() -> None:
    result = _run([*MADE_UP, *LOOKED_UP, "North holds 420 plants and South 385."], attempts=2)
    assert result.output == "North holds 420 plants and South 385."
    assert result.status == "mismatched"


def test_a_sum_done_again_on_the_found_figures_passes() -> None:
    result = _run([*MADE_UP, *LOOKED_UP, call("add", {"numbers": [420, 385]}), "805 plants."])
    assert result.status == "success" and result.output == "805 plants."


RECORD_CALLS = [Call("add", {"numbers": [10, 20]}, "30.0", ""),
                Call("greenhouse", {"greenhouse_id": "GH-1"}, '{"plants": 420, "area_m2": 96}', ""),
                Call("greenhouse", {"greenhouse_id": "GH-2"}, '{"plants": 385, "area_m2": 120}',
                     "")]


def test_nothing_is_said_where_nothing_is_plain() -> None:
    assert unfinished(ASKED, RECORD_CALLS, {420.0, 385.0}) is not None
    # the answer holds the sum, worked out without the tool
    assert unfinished(ASKED, RECORD_CALLS, {805.0}) is None
    # one record read since: nothing to add
    assert unfinished(ASKED, RECORD_CALLS[:2], {420.0}) is None
    # the sum was over figures the request holds
    assert unfinished("Add 10 and 20, then tell me about GH-1 and GH-2.", RECORD_CALLS,
                          {420.0}) is None
    # the sum came after the records, over their figures
    assert unfinished(ASKED, [*RECORD_CALLS[1:], Call("add", {"numbers": [420, 385]},
                                                          "805.0", "")], {805.0}) is None
    # no sum at all
    assert unfinished(ASKED, RECORD_CALLS[1:], {420.0}) is None


def test_without_a_named_field_every_shared_field_is_shown() -> None:
    told = unfinished("North and South greenhouses together?", RECORD_CALLS, {420.0})
    assert told is not None and "`plants` 420 and 385" in told and "`area_m2` 96 and 120" in told


CONVERTED = "What is the North greenhouse's harvest in pounds?"


def test_a_conversion_of_a_made_up_figure_is_asked_to_be_done_on_the_found_one() -> None:
    agent = Agent(ScriptedModel([
        call("kg_to_lb", {"value": 100}), "220.46 pounds.",
        *LOOKED_UP[:2], "310 kg, which is 220.46 pounds.",
        call("kg_to_lb", {"value": 310}), "683.43 pounds."]),
        tools=[greenhouse_id, greenhouse, kg_to_lb], grounding=True,
        limits=Limits(max_attempts=3))
    result = agent.run_sync(CONVERTED)
    second = result.trace.attempts[1]
    assert (second.validator, second.code) == ("asked", "MISMATCHED")
    assert ("you called `kg_to_lb` on 100, which no tool gave, and converted nothing since; "
            "the tools have given `harvest_kg` 310 (`greenhouse`)") in second.errors[0]
    assert (result.output, result.status) == ("683.43 pounds.", "success")


def test_a_conversion_is_silent_where_nothing_is_plain() -> None:
    made_up = Call("kg_to_lb", {"value": 100}, "220.46", "")
    record = Call("greenhouse", {"greenhouse_id": "GH-1"}, '{"plants": 420, "harvest_kg": 310}',
                  "")
    assert unfinished(CONVERTED, [made_up, record], {310.0}) is not None
    # converted by hand with the call's own factor
    assert unfinished(CONVERTED, [made_up, record], {683.43}) is None
    # nothing found in the unit converted from
    assert unfinished(CONVERTED, [made_up, RECORD_CALLS[0]], {310.0}) is None
    # the conversion came after the record, over its figure
    assert unfinished(CONVERTED, [record, Call("kg_to_lb", {"value": 310}, "683.43", "")],
                      {683.43}) is None
