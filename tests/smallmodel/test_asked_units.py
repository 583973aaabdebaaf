"""Reading units and explaining an answer's figures (toolcycle.run.units, .provenance,
.asked): what the checks must and must not call another question. The silent cases are the
right answers the first-hour agents gave (a price worked out from kWh, a month beside a
name, an extra converted reading) that a check must not turn into a failure."""

from __future__ import annotations

import pytest

from toolcycle.run.asked import mismatches
from toolcycle.run.provenance import Call, conversion_of
from toolcycle.run.units import field_unit, name_units, named_units, read_unit, stated_units


def _names(units: list) -> list[str]:
    return [u.name for u in units]


def test_the_units_a_request_names_not_its_english_words() -> None:
    """``in`` (an inch to pint), ``Roux's`` (a second), "much" and "Pins" (prefixed units
    to pint) are words; ``km``, ``USD``, ``knots`` and a lone capital after "in" are units."""
    assert _names(named_units("How many km did Nina Holm run this week?")) == [
        "kilometer", "week"]
    assert _names(named_units("What is the total for Lea Roux's stay in USD?")) == ["USD"]
    assert _names(named_units("How much is the yield of Les Pins, in litres?")) == ["liter"]
    assert _names(named_units("What is the room temperature of Oak Ward in F?")) == [
        "degree_Fahrenheit"]
    assert named_units("Add up the insured value of Silk Atlas and Amber Room Model.") == []


def test_the_unit_written_beside_a_figure() -> None:
    assert [(f, u.name) for f, u in stated_units(
        "It is 45.32°F, wind 16.74 knots, 12.2 mm of rain, $12.50, 9294.89 US gallons, "
        "about 12 degrees Fahrenheit; 3 people")] == [
        ("45.32", "degree_Fahrenheit"), ("16.74", "knot"), ("12.2", "millimeter"),
        ("12.50", "USD"), ("9294.89", "gallon"), ("12", "degree_Fahrenheit")]


@pytest.mark.parametrize(("key", "name"), [
    ("weight_kg", "kilogram"), ("insured_value_eur", "EUR"), ("temp_c", "degree_Celsius"),
    ("wind_kmh", "kilometer / hour"), ("area_ha", "hectare"), ("windKmh", "kilometer / hour"),
    ("capacity", None), ("amount", None)])
def test_the_unit_a_field_name_ends_with(key: str, name: str | None) -> None:
    unit = field_unit(key)
    assert (unit.name if unit else None) == name


def test_a_converter_is_two_units_of_one_kind_one_figure_in_and_out() -> None:
    def converts(name: str, arguments: dict, description: str = "") -> tuple | None:
        found = conversion_of(Call(name, arguments, "12.5", description))
        return (found[0].name, found[1].name) if found else None

    assert converts("kg_to_lb", {"value": 5.67}) == ("kilogram", "pound")
    assert converts("convert_currency", {"amount": 980.0, "from_currency": "EUR",
                                         "to_currency": "USD"}) == ("EUR", "USD")
    assert converts("convert", {"value": 3}, "Convert a speed from km/h to knots.") == (
        "kilometer / hour", "knot")
    assert converts("energy_cost", {"kwh": 198}, "The cost in EUR of an amount of kWh") is None
    assert converts("runs_this_week", {"member": 301}) is None
    assert _names(name_units("mwh_to_kwh")) == ["megawatt_hour", "kilowatt_hour"]


def test_without_pint_the_common_units_read_alike() -> None:
    """The fallback table gives pint's names and kinds, so both readings compare alike."""
    from toolcycle.run import units

    for word in ("km", "miles", "kg", "lb", "knots", "°F", "litres", "hectares", "kWh"):
        assert units._common(word, word.lower()) is not None, word
        pint_read = units._pint(word)
        if pint_read is not None:
            common = units._common(word, word.lower())
            assert common is not None
            assert (pint_read.name, pint_read.dimension) == (common.name, common.dimension)


def test_pint_reads_what_the_table_does_not() -> None:
    pytest.importorskip("pint")
    assert read_unit("furlongs") is not None and read_unit("furlongs").dimension == "[length]"


BOOKING = Call("booking", {"guest_id": "G-3342"},
               '{"room": 117, "nights": 2, "rate_usd": 98.5, "total_usd": 197.0}',
               "A guest's booking by id.")
TO_EUR = Call("usd_to_eur", {"amount": 197.0}, "181.24", "Convert USD to EUR.")


def _kinds(request: str, calls: list[Call], answer: object) -> list[str]:
    return [m.kind for m in mismatches(request, named_units(request), calls, answer)]


def test_a_unit_the_request_asks_for_and_the_figure_the_tools_gave_in_it() -> None:
    found = mismatches("What is the total for Lea Roux's stay in USD?",
                       named_units("in USD"), [BOOKING, TO_EUR],
                       "The total for Lea Roux's stay in USD is 181.24 euros.")
    assert [m.message for m in found] == [
        "the request asks for USD; your answer gives 181.24 in euros (`usd_to_eur` converted "
        "197 USD (total_usd in the result of `booking`) into EUR); the figure in USD is 197 "
        "USD (total_usd in the result of `booking`): answer with it"]


def test_the_figure_in_the_asked_unit_the_tools_gave() -> None:
    reading = Call("latest_reading", {"station": "WS-42"}, '{"temp_c": -3.5, "wind_kmh": 18.0}',
                   "")
    found = mismatches("How cold is it in Tromso, in Celsius?", named_units("in Celsius"),
                       [reading], "It is 25.7 F.")
    assert found and found[0].message == (
        "the request asks for Celsius; your answer gives 25.7 in F (degree Fahrenheit); "
        "temp_c in the result of `latest_reading` says -3.5 c: answer in "
        "Celsius")


def test_right_answers_the_checks_leave_alone() -> None:
    """A price worked out from kWh is no conversion; a month beside a looked-up name is no
    second thing to look up; an extra converted figure beside the asked one is an extra."""
    usage = Call("monthly_usage", {"meter": "M-4"}, "198", "kWh a meter used in a month.")
    cost = Call("energy_cost", {"kwh": 198}, "56.83", "The cost in EUR of an amount of kWh.")
    assert _kinds("How much did 4 Mill Lane pay in October?", [usage, cost],
                  "4 Mill Lane paid 56.83 EUR in October.") == []
    find = Call("find_meter", {"address": "12 Harbour Street"}, "M-12", "")
    assert _kinds("How much electricity did 12 Harbour Street use in November 2026?",
                  [find, usage], "198 kWh in November 2026.") == []
    assert _kinds("How many nights did the guest G-3342 book?", [BOOKING, TO_EUR],
                  "2 nights, 181.24 EUR in all.") == []


def test_two_names_in_a_list_one_looked_up() -> None:
    find = Call("lookup_vineyard", {"name": "Les Pins"}, "VY-971", "")
    read = Call("get_vineyard", {"vineyard_id": "VY-971"},
                '{"yield_hl": 692.6, "area_ha": 3.6, "winemaker": "Grace Obi"}', "")
    request = "What is the planted area of Les Pins and Clos Bellet added together?"
    assert _kinds(request, [find, read], "3.6 hectares.") == ["not_looked_up"]
    assert _kinds("What is the planted area of the vineyard Les Pins and the vineyard Clos "
                  "Bellet?", [find, read], "3.6 hectares.") == ["not_looked_up"]
    assert _kinds("What is the planted area of Les Pins for the Harvest Fair?", [find, read],
                  "3.6 hectares.") == []
