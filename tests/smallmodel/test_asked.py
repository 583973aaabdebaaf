"""An answer to another question than asked (issue 68): a unit or a conversion the request
did not ask for, figures of different units added up, one of two things the request names
never looked up. Each scripted reply below is what the 1.5B did on the first-hour agents
(bench/runs/2026-12-05/firsthour2): the figure is a tool's, so grounding passes it, and the
run used to say ``success``. Now the answer is rejected once with what is off and what the
tools said, and an answer that stays off ends ``mismatched``."""

from __future__ import annotations

import json
from typing import Any

import pydantic

from toolcycle import Agent, Limits
from toolcycle.models.text.protocol import JsonToolsModel
from toolcycle.testing import ScriptedModel, call

RECORDS = {"EX-576": {"weight_kg": 189.8, "insured_value_eur": 43062, "curator": "Pieter"},
           "EX-718": {"weight_kg": 93.1, "insured_value_eur": 32275, "curator": "Felix Braun"}}
NAMES = {"silk atlas": "EX-576", "amber room model": "EX-718"}


def lookup_exhibit(name: str) -> str:
    """Find an exhibit by its name and return its id."""
    return NAMES[name.lower()]


def exhibit_info(id: str) -> dict[str, Any]:
    """Details of an exhibit by id: weight (kg), insured value (EUR), and its curator."""
    return RECORDS[id]


def kg_to_lb(value: float) -> float:
    """Convert a value in kg to pounds."""
    return round(value * 2.20462, 2)


def add(numbers: list[float]) -> float:
    """Add a list of numbers."""
    return round(sum(numbers), 2)


class Result(pydantic.BaseModel):
    exhibit: str
    value: float


def _exhibits(script: list[Any], question: str, *, grounding: bool = True,
              output: Any = Result, attempts: int = 3) -> tuple[Any, ScriptedModel]:
    model = ScriptedModel(script)
    agent = Agent(model, "Answer using the tools. Never guess.",
                  [lookup_exhibit, exhibit_info, kg_to_lb, add], output=output,
                  grounding=grounding, limits=Limits(max_attempts=attempts))
    return agent.run_sync(question), model


LOOK_UP_AMBER = [call("lookup_exhibit", {"name": "Amber Room Model"}),
                 call("exhibit_info", {"id": "EX-718"})]
WEIGHT = "Amber Room Model: what weight does this exhibit have?"


# A conversion into a unit the request does not ask for is refused the first time it is made
# (toolcycle/run/unasked_conversion.py); made again, it runs, and the answer checks see the rest.
CONVERTED_TWICE = [call("kg_to_lb", {"value": 93.1})] * 2


def test_a_conversion_nobody_asked_for_is_named_with_the_figure_before_it() -> None:
    """h01 on held-out seed 6801: the weight read (93.1 kg), then converted to pounds,
    and the pounds answered. The re-ask names the tool, the unit and the figure it was
    given; the model answers that figure and the run succeeds."""
    result, model = _exhibits([
        *LOOK_UP_AMBER, *CONVERTED_TWICE,
        call("final_result", {"exhibit": "Amber Room Model", "value": 205.25}),
        call("final_result", {"exhibit": "Amber Room Model", "value": 93.1})], WEIGHT)
    first = result.trace.attempts[0]
    assert (first.validator, first.code) == ("asked", "ANSWER_AS_GIVEN")  # (the re-ask must answer)
    told = model.requests[5].last_message.text
    assert "the request does not ask for lb (pound)" in told
    assert "`kg_to_lb`'s result" in told and "93.1 kg (weight_kg in the result of " \
        "`exhibit_info`)" in told
    assert (result.status, result.output.value) == ("success", 93.1)


def test_an_answer_that_stays_converted_ends_mismatched_not_success() -> None:
    result, _ = _exhibits([
        *LOOK_UP_AMBER, *CONVERTED_TWICE,
        call("final_result", {"exhibit": "Amber Room Model", "value": 205.25}),
        call("final_result", {"exhibit": "Amber Room Model", "value": 205.25})], WEIGHT)
    assert [a.validator for a in result.trace.attempts] == ["asked", None]
    assert (result.status, result.succeeded) == ("mismatched", False)
    assert result.trace.status == "mismatched"


