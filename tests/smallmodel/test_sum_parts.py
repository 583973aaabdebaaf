"""A sum read back to the records it came from (issue 68, first-hour held-out seed 6806):
the 1.5B added a venue's capacity to its converted ticket price for "what is the capacity",
and for "who is the manager"; a farm's output in kWh to its panel count; one tank's fish
count to itself; it read one of two medicines' records and answered "the combined stock"
with it; and it answered kW where the request asked "in W". Each ended ``success``. The
domain here is another (greenhouses), the mechanisms the same: each part of a sum is traced
through the sums and conversions that made it (``provenance.traced``), the answer is
rejected once with what is off, and an answer that stays off ends ``mismatched``."""

from __future__ import annotations

from typing import Any

import pydantic

from toolcycle import Agent, Limits
from toolcycle.run.units import named_units, one_kind
from toolcycle.status import passes_tool_error
from toolcycle.testing import ScriptedModel, call

HOUSES = {"GH-204": {"seedlings": 333, "heating_cost_gbp": 40.77, "gardener": "Ada Park"},
          "GH-517": {"seedlings": 170, "heating_cost_gbp": 56.67, "gardener": "Tomas Ruiz"},
          "GH-630": {"seedlings": 512, "heater_kw": 13.39, "gardener": "Lena Holm"}}
NAMES = {"north bay": "GH-204", "south bay": "GH-517", "east bay": "GH-630"}


def find_greenhouse(name: str) -> str:
    """Find a greenhouse by its name and return its id."""
    return NAMES[name.lower()]


def greenhouse_info(greenhouse_id: str) -> dict[str, Any]:
    """Details of a greenhouse by id: seedlings, heating cost, gardener."""
    return HOUSES[greenhouse_id]


def pounds_to_euros(value: float) -> float:
    """Convert an amount in pounds to euros."""
    return round(value * 1.17, 2)


def add(numbers: list[float]) -> float:
    """Add a list of numbers."""
    return round(sum(numbers), 2)


class Answer(pydantic.BaseModel):
    answer: str


def _run(script: list[Any], question: str, output: Any = Answer) -> tuple[Any, ScriptedModel]:
    model = ScriptedModel(script)
    agent = Agent(model, "Answer using the tools.",
                  [find_greenhouse, greenhouse_info, pounds_to_euros, add], output=output,
                  grounding=True, limits=Limits(max_attempts=3))
    return agent.run_sync(question), model


NORTH = [call("find_greenhouse", {"name": "North Bay"}),
         call("greenhouse_info", {"greenhouse_id": "GH-204"})]
SOUTH = [call("find_greenhouse", {"name": "South Bay"}),
         call("greenhouse_info", {"greenhouse_id": "GH-517"})]
def twice(conversion: Any) -> list[Any]:
    """A conversion the request does not ask for, made twice: it is refused the first time
    (toolcycle/run/unasked_conversion.py), runs when made again, and the answer checks these
    tests are about see the rest."""
    return [conversion, conversion]


# the conversion twice (see twice())
COST_PLUS_SEEDLINGS = [call("pounds_to_euros", {"value": 40.77}),
                       call("pounds_to_euros", {"value": 40.77}),
                       call("add", {"numbers": [333, 47.7]})]


def test_a_count_plus_a_converted_price_for_the_count_is_rejected_by_its_fields() -> None:
    result, model = _run([*NORTH, *COST_PLUS_SEEDLINGS,
                          call("final_result", {"answer": "380.7"}),
                          call("final_result", {"answer": "333"})],
                         "How many seedlings does the greenhouse North Bay have?")
    first = result.trace.attempts[0]
    assert (first.validator, first.code) == ("asked", "MISMATCHED")
    told = model.requests[6].last_message.text
    assert ("your answer's 380.7 is `add` over 333 (`seedlings`) and 47.7 "
            "(`heating_cost_gbp`, EUR, from `pounds_to_euros`)") in told
    assert "the request asks about `seedlings`, not `heating_cost_gbp`" in told
    assert "the `seedlings` of 'North Bay' is 333" in told, told
    assert (result.status, result.output.answer) == ("success", "333")


def test_a_sum_that_stays_unlike_ends_mismatched() -> None:
    result, _ = _run([*NORTH, *COST_PLUS_SEEDLINGS, call("final_result", {"answer": "380.7"}),
                      call("final_result", {"answer": "380.7"})],
                     "How many seedlings does the greenhouse North Bay have?")
    assert (result.status, result.succeeded) == ("mismatched", False)


