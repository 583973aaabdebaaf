"""An answer whose figure comes from a field the request does not name, while the same
records hold one it does (toolcycle/run/asked_field.py): rejected once, then ``mismatched``.
The shape was seen on the 1.5B (first-hour held-out agents: two ``capacity`` figures added
up for "the two ticket prices"); the records here are another domain's."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle import Agent, Limits
from toolcycle.run.asked_field import unasked_fields
from toolcycle.run.provenance import Call, figures_of
from toolcycle.testing import ScriptedModel, call

PARCELS = {"P-1": {"weight_grams": 1250, "postage_fee_eur": 4.5, "pieces": 3},
           "P-2": {"weight_grams": 800, "postage_fee_eur": 6.25, "pieces": 1}}


def parcel(ref: str) -> dict[str, Any]:
    """A parcel's record: weight, postage fee and number of pieces."""
    return PARCELS[ref]


def add(numbers: list[float]) -> float:
    """Add a list of numbers."""
    return sum(numbers)


ASKED = "What do the postage fees of parcels P-1 and P-2 come to together?"


def _run(script: list[Any]) -> Any:
    agent = Agent(ScriptedModel(script), tools=[parcel, add], grounding=True,
                  limits=Limits(max_attempts=3))
    return agent.run_sync(ASKED)


LOOKED_UP = [call("parcel", {"ref": "P-1"}), call("parcel", {"ref": "P-2"})]


def test_a_sum_of_an_unasked_field_is_named_and_stays_mismatched() -> None:
    result = _run([*LOOKED_UP, call("add", {"numbers": [1250, 800]}), "2050 EUR.",
                   "2050 EUR."])
    first = result.trace.attempts[0]
    assert (first.validator, first.code) == ("asked", "MISMATCHED")
    assert ("your answer's 2050 is `add` over 1250, 800, read from `weight_grams`, which the "
            "request does not ask about; it asks about `postage_fee_eur`") in first.errors[0]
    # every record's figure of the field asked, not the first one's alone
    assert "(`parcel` gave 4.5 and 6.25): add those figures instead" in first.errors[0]
    assert result.status == "mismatched"


def test_the_sum_of_the_asked_field_passes() -> None:
    result = _run([*LOOKED_UP, call("add", {"numbers": [4.5, 6.25]}), "10.75 EUR."])
    assert (result.attempts, result.status) == (1, "success")


def test_a_single_unasked_figure_is_named() -> None:
    agent = Agent(ScriptedModel([call("parcel", {"ref": "P-1"}), "1250", "4.5 EUR"]),
                  tools=[parcel], grounding=True, limits=Limits(max_attempts=3))
    result = agent.run_sync("What is the postage fee of parcel P-1?")
    assert "your answer's 1250 is `weight_grams`" in result.trace.attempts[0].errors[0]
    assert (result.output, result.status) == ("4.5 EUR", "success")


@pytest.mark.parametrize(("request_text", "answer"), [
    ("What does parcel P-1 weigh?", [("1250", 1250.0)]),          # the field asked
    ("Tell me about parcel P-1.", [("1250", 1250.0)]),            # no field named: silent
    ("Postage fee of P-1, and its weight?", [("1250", 1250.0), ("4.5", 4.5)]),  # one named
    ("What is the postage fee of parcel 1250?", [("1250", 1250.0)]),  # the request's figure
    ("What is the postage fee of P-1?", [("99", 99.0)]),          # no field holds it
])
def test_nothing_plain_is_no_mismatch(request_text: str, answer: list[tuple[str, float]]
                                      ) -> None:
    calls = [Call("parcel", {"ref": "P-1"}, '{"weight_grams": 1250, "postage_fee_eur": 4.5}',
                  "")]
    figures = figures_of(calls[0], 0)
    assert unasked_fields(request_text, answer, calls, figures) == []


COURIER = Call("parcel", {"ref": "P-1"},
               '{"weight_grams": 1250, "postage_fee_eur": 4.5, "courier": "Ana Ruiz"}', "")


@pytest.mark.parametrize(("request_text", "answer", "told"), [
    # a name from a field the request does not name, beside one it does: named
    ("What is the weight in grams of parcel P-1?", "Ana Ruiz carries parcel P-1.",
     "your answer's 'Ana Ruiz' is `courier`, which the request does not ask about; it asks "
     "about `weight_grams` (`parcel` gave 1250): answer with that"),
    ("Who is the courier of parcel P-1?", "Ana Ruiz.", None),           # the field asked
    ("What is the weight in grams of P-1?", "1250 g, carried by Ana Ruiz.", None),  # figure too
    ("Tell me about parcel P-1.", "Ana Ruiz carries it.", None),        # no field named
    ("Is Ana Ruiz the courier of P-1's weight?", "Ana Ruiz.", None),     # the request's own
])
def test_a_name_from_an_unasked_field_is_named(request_text: str, answer: str,
                                               told: str | None) -> None:
    """Seen on the 1.5B: "what number of beds does this ward have?" answered with the ward's
    head nurse, a ``success``."""
    from toolcycle.run.asked_field import unasked_values

    said = unasked_values(request_text, answer, [COURIER], figures_of(COURIER, 0))
    assert said == ([told] if told else [])