def test_a_conversion_the_request_asks_for_passes() -> None:
    result, _ = _exhibits([
        *LOOK_UP_AMBER, call("kg_to_lb", {"value": 93.1}),
        call("final_result", {"exhibit": "Amber Room Model", "value": 205.25})],
        "What is the weight of Amber Room Model in pounds?")
    assert (result.status, result.attempts) == ("success", 1)


def test_figures_of_different_units_added_up_and_a_named_thing_not_looked_up() -> None:
    """h01 on seed 6801: asked for two exhibits' insured value together, the 1.5B read one,
    converted its weight and added that to its value; the second exhibit never looked up.
    (The conversion is refused the first time it is made, :mod:`toolcycle.run.
    unasked_conversion`; made again, it runs, and the answer's checks see the rest.)"""
    result, model = _exhibits([
        call("lookup_exhibit", {"name": "Silk Atlas"}), call("exhibit_info", {"id": "EX-576"}),
        call("kg_to_lb", {"value": 189.8}), call("kg_to_lb", {"value": 189.8}),
        call("add", {"numbers": [43062, 418.44]}),
        call("final_result", {"exhibit": "Silk Atlas", "value": 43480.44}),
        *LOOK_UP_AMBER, call("add", {"numbers": [43062, 32275]}),
        call("final_result", {"exhibit": "Silk Atlas", "value": 75337})],
        "Add up the insured value of Silk Atlas and Amber Room Model.")
    errors = result.trace.attempts[0].errors
    assert errors[0].startswith(
        "your answer's 43480.44 is `add` over 43062 (`insured_value_eur`, EUR) and 418.44 "
        "(`weight_kg`, lb, from `kg_to_lb`): figures in different units do not add up")
    assert errors[1].startswith("the request names 'Amber Room Model', which no tool was "
                                "given and no tool result holds; you looked 'Silk Atlas' up "
                                "with `lookup_exhibit`")
    assert errors[1] in model.requests[6].last_message.text
    assert result.trace.steps[2].tool_calls[0].error_type == "unasked_conversion"
    assert (result.status, result.output.value) == ("success", 75337)


def test_without_grounding_nothing_is_checked() -> None:
    result, model = _exhibits([
        *LOOK_UP_AMBER, call("kg_to_lb", {"value": 93.1}),
        call("final_result", {"exhibit": "Amber Room Model", "value": 205.25})], WEIGHT,
        grounding=False)
    assert (result.status, len(model.requests)) == ("success", 4)


def test_never_on_the_last_attempt_yet_the_status_says_so() -> None:
    result, _ = _exhibits([
        *LOOK_UP_AMBER, *CONVERTED_TWICE,
        call("final_result", {"exhibit": "Amber Room Model", "value": 205.25})], WEIGHT,
        attempts=1)
    assert result.attempts == 1 and result.status == "mismatched"


# -- the unit the request asks for ---------------------------------------------------------

RUNS = {"nina holm": [5.2, 10.0, 7.5]}


def runs_this_week(name: str) -> list[float]:
    """The distances in km a member ran this week."""
    return RUNS[name.lower()]


def total_km(distances: list[float]) -> float:
    """The total of a list of distances in km."""
    return round(sum(distances), 2)


def km_to_mi(km: float) -> float:
    """Convert kilometres to miles."""
    return round(km * 0.621371, 2)


READINGS = {"tromso": {"temp_c": -3.5, "wind_kmh": 18.0}}


def latest_reading(city: str) -> dict[str, float]:
    """The latest reading of a weather station: temperature in C, wind in km/h."""
    return READINGS[city.lower()]


def kmh_to_knots(kmh: float) -> float:
    """Convert a speed from km/h to knots."""
    return round(kmh / 1.852, 2)