def test_a_sum_for_a_person_names_the_field_that_holds_the_name() -> None:
    result, model = _run([*NORTH, *COST_PLUS_SEEDLINGS, call("final_result", {"answer": "380.7"}),
                          call("final_result", {"answer": "Ada Park"})],
                         "Who is the gardener of the greenhouse North Bay?")
    told = model.requests[6].last_message.text
    assert ("read from `seedlings` and `heating_cost_gbp`, which the request does not ask "
            "about; it asks about `gardener` (`greenhouse_info` gave 'Ada Park'): answer "
            "with that") in told
    assert (result.status, result.output.answer) == ("success", "Ada Park")


def test_a_figure_added_to_itself_then_to_another_is_counted_twice() -> None:
    result, model = _run([*NORTH, call("add", {"numbers": [333, 333]}), *SOUTH,
                          call("add", {"numbers": [666, 170]}),
                          call("final_result", {"answer": "836"}),
                          call("add", {"numbers": [333, 170]}),
                          call("final_result", {"answer": "503"})],
                         "What is the combined number of seedlings of North Bay and South Bay?")
    told = model.requests[7].last_message.text
    assert ("333 (`seedlings` of `greenhouse_info`) is added twice, but `greenhouse_info` "
            "gave it once") in told
    # each name's record is plain (looked up by name, read by the id that gave): the call
    # that would answer is shown, not only the rule
    assert ("what would work: `add` over 333 and 170, the `seedlings` of 'North Bay' and "
            "'South Bay'") in told, told
    assert (result.status, result.output.answer) == ("success", "503")


def test_a_record_read_again_is_still_one_record() -> None:
    """Told its sum added a record's figure twice, the 1.5B read the record again and added
    the figure from each reading (held-out first-hour seed 6813): still one record."""
    result, model = _run([*NORTH, call("add", {"numbers": [333, 333]}),
                          call("final_result", {"answer": "666"}),
                          *NORTH, call("add", {"numbers": [333, 333]}),
                          call("final_result", {"answer": "666"}),
                          *SOUTH, call("add", {"numbers": [333, 170]}),
                          call("final_result", {"answer": "503"})],
                         "What is the combined number of seedlings of North Bay and South Bay?")
    assert "is added twice" in model.requests[8].last_message.text
    assert (result.status, result.output.answer, result.attempts) == ("success", "503", 3)


def test_a_sum_in_two_units_is_shown_the_sum_in_the_records_unit() -> None:
    """Different units (one part converted, one not): the field is still plain (both read
    from ``heating_cost_gbp``), so the sum that would work is shown in the records' unit."""
    result, model = _run([*NORTH, *SOUTH, *twice(call("pounds_to_euros", {"value": 56.67})),
                          call("add", {"numbers": [40.77, 66.3]}),
                          call("final_result", {"answer": "107.07"}),
                          call("add", {"numbers": [40.77, 56.67]}),
                          call("final_result", {"answer": "97.44"})],
                         "What is the heating cost of North Bay and South Bay added together?")
    told = model.requests[8].last_message.text
    assert "figures in different units do not add up" in told, told
    assert ("what would work: `add` over 40.77 and 56.67, the `heating_cost_gbp` of "
            "'North Bay' and 'South Bay'") in told, told
    assert (result.status, result.output.answer) == ("success", "97.44")


def test_no_sum_is_shown_where_the_request_asks_for_another_unit() -> None:
    """Asked in euros, the records' sum in pounds would be in the wrong unit: not shown."""
    _, model = _run([*NORTH, *SOUTH, call("pounds_to_euros", {"value": 56.67}),
                     call("add", {"numbers": [40.77, 66.3]}),
                     call("final_result", {"answer": "107.07 EUR"}),
                     *[call("final_result", {"answer": "114 EUR"})] * 3],
                    "What is the heating cost of North Bay and South Bay together in euros?")
    told = model.requests[7].last_message.text
    assert "figures in different units do not add up" in told and "would work" not in told, \
        told


class CostInEuros(pydantic.BaseModel):
    total_eur: float


def test_no_sum_is_shown_where_the_output_field_asks_for_another_unit() -> None:
    """The unit asked may be the output's (``total_eur``), not the request's words."""
    _, model = _run([*NORTH, *SOUTH, call("pounds_to_euros", {"value": 56.67}),
                     call("add", {"numbers": [40.77, 66.3]}),
                     call("final_result", {"total_eur": 107.07}),
                     *[call("final_result", {"total_eur": 114})] * 3],
                    "What is the heating cost of North Bay and South Bay together?",
                    output=CostInEuros)
    told = model.requests[7].last_message.text
    assert "figures in different units do not add up" in told and "would work" not in told, \
        told


