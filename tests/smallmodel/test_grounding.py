"""Grounding (opt-in, Agent(grounding=True)): an answer whose figures or names come from no
source is rejected, the model told what it asserted without support: once, a second time only
where the re-asked attempt found something, never on the last attempt, never more than
MAX_CHECKS times a run, and nothing changes without the option."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

from toolcycle import Agent, ConfigurationError, Limits
from toolcycle.run.grounding import unsupported_claims
from toolcycle.testing import ScriptedModel, call


def order_total(order_id: str) -> dict[str, Any]:
    """The total of an order."""
    if order_id != "A-17":
        raise KeyError(order_id)
    return {"total": 1200.5, "currency": "EUR", "city": "Lyon"}


class Total(pydantic.BaseModel):
    answer: str


def _run(script: list[Any], grounding: bool = True, attempts: int = 3,
         output: Any = None) -> tuple[Any, ScriptedModel]:
    model = ScriptedModel(script)
    agent = Agent(model, tools=[order_total], grounding=grounding, output=output,
                  limits=Limits(max_attempts=attempts))
    return agent.run_sync("What did order A-17 cost?"), model


def test_an_invented_figure_is_named_and_the_model_asked_again() -> None:
    result, model = _run([call("order_total", {"order_id": "A-18"}), "It cost 980 EUR in Paris.",
                          call("order_total", {"order_id": "A-17"}),
                          "It cost 1,200.50 EUR, shipped to Lyon."])
    assert result.output == "It cost 1,200.50 EUR, shipped to Lyon."
    first = result.trace.attempts[0]
    assert (first.validator, first.code) == ("grounding", "UNGROUNDED")
    assert "'980', 'EUR', 'Paris'" in first.errors[0]  # EUR: the lookup had failed
    assert "980" in model.requests[2].last_message.text  # the model was told


def test_a_supported_answer_passes_at_once() -> None:
    result, _ = _run([call("order_total", {"order_id": "A-17"}), "1200.50 EUR (A-17), Lyon."])
    assert result.attempts == 1


def test_at_most_one_check_then_the_answer_stands_and_its_status_says_ungrounded() -> None:
    """Issue 68: the run says so when it is not right. The 1.5B, told its figure had no
    source, wrote the same answer again (first-hour agent "shop", 2026-12-05); that answer
    used to be a success."""
    result, _ = _run(["About 980 EUR.", "Still 980 EUR."])
    assert result.output == "Still 980 EUR."
    assert [a.validator for a in result.trace.attempts] == ["grounding", None]
    assert (result.status, result.succeeded) == ("ungrounded", False)
    assert result.trace.status == "ungrounded"


def test_a_second_check_only_where_the_reask_found_something() -> None:
    """Seen on the 1.5B: told its figure had no source, it looked something up and wrote the
    same figure again. A re-ask that found something is asked again once; no more."""
    found = call("order_total", {"order_id": "A-17"})
    result, _ = _run(["About 980 EUR.", found, "About 980 EUR.", "It cost 1,200.50 EUR."])
    assert [a.validator for a in result.trace.attempts] == ["grounding", "grounding", None]
    assert (result.output, result.status) == ("It cost 1,200.50 EUR.", "success")
    result, _ = _run(["About 980 EUR.", found, "About 980 EUR.", found, "About 980 EUR."],
                     attempts=5)
    assert [a.validator for a in result.trace.attempts] == ["grounding", "grounding", None]
    assert result.status == "ungrounded"
    failed = call("order_total", {"order_id": "B-9"})  # a re-ask whose call failed: not again
    result, _ = _run(["About 980 EUR.", failed, "About 980 EUR."])
    assert [a.validator for a in result.trace.attempts] == ["grounding", None]


def test_the_feedback_quoting_the_figure_is_no_source_for_it() -> None:
    """The re-ask quotes '980' back in a user message; the same answer repeated must not
    find its figure there."""
    result, model = _run(["About 980 EUR.", "About 980 EUR."])
    assert "980" in model.requests[1].last_message.text
    assert result.status == "ungrounded"


def test_never_on_the_last_attempt_yet_the_status_tells() -> None:
    result, _ = _run(["About 980 EUR."], attempts=1)
    assert result.output == "About 980 EUR."
    assert result.status == "ungrounded" and result.attempts == 1


def test_a_supported_answer_after_the_re_ask_is_a_success() -> None:
    result, _ = _run(["About 980 EUR.", call("order_total", {"order_id": "A-17"}),
                      "It cost 1200.5 EUR."])
    assert (result.status, result.output) == ("success", "It cost 1200.5 EUR.")


def test_off_by_default_nothing_changes() -> None:
    result, _ = _run(["About 980 EUR."], grounding=False)
    assert result.output == "About 980 EUR." and result.attempts == 1
    assert result.status == "success"  # without grounding nothing is checked


def test_a_structured_answer_still_unsupported_is_ungrounded() -> None:
    result, _ = _run([call("final_result", {"answer": "980"}),
                      call("final_result", {"answer": "980"})], output=Total)
    assert result.output == Total(answer="980") and result.status == "ungrounded"


def test_structured_answers_are_checked_by_their_values() -> None:
    result, _ = _run([call("final_result", {"answer": "980"}),
                      call("order_total", {"order_id": "A-17"}),
                      call("final_result", {"answer": "1200.5"})], output=Total)
    assert result.output == Total(answer="1200.5")
    assert result.trace.attempts[0].validator == "grounding"


@pytest.mark.parametrize("bad", ["yes", 1, 0.0])
def test_grounding_must_be_a_flag(bad: Any) -> None:
    with pytest.raises(ConfigurationError, match="grounding must be True, False or None"):
        Agent(ScriptedModel([]), grounding=bad)


def local(script: list[Any]) -> ScriptedModel:
    """A scripted model that says it is an in-process local one (``system``, as
    ``LlamaChatModel`` and the text protocols wrapping it do)."""
    return ScriptedModel(script, system="local")


def test_on_by_default_for_local_models_only() -> None:
    """Decided on the first-hour agents (docs/benchmarks.md): for the 1.5B a wrong figure
    reported as a success was the common failure; grounding makes the status say so."""
    on = Agent(local(["About 980 EUR.", "About 980 EUR."]), tools=[order_total])
    assert on.run_sync("What did order A-17 cost?").status == "ungrounded"
    assert Agent("local:qwen2.5-coder-1.5b")._core.grounding is True  # no weights loaded
    remote = Agent(ScriptedModel(["About 980 EUR."]), tools=[order_total])
    assert remote.run_sync("What did order A-17 cost?").status == "success"
    off = Agent(local(["About 980 EUR."]), tools=[order_total], grounding=False)
    assert off.run_sync("What did order A-17 cost?").status == "success"


def test_claims_read_figures_identifiers_and_names() -> None:
    sources = 'What did order A-17 cost? {"total": 1200.5, "city": "Lyon"}'
    assert unsupported_claims("It cost 1,200.50 in Lyon for A-17.", sources) == []
    assert unsupported_claims("It cost 3 items. Total 99.9 from B-2 in Paris.", sources) == [
        "B-2", "99.9", "Paris"]
    huge = "Paris " * 1_000_000
    assert unsupported_claims("x " + huge, sources) == ["Paris"]


def test_a_quoted_or_possessive_name_is_the_name_the_sources_hold() -> None:
    """The 1.5B wrote "The weather station id for Bergen is 'Bergen'." and "Maria Lopez's";
    the closing quote and the possessive made new words of names the request held."""
    sources = "How many books does Maria Lopez have? What about the station in Bergen?"
    assert unsupported_claims("The station is 'Bergen', and Maria Lopez's books: 3.",
                              sources) == []
    assert unsupported_claims("Ask 'Oslo' about Dubois's loans.", sources) == ["Oslo", "Dubois's"]


def test_a_unit_on_a_figure_is_no_name() -> None:
    """The 1.5B answered "The temperature in Bergen is 45.32°F", the converter's own figure,
    and the run ended ``ungrounded``: ``F`` read as a name no source held."""
    sources = 'What is the temperature in Bergen in Fahrenheit? 45.32'
    assert unsupported_claims("It is 45.32°F in Bergen, 45.32 ° F, grade A.", sources) == []
    assert unsupported_claims("It is 45.32°F in Oslo.", sources) == ["Oslo"]
    assert unsupported_claims("It is 7.4°Celsius.", sources) == ["7.4"]


def test_a_unit_named_in_words_is_no_name() -> None:
    """The 1.5B answered a right sum of two ``temperature_c`` figures as "43.6 degrees
    Celsius", and the run ended ``ungrounded``: ``Celsius`` read as a name no source held.
    A unit in words qualifies a figure, which is checked on its own."""
    sources = 'Water temperature of pool Lido? {"water_temp_c": 26.5, "lanes": 8}'
    assert unsupported_claims("The Lido is at 26.5 degrees Celsius.", sources) == []
    assert unsupported_claims("Ask Marta: 27.5 degrees Celsius.", sources) == ["27.5", "Marta"]
    held = '{"volume_l": 26.5, "fee_eur": 8}'
    assert unsupported_claims("It holds 26.5 Litres, or 8 Euros.", held) == []
    # a unit no source names is still a claim
    assert unsupported_claims("It holds 26.5 Gallons, or 8 Dollars.", held) == [
        "Gallons", "Dollars"]


def property_rooms(name: str) -> dict[str, Any]:
    """The rooms of a property; nothing for one it does not know."""
    return {"status": "ok", "data": {"items": [{"room": "101"}, {"room": "102"}]}
            if name == "Harbour View" else {"items": []}}


def _rooms(script: list[Any]) -> Any:
    agent = Agent(ScriptedModel(script), tools=[property_rooms], grounding=True,
                  limits=Limits(max_attempts=3))
    return agent.run_sync("How many rooms does the property Forkwath Cross have?")


def test_a_count_with_nothing_to_count_is_no_count() -> None:
    """Seen on the 1.5B (generated hotel suite, 2026-12-05): every tool returned an empty
    list, it answered "1", and single digits were exempt as counts: a ``success``."""
    result = _rooms([call("property_rooms", {"name": "Forkwath Cross"}), "1", "1"])
    assert result.trace.attempts[0].validator == "grounding"
    assert (result.status, result.output) == ("ungrounded", "1")


def test_a_count_of_what_a_tool_returned_and_zero_of_nothing_still_pass() -> None:
    counted = _rooms([call("property_rooms", {"name": "Harbour View"}), "It has 2 rooms."])
    assert (counted.status, counted.attempts) == ("success", 1)
    none = _rooms([call("property_rooms", {"name": "Forkwath Cross"}), "It has 0 rooms."])
    assert (none.status, none.attempts) == ("success", 1)


def test_single_digits_are_checked_only_without_something_to_count() -> None:
    assert unsupported_claims("3 items", "", countable=True) == []
    assert unsupported_claims("3 items, 0 left", "", countable=False) == ["3"]
    assert unsupported_claims("0 left", "", countable=False, listed=False) == ["0"]


def member(name: str) -> dict[str, str]:
    """A member's loan record id."""
    return {"id": "PR-72453", "name": name}


