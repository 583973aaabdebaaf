"""Output modes with the protocol-checking ScriptedModel: configuration, wrapped types, a
non-JSON answer, reflection, and the trace of a fallback."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from toolcycle import Agent, Limits, Output
from toolcycle.errors import ConfigurationError, InvalidResponse
from toolcycle.models.scripted import ScriptedModel, call

ALL_MODES = ("tool", "native", "prompted")


class City(BaseModel):
    name: str
    population: int


def test_a_bad_mode_is_a_configuration_error_listing_every_problem() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Output(City, mode="json", name="bad name")  # type: ignore[call-overload]
    assert "mode must be one of" in str(caught.value) and "output tool name" in str(caught.value)
    with pytest.raises(ConfigurationError, match="free text has none"):
        Output(str, mode="native")  # type: ignore[call-overload]


def test_a_wrapped_type_answers_under_response_in_native_mode() -> None:
    model = ScriptedModel(['{"response": [3, 1, 2]}'])
    result = Agent(model, output=Output(list[int], mode="native")).run_sync("Three numbers?")
    assert result.output == [3, 1, 2]
    form = model.requests[0].settings.response_format
    assert form is not None and form.schema["required"] == ["response"]


def test_an_answer_that_is_not_json_is_retried_then_refused() -> None:
    model = ScriptedModel(["Oslo, about 709000.", "Still prose."], modes=("prompted",))
    agent = Agent(model, output=Output(City, mode="prompted"), limits=Limits(max_attempts=2))
    with pytest.raises(InvalidResponse, match="not a JSON object"):
        agent.run_sync("How many live in Oslo?")


def test_schema_errors_keep_the_mode() -> None:
    model = ScriptedModel(['{"name": "Oslo"}', '{"name": "Oslo", "population": 709000}'],
                          modes=ALL_MODES)
    result = Agent(model, output=Output(City, mode="native")).run_sync("Oslo?")
    assert result.output == City(name="Oslo", population=709000)
    assert all(r.settings.response_format is not None for r in model.requests)
    assert result.trace.mode_fallbacks == []


@pytest.mark.parametrize("mode", ["native", "prompted"])
def test_reflection_previews_a_json_answer_then_submit_ends_it(mode: str) -> None:
    model = ScriptedModel(['{"name": "Oslo", "population": 1}', '{"name": "Oslo"}',
                           '{"name": "Oslo", "population": 709000}', call("submit")],
                          modes=ALL_MODES)
    agent = Agent(model, output=Output(City, mode=mode,  # type: ignore[arg-type]
                                       reflect=lambda city, ctx: f"{city.name}: {city.population}"))
    result = agent.run_sync("Oslo?")
    assert result.output == City(name="Oslo", population=709000)
    assert {t.name for t in model.requests[0].settings.tools} == {"submit"}
    shown = [r.last_message.text for r in model.requests[1:]]
    assert shown[0].startswith("Oslo: 1\n\nIf this is right, call `submit`")
    assert shown[1].startswith("Output does not match the schema:\npopulation: Field required")
    assert shown[2].startswith("Oslo: 709000")
    assert result.attempts == 1


def test_the_fallback_chain_is_in_the_trace() -> None:
    def script(messages: Any, settings: Any) -> str:
        return '{"name": "Oslo", "population": 2}' if settings.response_format is None and \
            not settings.tools else "Hello"

    model = ScriptedModel(script, modes=ALL_MODES)
    result = Agent(model, output=City).run_sync("Oslo?")
    assert result.output == City(name="Oslo", population=2)
    assert result.trace.mode_fallbacks == [
        {"attempt": 1, "from": "tool", "to": "native"},
        {"attempt": 2, "from": "native", "to": "prompted"}]
    assert "JSON Schema" in model.requests[-1].last_message.text


@pytest.mark.parametrize("mode", ["native", "prompted"])
def test_the_same_answer_again_after_its_preview_confirms_it(mode: str) -> None:
    """A small text model repeats its previewed answer rather than calling submit (the 0.5B,
    until the iteration limit): the repeat is the submission, as on_repeat makes a repeated
    output call one in tool mode."""
    oslo = '{"name": "Oslo", "population": 709000}'
    model = ScriptedModel([oslo, oslo], modes=ALL_MODES)
    previews: list[City] = []
    agent = Agent(model, output=Output(City, mode=mode,  # type: ignore[arg-type]
                                       reflect=lambda c, ctx: previews.append(c) or "ok"))
    result = agent.run_sync("Oslo?")
    assert result.output == City(name="Oslo", population=709000)
    assert len(previews) == 1 and len(model.requests) == 2
    assert result.termination.action == "answered"