def grams_to_ounces(value: float) -> float:
    """Convert a weight in grams to ounces."""
    return round(value / 28.3495, 2)


def test_a_converted_figure_of_an_unasked_field_is_told_the_field_asked_first() -> None:
    """Seen on the 1.5B (held-out 6815): "what number of fish" answered with the tank's
    volume converted to gallons; told only that gallons were not asked for and to answer
    with the litres "as the tools gave them", it answered the litres: still the wrong field.
    The field asked about comes first."""
    agent = Agent(ScriptedModel([call("parcel", {"ref": "P-1"}),
                                 # refused the first time (run/unasked_conversion.py), then run
                                 call("grams_to_ounces", {"value": 1250}),
                                 call("grams_to_ounces", {"value": 1250}),
                                 "44.09", "3 pieces."]),
                  tools=[parcel, grams_to_ounces], grounding=True,
                  limits=Limits(max_attempts=3))
    result = agent.run_sync("What number of pieces does parcel P-1 have?")
    told = result.trace.attempts[0].errors[0]
    assert "it asks about `pieces` (`parcel` gave 3): answer with that" in told, told
    assert "answer with 1250 as the tools gave it" not in told
    assert (result.output, result.status) == ("3 pieces.", "success")


KEEPERS = {"HV-3": {"keeper": "Ilse Brandt", "honey_kg": 38.5, "frames": 10},
           "HV-8": {"keeper": "Omar Haddad", "honey_kg": 21.0, "frames": 8}}


def hive(hive_id: str) -> dict[str, Any]:
    """A beehive's record: keeper, honey harvested, frames."""
    return KEEPERS[hive_id]


def _hive_run(script: list[Any], question: str) -> Any:
    return Agent(ScriptedModel(script), tools=[hive], grounding=True,
                 limits=Limits(max_attempts=3)).run_sync(question)


def test_an_unsupported_answer_is_told_the_value_of_the_field_asked() -> None:
    """Seen on the 1.5B (held-out 6820): "Dr. Smith" for the pharmacist, before and after
    reading the record that names her, told only that 'Smith' had no source."""
    result = _hive_run([call("hive", {"hive_id": "HV-3"}), "Hive HV-3 is kept by Dr. Smith.",
                        "Hive HV-3 is kept by Ilse Brandt."], "Who is the keeper of hive HV-3?")
    first = result.trace.attempts[0]
    assert first.validator == "grounding"
    assert first.errors[0].endswith("; what would work: `hive` gave 'Ilse Brandt' as `keeper`")
    figure = _hive_run([call("hive", {"hive_id": "HV-3"}), "It gave 40 kg.", "38.5 kg."],
                       "How much honey did hive HV-3 give?")
    assert figure.trace.attempts[0].errors[0].endswith(
        "; what would work: `hive` gave 38.5 as `honey_kg`")
    assert figure.status == "success"


def test_no_field_value_is_named_where_it_is_not_plain() -> None:
    both = _hive_run([call("hive", {"hive_id": "HV-3"}), call("hive", {"hive_id": "HV-8"}),
                      "Dr. Smith and Dr. Jones.", "Ilse Brandt and Omar Haddad."],
                     "Who keeps hives HV-3 and HV-8?")  # two keepers: which one is not plain
    assert "what would work" not in both.trace.attempts[0].errors[0]
    unnamed = _hive_run([call("hive", {"hive_id": "HV-3"}), "It is busy, 99 bees.",
                         "Ilse Brandt keeps it."], "Tell me about hive HV-3.")  # no field named
    assert "what would work" not in unnamed.trace.attempts[0].errors[0]
    other_unit = _hive_run([call("hive", {"hive_id": "HV-3"}), "About 90 lb.", "84.88 lb."],
                           "How much honey did hive HV-3 give, in pounds?")  # kg is not asked
    assert "what would work" not in other_unit.trace.attempts[0].errors[0]


def test_a_hostile_field_name_is_quoted_short() -> None:
    """A tool's result is untrusted: a field name of 5,000 characters (one the request's
    words name, and one they do not) is quoted back to the model cut, never whole; the
    check still reads the record."""
    named = "postage_fee_" * 400 + "eur"
    unnamed = "weight_" * 700 + "grams"
    records = {"P-9": {named: 7.5, unnamed: 990}}

    def parcel(ref: str) -> dict[str, Any]:
        """A parcel's record."""
        return records[ref]

    agent = Agent(ScriptedModel([call("parcel", {"ref": "P-9"}), "990", "7.5 EUR"]),
                  tools=[parcel], grounding=True, limits=Limits(max_attempts=3))
    result = agent.run_sync("What is the postage fee of parcel P-9?")
    told = result.trace.attempts[0].errors[0]
    assert "your answer's 990 is `weight_weight" in told and "it asks about `postage_fee_" in told
    assert len(told) < 600 and named[:61] not in told and unnamed[:61] not in told
    assert (result.output, result.status) == ("7.5 EUR", "success")