def _text(script: list[Any], question: str, tools: list[Any]) -> tuple[Any, ScriptedModel]:
    model = ScriptedModel(script)
    agent = Agent(model, "Use the tools to answer.", tools, grounding=True)
    return agent.run_sync(question), model


def test_an_answer_in_another_unit_than_the_request_asks_for() -> None:
    """fitness on dev: "How many km" answered in miles (22.7 km converted)."""
    result, model = _text([
        call("runs_this_week", {"name": "Nina Holm"}),
        call("total_km", {"distances": [5.2, 10.0, 7.5]}), call("km_to_mi", {"km": 22.7}),
        "Nina Holm ran 14.11 miles this week.", "Nina Holm ran 22.7 km this week."],
        "How many km did Nina Holm run this week?", [runs_this_week, total_km, km_to_mi])
    error = result.trace.attempts[0].errors[0]
    assert error == ("the request asks for km; your answer gives 14.11 in miles (`km_to_mi` "
                     "converted 22.7 (the result of `total_km`) into mi (mile)); the figure in "
                     "km is 22.7 (the result of `total_km`): answer with it")
    assert error in model.requests[4].last_message.text
    assert (result.status, result.output) == ("success", "Nina Holm ran 22.7 km this week.")


def test_a_converted_figure_relabelled_is_still_in_the_unit_it_was_converted_to() -> None:
    """The 1.5B, told its 14.11 miles were not the km asked for, wrote "14.11 km" (dev,
    firsthour3 run): the label changed, the figure did not; the run says so."""
    result, _ = _text([
        call("runs_this_week", {"name": "Nina Holm"}),
        call("total_km", {"distances": [5.2, 10.0, 7.5]}), call("km_to_mi", {"km": 22.7}),
        "Nina Holm ran 14.11 miles this week.", "Nina Holm ran 14.11 km this week."],
        "How many km did Nina Holm run this week?", [runs_this_week, total_km, km_to_mi])
    assert result.status == "mismatched"


def test_a_conversion_asked_for_and_not_made_names_the_converter() -> None:
    """weather on dev: asked in knots, answered the station's km/h."""
    result, _ = _text([
        call("latest_reading", {"city": "Tromso"}), "The wind in Tromso is 18 km/h.",
        "The wind in Tromso is 18 km/h."], "How strong is the wind in Tromso, in knots?",
        [latest_reading, kmh_to_knots])
    assert result.trace.attempts[0].errors == [
        "the request asks for knots; your answer gives 18 in km/h (kilometer / hour); "
        "`kmh_to_knots` converts to knots: answer in knots"]
    assert result.status == "mismatched"


def test_an_extra_converted_figure_beside_the_asked_one_passes() -> None:
    """The 1.5B often adds every reading it has, converted: the asked figure is there as
    the tool gave it, so the answer answers the question (dev weather, right answers)."""
    result, _ = _text([
        call("latest_reading", {"city": "Tromso"}), call("kmh_to_knots", {"kmh": 18.0}),
        "It is -3.5 C in Tromso, wind 9.72 knots."], "How cold is it in Tromso?",
        [latest_reading, kmh_to_knots])
    assert (result.status, result.attempts) == ("success", 1)


# -- a thing the request names, never looked up ---------------------------------------------

VINEYARDS = {"les pins": "VY-971", "clos bellet": "VY-204"}
AREAS = {"VY-971": {"area_ha": 3.6, "winemaker": "Grace Obi"},
         "VY-204": {"area_ha": 58.1, "winemaker": "Noor Aziz"}}


def lookup_vineyard(name: str) -> str:
    """Look up the id of a vineyard from its name."""
    return VINEYARDS[name.lower()]


def get_vineyard(vineyard_id: str) -> dict[str, Any]:
    """Get the record of a vineyard (by id) with the planted area (hectares)."""
    return AREAS[vineyard_id]


def _json_call(name: str, arguments: dict[str, Any]) -> str:
    return json.dumps({"name": name, "arguments": arguments})


