"""After a rejection for a conversion nobody asked for, the re-ask's first turn must answer
(toolcycle/run/asked.py, ``answer_now``): the figure asked for is in the run already. The
1.5B called the converter again and answered its result in 3 of 4 such re-asks (first-hour
held-out agents); the stations here are another domain's."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from toolcycle import Agent, Limits
from toolcycle.messages import ToolResult
from toolcycle.testing import ScriptedModel, call


class Rain(BaseModel):
    value: float


def station_id(name: str) -> str:
    """The id of a weather station, by its name."""
    return {"Harbour": "WS-4"}[name]


def station(station_id: str) -> dict[str, Any]:
    """A station's record: its rain today and its wind."""
    return {"rain_mm": 12.2, "wind_kmh": 31}


def mm_to_inches(value: float) -> float:
    """Convert a length in mm to inches."""
    return round(value / 25.4, 3)


def _reconverting(messages: Any, settings: Any) -> Any:
    """A model that converts whenever it may call: what the 1.5B did after the re-ask. (A
    refused conversion, toolcycle/run/unasked_conversion.py, it makes again.)"""
    results = [p for m in messages for p in m.parts if isinstance(p, ToolResult)]
    done = {r.name for r in results}
    if settings.tool_choice == "final_result":
        return call("final_result", {"value": 12.2})
    if "station_id" not in done:
        return call("station_id", {"name": "Harbour"})
    if "station" not in done:
        return call("station", {"station_id": "WS-4"})
    if sum(1 for r in results if r.name == "mm_to_inches" and not r.is_error) < sum(
            1 for r in results if r.name == "final_result") + 1:
        return call("mm_to_inches", {"value": 12.2})
    return call("final_result", {"value": 0.48})


def test_the_reask_after_an_unasked_conversion_asks_for_the_answer() -> None:
    model = ScriptedModel(_reconverting)
    agent = Agent(model, tools=[station_id, station, mm_to_inches], output=Rain,
                  grounding=True, limits=Limits(max_attempts=3))
    result = agent.run_sync("How much rain did the Harbour station get today?")
    first = result.trace.attempts[0]
    assert (first.validator, first.code) == ("asked", "ANSWER_AS_GIVEN")
    assert result.output == Rain(value=12.2) and result.status == "success"
    choices = [r.settings.tool_choice for r in model.requests]
    assert choices[-1] == "final_result" and choices.count("final_result") == 1


def test_a_text_answer_is_asked_for_in_words() -> None:
    script = [call("station_id", {"name": "Harbour"}), call("station", {"station_id": "WS-4"}),
              *[call("mm_to_inches", {"value": 12.2})] * 2,  # refused once, then run
              "About 0.48 inches.", "12.2 mm."]
    model = ScriptedModel(script)
    agent = Agent(model, tools=[station_id, station, mm_to_inches], grounding=True,
                  limits=Limits(max_attempts=3))
    result = agent.run_sync("How much rain did the Harbour station get today?")
    assert result.trace.attempts[0].code == "ANSWER_AS_GIVEN"
    assert model.requests[-1].settings.tool_choice == "none"
    assert (result.output, result.status) == ("12.2 mm.", "success")


def test_another_mismatch_leaves_the_reask_free() -> None:
    """A unit mismatch may need a conversion call to fix: no answer is forced (the
    converter's call is: test_convert_first.py)."""
    script = [call("station_id", {"name": "Harbour"}), call("station", {"station_id": "WS-4"}),
              "12.2 mm.", call("mm_to_inches", {"value": 12.2}), "0.48 inches."]
    model = ScriptedModel(script)
    agent = Agent(model, tools=[station_id, station, mm_to_inches], grounding=True,
                  limits=Limits(max_attempts=3))
    result = agent.run_sync("How much rain did the Harbour station get today, in inches?")
    assert result.trace.attempts[0].code == "CONVERT_FIRST"
    assert "none" not in [r.settings.tool_choice for r in model.requests]


def test_a_second_reask_where_the_first_found_something() -> None:
    """Seen on the 1.5B: told to answer in pounds, it called the converter and still
    answered the kilograms. A re-ask that found something is asked once more (may_check)."""
    script = [call("station_id", {"name": "Harbour"}), call("station", {"station_id": "WS-4"}),
              "12.2 mm.", call("mm_to_inches", {"value": 12.2}), "12.2 mm.", "0.48 inches."]
    agent = Agent(ScriptedModel(script), tools=[station_id, station, mm_to_inches],
                  grounding=True, limits=Limits(max_attempts=3))
    result = agent.run_sync("How much rain did the Harbour station get today, in inches?")
    assert [a.validator for a in result.trace.attempts] == ["asked", "asked", None]
    assert (result.output, result.status) == ("0.48 inches.", "success")
