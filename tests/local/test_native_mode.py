"""Native output mode on a real local model: the answer is written under the output's grammar.

``Output(..., mode="native")`` on ``local:`` models: llama.cpp compiles the output's JSON
Schema (inside the JSON protocol's union with the offered calls) into a grammar, so the
0.5B's structured answer parses and fits the schema on its first try. Validators, reflection
and the forced answer at a limit go through the same mode. Temperature 0, fixed seed; the
assertions check what the grammar guarantees (a schema-valid output, no fallback), and the
tool's value where the answer must carry it.
"""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest

from toolcycle import Agent, Limits, Output, RunContext
from toolcycle.errors import ModelError, ValidationFailed
from toolcycle.models import ModelSettings
from toolcycle.models.local.llama import DEFAULT_SEED, LlamaChatModel, local_model
from toolcycle.models.text.protocol import JsonToolsModel
from toolcycle.output_modes import ResponseFormat

pytestmark = pytest.mark.real_model

MODEL = "qwen2.5-coder-0.5b"
DETERMINISTIC = ModelSettings(temperature=0.0, seed=DEFAULT_SEED, max_tokens=160)


class City(pydantic.BaseModel):
    name: str
    country: str
    population: int


def population(city: str) -> int:
    """The population of a city, from the census."""
    return 2_102_650 if city.lower() == "paris" else 1_000


def city_agent(output: Output[City], tools: list[Any] | None = None,
               limits: Limits | None = None) -> Agent[None, City]:
    # Grounding (on by default for local models) would rightly refuse the population the
    # model recalls without a tool; these tests are about the mode, so it is off here.
    return Agent(f"local:{MODEL}", "You answer questions about cities.", tools or [],
                 output=output, limits=limits or Limits(max_iterations=3),
                 model_settings=DETERMINISTIC, grounding=False)


def native_replies(result: Any) -> list[str]:
    return [step.thought for step in result.trace.steps if not step.tool_calls]


async def test_the_answer_is_valid_by_construction_in_one_request() -> None:
    result = await city_agent(Output(City, mode="native")).run("Tell me about Paris.")
    assert result.trace.mode_fallbacks == [], result.trace.render()
    assert len(result.trace.steps) == 1, result.trace.render()
    assert result.output.name == "Paris" and result.output.country == "France"
    # The reply's text is the output's JSON, not the protocol's {"answer": ...} wrapper.
    assert City.model_validate_json(native_replies(result)[0]) == result.output


async def test_helper_tools_stay_callable_and_the_answer_carries_their_result() -> None:
    result = await city_agent(Output(City, mode="native"), [population]).run(
        "Use the population tool, then describe Paris.")
    assert [c.name for c in result.tool_calls] == ["population"], result.trace.render()
    assert result.output.population == 2_102_650, result.trace.render()
    assert result.trace.mode_fallbacks == []


async def test_a_validator_rejects_and_the_next_attempt_answers_in_the_same_mode() -> None:
    seen: list[City] = []

    def second_opinion(city: City, ctx: RunContext[None]) -> None:
        seen.append(city)
        if len(seen) == 1:
            raise ValidationFailed("give the population of the city proper, not the region")

    result = await city_agent(Output(City, mode="native", validators=[second_opinion])).run(
        "Tell me about Paris.")
    assert len(seen) == 2 and result.output == seen[1], result.trace.render()
    assert result.trace.mode_fallbacks == []  # a validator's rejection is no mode failure


async def test_reflection_previews_the_json_answer_then_submit_ends_it() -> None:
    previews: list[City] = []

    def preview(city: City, ctx: RunContext[None]) -> str:
        previews.append(city)
        return f"Preview: {city.name}, {city.country}, {city.population} people."

    result = await city_agent(Output(City, mode="native", reflect=preview),
                              limits=Limits(max_iterations=4)).run("Tell me about Paris.")
    assert previews and result.output == previews[-1], result.trace.render()
    assert result.termination.action == "answered", result.trace.render()
    assert result.trace.mode_fallbacks == []


async def test_the_forced_answer_at_the_iteration_limit_is_the_schema_s_json() -> None:
    result = await city_agent(Output(City, mode="native"), [population],
                              limits=Limits(max_iterations=1)).run(
        "Use the population tool for Paris, then describe Paris.")
    assert result.termination.action == "final_answer", result.trace.render()
    assert [c.name for c in result.tool_calls] == ["population"], result.trace.render()
    # Tools withdrawn, the grammar admits the answer alone: the schema's JSON, with the
    # population the tool gave (the 0.5B puts the tool's name in `name`: values are its own).
    assert result.output.population == 2_102_650, result.trace.render()


def test_the_local_profile_offers_native_and_a_bare_chat_model_starts_there() -> None:
    model = local_model(MODEL)
    assert isinstance(model, JsonToolsModel)
    assert model.output_modes()[:2] == ("tool", "native")  # native is the first fallback
    assert isinstance(model.inner, LlamaChatModel)
    assert model.inner.output_modes() == ("native", "prompted")


async def test_a_bare_chat_model_answers_natively_without_a_protocol() -> None:
    chat = local_model(MODEL).inner
    agent = Agent(chat, "You answer questions about cities.", output=City,
                  model_settings=DETERMINISTIC)
    result = await agent.run("Tell me about Paris.")
    assert result.output.country == "France" and result.trace.mode_fallbacks == []


def test_a_schema_with_no_grammar_is_refused_as_a_provider_refuses_a_format() -> None:
    chat = local_model(MODEL).inner
    assert isinstance(chat, LlamaChatModel)
    broken = ResponseFormat("broken", {"type": "object", "properties": {
        "x": {"$ref": "#/$defs/Missing"}}})
    with pytest.raises(ModelError) as caught:
        chat._grammar(broken)
    assert caught.value.context["status"] == 400


async def test_the_hermes_layout_answers_natively_under_the_json_union() -> None:
    """In the family's own layout native mode is the JSON protocol's: the reply under the
    union of the calls and {"answer": <schema>} (the response format), so the answer parses
    and fits on its first try there too."""
    hermes = local_model(MODEL, protocol="hermes")
    assert hermes.output_modes() == ("tool", "native")
    native = ModelSettings(response_format=ResponseFormat("City", City.model_json_schema()))
    form = hermes.reply_format(native)
    assert form is not None and "answer" in json.dumps(form.schema)
    agent = Agent(hermes, "You answer questions about cities.", [],
                  output=Output(City, mode="native"), limits=Limits(max_iterations=3),
                  model_settings=DETERMINISTIC, grounding=False)
    result = await agent.run("Tell me about Paris.")
    assert result.trace.mode_fallbacks == [] and len(result.trace.steps) == 1, \
        result.trace.render()
    assert result.output.name == "Paris" and result.output.country == "France"


def test_a_text_protocol_over_a_model_without_a_schema_grammar_keeps_the_output_tool() -> None:
    """An OpenAI-compatible server may ignore a response format (llama_cpp.server takes only
    its own json_object form), so the JSON protocol over it does not start in native mode."""
    from toolcycle.testing import ScriptedModel

    assert JsonToolsModel(ScriptedModel([])).output_modes() == ("tool",)
