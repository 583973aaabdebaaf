"""A call given a date the request does not name says nothing about the request (issue 69's
held-out rail suite, seed 1049, JSON: asked about January 11, 2026, the 1.5B passed the date
of a learned advice's example, ``13.11.2026``; the report came back empty and "not found"
ended ``success``). The domain here is another (a weather station's daily log)."""

from __future__ import annotations

from typing import Any

from toolcycle import Agent, Limits
from toolcycle.testing import ScriptedModel, call

LOG = {("krag", "04.03.2026"): {"rain_mm": 12.4}}


def daily_log(station: str, day: str) -> list[dict[str, Any]]:
    """The day's readings of a station; ``day`` as DD.MM.YYYY. Empty when none."""
    found = LOG.get((station.lower(), day))
    return [found] if found else []


def _run(script: list[Any], question: str) -> tuple[Any, ScriptedModel]:
    model = ScriptedModel(script)
    agent = Agent(model, "Answer using the tools.", [daily_log], grounding=True,
                  limits=Limits(max_attempts=3))
    return agent.run_sync(question), model


QUESTION = "How much rain fell at station Krag on March 4, 2026?"


def test_an_empty_result_for_a_date_the_request_does_not_name_is_no_answer() -> None:
    result, model = _run([call("daily_log", {"station": "Krag", "day": "17.09.2025"}),
                          "There is no record for that day.",
                          call("daily_log", {"station": "Krag", "day": "04.03.2026"}),
                          "12.4 mm of rain fell at Krag."], QUESTION)
    first = result.trace.attempts[0]
    assert (first.validator, first.code) == ("grounding", "UNGROUNDED")
    told = model.requests[2].last_message.text
    assert ("`daily_log` was given 17.09.2025, a date the request does not name, so its "
            "result says nothing about the request") in told
    assert model.requests[2].settings.tool_choice == "required"  # (nothing found yet)
    assert (result.status, result.output) == ("success", "12.4 mm of rain fell at Krag.")


def test_not_found_for_another_day_ends_ungrounded() -> None:
    wrong = call("daily_log", {"station": "Krag", "day": "17.09.2025"})
    result, _ = _run([wrong, "There is no record for that day."] * 3, QUESTION)
    assert (result.status, result.succeeded) == ("ungrounded", False)


def test_the_requests_date_in_any_writing_and_a_request_without_a_date_pass() -> None:
    result, _ = _run([call("daily_log", {"station": "Krag", "day": "2026-03-04"}),
                      "There is no record for that day."], QUESTION)
    assert (result.status, result.attempts) == ("success", 1)  # (an empty result answers)
    result, _ = _run([call("daily_log", {"station": "Krag", "day": "17.09.2025"}),
                      "There is no record for that day."],
                     "Did station Krag log any rain on its last inspection day?")
    assert (result.status, result.attempts) == ("success", 1)
