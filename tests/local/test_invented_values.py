"""Invented values (toolcycle.models.text.invented): a reply whose calls give values that
neither the conversation nor the offered tools' definitions give is asked once whether the
request gives them; the second reply stands. No model is loaded: the inner model is
scripted."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from toolcycle import Agent
from toolcycle.messages import Message, ToolCall, ToolResult
from toolcycle.models.base import ModelResponse, ModelSettings, TextDelta, ToolDefinition
from toolcycle.models.scripted import ScriptedModel
from toolcycle.models.text.hermes import HermesToolsModel
from toolcycle.models.text.invented import INVENTED_VALUES, invented_values
from toolcycle.models.text.protocol import JsonToolsModel

from .test_further_calls import Capture  # a script step that records what it was sent

CIRCUIT = ToolDefinition("current", "Current through a resistor (Ohm's law).", {
    "type": "object", "properties": {"voltage": {"type": "number"},
                                     "resistance": {"type": "number"},
                                     "unit": {"type": "string", "enum": ["A", "mA"]}},
    "required": ["voltage", "resistance"]})
HOTEL = ToolDefinition("hotel_availability", "Whether a hotel has a room.", {
    "type": "object", "properties": {"hotel_name": {"type": "string"},
                                     "location": {"type": "string"},
                                     "check_in": {"type": "string",
                                                  "description": "YYYY-MM-DD"}},
    "required": ["hotel_name", "location", "check_in"]})
AUTO = ModelSettings(tools=(CIRCUIT, HOTEL))


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(f"c_{name}", name, arguments)


def invented(request: str, *calls: ToolCall, results: Sequence[str] = ()) -> list[str]:
    messages = [Message.system("Answer the user."), Message.user(request)]
    if results:
        messages += [Message("assistant", [call("lookup")]),
                     Message("tool", [ToolResult("c_lookup", "lookup", r) for r in results])]
    return [v.shown() for v in invented_values(messages, list(calls), [CIRCUIT, HOTEL])]


# -- the reading ------------------------------------------------------------------------------


def test_numbers_written_in_words_are_read() -> None:
    from toolcycle.words import spelled_numbers

    assert spelled_numbers("four restaurants for twenty-five guests, five hundred metres, "
                           "a thousand, twice") >= {4, 25, 500, 1000, 2}
    # a run ends where a word or a mark other than a space or hyphen stands between
    assert 102 not in spelled_numbers("a hundred, two dice")
    assert spelled_numbers("Quatre restaurants.") == set()  # English only


def test_spans_of_time_give_the_counts_they_hold() -> None:
    from toolcycle.words import span_numbers

    assert span_numbers("over the past decade") == {10}
    assert span_numbers("for the next week, then two weeks, then 3 years") >= {7, 14, 36, 1095}
    assert span_numbers("two centuries") >= {100, 200}
    assert span_numbers("Which days?") == {24}
    assert span_numbers("the eastern wing has seven rooms") == set()  # no span named
    # a tool's duration in years for "the past decade", days for "next week": given
    assert not invented("How did the deer population grow over the past decade?",
                        call("current", voltage=10, resistance=0))
    assert not invented("What will the air quality be for the next week?",
                        call("current", voltage=7, resistance=0))
    # the same figure with no span named is still the model's own
    assert invented("What will the air quality be tomorrow?",
                    call("current", voltage=7, resistance=0)) == ["voltage=7"]


def test_a_descriptions_example_gives_no_value() -> None:
    train = ToolDefinition("find_trains", "Find trains between two cities.", {
        "type": "object", "properties": {
            "origin": {"type": "string", "description": "The city, in the format 'City, "
                       "State', such as 'San Francisco, CA' or 'New York, NY'."},
            "seats": {"type": "integer", "description": "How many seats (e.g. 4)."},
            "fare": {"type": "string", "enum": ["Value", "Flexible"]}},
        "required": ["origin", "seats", "fare"]})

    def made_up(request: str, **arguments: Any) -> list[str]:
        messages = [Message.user(request)]
        return [v.shown() for v in invented_values(messages, [call("find_trains", **arguments)],
                                                   [train])]

    assert made_up("I want to find a train.", origin="San Francisco, CA", seats=4,
                   fare="Value") == ['origin="San Francisco, CA"', "seats=4"]
    # the request's own values, and an option the schema lists, are given
    assert not made_up("Two seats on a train from Reno, NV.", origin="Reno, NV", seats=2,
                       fare="Flexible")


def test_a_request_in_another_language_has_its_strings_unjudged() -> None:
    # names reach the call translated; the number is still read
    assert not invented("北京饭店有空房吗？2023-04-01入住", call(
        "hotel_availability", hotel_name="Beijing Hotel", location="Beijing, China",
        check_in="2023-04-01"))
    assert invented("北京的天气", call("current", voltage=120, resistance=10)) == [
        "voltage=120", "resistance=10"]


def test_values_nobody_gave_are_invented() -> None:
    assert invented("Who discovered electricity?", call("current", voltage=120,
                                                        resistance=10)) == [
        "voltage=120", "resistance=10"]
    assert invented("Find a Thai restaurant in Chicago.", call(
        "hotel_availability", hotel_name="The Golden Gate Hotel", location="Chicago",
        check_in="2023-04-01")) == ['hotel_name="The Golden Gate Hotel"',
                                    'check_in="2023-04-01"']


def test_a_long_list_copied_from_a_long_result_is_given_value_by_value() -> None:
    # (read through a set: one lookup a value, not a scan of every source number)
    readings = [round(0.5 + n * 1.25, 2) for n in range(5000)]
    assert not invented("What current flows through each coil?",
                        call("current", voltage=readings, resistance=readings[::-1]),
                        results=[json.dumps(readings)])
    assert invented("What current flows through each coil?",
                    call("current", voltage=[*readings[:3], 0.3], resistance=readings[1]),
                    results=[json.dumps(readings)]) == ["voltage[3]=0.3"]


def test_only_required_parameters_are_read() -> None:
    # an optional setting the model chose, and a tool nobody offered, ask nothing
    assert not invented("What current flows at 120 V through 10 ohms?",
                        call("current", voltage=120, resistance=10, unit="kA", precision=7))
    assert not invented("Who discovered electricity?", call("history", year=1752))


def test_values_the_request_gives_in_another_writing_are_given() -> None:
    # a number in words
    assert not invented("Four restaurants, for twenty-five guests.",
                        call("current", voltage=4, resistance=25))
    # a scale (thousands, millions, milli-, micro-), a percentage, a magnitude
    assert not invented("A population of 213 million, a rise of 5%, 50mH, a drop of -3.",
                        call("current", voltage=213_000_000, resistance=0.05),
                        call("current", voltage=0.05, resistance=3))
    # a day the request names in words, a name in part or with another form of a word
    assert not invented("Is there a room at the Golden Gate hotels in Los Angeles on June "
                        "30th 2023?", call("hotel_availability", hotel_name="Golden Gate Hotel",
                                           location="Los Angeles, CA", check_in="2023-06-30"))


def test_tools_definitions_and_results_give_values_and_neutral_ones_are_never_reported(
) -> None:
    # an enum value, 0 and 1, a boolean, a string without a word to judge ("x"), a code
    # the model writes for a name ("GBP" for British pounds)
    assert not invented("How much current in British pounds?", call(
        "current", voltage=1, resistance=0, unit="mA", exact=True, var="x", currency="GBP"))
    # what a tool returned gives the next call's values; the model's own turns give nothing
    assert not invented("What current flows through the coil?",
                        call("current", voltage=230, resistance=46), results=[
                            '{"coil": "K2", "volts": 230, "ohms": 46}'])


# -- the protocol -----------------------------------------------------------------------------


MADE_UP = '{"name": "current", "arguments": {"voltage": 120, "resistance": 10}}'
ELECTRICITY = "Who discovered electricity?"


async def test_a_call_over_invented_values_is_asked_about_once_and_the_answer_stands() -> None:
    again = Capture('{"answer": "Benjamin Franklin is often credited."}')
    inner = ScriptedModel([Capture(MADE_UP), again])
    model = JsonToolsModel(inner, invented_values=True)
    message = await model.request([Message.user(ELECTRICITY)], AUTO)
    assert not message.tool_calls and message.text == "Benjamin Franklin is often credited."
    assert message.asked_again == (MADE_UP,)  # the first reply stays in the trace's step
    assert message.usage is not None and message.usage.requests == 2
    # told what a call would take and offered both ways on, under the normal grammar; not
    # shown its calls (shown them, the 1.5B writes them again)
    question = again.messages[-1].text
    assert question.startswith(f"{ELECTRICITY}\n\nCalling a tool here would take voltage=120, "
                               "resistance=10, which neither the request nor a tool result "
                               "gives.")
    assert "answer it in words" in question and "call it first" in question
    assert MADE_UP not in "".join(m.text for m in again.messages)
    assert again.settings is not None and INVENTED_VALUES not in again.settings.extra


async def test_calls_made_again_after_the_question_stand_with_this_turns_ids() -> None:
    inner = ScriptedModel([MADE_UP, MADE_UP, '{"answer": "unused"}'])
    model = JsonToolsModel(inner, invented_values=True)
    message = await model.request([Message.user(ELECTRICITY)], AUTO)
    assert [c.arguments for c in message.tool_calls] == [{"voltage": 120, "resistance": 10}]
    assert message.tool_calls[0].id == "call_1_1" and len(inner.requests) == 2


@pytest.mark.parametrize("settings, on", [
    (AUTO, False),  # the setting off
    (ModelSettings(tools=(CIRCUIT,), extra={INVENTED_VALUES: False}), True),  # off per request
    (ModelSettings(tools=(CIRCUIT,), tool_choice="required"), True),  # a call is required
    (ModelSettings(tools=(CIRCUIT,), on_repeat="current"), True),  # the attempt's last tool
])
async def test_no_question_where_none_is_due(settings: ModelSettings, on: bool) -> None:
    inner = ScriptedModel([MADE_UP, '{"answer": "unused"}'])
    message = await JsonToolsModel(inner, invented_values=on).request(
        [Message.user(ELECTRICITY)], settings)
    assert len(message.tool_calls) == 1 and len(inner.requests) == 1


async def test_given_values_ask_nothing() -> None:
    inner = ScriptedModel([MADE_UP, '{"answer": "unused"}'])
    message = await JsonToolsModel(inner, invented_values=True).request(
        [Message.user("What current flows at 120 V through 10 ohms?")], AUTO)
    assert len(message.tool_calls) == 1 and len(inner.requests) == 1


async def test_streamed_the_answer_after_the_question_comes_as_text() -> None:
    inner = ScriptedModel([MADE_UP, '{"answer": "Franklin, in part."}'])
    model = JsonToolsModel(inner, invented_values=True)
    items = [i async for i in model.stream([Message.user(ELECTRICITY)], AUTO)]
    assert [i.text for i in items if isinstance(i, TextDelta)] == ["Franklin, in part."]
    assert isinstance(items[-1], ModelResponse) and not items[-1].message.tool_calls


async def test_a_question_that_fails_still_counts_the_first_replys_tokens() -> None:
    from toolcycle.errors import ModelError
    from toolcycle.models.paid import paid_before

    def broken(messages: Sequence[Message], settings: ModelSettings) -> str:
        raise ModelError("the server went away")

    model = JsonToolsModel(ScriptedModel([Capture(MADE_UP), broken]), invented_values=True)
    with pytest.raises(ModelError) as caught:
        await model.request([Message.user(ELECTRICITY)], AUTO)
    paid = paid_before(caught.value).usage
    assert paid.requests == 2 and paid.output_tokens == 3


async def test_an_agent_runs_no_call_over_invented_values_when_the_model_answers() -> None:
    ran: list[float] = []

    def current(voltage: float, resistance: float) -> float:
        """Current through a resistor (Ohm's law)."""
        ran.append(voltage)
        return voltage / resistance

    inner = ScriptedModel([MADE_UP, '{"answer": "Benjamin Franklin."}'])
    agent = Agent(JsonToolsModel(inner, invented_values=True), "Answer.", [current])
    result = await agent.run(ELECTRICITY)
    assert ran == [] and result.output == "Benjamin Franklin."
    assert result.trace.steps[0].asked_again == (MADE_UP,)


@pytest.mark.parametrize("switch", ["invented_values", "argument_notes"])
def test_the_local_model_takes_the_setting_from_a_model_string(switch: str) -> None:
    """Invented values are on for local models, argument notes off (docs/local-model.md says
    why); the JSON protocol over any other inner model leaves both off (shown for notes)."""
    from toolcycle.models.local.llama import model_from_string

    def setting(text: str) -> bool:
        model = model_from_string(text)
        assert isinstance(model, JsonToolsModel)  # built, not loaded: no weights are read
        return bool(vars(model)[switch])

    assert setting("qwen2.5-coder-0.5b") is (switch == "invented_values")
    assert setting(f"qwen2.5-coder-0.5b?{switch}=true") is True
    assert setting(f"qwen2.5-coder-0.5b?{switch}=false") is False
    assert setting(f"qwen2.5-coder-1.5b?protocol=json&{switch}=no") is False
    with pytest.raises(ValueError, match=f"{switch}='maybe'"):
        model_from_string(f"qwen2.5-coder-0.5b?{switch}=maybe")
    assert JsonToolsModel(ScriptedModel([])).argument_notes is False
    hermes = model_from_string("qwen2.5-coder-1.5b?protocol=hermes&invented_values=no")
    assert isinstance(hermes, HermesToolsModel) and hermes.invented_values is False