def test_no_sum_is_shown_where_the_request_asks_for_no_total() -> None:
    """A difference over the same two things: the check still speaks, the sum is not shown
    as what would work."""
    _, model = _run([*NORTH, *SOUTH, call("add", {"numbers": [333, 333]}),
                     call("final_result", {"answer": "666"}),
                     *[call("final_result", {"answer": "163"})] * 3],
                    "What is the difference in seedlings between North Bay and South Bay?")
    told = model.requests[6].last_message.text
    assert "is added twice" in told and "would work" not in told, told


def test_no_sum_is_shown_where_a_names_record_is_not_plain() -> None:
    """A name read twice with two different figures (the record changed, or two records
    answer to it) has no one figure: no call is shown for it."""
    houses = dict(HOUSES, **{"GH-999": dict(HOUSES["GH-204"], seedlings=334)})
    names = iter(["GH-204", "GH-999"])

    def find_greenhouse(name: str) -> str:
        """Find a greenhouse by its name and return its id."""
        return next(names) if name.lower() == "north bay" else NAMES[name.lower()]

    def greenhouse_info(greenhouse_id: str) -> dict[str, Any]:
        """Details of a greenhouse by id: seedlings, heating cost, gardener."""
        return houses[greenhouse_id]

    model = ScriptedModel([*NORTH, call("find_greenhouse", {"name": "North Bay"}),
                           call("greenhouse_info", {"greenhouse_id": "GH-999"}), *SOUTH,
                           call("add", {"numbers": [333, 333, 170]}),
                           call("final_result", {"answer": "836"}),
                           call("final_result", {"answer": "836"})])
    agent = Agent(model, "Answer using the tools.", [find_greenhouse, greenhouse_info, add],
                  output=Answer, grounding=True, limits=Limits(max_attempts=3))
    agent.run_sync("What is the combined number of seedlings of North Bay and South Bay?")
    told = model.requests[8].last_message.text
    assert "is added twice" in told and "would work" not in told, told
    assert "of 'North Bay' is" not in told, told


def test_a_figure_added_twice_where_the_request_counts_passes() -> None:
    result, _ = _run([*NORTH, call("add", {"numbers": [333, 333]}),
                      call("final_result", {"answer": "666"})],
                     "What would twice the seedlings of North Bay be?")
    assert (result.status, result.attempts) == ("success", 1)


def test_two_currencies_inside_nested_sums_do_not_add_up() -> None:
    result, model = _run([*NORTH, *twice(call("pounds_to_euros", {"value": 40.77})),
                          call("add", {"numbers": [47.7, 47.7]}), *SOUTH,
                          call("add", {"numbers": [95.4, 56.67]}),
                          call("final_result", {"answer": "152.07"}),
                          call("add", {"numbers": [40.77, 56.67]}),
                          call("final_result", {"answer": "97.44"})],
                         "What is the heating cost of North Bay and South Bay added together?")
    told = model.requests[9].last_message.text
    assert "figures in different units do not add up" in told
    assert "47.7 (`heating_cost_gbp`, EUR, from `pounds_to_euros`)" in told
    assert "56.67 (`heating_cost_gbp`, GBP)" in told
    assert (result.status, result.output.answer) == ("success", "97.44")


def test_fields_the_request_names_all_of_add_up() -> None:
    """Where the request names each field added, or none, nothing is plain: a sum of
    different fields may be what was asked ("seedlings plus the heating cost")."""
    for question in ("What are the seedlings plus the heating cost of North Bay?",
                     "What is the total of North Bay?"):
        result, _ = _run([*NORTH, call("add", {"numbers": [333, 40.77]}),
                          call("final_result", {"answer": "373.77"})], question)
        assert (result.status, result.attempts) == ("success", 1), question