def test_zero_is_checked_where_no_tool_returned_a_list_to_count() -> None:
    """Seen on the 1.5B (issue 69, generated library suite): it looked up a member's loan id,
    answered "The fines owed ... are 0 EUR." without calling the tool that holds the fines,
    and the run said ``success``: 0 was exempt as the count of nothing, with nothing counted."""
    agent = Agent(ScriptedModel([call("member", {"name": "Ann Lee"}), "Ann Lee owes 0 EUR.",
                                 "Ann Lee owes 0 EUR."]),
                  tools=[member], grounding=True, limits=Limits(max_attempts=3))
    result = agent.run_sync("What fines does Ann Lee owe, in EUR?")
    assert result.trace.attempts[0].validator == "grounding"
    assert "'0'" in result.trace.attempts[0].errors[0]
    assert (result.status, result.output) == ("ungrounded", "Ann Lee owes 0 EUR.")


class _Learned:
    """A playbook of its own that shows every run one piece of advice and one tool note,
    each holding another task's figure (as learned lessons do: "Pass date like ...")."""

    def __init__(self, advice: str, notes: dict[str, str]) -> None:
        self.advice, self.notes = advice, notes

    def attach(self, agent_name: str, tools: Any, reserved: frozenset[str], *,
               new_agent: bool) -> list[Any]:
        return []

    def routines_learned(self, agent_name: str) -> tuple[Any, ...]:
        return ()

    def plan(self, task: str, agent_name: str, offered: frozenset[str], *,
             gated: bool) -> Any:
        from types import MappingProxyType

        from toolcycle.run.plan import RunPlan

        return RunPlan(notes=MappingProxyType(dict(self.notes)), noted=("s-note",))

    def instructions_for(self, task: str, agent_name: str, tool_names: list[str]
                         ) -> tuple[str, list[str]]:
        return self.advice, ["s-advice"]

    def observe(self, trace: Any, termination: Any) -> None:
        return None


