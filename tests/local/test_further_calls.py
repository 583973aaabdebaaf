"""Further calls (toolcycle.models.text.further): a list reply that leaves some of the
request's literal values out (toolcycle.models.text.coverage) is asked once for the calls it
left out, under a grammar of calls or nothing, and only the further calls that carry a
left-out value are kept. No model is loaded: the inner model is scripted, and the grammar is
compiled by llama.cpp's own converter."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import jsonschema
import pytest

from toolcycle import Agent
from toolcycle.messages import Message, TextPart, ToolCall, Usage
from toolcycle.models.base import ModelResponse, ModelSettings, ToolCallDelta, ToolDefinition
from toolcycle.models.scripted import ScriptedModel
from toolcycle.models.text.constrained import reply_schema
from toolcycle.models.text.coverage import request_values, unused_values
from toolcycle.models.text.further import FURTHER_CALLS, FURTHER_ROUNDS
from toolcycle.models.text.protocol import JsonToolsModel

CIRCLE = ToolDefinition("circumference", "Circumference of a circle.", {
    "type": "object", "properties": {"radius": {"type": "number"}, "unit": {"type": "string"}},
    "required": ["radius"]})
WEATHER = ToolDefinition("weather", "Weather of a city.", {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
LIST = ModelSettings(tools=(CIRCLE, WEATHER), parallel_tool_calls=True)
CIRCLES = "Find the circumference of circles of radius 5, 10, 15 and 20 cm."


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(f"c_{name}", name, arguments)


def texts(request: str) -> list[str]:
    return [v.text for v in request_values(request)]


# -- the value test ---------------------------------------------------------------------------


def test_numbers_quoted_strings_names_and_addresses_are_the_requests_values() -> None:
    assert texts("Radius 5, 10, 1,500 and 0.25 cm, a rise of 5%.") == [
        "5", "10", "1,500", "0.25", "5%"]
    assert texts("Send 'Project Update' to jane.doe@example.com.") == [
        "jane.doe@example.com", "Project Update"]
    # A lone capitalised word that starts a sentence is the sentence's, not a name; a run of
    # them is a name wherever it stands, and a single letter ("I") is none.
    assert texts("Find the rating of Magnus Carlsen. Then can I fly to New York?") == [
        "Magnus Carlsen", "New York"]
    assert texts("«Paris» et Rome, s'il vous plaît.") == ["Paris", "Rome"]  # no English


def test_a_value_is_used_when_a_call_carries_it_in_any_form() -> None:
    calls = [call("circumference", radius=5.0, unit="cm")]
    assert [v.text for v in unused_values(CIRCLES, calls)] == ["10", "15", "20"]
    # numbers written inside an argument's text, and percent as a fraction
    assert not unused_values("Book it for 10:30 on 2024-05-01.",
                             [call("book", at="2024-05-01T10:30")])
    assert not unused_values("A rate of 5% a year.", [call("grow", rate=0.05)])
    # a name is carried by one of its words; an address or a quote by the text holding it
    assert not unused_values("Rate of Magnus Carlsen", [call("rating", player="Carlsen")])
    assert not unused_values('Mail "Hi" to a@b.io', [call("mail", to="a@b.io", body="Hi!")])


def test_names_the_called_tools_own_definitions_hold_are_not_left_out() -> None:
    gcd = ToolDefinition("math_gcd", "The Greatest Common Divisor of two integers.",
                         {"type": "object", "properties": {"a": {}, "b": {}}})
    request = "Find the Greatest Common Divisor (GCD) of 36 and 48."
    assert not unused_values(request, [call("math_gcd", a=36, b=48)], [gcd])
    # only the called tools count: a tool named in the request but not called is left out
    assert [v.text for v in unused_values(request, [call("other", a=36, b=48)], [gcd])] == [
        "Greatest Common Divisor", "GCD"]


def test_options_a_called_tool_lists_are_values_the_request_may_name() -> None:
    # an enum's strings and a description's quoted options, named in the request word for
    # word: lower-case words no other kind of value finds, each carried only as itself
    rain = ToolDefinition("rain_stats", "Rainfall statistics of a place.", {
        "type": "object", "properties": {
            "place": {"type": "string"},
            "span": {"type": "string", "enum": ["six_months", "year", "five_years"]},
            "model": {"type": "string", "description": "options: 'Köppen', 'Thornthwaite'"}},
        "required": ["place", "span"]})
    request = ("Rainfall in Manaus over the last six months, the last year and the last five "
               "years, by the Thornthwaite model?")
    first = [call("rain_stats", place="Manaus", span="six_months")]
    assert [(v.text, v.kind) for v in unused_values(request, first, [rain])] == [
        ("Thornthwaite", "name"), ("year", "option"), ("five_years", "option")]
    every = [call("rain_stats", place="Manaus", span=s, model="Thornthwaite")
             for s in ("six_months", "year", "five_years")]
    assert not unused_values(request, every, [rain])
    # an option the request does not name is no value of it ("Köppen")
    assert "Köppen" not in texts(request)


# -- the grammar ------------------------------------------------------------------------------


def test_the_further_calls_grammar_admits_calls_or_nothing_and_compiles() -> None:
    schema = reply_schema([CIRCLE, WEATHER], "auto", parallel=True, further=True)
    assert schema is not None
    valid = jsonschema.Draft202012Validator(schema).is_valid
    assert valid([]) and valid([{"name": "weather", "arguments": {"city": "Rome"}}])
    assert not valid([{"answer": "done"}]) and not valid({"name": "weather", "arguments": {}})
    from llama_cpp import llama_grammar
    assert "root" in llama_grammar.json_schema_to_gbnf(json.dumps(schema))


# -- the protocol -----------------------------------------------------------------------------


class Capture:
    """An inner-model script step that records what it was sent."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.messages: list[Message] = []
        self.settings: ModelSettings | None = None

    def __call__(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        self.messages, self.settings = list(messages), settings
        return Message("assistant", [TextPart(self.reply)], usage=Usage(10, 3, requests=1))


FIRST = '[{"name": "circumference", "arguments": {"radius": 5, "unit": "cm"}}]'


def circles(*radii: float) -> str:
    return json.dumps([{"name": "circumference", "arguments": {"radius": r, "unit": "cm"}}
                       for r in radii])


async def test_a_list_that_leaves_values_out_is_asked_once_for_the_further_calls() -> None:
    further = Capture(circles(10, 15, 20))
    inner = ScriptedModel([Capture(FIRST), further])
    model = JsonToolsModel(inner, constrained=True, further_calls=True)
    message = await model.request([Message.user(CIRCLES)], LIST)
    assert [c.arguments["radius"] for c in message.tool_calls if c.arguments] == [5, 10, 15, 20]
    assert [c.id for c in message.tool_calls] == [f"call_1_{n}" for n in range(1, 5)]
    assert message.usage is not None and message.usage.requests == 2  # both paid
    # shown its calls and what they leave out, under a grammar of calls or nothing
    assert further.messages[-2].text == FIRST
    assert further.messages[-1].text.startswith("These calls leave out 10, 15, 20 from")
    assert further.settings is not None
    schema = further.settings.extra["response_format"]["schema"]
    assert jsonschema.Draft202012Validator(schema).is_valid([])
    assert "further_calls" not in further.settings.extra  # the wrapper's keys stay with it


async def test_the_sentences_no_call_has_begun_are_quoted_in_the_request_s_words() -> None:
    # Two tasks in three sentences: the first call begins the first task; the sentences of
    # the second, all of whose values are left out, are quoted as written. A sentence with
    # no values ("Thanks.") and one a call has begun are not.
    request = ("Find the circumference of a circle of radius 5 cm. Then I fly to Lisbon. "
               "What is the weather in Lisbon? Thanks.")
    further = Capture(json.dumps([{"name": "weather", "arguments": {"city": "Lisbon"}}]))
    inner = ScriptedModel([Capture(FIRST), further])
    model = JsonToolsModel(inner, constrained=True, further_calls=True)
    message = await model.request([Message.user(request)], LIST)
    assert [c.name for c in message.tool_calls] == ["circumference", "weather"]
    assert further.messages[-1].text.startswith(
        "These calls leave out Lisbon from the request. Not called for yet:\n- Then I fly to "
        "Lisbon.\n- What is the weather in Lisbon?\nIf the request asks")
    # one sentence: its values alone are named (quoting the whole request adds nothing)
    one = Capture("[]")
    await JsonToolsModel(ScriptedModel([Capture(FIRST), one]), further_calls=True).request(
        [Message.user(CIRCLES)], LIST)
    assert "Not called for yet" not in one.messages[-1].text


async def test_only_further_calls_that_carry_a_left_out_value_are_kept() -> None:
    # a repeat of the first call and a call with an invented value add nothing
    inner = ScriptedModel([FIRST, circles(5, 7, 10), "[]"])
    model = JsonToolsModel(inner, further_calls=True)
    message = await model.request([Message.user(CIRCLES)], LIST)
    assert [c.arguments["radius"] for c in message.tool_calls if c.arguments] == [5, 10]
    assert len(inner.requests) == 3  # 15 and 20 still left out: asked again, got nothing


async def test_asked_again_while_each_round_keeps_a_call_and_values_are_left_out() -> None:
    # Three tasks: the first reply begins one, the first further request adds a second, the
    # next adds the third; a round that keeps nothing ends the asking, and so does a reply
    # that leaves nothing out.
    request = ("Find the circumference of a circle of radius 5 cm. What is the weather in "
               "Lisbon? And the weather in Oslo?")
    lisbon = Capture(json.dumps([{"name": "weather", "arguments": {"city": "Lisbon"}}]))
    oslo = Capture(json.dumps([{"name": "weather", "arguments": {"city": "Oslo"}}]))
    inner = ScriptedModel([Capture(FIRST), lisbon, oslo])
    message = await JsonToolsModel(inner, further_calls=True).request(
        [Message.user(request)], LIST)
    assert [c.name for c in message.tool_calls] == ["circumference", "weather", "weather"]
    assert len(inner.requests) == 3 and message.usage is not None
    assert message.usage.requests == 3  # every round paid
    assert oslo.messages[-1].text.startswith("These calls leave out Oslo from the request.")
    assert [m.text for m in oslo.messages[-2:-1]] != [m.text for m in lisbon.messages[-2:-1]]
    # a round that keeps nothing (a repeat) ends it, though Oslo is still left out
    inner = ScriptedModel([FIRST, lisbon.reply, lisbon.reply, oslo.reply])
    message = await JsonToolsModel(inner, further_calls=True).request(
        [Message.user(request)], LIST)
    assert len(message.tool_calls) == 2 and len(inner.requests) == 3
    # bounded: at most FURTHER_ROUNDS further requests, however much is left out
    many = "Find the circumference of circles of radius " + ", ".join(
        str(r) for r in range(5, 100, 5)) + " cm."
    inner = ScriptedModel([FIRST, *(circles(r) for r in range(10, 100, 5))])
    message = await JsonToolsModel(inner, further_calls=True).request([Message.user(many)], LIST)
    assert len(inner.requests) == 1 + FURTHER_ROUNDS
    assert len(message.tool_calls) == 1 + FURTHER_ROUNDS
    # a model's own bound: one round, as before rounds were asked again
    inner = ScriptedModel([FIRST, *(circles(r) for r in range(10, 100, 5))])
    once = JsonToolsModel(inner, further_calls=True)
    once.further_rounds = 1
    message = await once.request([Message.user(many)], LIST)
    assert len(inner.requests) == 2 and len(message.tool_calls) == 2


async def test_an_empty_list_leaves_the_reply_as_it_was() -> None:
    inner = ScriptedModel([FIRST, "[]"])
    model = JsonToolsModel(inner, further_calls=True)
    message = await model.request([Message.user(CIRCLES)], LIST)
    assert len(message.tool_calls) == 1 and message.finish_reason == "tool_calls"


@pytest.mark.parametrize("settings, on, request_text", [
    (LIST, True, "Find the circumference of a circle of radius 5 cm."),  # nothing left out
    (ModelSettings(tools=(CIRCLE,)), True, CIRCLES),  # one call per reply: no list asked for
    (LIST, False, CIRCLES),  # the setting off
    (ModelSettings(tools=(CIRCLE,), parallel_tool_calls=True,
                   extra={FURTHER_CALLS: False}), True, CIRCLES),  # off for this request
    (ModelSettings(tools=(CIRCLE,), parallel_tool_calls=True, tool_choice="required",
                   on_repeat="circumference"), True, CIRCLES),  # the attempt's last tool
])
async def test_no_second_request_where_none_is_due(settings: ModelSettings, on: bool,
                                                   request_text: str) -> None:
    reply = FIRST if settings.parallel_tool_calls else FIRST[1:-1]
    inner = ScriptedModel([reply, circles(10)])
    model = JsonToolsModel(inner, further_calls=on)
    message = await model.request([Message.user(request_text)], settings)
    assert len(message.tool_calls) == 1 and len(inner.requests) == 1


async def test_streamed_the_further_calls_come_with_the_first() -> None:
    inner = ScriptedModel([FIRST, circles(10, 15, 20)])
    model = JsonToolsModel(inner, further_calls=True)
    items = [item async for item in model.stream([Message.user(CIRCLES)], LIST)]
    deltas = [i for i in items if isinstance(i, ToolCallDelta)]
    assert [json.loads(d.arguments_delta)["radius"] for d in deltas] == [5, 10, 15, 20]
    assert isinstance(items[-1], ModelResponse) and len(items[-1].message.tool_calls) == 4


async def test_an_agent_asked_for_two_cities_runs_both_calls_in_one_iteration() -> None:
    seen: list[str] = []

    def weather(city: str) -> str:
        """Weather of a city."""
        seen.append(city)
        return f"sunny in {city}"

    inner = ScriptedModel(['[{"name": "weather", "arguments": {"city": "Paris"}}]',
                           '[{"name": "weather", "arguments": {"city": "Rome"}}]',
                           '[{"answer": "sunny in both"}]'])
    agent = Agent(JsonToolsModel(inner, further_calls=True), "Answer.", [weather],
                  model_settings=ModelSettings(parallel_tool_calls=True))
    result = await agent.run("What is the weather in Paris and in Rome?")
    assert seen == ["Paris", "Rome"] and result.output == "sunny in both"
    assert len(result.trace.steps) == 2  # the calls, then the answer


def test_the_local_model_takes_the_setting_from_a_model_string() -> None:
    from toolcycle.models.local.llama import FURTHER_CALLS_BY_DEFAULT, model_from_string

    def further(text: str) -> bool:
        model = model_from_string(text)
        assert isinstance(model, JsonToolsModel)  # built, not loaded: no weights are read
        return model.further_calls

    assert further("qwen2.5-coder-0.5b") is FURTHER_CALLS_BY_DEFAULT
    assert further("qwen2.5-coder-0.5b?further_calls=false") is False
    assert further("qwen2.5-coder-0.5b?further_calls=true&constrained=true") is True
    with pytest.raises(ValueError, match="further_calls='maybe'"):
        model_from_string("qwen2.5-coder-0.5b?further_calls=maybe")


async def test_a_further_request_that_fails_still_counts_the_first_replys_tokens() -> None:
    from toolcycle.errors import ModelError
    from toolcycle.models.paid import paid_before

    def broken(messages: Sequence[Message], settings: ModelSettings) -> str:
        raise ModelError("the server went away")

    inner = ScriptedModel([Capture(FIRST), broken])
    model = JsonToolsModel(inner, further_calls=True)
    with pytest.raises(ModelError) as caught:
        await model.request([Message.user(CIRCLES)], LIST)
    paid = paid_before(caught.value).usage
    assert paid.requests == 2 and paid.output_tokens == 3  # the first reply, and the failed one


async def test_the_model_familys_own_layout_asks_for_the_further_calls_in_its_words() -> None:
    """Qwen2.5's layout (HermesToolsModel): the further request shows the calls as the
    template's blocks, asks for calls (not "a JSON list", which the template never shows),
    and its grammar admits calls in the layout's forms or ``[]``, no answer."""
    from llama_cpp.llama_grammar import LlamaGrammar

    from toolcycle.models.text.hermes import GRAMMAR, HermesToolsModel

    bare = "\n".join(json.dumps({"name": "circumference", "arguments": {"radius": r}})
                     for r in (10, 15, 20))
    further = Capture(bare)
    model = HermesToolsModel(ScriptedModel([Capture(FIRST[1:-1]), further]), further_calls=True)
    message = await model.request([Message.user(CIRCLES)], LIST)
    assert [c.arguments["radius"] for c in message.tool_calls if c.arguments] == [5, 10, 15, 20]
    assert further.messages[-2].text.startswith("<tool_call>\n")
    assert further.messages[-1].text.endswith(HermesToolsModel.further_wording)
    assert "JSON list" not in further.messages[-1].text
    assert further.settings is not None
    grammar = further.settings.extra[GRAMMAR]
    assert '"[]"' in grammar and "toolcycle-answer" not in grammar.split("\n")[0]
    LlamaGrammar.from_string(grammar, verbose=False)  # llama.cpp reads it


async def test_the_model_familys_layout_leaves_the_further_calls_off_unless_asked() -> None:
    from toolcycle.models.text.hermes import HermesToolsModel

    inner = ScriptedModel([FIRST[1:-1], circles(10)])
    message = await HermesToolsModel(inner).request([Message.user(CIRCLES)], LIST)
    assert len(message.tool_calls) == 1 and len(inner.requests) == 1