def test_a_thing_looked_up_whose_record_was_never_read_is_not_looked_up() -> None:
    """h05 on seed 6806: both names looked up, one record read, its figure answered for
    "the combined stock". The re-ask names the id and the tool that takes it, and its first
    turn must call."""
    result, model = _run([call("find_greenhouse", {"name": "North Bay"}),
                          call("find_greenhouse", {"name": "South Bay"}),
                          call("greenhouse_info", {"greenhouse_id": "GH-517"}),
                          call("final_result", {"answer": "170"}),
                          call("greenhouse_info", {"greenhouse_id": "GH-204"}),
                          call("add", {"numbers": [333, 170]}),
                          call("final_result", {"answer": "503"})],
                         "What is the combined number of seedlings of North Bay and South Bay?")
    first = result.trace.attempts[0]
    assert (first.validator, first.code) == ("asked", "NOT_LOOKED_UP")
    told = model.requests[4].last_message.text
    assert ("you looked 'North Bay' up with `find_greenhouse`, which gave 'GH-204', and no "
            "call has read its record since: `greenhouse_info` takes `greenhouse_id`") in told
    assert model.requests[4].settings.tool_choice == "required"
    assert (result.status, result.output.answer) == ("success", "503")


def test_a_lookup_alone_answers_a_question_about_the_lookup() -> None:
    """An answer that gives no tool's figure may rest on the lookup alone: grounding asks
    once whether the id was meant for a detail call, and the same answer then succeeds."""
    answer = call("final_result", {"answer": "Yes, North Bay is listed."})
    result, _ = _run([call("find_greenhouse", {"name": "North Bay"}), answer, answer],
                     "Is there a greenhouse called North Bay?")
    assert [a.validator for a in result.trace.attempts][:1] != ["asked"]
    assert result.status == "success"


def test_a_one_letter_unit_after_in_is_the_unit_asked() -> None:
    assert [u.name for u in named_units("What is the heater power of East Bay in W?")] \
        == ["watt"]
    assert named_units("Is Ada in W Street?") == []  # a letter in running text is a word
    result, model = _run([call("find_greenhouse", {"name": "East Bay"}),
                          call("greenhouse_info", {"greenhouse_id": "GH-630"}),
                          "The heater of East Bay draws 13.39 kW.",
                          "The heater of East Bay draws 13.39 kW."],
                         "What is the heater power of East Bay in W?", output=str)
    assert "the request asks for W; your answer gives 13.39 in kW" in \
        model.requests[3].last_message.text
    assert result.status == "mismatched"


def test_pounds_beside_euros_are_sterling() -> None:
    pair = one_kind([*named_units("Convert an amount in pounds to euros.")])
    assert pair is not None and [u.name for u in pair] == ["GBP", "EUR"]
    assert one_kind([*named_units("Convert a weight in kg to pounds.")]) is not None
    result, _ = _run([*NORTH, *twice(call("pounds_to_euros", {"value": 40.77})),
                      call("final_result", {"answer": "47.7"}),
                      call("final_result", {"answer": "40.77"})],
                     "What is the heating cost of North Bay?")
    first = result.trace.attempts[0]
    assert (first.validator, first.code) == ("asked", "ANSWER_AS_GIVEN")
    assert (result.status, result.output.answer) == ("success", "40.77")


def test_an_error_retold_with_another_id_is_a_tool_error() -> None:
    """h11 on seed 6806: the detail tool failed on the farm's name, then answered for its
    id; the model answered the error's text with the id in its quotes."""
    error = ("Tool `greenhouse_info` failed: KeyError: no greenhouse with id 'North Bay'\n"
             "What would work:\n- `greenhouse_id` 'North Bay' is taken from the request, not "
             "from a tool result; `find_greenhouse` can give it")
    assert passes_tool_error("The tool `greenhouse_info` failed: KeyError: no greenhouse "
                             "with id 'GH-204'", [error])
    assert not passes_tool_error("North Bay has 333 seedlings; its id is 'GH-204'.", [error])
    assert not passes_tool_error("I could not find a greenhouse named 'North Bay'.", [error])


def test_a_name_looked_up_again_after_its_record_was_read_is_read() -> None:
    result, _ = _run([*NORTH, call("find_greenhouse", {"name": "North Bay"}),
                      call("final_result", {"answer": "333"})],
                     "How many seedlings does the greenhouse North Bay have?")
    assert (result.status, result.attempts) == ("success", 1)


