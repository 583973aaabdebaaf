"""A figure in another unit than the one asked, where an offered tool converts to it
(toolcycle/run/asked.py, ``convert_first``): the re-ask names the converter, and its first
turn must call it. Seen on the 1.5B (first-hour held-out agents): told "`mwh_to_kwh`
converts to kWh: answer in kWh", it wrote the same megawatt-hours labelled kWh again; the
crates here are another domain's."""

from __future__ import annotations

from typing import Any

from toolcycle import Agent, Limits
from toolcycle.testing import ScriptedModel, call


def crate_id(name: str) -> str:
    """The crate_id of a crate, by its name."""
    return {"blue box": "CR-12"}[name.lower()]


def crate_info(crate_id: str) -> dict[str, Any]:
    """A crate's record: its weight in kg, its contents and its shelf."""
    return {"weight_kg": 52.5, "contents": "lamps", "shelf": "B4"}


def kg_to_lb(kg: float) -> float:
    """Convert a weight in kilograms to pounds."""
    return round(kg * 2.20462, 2)


QUESTION = "How heavy is the crate Blue Box, in pounds?"
READ = [call("crate_id", {"name": "Blue Box"}), call("crate_info", {"crate_id": "CR-12"})]


def _run(script: list[Any], tools: list[Any] | None = None) -> tuple[Any, ScriptedModel]:
    model = ScriptedModel(script)
    agent = Agent(model, "Answer using the tools.", tools or [crate_id, crate_info, kg_to_lb],
                  grounding=True, limits=Limits(max_attempts=3))
    return agent.run_sync(QUESTION), model


def test_the_re_ask_that_names_a_converter_must_call_it_first() -> None:
    result, model = _run([*READ, "The crate Blue Box weighs 52.5 pounds.",
                          call("kg_to_lb", {"kg": 52.5}), "It weighs 115.74 pounds."])
    first = result.trace.attempts[0]
    assert (first.validator, first.code) == ("asked", "CONVERT_FIRST"), result.trace.render()
    assert "`kg_to_lb` converts to pounds: answer in pounds" in first.errors[0]
    assert model.requests[3].settings.tool_choice == "kg_to_lb"
    assert model.requests[4].settings.tool_choice == "auto"  # (the first turn only)
    assert (result.output, result.status) == ("It weighs 115.74 pounds.", "success")


def test_no_call_is_required_where_a_result_holds_the_figure_in_the_unit_asked() -> None:
    """The conversion was made: the fix is an answer with its result, not another call."""
    converted = call("kg_to_lb", {"kg": 52.5})
    result, model = _run([*READ, converted, "The crate Blue Box weighs 52.5 pounds.",
                          "It weighs 115.74 pounds."])
    first = result.trace.attempts[0]
    assert (first.validator, first.code) == ("asked", "MISMATCHED"), result.trace.render()
    assert first.errors[0].endswith(
        "`kg_to_lb` converted it into 115.74 pounds: answer with that")
    assert model.requests[4].settings.tool_choice == "auto"
    assert result.status == "success"


def test_no_call_is_required_where_no_tool_converts() -> None:
    unconverted = "The crate Blue Box weighs 52.5 pounds."
    result, model = _run([*READ, unconverted, unconverted, unconverted],
                         tools=[crate_id, crate_info])
    first = result.trace.attempts[0]
    assert (first.validator, first.code) == ("asked", "MISMATCHED"), result.trace.render()
    assert model.requests[3].settings.tool_choice == "auto"


def test_no_call_is_forced_where_two_tools_convert_to_the_unit_asked() -> None:
    """Which one the re-ask meant depends on the figure; a wrong forced call misleads."""
    def g_to_lb(grams: float) -> float:
        """Convert a weight in grams to pounds."""
        return round(grams / 453.592, 2)

    unconverted = "The crate Blue Box weighs 52.5 pounds."
    result, model = _run([*READ, unconverted, unconverted, unconverted],
                         tools=[crate_id, crate_info, kg_to_lb, g_to_lb])
    assert result.trace.attempts[0].code == "CONVERT_FIRST", result.trace.render()
    assert model.requests[3].settings.tool_choice == "auto"
