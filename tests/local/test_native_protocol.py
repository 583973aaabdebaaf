"""Native output mode through the JSON protocol, with a scripted inner model (no weights):
what the inner request carries (the union of calls and the output-shaped answer as its typed
response format, the answer's fields in the prompt), how the reply becomes the run's output,
streamed or not, and the history the next request shows."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import jsonschema
import pydantic

from toolcycle import Agent, Output
from toolcycle.events import RunSuccess, TextDeltaEvent
from toolcycle.messages import Message
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel
from toolcycle.models.text.protocol import JsonToolsModel


class City(pydantic.BaseModel):
    name: str
    population: int


def population(city: str) -> int:
    """The population of a city."""
    return 709000


class Inner:
    """The inner text model: replies in order, and keeps what each request carried."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.seen: list[tuple[list[Message], ModelSettings]] = []

    def __call__(self, messages: Sequence[Message], settings: ModelSettings) -> str:
        self.seen.append((list(messages), settings))
        return self.replies.pop(0)


def agent(inner: Inner) -> Agent[None, City]:
    return Agent(JsonToolsModel(ScriptedModel(inner)), "You know cities.", [population],
                 output=Output(City, mode="native"))


def test_the_inner_request_carries_the_union_and_the_answer_is_the_output() -> None:
    inner = Inner('{"name": "population", "arguments": {"city": "Oslo"}}',
                  '{"answer": {"name": "Oslo", "population": 709000}}')
    result = agent(inner).run_sync("How many live in Oslo?")
    assert result.output == City(name="Oslo", population=709000)
    assert [c.name for c in result.tool_calls] == ["population"]
    messages, settings = inner.seen[0]
    form = settings.response_format
    assert form is not None
    validator = jsonschema.Draft202012Validator(form.schema)
    assert validator.is_valid({"answer": {"name": "Oslo", "population": 1}})
    assert validator.is_valid({"name": "population", "arguments": {"city": "Oslo"}})
    assert not validator.is_valid({"answer": "Oslo has 709000 people."})
    assert not validator.is_valid({"name": "final_result", "arguments": {}})  # withdrawn
    assert '{"answer": {name: string, population: integer}}' in messages[0].text
    assert "constrained" not in settings.extra and "response_format" not in settings.extra


def test_no_tools_leaves_the_answer_alone_and_a_retry_shows_the_answer_as_json() -> None:
    def small(city: City, ctx: Any) -> None:
        if city.population < 1000:
            from toolcycle.errors import ValidationFailed
            raise ValidationFailed("that is a village")

    inner = Inner('{"answer": {"name": "Oslo", "population": 7}}',
                  '{"answer": {"name": "Oslo", "population": 709000}}')
    model = JsonToolsModel(ScriptedModel(inner))
    result = Agent(model, output=Output(City, mode="native", validators=[small])).run_sync(
        "Oslo?")
    assert result.output == City(name="Oslo", population=709000)
    first, retry = inner.seen
    assert "Reply with one JSON object" in first[0][0].text
    form = first[1].response_format
    assert form is not None and set(form.schema["properties"]) == {"answer"}
    shown = [m.text for m in retry[0] if m.role == "assistant"]
    assert json.loads(shown[0]) == {"answer": {"name": "Oslo", "population": 7}}


def test_a_streamed_native_answer_ends_as_the_same_output() -> None:
    inner = Inner('{"answer": {"name": "Oslo", "population": 709000}}')
    texts: list[str] = []

    async def go() -> Any:
        done = None
        async for event in agent(inner).stream("Oslo?"):
            if isinstance(event, TextDeltaEvent):
                texts.append(event.text)
            elif isinstance(event, RunSuccess):
                done = event.result
        return done

    result = asyncio.run(go())
    assert result is not None and result.output == City(name="Oslo", population=709000)
    assert inner.seen[0][1].response_format is not None