def test_extras_beside_the_value_asked_are_not_another_answer() -> None:
    """Right answers with extras, recorded on held-out seeds 6805 and 6806 and flagged by the
    first version of these checks: the name asked for beside a doubled converted figure, or
    beside a converted figure of another field; a figure worked out by hand beside a name
    from another field (grounding judges that figure, not this check)."""
    gardener = "Who is the gardener of the greenhouse North Bay?"
    convert = [call("pounds_to_euros", {"value": 40.77})] * 2  # refused once, then run
    result, _ = _run([*NORTH, *convert, call("add", {"numbers": [47.7, 47.7]}),
                      call("final_result", {"answer": "Ada Park; the cost twice is 95.4 EUR"})],
                     gardener)
    assert (result.status, result.attempts) == ("success", 1)
    result, _ = _run([*NORTH, *convert,
                      call("final_result", {"answer": "Ada Park, and the cost is 47.7 EUR"})],
                     gardener)
    assert (result.status, result.attempts) == ("success", 1)
    from toolcycle.run.asked import mismatches
    from toolcycle.run.provenance import Call

    calls = [Call("greenhouse_info", {"greenhouse_id": "GH-204"},
                  '{"seedlings": 333, "heating_cost_gbp": 40.77, "gardener": "Ada Park"}', "")]
    assert mismatches("What is the heating cost of North Bay in EUR?", [], calls,
                      "The heating cost is 47.70 EUR, and the gardener is Ada Park.") == []


def test_one_records_figure_for_a_total_of_two_is_not_the_total() -> None:
    """h04 on held-out seed 6807: both records read, one capacity answered for "the
    combined capacity of A and B", a ``success``."""
    question = "What is the combined number of seedlings of North Bay and South Bay?"
    result, model = _run([*NORTH, *SOUTH, call("final_result", {"answer": "333"}),
                          call("add", {"numbers": [333, 170]}),
                          call("final_result", {"answer": "503"})], question)
    told = model.requests[5].last_message.text
    assert ("the request asks for `seedlings` of the things it names together; your answer "
            "gives 333, `seedlings` of one record (`greenhouse_info` gave 333 and 170)") in told
    assert (result.status, result.output.answer) == ("success", "503")
    both = "North Bay has 333 seedlings and South Bay 170, 503 together."
    result, _ = _run([*NORTH, *SOUTH, call("add", {"numbers": [333, 170]}),
                      call("final_result", {"answer": both})], question)
    assert (result.status, result.attempts) == ("success", 1)
    result, _ = _run([*NORTH, *SOUTH, call("final_result", {"answer": "North Bay, 333"})],
                     "Which has more seedlings, North Bay or South Bay?")  # (no total asked)
    assert (result.status, result.attempts) == ("success", 1)


def test_a_rate_is_no_count_that_asks_for_a_figure_twice() -> None:
    """h01 on held-out seed 6807: "riders per hour of A and B added together" answered
    add(add(3500, 3500), 1372); "per" had been read as a count word."""
    result, model = _run([*NORTH, call("add", {"numbers": [333, 333]}), *SOUTH,
                          call("add", {"numbers": [666, 170]}),
                          call("final_result", {"answer": "836"}),
                          call("final_result", {"answer": "836"})],
                         "What are the seedlings per tray of North Bay and South Bay added "
                         "together?")
    assert "is added twice" in model.requests[7].last_message.text
    assert result.status == "mismatched"


def test_a_letter_after_to_is_the_unit_asked() -> None:
    assert [u.name for u in named_units("Give me the heater power of East Bay converted to W.")
            ] == ["watt"]


EAST = [call("find_greenhouse", {"name": "East Bay"}),
        call("greenhouse_info", {"greenhouse_id": "GH-630"})]


def test_a_measure_plus_a_bare_count_does_not_add_up() -> None:
    """A figure in a unit of a physical quantity plus one from a field that names no unit,
    for a request that names neither field (held-out seed 6813: a train's ``distance_km``
    plus its ``seats`` for "the route length"): a count is no kW figure."""
    result, model = _run([*EAST, call("add", {"numbers": [13.39, 512]}),
                          call("final_result", {"answer": "525.39"}),
                          call("final_result", {"answer": "13.39"})],
                         "How much power does the heating of East Bay draw, all together?")
    told = model.requests[4].last_message.text
    assert ("your answer's 525.39 is `add` over 13.39 (`heater_kw`, kw) and 512 "
            "(`seedlings`): `seedlings` names no unit, so it is no kw figure like "
            "`heater_kw`") in told, told
    assert (result.status, result.output.answer) == ("success", "13.39")


def test_a_bare_field_the_request_names_adds_to_a_measure() -> None:
    """Where the request names the field without a unit, the sum may be what was asked."""
    result, _ = _run([*EAST, call("add", {"numbers": [13.39, 512]}),
                      call("final_result", {"answer": "525.39"})],
                     "What are the heater's kW plus the seedlings of East Bay?")
    assert (result.status, result.attempts) == ("success", 1)


