"""A call over measures from nowhere is not run the first time (toolcycle.run.unsourced_call).

Seen on the 1.5B (issue 68, held-out first-hour agents, seed 6809): asked for two trains'
seats added up, it wrote ``add(numbers=[100, 150])`` beside the two lookups, then read the
records and answered 250, the made-up sum, three attempts running. Through the real loop with
a scripted model doing what the 1.5B did.
"""

from __future__ import annotations

from typing import Any

from toolcycle import Agent
from toolcycle.models.scripted import ScriptedModel
from toolcycle.run.unsourced_call import UNSOURCED
from toolcycle.testing import call

TRAINS = {"Coastal Express": "TR-627", "Night Owl": "TR-860"}
SEATS = {"TR-627": 366, "TR-860": 596}
added: list[list[float]] = []


def lookup_train(train_name: str) -> str:
    """The id of a train, by its name."""
    return TRAINS[train_name]


def train_info(id: str) -> dict[str, Any]:
    """A train's record: seats and driver."""
    return {"seats": SEATS[id], "driver": "Kwame Mensah"}


def add(numbers: list[float]) -> float:
    """Add a list of numbers."""
    added.append(numbers)
    return sum(numbers)


def departures(limit: int) -> list[str]:
    """The next departures, soonest first."""
    return ["Coastal Express", "Night Owl"][:limit]


QUESTION = "What is the number of seats of Coastal Express and Night Owl added together?"
LOOKUPS = [call("lookup_train", {"train_name": "Coastal Express"}),
           call("lookup_train", {"train_name": "Night Owl"})]
INVENTED_SUM = call("add", {"numbers": [100, 150]})
RECORDS = [call("train_info", {"id": "TR-627"}), call("train_info", {"id": "TR-860"})]


def _run(script: list[Any], grounding: bool = True, tools: list[Any] | None = None) -> Any:
    added.clear()
    agent = Agent(ScriptedModel(script), tools=tools or [lookup_train, train_info, add],
                  grounding=grounding)
    return agent.run_sync(QUESTION)


def test_a_sum_written_beside_the_lookups_is_not_run() -> None:
    result = _run([[*LOOKUPS, INVENTED_SUM], RECORDS, call("add", {"numbers": [366, 596]}),
                   "Together they have 962 seats."])
    refused = next(c for c in result.tool_calls if c.name == "add")
    assert refused.error_type == UNSOURCED and refused.result is None
    assert "`add` was given 100, 150, which neither the request" in (refused.error or "")
    assert added == [[366, 596]]  # the invented sum never ran
    assert (result.status, result.output) == ("success", "Together they have 962 seats.")


def test_made_again_beside_more_lookups_it_is_refused_again() -> None:
    """The 1.5B on seed 6809 after the first refusal: the same sum beside the detail calls."""
    result = _run([[*LOOKUPS, INVENTED_SUM], [*RECORDS, INVENTED_SUM],
                   call("add", {"numbers": [366, 596]}), "Together they have 962 seats."])
    assert [c.error_type for c in result.tool_calls if c.name == "add"] == [
        UNSOURCED, UNSOURCED, None]
    assert added == [[366, 596]]
    assert result.status == "success"


def test_the_same_call_made_again_runs() -> None:
    """Made again on its own, it runs: the figure may come from where the check cannot see."""
    result = _run([INVENTED_SUM, INVENTED_SUM, "250 seats.", "250 seats."])
    assert [c.error_type for c in result.tool_calls] == [UNSOURCED, None]
    assert added == [[100, 150]]
    assert result.status == "ungrounded"  # the sum it ran over is still no source


def scale(value: float, factor: float) -> float:
    """Multiply a value by a factor."""
    return value * factor


def test_one_looked_up_measure_lets_the_call_run() -> None:
    """A factor or a rate beside a looked-up figure is the model's own knowledge."""
    result = _run([LOOKUPS[0], RECORDS[0], call("scale", {"value": 366, "factor": 0.5}),
                   *["183"] * 3], tools=[lookup_train, train_info, scale])
    assert [c.error_type for c in result.tool_calls] == [None, None, None]


def test_a_made_up_part_beside_a_looked_up_one_is_not_run() -> None:
    """Seen on the 1.5B (held-out 6820): 250, a sum it had made up on its first attempt,
    added to the one figure it then read, and the result answered twice. The items of one
    list are peers: one found part does not source another."""
    result = _run([LOOKUPS[0], RECORDS[0], call("add", {"numbers": [250, 366]}),
                   [LOOKUPS[1], RECORDS[1]], call("add", {"numbers": [366, 596]}),
                   "Together they have 962 seats."])
    refused = result.tool_calls[2]
    assert refused.error_type == UNSOURCED
    assert "`add` was given 250, which neither the request" in (refused.error or "")
    assert added == [[366, 596]]
    assert (result.status, result.output) == ("success", "Together they have 962 seats.")


def test_integers_are_counts_and_settings_not_measures() -> None:
    result = _run([call("departures", {"limit": 20}), "Coastal Express leaves first.",
                   "Coastal Express leaves first."], tools=[departures])
    assert result.tool_calls[0].error_type is None


def test_counts_taken_from_a_list_may_be_added() -> None:
    result = _run([call("departures", {"limit": 2}), call("add", {"numbers": [2, 1]}), "3"],
                  tools=[departures, add])
    assert [c.error_type for c in result.tool_calls] == [None, None]


def test_a_single_digit_measure_before_anything_was_found_is_a_claim() -> None:
    result = _run([call("add", {"numbers": [2, 3]}), LOOKUPS, "done", "done"])
    assert result.tool_calls[0].error_type == UNSOURCED


def test_without_grounding_every_call_runs() -> None:
    result = _run([INVENTED_SUM, "250 seats."], grounding=False)
    assert result.tool_calls[0].error_type is None and added == [[100, 150]]


def test_a_refused_sum_names_the_ids_no_call_has_used() -> None:
    """Seen on the 1.5B (held-out 6821): the two lookups and a made-up sum in one reply,
    five replies running, the ids in the history each time, told only to "call the tools
    that return these figures"; the loop guard ended the run."""
    result = _run([[*LOOKUPS, INVENTED_SUM], [*LOOKUPS, INVENTED_SUM], RECORDS,
                   call("add", {"numbers": [366, 596]}), "Together they have 962 seats."])
    first, second = [c.error or "" for c in result.tool_calls if c.name == "add"][:2]
    assert "what would work first" not in first  # (its lookups ran beside it, after)
    assert second.endswith(
        "; what would work first: `lookup_train` gave 'TR-627' and 'TR-860', which no call "
        "has used since: `train_info` takes `id`; call it with each.")
    assert result.status == "success"


def test_the_items_of_each_list_are_grouped_apart() -> None:
    """Peers are the items of one list: two lists give two groups, a number outside any list
    none, and a list of one item none."""
    from toolcycle.run.call_figures import listed_measures

    number = {"type": "number"}
    schema = {"properties": {"a": {"type": "array", "items": number}, "b": number,
                             "c": {"type": "array", "items": {"type": "array", "items": number}}}}
    arguments = {"a": [12.5, 30.25], "b": 99.5, "c": [[1.5, 2.5], [7.5]]}
    assert sorted(listed_measures(arguments, schema, True)) == [["1.5", "2.5"], ["12.5", "30.25"]]