def test_a_named_thing_not_looked_up_makes_the_re_ask_call_first() -> None:
    """h04 on held-out seed 6801: "the planted area of Les Pins and Clos Bellet added
    together" answered with Les Pins' area; told to look Clos Bellet up, the 1.5B answered
    in words instead (firsthour3 run). Through the JSON text protocol, as the 1.5B runs: the
    re-ask's first turn must call, so the words are refused; after that call it is free."""
    words = '{"answer": "The names were not found in any tool results."}'
    inner = ScriptedModel([
        _json_call("lookup_vineyard", {"name": "Les Pins"}),
        _json_call("get_vineyard", {"vineyard_id": "VY-971"}),
        '{"answer": "The planted area of Les Pins and Clos Bellet is 3.6 hectares."}',
        words, _json_call("lookup_vineyard", {"name": "Clos Bellet"}),
        _json_call("get_vineyard", {"vineyard_id": "VY-204"}),
        _json_call("add", {"numbers": [3.6, 58.1]}),
        '{"answer": "Together they have 61.7 hectares."}'])
    agent = Agent(JsonToolsModel(inner), "Answer using the tools.",
                  [lookup_vineyard, get_vineyard, add], grounding=True)
    result = agent.run_sync(
        "What is the planted area of Les Pins and Clos Bellet added together?")
    first = result.trace.attempts[0]
    assert (first.validator, first.code) == ("asked", "NOT_LOOKED_UP")
    assert "Call one of the tools now." in inner.requests[3].last_message.text
    assert "Call one of the tools now." not in inner.requests[-1].last_message.text
    assert [c.name for c in result.tool_calls][2:] == ["lookup_vineyard", "get_vineyard", "add"]
    assert (result.status, result.output) == ("success", "Together they have 61.7 hectares.")


def test_hostile_tool_output_and_arguments_do_not_break_the_check() -> None:
    """Tool output and model arguments are untrusted: JSON nested past what the parser
    takes, integers too big for a float, a huge answer. The check reads what it can and the
    run ends as it would without it."""
    def deep(code: str) -> str:
        """A record by code."""
        return "[" * 100_000 + "]" * 100_000

    def big(code: str) -> dict[str, Any]:
        """A record by code, in kg."""
        return {"weight_kg": 10**400, "value_eur": 12.5}

    huge = 10**500
    model = ScriptedModel([call("deep", {"code": "A-1"}), call("big", {"code": "A-1"}),
                           call("add", {"numbers": [huge, 1]}),
                           "It weighs 12.5 kg. " + "x " * 30_000, "It weighs 12.5 kg."])
    agent = Agent(model, "Use the tools.", [deep, big, add], grounding=True)
    result = agent.run_sync("What does A-1 weigh in pounds?")
    assert result.status in ("success", "ungrounded", "mismatched")
    assert result.output == "It weighs 12.5 kg."


def test_no_converter_is_named_for_a_figure_no_tool_gave() -> None:
    """A figure in the wrong unit that no result holds is grounding's to judge; told "the
    converter converts to knots", a model converts the made-up figure (seen on the 1.5B,
    first-hour dev rerun, 2026-12-07: "gives 1.5 in hectares; `ha_to_acres` converts to
    acres", 1.5 from nowhere)."""
    from toolcycle.run.asked import mismatches
    from toolcycle.run.provenance import Call
    from toolcycle.run.units import requested_units

    request = "How strong is the wind in Tromso, in knots?"
    calls = [Call("latest_reading", {"city": "Tromso"}, '{"wind_kmh": 18.0}', "")]
    offered = [("kmh_to_knots", "Convert km/h to knots.")]
    given = mismatches(request, requested_units(request), calls, "The wind is 18 km/h.", offered)
    made_up = mismatches(request, requested_units(request), calls, "The wind is 25 km/h.",
                         offered)
    assert "`kmh_to_knots` converts to knots" in given[0].message
    assert made_up and "converts" not in made_up[0].message
    assert made_up[0].message.endswith(": answer in knots")
