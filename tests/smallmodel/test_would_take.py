"""A call over a figure from nowhere is told which figure the run has read for it
(toolcycle.run.would_take).

Seen on the 1.5B (issue 68, held-out first-hour seed 6815): asked for an exhibit's weight in
pounds, it called ``kg_to_lb(value=100)`` first, was told 100 had no source, looked the
exhibit up (``"weight_kg": 387.4``) and called ``kg_to_lb(100)`` again at every attempt
until the loop guard ended the run. The domain here is another (a furniture shop, inches to
centimetres), the scripted model doing what the 1.5B did, through the real loop.
"""

from __future__ import annotations

from typing import Any

from toolcycle import Agent, Limits
from toolcycle.models.scripted import ScriptedModel
from toolcycle.run.unsourced_call import UNSOURCED
from toolcycle.run.would_take import would_take
from toolcycle.testing import call

SHELVES = {"SH-12": {"length_in": 47.5, "price_usd": 120, "maker": "Ines Duarte"},
           "SH-40": {"length_in": 31.0, "price_usd": 95, "maker": "Ola Berg"}}
NAMES = {"oak shelf": "SH-12", "pine shelf": "SH-40"}


def find_shelf(name: str) -> str:
    """The id of a shelf, by its name."""
    return NAMES[name.lower()]


def shelf_info(id: str) -> dict[str, Any]:
    """A shelf's record: length, price, maker."""
    return SHELVES[id]


def inches_to_cm(value: float) -> float:
    """Convert a length in inches to centimetres."""
    return round(value * 2.54, 2)


QUESTION = "How long is the Oak Shelf, in centimetres?"
OAK = [call("find_shelf", {"name": "Oak Shelf"}), call("shelf_info", {"id": "SH-12"})]
PINE = [call("find_shelf", {"name": "Pine Shelf"}), call("shelf_info", {"id": "SH-40"})]
MADE_UP = call("inches_to_cm", {"value": 30})


def _run(script: list[Any], question: str = QUESTION) -> tuple[Any, ScriptedModel]:
    model = ScriptedModel(script)
    agent = Agent(model, tools=[find_shelf, shelf_info, inches_to_cm], grounding=True,
                  limits=Limits(max_attempts=3))
    return agent.run_sync(question), model


def test_the_figure_read_since_is_named_when_the_made_up_call_is_answered_again() -> None:
    result, model = _run([MADE_UP, *OAK, MADE_UP, "The Oak Shelf is 76.2 cm long.",
                          call("inches_to_cm", {"value": 47.5}),
                          "The Oak Shelf is 120.65 cm long."])
    refused = result.tool_calls[0]
    assert refused.error_type == UNSOURCED
    assert "what would work" not in (refused.error or "")  # nothing read yet to name
    told = model.requests[5].last_message.text
    assert ("`inches_to_cm` was given 30, which no tool result and not the request hold, so "
            "its result is no source: first call the tools that give those figures; what "
            "would work: `inches_to_cm` with 47.5, the `length_in` `shelf_info` gave") in told
    assert (result.status, result.output) == ("success", "The Oak Shelf is 120.65 cm long.")


def test_a_refusal_after_the_lookup_names_the_figure_too() -> None:
    result, _ = _run([*OAK, MADE_UP, call("inches_to_cm", {"value": 47.5}), "120.65 cm."])
    refused = result.tool_calls[2]
    assert refused.error_type == UNSOURCED
    assert (refused.error or "").endswith(
        "what would work: `inches_to_cm` with 47.5, the `length_in` `shelf_info` gave.")
    assert result.status == "success"


def test_nothing_is_named_where_the_results_hold_more_than_one_such_figure() -> None:
    # two shelves read: which length the call meant is not the run's to guess
    result, _ = _run([*OAK, *PINE, MADE_UP, *["done"] * 3])
    refused = result.tool_calls[4]
    assert refused.error_type == UNSOURCED
    assert "what would work" not in (refused.error or "")


def test_a_tool_that_is_no_conversion_takes_the_fields_the_request_names() -> None:
    from toolcycle.run.provenance import Figure
    figures = [Figure(47.5, 1, "shelf_info", "length_in", None),
               Figure(120.0, 1, "shelf_info", "price_usd", None),
               Figure(31.0, 3, "shelf_info", "length_in", None)]
    # two lengths for an adder given two made-up figures; the price is not asked about
    assert would_take("add", "Add numbers.", 2, "The length of both shelves added up?",
                      figures) == ("; what would work: `add` with 47.5 and 31, the "
                                   "`length_in` `shelf_info` gave")
    assert would_take("add", "Add numbers.", 1, "The length of both shelves?", figures) == ""
    assert would_take("add", "Add numbers.", 2, "Both shelves, added up?", figures) == ""


