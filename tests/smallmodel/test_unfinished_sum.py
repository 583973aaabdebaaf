"""A sum the model began on figures from nowhere and never did on the figures it then found
(toolcycle/run/unfinished_sum.py): asked once, then ``mismatched``. The shape was seen on the
1.5B (first-hour held-out agents: ``add`` called first on made-up capacities, then both
records read and one capacity, or both side by side, answered as ``success``); the records
here are another domain's."""

from __future__ import annotations

from typing import Any

from toolcycle import Agent, Limits
from toolcycle.run.provenance import Call, figures_of
from toolcycle.run.unfinished_sum import unfinished_sum
from toolcycle.testing import ScriptedModel, call

GREENHOUSES = {"North": "GH-1", "South": "GH-2"}
RECORDS = {"GH-1": {"plants": 420, "area_m2": 96}, "GH-2": {"plants": 385, "area_m2": 120}}


def greenhouse_id(name: str) -> str:
    """The id of a greenhouse, by its name."""
    return GREENHOUSES[name]


def greenhouse(greenhouse_id: str) -> dict[str, Any]:
    """A greenhouse's record: its plants and its floor area."""
    return RECORDS[greenhouse_id]


def add(numbers: list[float]) -> float:
    """Add a list of numbers."""
    return sum(numbers)


ASKED = "How many plants do the North and South greenhouses hold together?"
# (the call made twice: the first time the loop refuses it, toolcycle.run.unsourced_call)
MADE_UP = [call("add", {"numbers": [10, 20]}), call("add", {"numbers": [10, 20]}), "30 plants."]
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


def _said(request: str, calls: list[Call], answer: set[float]) -> str | None:
    figures = [f for i, c in enumerate(calls) for f in figures_of(c, i)]
    return unfinished_sum(request, calls, figures, answer)


def test_nothing_is_said_where_nothing_is_plain() -> None:
    assert _said(ASKED, RECORD_CALLS, {420.0, 385.0}) is not None
    # the answer holds the sum, worked out without the tool
    assert _said(ASKED, RECORD_CALLS, {805.0}) is None
    # one record read since: nothing to add
    assert _said(ASKED, RECORD_CALLS[:2], {420.0}) is None
    # the sum was over figures the request holds
    assert _said("Add 10 and 20, then tell me about GH-1 and GH-2.", RECORD_CALLS,
                          {420.0}) is None
    # the sum came after the records, over their figures
    assert _said(ASKED, [*RECORD_CALLS[1:], Call("add", {"numbers": [420, 385]},
                                                          "805.0", "")], {805.0}) is None
    # no sum at all
    assert _said(ASKED, RECORD_CALLS[1:], {420.0}) is None


def test_without_a_named_field_every_shared_field_is_shown() -> None:
    told = _said("North and South greenhouses together?", RECORD_CALLS, {420.0})
    assert told is not None and "`plants` 420 and 385" in told and "`area_m2` 96 and 120" in told