@pytest.mark.parametrize("answer", [
    'order_total fails with: unknown order. Pass order_id like "B-9931".',  # the note itself
    "It cost 4242 EUR.",                                                    # the advice's figure
])
def test_what_a_playbook_learned_from_other_tasks_is_no_source(answer: str) -> None:
    """Seen on the 1.5B (JSON, a generated depot suite): a call came back empty, and it
    answered with a tool's note ("... Pass date like "2026/09/23"."), a ``success``: the
    note, learned from another task, counted as a source. Here the call succeeds, so only
    the sources decide."""
    hook = _Learned("For tasks like this, the total was 4242 EUR last time.",
                    {"order_total": 'order_total fails with: unknown order. Pass order_id '
                                    'like "B-9931".'})
    model = ScriptedModel([call("order_total", {"order_id": "A-17"}), answer, answer])
    agent = Agent(model, tools=[order_total], grounding=True, playbook=hook,
                  limits=Limits(max_attempts=3))
    result = agent.run_sync("What did order A-17 cost?")
    assert "B-9931" in model.requests[0].settings.tools[0].description  # the note was shown
    assert result.trace.attempts[0].validator == "grounding"
    assert (result.status, result.succeeded) == ("ungrounded", False)


def test_the_tools_own_description_stays_a_source_beside_a_note() -> None:
    def order_total(order_id: str) -> dict[str, Any]:
        """The total of an order; orders above 5000 EUR need approval."""
        return {"total": 1200.5}

    hook = _Learned("", {"order_total": 'Learned: Pass order_id like "B-9931".'})
    model = ScriptedModel([call("order_total", {"order_id": "A-17"}),
                           "1200.5 EUR; orders above 5000 EUR need approval."])
    agent = Agent(model, tools=[order_total], grounding=True, playbook=hook)
    result = agent.run_sync("What did order A-17 cost?")
    assert (result.status, result.attempts) == ("success", 1)