def add(numbers: list[float]) -> float:
    """Add a list of numbers."""
    return round(sum(numbers), 2)


def test_a_call_with_one_figure_found_and_one_made_up_is_told_the_whole_call() -> None:
    # `add(47.5, 12)`: 47.5 read, 12 from nowhere. With one length read there is no whole
    # call to show (`add` with 47.5 alone is no sum of two shelves); with both, there is.
    def run(script: list[Any]) -> tuple[Any, str]:
        model = ScriptedModel([*script, "59.5 inches.", "59.5 inches."])
        agent = Agent(model, tools=[find_shelf, shelf_info, add], grounding=True,
                      limits=Limits(max_attempts=2))
        result = agent.run_sync("The length of the Oak Shelf and the Pine Shelf added up?")
        return result, model.requests[len(script) + 1].last_message.text

    # (made twice: the first is refused, toolcycle/run/unsourced_call.py, as 12 is a made-up
    # part of one sum; made again alone, it runs, and grounding reads its result)
    sum_of_one = [call("add", {"numbers": [47.5, 12]})] * 2
    result, told = run([*OAK, *sum_of_one])
    assert "`add` was given 12, which no tool result" in told
    assert "what would work" not in told
    assert result.status == "ungrounded"
    result, told = run([*OAK, *PINE, *sum_of_one])
    assert "what would work: `add` with 47.5 and 31, the `length_in` `shelf_info` gave" in told
    assert ("Not run: `add` was given 12, which neither the request nor any tool result holds"
            in (result.tool_calls[4].error or ""))


def test_an_answer_from_nowhere_to_a_total_is_told_the_sum_that_would_work() -> None:
    """Seen on the 1.5B (held-out 6815): both ships' records read for "add up the length of
    Northern Star and Maren", then "200", twice, told only that 200 had no source."""
    model = ScriptedModel([*OAK, *PINE, "80", "80"])
    agent = Agent(model, tools=[find_shelf, shelf_info, add], grounding=True,
                  limits=Limits(max_attempts=2))
    result = agent.run_sync("Add up the length of Oak Shelf and Pine Shelf.")
    told = result.trace.attempts[0].errors[0]
    assert told.endswith("what would work: `add` over 47.5 and 31, the `length_in` of 'Oak "
                         "Shelf' and 'Pine Shelf'"), told
    assert result.status == "ungrounded"
    # one record read: no sum to show; no adding tool offered: none either
    model = ScriptedModel([*OAK, "80", "80"])
    agent = Agent(model, tools=[find_shelf, shelf_info, add], grounding=True,
                  limits=Limits(max_attempts=2))
    told = agent.run_sync("Add up the length of Oak Shelf and Pine Shelf.").trace.attempts[0]
    assert "what would work" not in told.errors[0]
    model = ScriptedModel([*OAK, *PINE, "80", "80"])
    agent = Agent(model, tools=[find_shelf, shelf_info], grounding=True,
                  limits=Limits(max_attempts=2))
    told = agent.run_sync("Add up the length of Oak Shelf and Pine Shelf.").trace.attempts[0]
    assert "what would work" not in told.errors[0]


def test_a_figure_converted_in_the_head_is_told_the_conversion_that_would_work() -> None:
    """Seen on the 1.5B (held-out 6819): a route's 179.7 km answered as "approximately 111.1
    miles", converted without the offered tool (and wrongly), then again after the re-ask."""
    result, _ = _run([*OAK, "The Oak Shelf is about 121 cm long.",
                          call("inches_to_cm", {"value": 47.5}),
                          "The Oak Shelf is 120.65 cm long."])
    first = result.trace.attempts[0]
    assert first.validator == "grounding"
    assert first.errors[0].endswith(
        "; what would work: `inches_to_cm` with 47.5, the `length_in` `shelf_info` gave")
    assert (result.output, result.status) == ("The Oak Shelf is 120.65 cm long.", "success")


def test_no_conversion_is_named_where_it_was_made_or_the_figure_is_not_plain() -> None:
    made, _ = _run([*OAK, call("inches_to_cm", {"value": 47.5}), "About 121 cm.",
                    "120.65 cm."])
    assert "what would work" not in made.trace.attempts[0].errors[0]  # the call was made
    both, _ = _run([*OAK, *PINE, "About 121 cm.", "120.65 cm."])
    assert "what would work" not in both.trace.attempts[0].errors[0]  # two lengths read
    unasked, _ = _run([*OAK, "About 121 long.", "47.5 inches."],
                      question="How long is the Oak Shelf?")  # no unit asked
    assert "what would work" not in unasked.trace.attempts[0].errors[0]
