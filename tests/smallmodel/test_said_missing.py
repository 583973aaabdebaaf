"""An answer that says what was asked is not there, where the run's own results say it is
(toolcycle/run/said_missing.py): the 1.5B stopped after a lookup gave an id and answered that
the figure was "not available", a ``success`` (first-hour held-out sets). The domain here is
another (lighthouses)."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle import Agent, Limits
from toolcycle.run.said_missing import SAID_MISSING
from toolcycle.testing import ScriptedModel, call

LIGHTS = {"Skerry Point": "LH-417"}


def find_lighthouse(name: str) -> Any:
    """Find a lighthouse by its name and return its id."""
    return LIGHTS.get(name, [])


def lighthouse_info(lighthouse_id: str) -> dict[str, Any]:
    """Details of a lighthouse by id: height in metres, range in nautical miles, keeper."""
    return {"lighthouse_id": lighthouse_id, "height_m": 41, "range_nm": 18, "keeper": "Ida Roe"}


def _run(script: list[Any], question: str) -> Any:
    agent = Agent(ScriptedModel(script), "Answer using the tools.",
                  [find_lighthouse, lighthouse_info], grounding=True,
                  limits=Limits(max_attempts=3))
    return agent.run_sync(question)


def test_a_chain_stopped_after_its_lookup_and_answered_missing_is_ungrounded() -> None:
    said = "The height of Skerry Point is not available."
    result = _run([call("find_lighthouse", {"name": "Skerry Point"}), said, said],
                  "How tall is the Skerry Point lighthouse?")
    assert "`lighthouse_info` takes `lighthouse_id`" in result.trace.attempts[0].errors[0]
    assert (result.output, result.status) == (said, "ungrounded")


def test_an_answer_missing_what_a_result_named_is_ungrounded() -> None:
    said = "I could not find the height."
    result = _run([call("find_lighthouse", {"name": "Skerry Point"}),
                   call("lighthouse_info", {"lighthouse_id": "LH-417"}), said, said],
                  "What is the height of the Skerry Point lighthouse?")
    assert (result.output, result.status) == (said, "ungrounded")


def test_missing_where_the_lookup_found_nothing_is_an_answer() -> None:
    said = "No lighthouse named Gull Rock was found."
    result = _run([call("find_lighthouse", {"name": "Gull Rock"}), said],
                  "How tall is the Gull Rock lighthouse?")
    assert (result.output, result.status) == (said, "success")


def test_the_right_answer_with_its_figure_passes() -> None:
    result = _run([call("find_lighthouse", {"name": "Skerry Point"}),
                   call("lighthouse_info", {"lighthouse_id": "LH-417"}),
                   "Skerry Point is 41 m tall."], "How tall is the Skerry Point lighthouse?")
    assert result.status == "success" and result.attempts == 1


@pytest.mark.parametrize(("text", "says"), [
    ("The figure is not available.", True), ("I couldn't find it", True),
    ("No records were found for LH-417.", True), ("No data.", True),
    ("It is 41 m tall; nothing else is known.", False), ("Not bad: 41 m.", False),
])
def test_the_words_that_say_missing(text: str, says: bool) -> None:
    assert bool(SAID_MISSING.search(text)) is says


def test_missing_words_beside_the_value_asked_are_about_something_else() -> None:
    said = "The keeper is Ida Roe; her phone number is not listed."
    result = _run([call("find_lighthouse", {"name": "Skerry Point"}),
                   call("lighthouse_info", {"lighthouse_id": "LH-417"}), said],
                  "Who is the keeper of the Skerry Point lighthouse?")
    assert (result.output, result.status) == (said, "success")


@pytest.mark.parametrize("recorded", ["n/a", "unknown", "-", "Not available", None])
def test_a_record_that_says_the_field_is_empty_agrees_with_missing(recorded: Any) -> None:
    def lighthouse_record(lighthouse_id: str) -> dict[str, Any]:
        """Details of a lighthouse by id: height in metres, range in kilometres."""
        return {"lighthouse_id": lighthouse_id, "height_m": 41, "range_km": recorded}

    said = "The range of Skerry Point is not available."
    script = [call("find_lighthouse", {"name": "Skerry Point"}),
              call("lighthouse_record", {"lighthouse_id": "LH-417"}), said]
    agent = Agent(ScriptedModel(script),
                  "Answer using the tools.", [find_lighthouse, lighthouse_record],
                  grounding=True, limits=Limits(max_attempts=3))
    result = agent.run_sync("What is the range of the Skerry Point lighthouse?")
    assert (result.output, result.status, result.attempts) == (said, "success", 1)


def test_a_record_agrees_only_where_nothing_else_asked_was_left_out() -> None:
    """The range is "n/a", but the height asked beside it was returned and not given: the
    answer is asked again (the unused results), and kept, it is not grounded."""
    def lighthouse_record(lighthouse_id: str) -> dict[str, Any]:
        """Details of a lighthouse by id: height in metres, range in kilometres."""
        return {"lighthouse_id": lighthouse_id, "height_m": 41, "range_km": "n/a"}

    said = "The range of Skerry Point is not available."
    script = [call("find_lighthouse", {"name": "Skerry Point"}),
              call("lighthouse_record", {"lighthouse_id": "LH-417"}), said, said, said]
    agent = Agent(ScriptedModel(script), "Answer using the tools.",
                  [find_lighthouse, lighthouse_record], grounding=True,
                  limits=Limits(max_attempts=3))
    result = agent.run_sync("What are the height and the range of the Skerry Point lighthouse?")
    assert result.attempts > 1 and result.status == "ungrounded"