def test_one_quantity_named_with_and_without_its_unit_adds_up() -> None:
    """Two tools' names for one quantity, one with its unit (``heater_kw``) and one without
    (``heater``), here the first written in camel case (``heaterKw``) and neither named by
    the request: not a bare count beside a measure, so the sum stands."""
    houses = {"GH-1": {"heaterKw": 13.39}, "GH-2": {"heater": 7.5}}

    def greenhouse_power(greenhouse_id: str) -> dict[str, Any]:
        """The power a greenhouse's heater draws, by id."""
        return houses[greenhouse_id]

    model = ScriptedModel([call("greenhouse_power", {"greenhouse_id": "GH-1"}),
                           call("greenhouse_power", {"greenhouse_id": "GH-2"}),
                           call("add", {"numbers": [13.39, 7.5]}),
                           call("final_result", {"answer": "20.89"})])
    agent = Agent(model, "Answer using the tools.", [greenhouse_power, add], output=Answer,
                  grounding=True, limits=Limits(max_attempts=3))
    result = agent.run_sync("How much power do GH-1 and GH-2 draw together?")
    assert (result.status, result.attempts, result.output.answer) == ("success", 1, "20.89")


def test_a_sum_of_figures_each_converted_unasked_is_a_conversion_nobody_asked_for() -> None:
    """Each part converted into a unit the request does not name, then added (held-out
    seed 6814: two farms' MWh each converted to kWh and added, answered "3165400.0 MWh",
    ``success``): traced through the sum, the parts are conversions; the re-ask shows the
    figures as the tools gave them."""
    question = "What is the heating cost of North Bay and South Bay added together?"
    converted = [*NORTH, *twice(call("pounds_to_euros", {"value": 40.77})), *SOUTH,
                 *twice(call("pounds_to_euros", {"value": 56.67})),
                 call("add", {"numbers": [47.7, 66.3]})]
    result, model = _run([*converted, call("final_result", {"answer": "114.0"}),
                          call("add", {"numbers": [40.77, 56.67]}),
                          call("final_result", {"answer": "97.44"})], question)
    told = model.requests[10].last_message.text
    assert ("the request does not ask for EUR; your answer's 114.0 is `add` over figures "
            "`pounds_to_euros` converted into EUR: add 40.77 GBP (`heating_cost_gbp` of "
            "`greenhouse_info`), 56.67 GBP (`heating_cost_gbp` of `greenhouse_info`) as the "
            "tools gave them") in told, told
    assert (result.status, result.output.answer) == ("success", "97.44")
    kept, _ = _run([*converted, call("final_result", {"answer": "114.0"}),
                    call("final_result", {"answer": "114.0"})], question)
    assert kept.status == "mismatched"
    asked, _ = _run([*converted, call("final_result", {"answer": "114.0"})],
                    question.replace("?", ", in euros?"))
    assert (asked.status, asked.attempts) == ("success", 1)


def test_one_records_figure_for_a_total_the_request_names_no_field_of() -> None:
    """Held-out seed 6813, rerun: "the route length of A and B added together" (no field
    named: the records say `distance_km`) answered with one train's `distance_km`, a
    ``success``. The answer's own figure says which field it meant."""
    question = "How big are North Bay and South Bay added together?"
    result, model = _run([*NORTH, *SOUTH, call("final_result", {"answer": "333"}),
                          call("add", {"numbers": [333, 170]}),
                          call("final_result", {"answer": "503"})], question)
    told = model.requests[5].last_message.text
    assert ("your answer gives 333, `seedlings` of one record (`greenhouse_info` gave 333 and "
            "170): add them up") in told, told
    assert (result.status, result.output.answer) == ("success", "503")
    kept, _ = _run([*NORTH, *SOUTH, call("final_result", {"answer": "333"}),
                    call("final_result", {"answer": "333"})], question)
    assert kept.status == "mismatched"


def test_figures_in_messages_are_written_as_a_record_writes_them() -> None:
    """Never ``1.5402e+06`` (``:g`` past six digits) nor ``0.30000000000000004``; a figure a
    hostile call makes of ``1e400`` (JSON's infinity) is written, not a crash."""
    from toolcycle.run.provenance import written

    assert [written(v) for v in (1540200.0, 45.5, 0.1 + 0.2, 0.0, -2.5)] == [
        "1540200", "45.5", "0.3", "0", "-2.5"]
    assert [written(v) for v in (float("inf"), float("nan"), 1e-9, 2e20)] == [
        "inf", "nan", "1e-09", "2e+20"]