def _arrival(answer: str) -> Any:
    def latest_order(customer_id: str) -> dict[str, str]:
        """A customer's latest order and when it arrives."""
        return {"order_id": "O-7781", "arrives": "2026-11-27"}

    model = ScriptedModel([call("latest_order", {"customer_id": "C-1042"}), answer, answer])
    return Agent(model, tools=[latest_order], grounding=True).run_sync(
        "When does Ada's latest order arrive?")


def test_a_sources_date_written_in_words_is_supported() -> None:
    """`make demo`'s second agent: the result said "2026-11-27" and the 1.5B answered
    "November 27, 2026", right, yet `ungrounded`: the month's name was in no source."""
    result = _arrival("It arrives on Friday, November 27, 2026 (order O-7781).")
    assert (result.status, result.attempts) == ("success", 1)


def test_a_month_no_source_date_is_in_is_still_unsupported() -> None:
    result = _arrival("It arrives on December 27, 2026.")
    assert result.trace.attempts[0].validator == "grounding"
    assert "'December'" in result.trace.attempts[0].errors[0]


@pytest.mark.parametrize(("result", "countable", "listed", "holds"), [
    # "nothing" read as the playbook reads it (toolcycle.words.is_empty_result): in words, or a page
    # of nothing; a failed call beside only such results found nothing (1.5B, "the reading
    # is not available" after a 401 and {"matches": null, "total": 0}: it was a success)
    ("No results.", True, True, False),
    ("  ", False, True, False),
    ("[]", False, True, False),
    ('{"results": [], "count": 0}', False, True, False),
    ('{"matches": null, "total": 0}', False, False, False),
    ('{"open_tickets": 0}', False, False, True),  # a zero alone is an answer
    ('{"results": ["a"]}', True, True, True),
    ('{"id": "PR-1", "name": "Ann"}', False, False, True),
    ("null", False, True, False),
    ('{"a": {"b": ""}}', False, False, False),
])
def test_a_results_shape_says_what_counts_it_may_give(result: str, countable: bool,
                                                     listed: bool, holds: bool) -> None:
    from toolcycle.run.sources import shape_of

    shape = shape_of(result)
    assert (shape.countable, shape.listed, shape.holds) == (countable, listed, holds)


def test_a_fields_name_supports_its_words() -> None:
    """``postage_fee_eur`` says EUR: "4.5 EUR" read from it was reported ungrounded."""
    assert unsupported_claims("It is 4.5 EUR.", '{"postage_fee_eur": 4.5}') == []
    assert unsupported_claims("It is 4.5 GBP.", '{"postage_fee_eur": 4.5}') == ["GBP"]


def test_a_total_of_figures_the_answer_states_from_one_field_is_shown_arithmetic() -> None:
    """The 1.5B looked two racks up and answered "8.07 kW and 15.4 kW ... a total of 23.47
    kW", right, yet ``ungrounded`` (held-out first-hour seed 6814): a total of the answer's
    own supported figures, of one field of the records, is the answer's arithmetic. A total
    over different fields, one figure twice, or unsupported addends is still a claim."""
    sources = ('{"power_kw": 8.07, "servers": 24} {"power_kw": 15.4, "servers": 30} '
               '{"power_kw": 1200.0, "servers": 2}')
    assert unsupported_claims("It draws 8.07 kW and the other 15.4 kW, a total of 23.47 kW.",
                              sources) == []
    assert unsupported_claims("8.07 + 15.4 = 23 kW, rounded.", sources) == []
    assert unsupported_claims("1,200 kW and 8.07 kW: 1,208.07 kW.", sources) == []
    assert unsupported_claims("It draws 8.07 kW with 24 servers, 32.07 in all.",
                              sources) == ["32.07"]
    assert unsupported_claims("8.07 and 8.07 make 16.14.", sources) == ["16.14"]
    assert unsupported_claims("The total is 23.47 kW.", sources) == ["23.47"]
    assert unsupported_claims("10.5 kW and 12.3 kW: 22.8 kW.", sources) == [
        "10.5", "12.3", "22.8"]
